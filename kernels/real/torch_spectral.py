#!/usr/bin/env python3
"""A pseudo-spectral 2-D Navier-Stokes solver with torch.fft, for the real-program suite.

What a scientist's PyTorch solver looks like (the shape of the data
generators of neural-operator papers and of many teaching codes): --batch
independent periodic fields of vorticity w on an --n x --n grid, advanced
in Fourier space with the classic fourth-order Runge-Kutta scheme:

    psi_hat = w_hat / |k|^2                         (stream function)
    u = irfft2(i ky psi_hat),  v = irfft2(-i kx psi_hat)
    wx = irfft2(i kx w_hat),   wy = irfft2(i ky w_hat)
    dw_hat/dt = -mask * rfft2(u wx + v wy) - nu |k|^2 w_hat - mu w_hat + f_hat

with the 2/3 rule's dealiasing mask and a fixed Kolmogorov forcing
f = sin(4 y).  One stage: one forward and four inverse real FFTs (cuFFT,
through PyTorch's plan cache) and a dozen elementwise kernels on complex
and real tensors; a step is four stages and the update.

--check K: every K steps the time step is adapted to the flow, as CFL
codes do: the largest speed is read back (.item()) and dt = min(--dt,
--cfl * dx / speed) on the host, so the step's scalar arguments change
from read-back to read-back.  --check 0: a fixed dt and no read-back
until the end.

--warmup W steps first, then --steps timed steps.  --out writes the
read-backs (float64) and the final vorticity fields; --time prints one
gs-wl line with the median wall time of one step (its read-back, where it
has one, included; without read-backs a step is timed to a synchronize
after it, which graphshim sees as the step's end).  The initial fields
come from the CPU generator (--seed), smoothed on the device, so every
process computes the same bytes (cuFFT's plans and PyTorch's reductions
do not change their order between runs).
"""
import argparse
import math
import statistics
import struct
import time

import torch


class Solver:
    def __init__(self, a, dev, dtype):
        self.a, self.dev = a, dev
        n = a.n
        self.dx = 2 * math.pi / n
        ky = (torch.fft.fftfreq(n, d=1.0 / n)).to(dtype).reshape(n, 1)
        kx = (torch.fft.rfftfreq(n, d=1.0 / n)).to(dtype).reshape(1, n // 2 + 1)
        k2 = kx * kx + ky * ky
        self.ikx = (1j * kx).to(dev)
        self.iky = (1j * ky).to(dev)
        self.inv_k2 = torch.where(k2 > 0, 1.0 / torch.where(k2 > 0, k2, torch.ones_like(k2)),
                                  torch.zeros_like(k2)).to(dev)
        self.lin = (-(a.nu * k2) - a.drag).to(dev)  # the linear terms' factor
        kmax = n // 3  # the 2/3 rule
        self.mask = ((kx.abs() < kmax) & (ky.abs() < kmax)).to(dtype).to(dev)
        y = torch.arange(n, dtype=dtype) * self.dx
        force = (0.1 * torch.sin(4 * y)).reshape(n, 1).expand(n, n).contiguous()
        self.f_hat = torch.fft.rfft2(force.to(dev))
        g = torch.Generator(device="cpu").manual_seed(a.seed)
        w0 = torch.randn(a.batch, n, n, generator=g, dtype=dtype).to(dev)
        # A smooth start: the random field's spectrum cut off around |k| = 6.
        self.w_hat = torch.fft.rfft2(w0) * torch.exp(-k2 / 72.0).to(dev) * 40.0
        self.s = (n, n)
        self.dt = a.dt

    def velocity(self, w_hat):
        psi = w_hat * self.inv_k2
        u = torch.fft.irfft2(self.iky * psi, s=self.s)
        v = torch.fft.irfft2(-self.ikx * psi, s=self.s)
        return u, v

    def rhs(self, w_hat):
        u, v = self.velocity(w_hat)
        wx = torch.fft.irfft2(self.ikx * w_hat, s=self.s)
        wy = torch.fft.irfft2(self.iky * w_hat, s=self.s)
        nonlin = torch.fft.rfft2(u * wx + v * wy) * self.mask
        return -nonlin + self.lin * w_hat + self.f_hat

    def step(self):
        w, dt = self.w_hat, self.dt
        k1 = self.rhs(w)
        k2 = self.rhs(w + (0.5 * dt) * k1)
        k3 = self.rhs(w + (0.5 * dt) * k2)
        k4 = self.rhs(w + dt * k3)
        self.w_hat = w + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    def adapt(self):
        """The CFL rule: the largest speed read back, dt chosen on the host."""
        u, v = self.velocity(self.w_hat)
        speed = torch.maximum(u.abs().amax(), v.abs().amax()).item()
        self.dt = min(self.a.dt, self.a.cfl * self.dx / max(speed, 1e-12))
        return speed

    def final(self):
        return torch.fft.irfft2(self.w_hat, s=self.s).cpu().numpy().tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=150, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--n", type=int, default=64, help="grid points a side")
    ap.add_argument("--batch", type=int, default=8, help="independent fields")
    ap.add_argument("--check", type=int, default=1, help="steps between CFL read-backs (0: a fixed dt)")
    ap.add_argument("--dt", type=float, default=0.05, help="the largest time step")
    ap.add_argument("--cfl", type=float, default=0.5)
    ap.add_argument("--nu", type=float, default=1e-3, help="viscosity")
    ap.add_argument("--drag", type=float, default=0.1, help="linear drag")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.n < 8 or a.n % 2:
        ap.error("--n must be even and at least 8")
    if a.check < 0 or a.batch < 1 or a.steps < 1 or a.warmup < 0:
        ap.error("--check must be >= 0, --batch and --steps positive, --warmup >= 0")
    if not (a.dt > 0 and a.cfl > 0 and a.nu >= 0 and a.drag >= 0):
        ap.error("--dt and --cfl must be positive, --nu and --drag non-negative")
    dev = torch.device(a.device)
    dtype = torch.float64 if a.dtype == "float64" else torch.float32
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    reads, times = [], []
    with torch.no_grad():
        sv = Solver(a, dev, dtype)
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            sv.step()
            if a.check and (i + 1) % a.check == 0:
                reads.append(sv.adapt())
            elif not a.check:
                sync()  # the timer's, not the solver's: see the docstring
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
        reads.append(sv.adapt())  # the final speed, for --check 0 too
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            f.write(sv.final())
    if a.time:
        print("gs-wl: torch_spectral n=%d batch=%d check=%d dtype=%s device=%s steps=%d warmup=%d "
              "dt_last=%.6g median_us=%.3f mean_us=%.3f" % (
                  a.n, a.batch, a.check, a.dtype, dev.type, len(times), a.warmup, sv.dt,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
