#!/usr/bin/env python3
"""A Kalman-filter tracking loop in numba-cuda on a stream of its own, with pinned copies, for the real-program suite.

A bank of --tracks independent constant-velocity trackers (2-D position
and velocity, a 4-state Kalman filter each), the way a Numba user streams
sensor data through a GPU: every step the host writes the new
measurements into a pinned buffer (cuda.pinned_array), copies them to the
device on the stream (copy_to_device(..., stream=s)), launches the
predict, update and innovation-reduction kernels on that stream
(kernel[blocks, threads, s](...)), copies the small result back into
another pinned buffer (copy_to_host(..., stream=s)) and synchronizes the
stream; the host then reads the mean normalised innovation and sets the
next step's process-noise scale from it (a scalar argument that changes
from step to step), as adaptive filters do.

What it exercises: Numba's launches on a non-default stream
(cuLaunchKernel with the stream's handle), asynchronous host-to-device and
device-to-host copies from and to page-locked memory inside every step
(cuMemcpyHtoDAsync / cuMemcpyDtoHAsync), a stream synchronization ending
each step, and a host write into the pinned input between steps.

--warmup W steps first (compilation), then --steps timed steps.  --out
writes every innovation read back (float64) and the final states; --time
prints one gs-wl line with the median wall time of one step.  The
measurements come from a seeded host generator (--seed), computed before
the loop, so every process copies the same bytes.
"""
import argparse
import os
import statistics
import struct
import sys
import time


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=300, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--tracks", type=int, default=4096)
    ap.add_argument("--dt", type=float, default=0.05)
    ap.add_argument("--noise", type=float, default=0.1, help="measurement noise (std)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: Numba's CUDA simulator (a dry run)")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.steps < 1 or a.warmup < 0 or a.tracks < 1 or not (a.dt > 0 and a.noise > 0):
        ap.error("--steps and --tracks must be positive, --warmup >= 0, --dt and --noise positive")
    return a


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

TPB = 128


@cuda.jit
def predict(x, P, n, dt, q):
    """x = F x, P = F P F^T + q Q for a constant-velocity model (row-major 4x4 P)."""
    i = cuda.grid(1)
    if i >= n:
        return
    x[i, 0] += dt * x[i, 2]
    x[i, 1] += dt * x[i, 3]
    # P = F P F^T with F = [[1,0,dt,0],[0,1,0,dt],[0,0,1,0],[0,0,0,1]]
    for r in range(2):
        for c in range(4):
            P[i, r * 4 + c] += dt * P[i, (r + 2) * 4 + c]
    for c in range(2):
        for r in range(4):
            P[i, r * 4 + c] += dt * P[i, r * 4 + c + 2]
    dt2 = dt * dt
    for d in range(2):
        P[i, d * 4 + d] += q * dt2 * dt2 * float32(0.25)
        P[i, (d + 2) * 4 + d + 2] += q * dt2
        P[i, d * 4 + d + 2] += q * dt2 * dt * float32(0.5)
        P[i, (d + 2) * 4 + d] += q * dt2 * dt * float32(0.5)


@cuda.jit
def update(x, P, z, nis, n, r):
    """The measurement update with H = [I 0]; nis[i] = the normalised innovation squared."""
    i = cuda.grid(1)
    if i >= n:
        return
    y0 = z[i, 0] - x[i, 0]
    y1 = z[i, 1] - x[i, 1]
    s00 = P[i, 0] + r
    s01 = P[i, 1]
    s10 = P[i, 4]
    s11 = P[i, 5] + r
    det = s00 * s11 - s01 * s10
    i00 = s11 / det
    i01 = -s01 / det
    i10 = -s10 / det
    i11 = s00 / det
    nis[i] = y0 * (i00 * y0 + i01 * y1) + y1 * (i10 * y0 + i11 * y1)
    # K = P H^T S^-1 (4x2); x += K y; P -= K H P
    k = cuda.local.array(8, dtype=float32)
    for row in range(4):
        p0 = P[i, row * 4 + 0]
        p1 = P[i, row * 4 + 1]
        k[row * 2 + 0] = p0 * i00 + p1 * i10
        k[row * 2 + 1] = p0 * i01 + p1 * i11
    for row in range(4):
        x[i, row] += k[row * 2] * y0 + k[row * 2 + 1] * y1
    hp = cuda.local.array(8, dtype=float32)
    for c in range(4):
        hp[c] = P[i, c]
        hp[4 + c] = P[i, 4 + c]
    for row in range(4):
        for c in range(4):
            P[i, row * 4 + c] -= k[row * 2] * hp[c] + k[row * 2 + 1] * hp[4 + c]


