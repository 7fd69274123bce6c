#!/usr/bin/env python3
"""Monte Carlo with CuPy's random numbers, for the real-program suite.

Two ways CuPy users write a Monte Carlo time stepper:

  --model langevin   overdamped Langevin dynamics of --n particles in a
                     double-well potential, x += -V'(x) dt + sqrt(2 T dt) xi,
                     the noise xi drawn every time step with
                     cupy.random.standard_normal on the legacy global
                     RandomState (cupy.random.seed: cuRAND's host API,
                     curandGenerateNormal on a XORWOW generator), the update
                     a @cupy.fuse function, the well occupancy and the mean
                     energy reduced on the device;
  --model paths      Euler-Maruyama paths of a geometric Brownian motion,
                     priced as an arithmetic Asian call: every time step
                     draws the increments with a seeded
                     cupy.random.Generator (default_rng: CuPy's own
                     XORWOW kernels, not cuRAND), updates the price and the
                     running average with array expressions (a kernel and
                     a temporary per operator), and a payoff mean at the
                     end of a path.

A step is --check time steps and one read-back (float() of a reduction:
cupy.sum in CUB's fixed order); every --horizon time steps (paths: a
whole path) the state starts again from the same initial condition, so the
program does the same kind of work for as long as asked.

What it exercises: cuRAND's host API (libcurand's static runtime reaching
the driver through cuGetProcAddress; its generator's state and offsets
advance every call), CuPy's fused kernels (NVRTC, cuModuleLoadData,
cuLaunchKernel), elementwise kernels and CUB reductions from CuPy's memory
pool.  Random numbers come from seeded generators in a fixed order, so
every process computes the same bytes.

--warmup W steps first (compilation, the memory pool, cuRAND's generator),
then everything is seeded again and --steps timed steps run.  --out writes
every read-back (float64) and the final state's bytes; --time prints one
gs-wl line with the median wall time of one step, read-back included.
"""
import argparse
import statistics
import struct
import time

import cupy as cp


@cp.fuse()
def langevin_update(x, xi, dt, temp):
    force = -4.0 * x * (x * x - 1.0)  # -V'(x), V = (x^2 - 1)^2
    return x + force * dt + cp.sqrt(2.0 * temp * dt) * xi


class Langevin:
    def __init__(self, a):
        self.a = a
        self.dt = cp.float32(a.dt)
        self.temp = cp.float32(a.temp)

    def start(self):
        cp.random.seed(self.a.seed)
        self.x = cp.full(self.a.n, -1.0, dtype=cp.float32)
        self.t = 0

    def step(self):
        for _ in range(self.a.check):
            if self.t == self.a.horizon:
                self.x.fill(-1.0)
                self.t = 0
            xi = cp.random.standard_normal(self.a.n, dtype=cp.float32)
            self.x = langevin_update(self.x, xi, self.dt, self.temp)
            self.t += 1
        right = cp.sum(self.x > 0, dtype=cp.float32) / self.a.n
        energy = cp.mean((self.x * self.x - 1.0) ** 2)
        return float(right + 1000.0 * energy)  # the host read-back (one sync)

    def final(self):
        return cp.asnumpy(self.x).tobytes()


class Paths:
    def __init__(self, a):
        self.a = a
        self.drift = (a.rate - 0.5 * a.vol * a.vol) * a.dt
        self.diff = a.vol * a.dt ** 0.5

    def start(self):
        self.rng = cp.random.default_rng(self.a.seed)
        self.s = cp.full(self.a.n, 100.0, dtype=cp.float64)
        self.avg = cp.zeros(self.a.n, dtype=cp.float64)
        self.t = 0
        self.prices = []

    def step(self):
        for _ in range(self.a.check):
            z = self.rng.standard_normal(self.a.n, dtype=cp.float64)
            self.s = self.s * cp.exp(self.drift + self.diff * z)
            self.t += 1
            self.avg = self.avg + (self.s - self.avg) / self.t
            if self.t == self.a.horizon:
                payoff = cp.maximum(self.avg - 100.0, 0.0)
                self.prices.append(payoff.mean() * cp.exp(-self.a.rate * self.a.dt * self.t))
                self.s.fill(100.0)
                self.avg.fill(0.0)
                self.t = 0
        return float(self.s.sum())  # the host read-back (one sync)

    def final(self):
        price = cp.stack(self.prices) if self.prices else cp.zeros(0)
        return cp.asnumpy(price).tobytes() + cp.asnumpy(self.s).tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--model", choices=("langevin", "paths"), default="langevin")
    ap.add_argument("--n", type=int, default=65536, help="particles (langevin) or paths")
    ap.add_argument("--check", type=int, default=8, help="time steps between read-backs")
    ap.add_argument("--horizon", type=int, default=64, help="time steps before the state starts again")
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--temp", type=float, default=0.3, help="langevin: temperature")
    ap.add_argument("--rate", type=float, default=0.03, help="paths: interest rate")
    ap.add_argument("--vol", type=float, default=0.2, help="paths: volatility")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("cuda",), default="cuda", help="CuPy runs on the GPU only")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.n < 1 or a.check < 1 or a.horizon < 1:
        ap.error("--n, --check and --horizon must be positive")

    m = Langevin(a) if a.model == "langevin" else Paths(a)
    m.start()
    for _ in range(a.warmup):
        m.step()
    m.start()
    reads, times = [], []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        reads.append(m.step())
        times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            f.write(m.final())
    if a.time:
        print("gs-wl: cupy_montecarlo variant=%s n=%d check=%d horizon=%d steps=%d warmup=%d cupy=%s "
              "median_us=%.3f mean_us=%.3f" % (
                  a.model, a.n, a.check, a.horizon, len(times), a.warmup, cp.__version__,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
