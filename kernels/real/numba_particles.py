#!/usr/bin/env python3
"""A particle simulation written with numba-cuda, for the real-program suite.

Softened gravity among --n particles in a box, the way a Numba user writes
it: @cuda.jit kernels launched with kernel[blocks, threads](...) on device
arrays, a tiled all-pairs force kernel with shared memory, a leapfrog
update, a wall reflection, and every --check steps the kinetic energy,
reduced on the device in a fixed order (a per-block reduction into partial
sums, then one block over those) and copied back to the host
(copy_to_host), as a simulation checks its energy.  A step is --check
time steps and that read-back.

What it exercises: Numba compiles to PTX and links it with the driver
(cuLink*/cuModuleLoadData), flattens every array argument into several
kernel parameters (meminfo, parent, size, itemsize, data, shape, strides)
and launches with cuLaunchKernel on the default stream; a launch costs the
host tens of microseconds of Python and argument marshalling, so the
program is host-bound, as Numba programs of small kernels are.

--warmup W steps first (compilation, loading), then the system restarts
from the seeded initial state for --steps timed steps.  --out writes every
energy read back (float64) and then the final positions and velocities;
--time prints one gs-wl line with the median wall time of one step.
--device cpu runs Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM), for a dry
run of the suite's script without a GPU: slow, use tiny sizes.
"""
import argparse
import math
import os
import statistics
import struct
import sys
import time


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--n", type=int, default=2048, help="particles")
    ap.add_argument("--check", type=int, default=4, help="time steps between energy read-backs")
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: Numba's CUDA simulator (a dry run)")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    return ap.parse_args()


A = parse()
if A.device == "cpu":
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402

# numba-cuda 0.68 registers an overload of np.row_stack, which NumPy 2.4
# removed (AttributeError when the first kernel compiles); the alias is
# the workaround its users apply.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda, float32  # noqa: E402

TPB = 128  # threads a block; the force kernel's tile


@cuda.jit
def forces(pos, acc, n, eps2):
    """acc[i] = sum over j of (p_j - p_i) / (|p_j - p_i|^2 + eps2)^(3/2)."""
    tile = cuda.shared.array(shape=(TPB, 3), dtype=float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    xi = pos[i, 0] if i < n else float32(0)
    yi = pos[i, 1] if i < n else float32(0)
    zi = pos[i, 2] if i < n else float32(0)
    ax = float32(0)
    ay = float32(0)
    az = float32(0)
    for base in range(0, n, TPB):
        j = base + t
        if j < n:
            tile[t, 0] = pos[j, 0]
            tile[t, 1] = pos[j, 1]
            tile[t, 2] = pos[j, 2]
        cuda.syncthreads()
        for k in range(min(TPB, n - base)):
            dx = tile[k, 0] - xi
            dy = tile[k, 1] - yi
            dz = tile[k, 2] - zi
            r2 = dx * dx + dy * dy + dz * dz + eps2
            inv = float32(1) / (r2 * math.sqrt(r2))
            ax += dx * inv
            ay += dy * inv
            az += dz * inv
        cuda.syncthreads()
    if i < n:
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


@cuda.jit
def kick_drift(pos, vel, acc, n, dt):
    """Leapfrog: v += a dt, p += v dt."""
    i = cuda.grid(1)
    if i < n:
        for d in range(3):
            v = vel[i, d] + acc[i, d] * dt
            vel[i, d] = v
            pos[i, d] += v * dt


@cuda.jit
def reflect(pos, vel, n, half):
    """Particles leaving the box [-half, half]^3 bounce off its walls."""
    i = cuda.grid(1)
    if i < n:
        for d in range(3):
            p = pos[i, d]
            if p > half:
                pos[i, d] = 2 * half - p
                vel[i, d] = -vel[i, d]
            elif p < -half:
                pos[i, d] = -2 * half - p
                vel[i, d] = -vel[i, d]


@cuda.jit(device=True)
def block_sum(s, t):
    """s[0] = the sum of s[0..TPB), a tree in shared memory, in a fixed order;
    every thread of the block calls it after writing its s[t]."""
    cuda.syncthreads()
    w = TPB // 2
    while w > 0:
        if t < w:
            s[t] += s[t + w]
        cuda.syncthreads()
        w //= 2


@cuda.jit
def kinetic_partial(vel, partial, n):
    """Per block: the sum of |v|^2 / 2 of its particles."""
    s = cuda.shared.array(shape=TPB, dtype=float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    e = float32(0)
    if i < n:
        e = float32(0.5) * (vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1] + vel[i, 2] * vel[i, 2])
    s[t] = e
    block_sum(s, t)
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def sum_partials(partial, m, out):
    """One block: out[0] = the sum of partial[0..m), in a fixed order."""
    s = cuda.shared.array(shape=TPB, dtype=float32)
    t = cuda.threadIdx.x
    e = float32(0)
    for k in range(t, m, TPB):
        e += partial[k]
    s[t] = e
    block_sum(s, t)
    if t == 0:
        out[0] = s[0]


class Sim:
    def __init__(self, a):
        self.a = a
        self.n = a.n
        self.blocks = (a.n + TPB - 1) // TPB
        rng = np.random.default_rng(a.seed)
        self.pos0 = (rng.random((a.n, 3)) - 0.5).astype(np.float32)
        self.vel0 = ((rng.random((a.n, 3)) - 0.5) * 0.1).astype(np.float32)
        self.acc = cuda.device_array((a.n, 3), dtype=np.float32)
        self.partial = cuda.device_array(self.blocks, dtype=np.float32)
        self.energy = cuda.device_array(1, dtype=np.float32)
        self.host = np.zeros(1, dtype=np.float32)
        self.eps2 = np.float32(1e-2)
        self.dt = np.float32(a.dt)
        self.half = np.float32(0.5)
        self.reset()

    def reset(self):
        self.pos = cuda.to_device(self.pos0)
        self.vel = cuda.to_device(self.vel0)

    def step(self):
        b, n = self.blocks, np.int32(self.n)
        for _ in range(self.a.check):
            forces[b, TPB](self.pos, self.acc, n, self.eps2)
            kick_drift[b, TPB](self.pos, self.vel, self.acc, n, self.dt)
            reflect[b, TPB](self.pos, self.vel, n, self.half)
        kinetic_partial[b, TPB](self.vel, self.partial, n)
        sum_partials[1, TPB](self.partial, np.int32(b), self.energy)
        self.energy.copy_to_host(self.host)  # the host read-back
        return float(self.host[0])


def main():
    a = A
    sim = Sim(a)
    for _ in range(a.warmup):
        sim.step()
    sim.reset()
    energies, times = [], []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        energies.append(sim.step())
        times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(energies), *energies))
            f.write(sim.pos.copy_to_host().tobytes())
            f.write(sim.vel.copy_to_host().tobytes())
    if a.time:
        import numba
        print("gs-wl: numba_particles variant=n%d n=%d check=%d steps=%d warmup=%d numba=%s "
              "median_us=%.3f mean_us=%.3f" % (
                  a.n, a.n, a.check, len(times), a.warmup, numba.__version__,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