@cuda.jit
def reduce_nis(nis, partial, n):
    """Per block: the sum of its tracks' nis, a shared-memory tree in a fixed order."""
    s = cuda.shared.array(shape=TPB, dtype=float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    s[t] = nis[i] if i < n else float32(0)
    cuda.syncthreads()
    w = TPB // 2
    while w > 0:
        if t < w:
            s[t] += s[t + w]
        cuda.syncthreads()
        w //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


def main():
    a = A
    n = a.tracks
    blocks = (n + TPB - 1) // TPB
    total = a.warmup + a.steps
    rng = np.random.default_rng(a.seed)
    # The true tracks and every step's measurements, made before the loop.
    p0 = rng.uniform(-10, 10, (n, 2))
    v0 = rng.uniform(-1, 1, (n, 2))
    turns = rng.normal(0, 0.05, (total, n, 2))
    meas = np.empty((total, n, 2), dtype=np.float32)
    p, v = p0.copy(), v0.copy()
    for k in range(total):
        v += turns[k]
        p += a.dt * v
        meas[k] = (p + rng.normal(0, a.noise, (n, 2))).astype(np.float32)

    s = cuda.stream()
    x0 = np.zeros((n, 4), dtype=np.float32)
    x0[:, :2] = meas[0]
    P0 = np.tile(np.diag(np.array([1.0, 1.0, 10.0, 10.0], dtype=np.float32)).reshape(-1), (n, 1))
    d_x = cuda.to_device(x0, stream=s)
    d_P = cuda.to_device(P0.astype(np.float32), stream=s)
    d_z = cuda.device_array((n, 2), dtype=np.float32, stream=s)
    d_nis = cuda.device_array(n, dtype=np.float32, stream=s)
    d_part = cuda.device_array(blocks, dtype=np.float32, stream=s)
    z_host = cuda.pinned_array((n, 2), dtype=np.float32)
    part_host = cuda.pinned_array(blocks, dtype=np.float32)
    s.synchronize()

    r = np.float32(a.noise * a.noise)
    dt = np.float32(a.dt)
    q = np.float32(1.0)
    reads, times = [], []
    for k in range(total):
        t0 = time.perf_counter()
        z_host[:] = meas[k]  # the new measurements, into the pinned buffer
        d_z.copy_to_device(z_host, stream=s)
        predict[blocks, TPB, s](d_x, d_P, np.int32(n), dt, q)
        update[blocks, TPB, s](d_x, d_P, d_z, d_nis, np.int32(n), r)
        reduce_nis[blocks, TPB, s](d_nis, d_part, np.int32(n))
        d_part.copy_to_host(part_host, stream=s)
        s.synchronize()
        # Host: the mean normalised innovation (2 expected) adapts q.
        mean = float(np.sum(part_host.astype(np.float64))) / n
        reads.append(mean)
        q = np.float32(min(10.0, max(0.1, float(q) * (1.25 if mean > 2.5 else 0.9 if mean < 1.5 else 1.0))))
        if k >= a.warmup:
            times.append(time.perf_counter() - t0)
    xs = d_x.copy_to_host()
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            f.write(xs.tobytes())
    if a.time:
        print("gs-wl: numba_stream tracks=%d device=%s steps=%d warmup=%d q_last=%.6g "
              "median_us=%.3f mean_us=%.3f" % (
                  n, a.device, len(times), a.warmup, float(q),
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
