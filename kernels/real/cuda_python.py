#!/usr/bin/env python3
"""A Jacobi solver whose kernels are launched from CUDA Python (cuda.core), for the real-program suite.

NVIDIA's cuda-core package (`from cuda.core import ...`; releases before
0.5 only had `cuda.core.experimental`, which 1.0 removed: both are
accepted) as its examples (saxpy.py, vector_add.py, memory_ops.py) use it:
Device(0).set_current(), dev.create_stream(), CUDA C++ source compiled at
run time with Program(source, code_type="c++", options=ProgramOptions(
std="c++17", arch=f"sm_{dev.arch}")).compile("cubin", name_expressions=...)
(templates instantiated for the chosen float type), mod.get_kernel(name),
and launch(stream, LaunchConfig(grid=..., block=...), kernel, *args) with
scalars as NumPy scalars (np.int32, np.float32).  Written against
cuda-core 1.2.2, the newest release on PyPI when it was written (its
sources read for the names used here).

The work: Jacobi sweeps for the 2-D Poisson problem -laplace(u) = f (the
5-point stencil on an --n x --n grid, zero boundary, f and the first guess
seeded noise).  A step is --sweeps sweep pairs (u -> v, v -> u: two
launches of a 2-D grid of 16 x 16 blocks each), then the residual
f - A u reduced on the device in a fixed order without atomics (each of up
to 128 blocks sums its share of |r|^2 and of u in a shared-memory tree into
a small buffer of partial sums; one block of 256 threads then sums those
in the same fixed order), stream.sync() and the two numbers (the residual's
2-norm and the sum of u) copied to the host, as a solver checks
convergence.  --sweeps 10: 22 launches and a read-back a step.

  --memory cupy     device arrays are CuPy's (cupy.asarray of the host
                    data, dev.sync() before launching on our own stream, as
                    the examples do: CuPy works on the legacy default
                    stream); kernels get their pointers (arr.data.ptr, a
                    Python int: cuda.core passes it as a pointer); the
                    read-back is out.get() after stream.sync().
  --memory buffer   device memory from dev.allocate(nbytes, stream=s)
                    (cuda.core's Buffer, the device's stream-ordered memory
                    pool), passed to launch() directly; host data staged
                    in pinned buffers from LegacyPinnedMemoryResource, seen
                    by NumPy through np.from_dlpack(); the read-back is
                    out.copy_to(pinned, stream=s) then stream.sync().

What it exercises: NVRTC (cubin for the device's own sm_XX), the module
loaded by cuLibraryLoadData, every launch cuLaunchKernelEx from cuda.core's
Cython launcher on a non-blocking stream, its arguments marshalled from
Python objects at every call; a synchronising read-back a step (cupy:
CuPy's cudaMemcpyAsync on the legacy stream and its synchronisation;
buffer: cuMemcpyAsync into pinned memory on our stream).  Launch-bound: a few microseconds of Python a launch, the
kernels on a 256 x 256 grid a few microseconds each.

--warmup W steps first (module loading, memory pools), then the solver
restarts from the seeded first guess for --steps timed steps.  --out
writes every read-back (two float64 a step), then the final u (--dtype's
bytes); --time prints one gs-wl line with the median wall time of one
step.  --device cpu cannot run cuda.core (it needs a GPU): it runs a NumPy
reference of the same algorithm (the same sweeps, the residual and sum in
float64; NumPy's own summation order, so its bytes are its own), for a dry
run of the suite's script.
"""
import argparse
import statistics
import struct
import time

import numpy as np

TILE = 16  # the Jacobi kernel's blocks are TILE x TILE threads
TPB = 256  # threads a block of the reductions (a power of two)
MAX_RBLOCKS = 128  # blocks of the residual's first pass, at most

SOURCE = r"""
#define TPB %d

// u[i, j], zero outside the grid (the Dirichlet boundary).
template<typename T>
__device__ T at(const T* u, int n, int i, int j)
{
    return (i >= 0 && i < n && j >= 0 && j < n) ? u[i * n + j] : T(0);
}

// One Jacobi sweep: v = (sum of the neighbours of u + h^2 f) / 4.
template<typename T>
__global__ void jacobi(const T* __restrict__ u, T* __restrict__ v, const T* __restrict__ f, int n, T h2)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n)
        v[i * n + j] = T(0.25) * (at(u, n, i - 1, j) + at(u, n, i + 1, j) + at(u, n, i, j - 1)
                                  + at(u, n, i, j + 1) + h2 * f[i * n + j]);
}

// Sums s[0..TPB) and q[0..TPB) into s[0] and q[0], a tree in a fixed order.
__device__ void block_sum2(double* s, double* q, int t)
{
    for (int w = TPB / 2; w > 0; w /= 2) {
        __syncthreads();
        if (t < w) {
            s[t] += s[t + w];
            q[t] += q[t + w];
        }
    }
}

// Per block: the sum of r^2 (r = f - A u) and of u over its grid-stride share.
template<typename T>
__global__ void residual_partial(const T* __restrict__ u, const T* __restrict__ f, double* __restrict__ partial,
                                 int n, T inv_h2)
{
    __shared__ double sr[TPB];
    __shared__ double su[TPB];
    const int t = threadIdx.x;
    double r2 = 0.0, us = 0.0;
    for (int k = blockIdx.x * TPB + t; k < n * n; k += gridDim.x * TPB) {
        const int i = k / n, j = k %% n;
        const T c = u[k];
        const T r = f[k] - inv_h2 * (T(4) * c - at(u, n, i - 1, j) - at(u, n, i + 1, j) - at(u, n, i, j - 1)
                                     - at(u, n, i, j + 1));
        r2 += (double)r * (double)r;
        us += (double)c;
    }
    sr[t] = r2;
    su[t] = us;
    block_sum2(sr, su, t);
    if (t == 0) {
        partial[2 * blockIdx.x] = sr[0];
        partial[2 * blockIdx.x + 1] = su[0];
    }
}

// One block: out = (the residual's 2-norm, the sum of u) from m partial pairs.
extern "C" __global__ void sum_partials(const double* __restrict__ partial, int m, double* __restrict__ out)
{
    __shared__ double sr[TPB];
    __shared__ double su[TPB];
    const int t = threadIdx.x;
    double r2 = 0.0, us = 0.0;
    for (int k = t; k < m; k += TPB) {
        r2 += partial[2 * k];
        us += partial[2 * k + 1];
    }
    sr[t] = r2;
    su[t] = us;
    block_sum2(sr, su, t);
    if (t == 0) {
        out[0] = sqrt(sr[0]);
        out[1] = su[0];
    }
}
""" % TPB


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=500, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--n", type=int, default=256, help="grid points per side")
    ap.add_argument("--sweeps", type=int, default=10, help="Jacobi sweep pairs a step")
    ap.add_argument("--memory", choices=("cupy", "buffer"), default="cupy",
                    help="device memory from CuPy arrays or cuda.core Buffers")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: the NumPy reference (a dry run)")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.n < 2 or a.sweeps < 1 or a.steps < 1:
        ap.error("--n must be >= 2, --sweeps and --steps >= 1")
    return a


class Problem:
    """The seeded right-hand side and first guess, in host memory."""

    def __init__(self, a):
        self.n = a.n
        self.dtype = np.dtype(a.dtype)
        rng = np.random.default_rng(a.seed)
        self.f = (rng.random((a.n, a.n)) - 0.5).astype(self.dtype)
        self.u0 = ((rng.random((a.n, a.n)) - 0.5) * 0.1).astype(self.dtype)
        h = 1.0 / (a.n + 1)
        self.h2 = self.dtype.type(h * h)
        self.inv_h2 = self.dtype.type(1.0 / (h * h))


class NumpySolver:
    """The same sweeps and read-backs with NumPy, on the host."""

    def __init__(self, a, p):
        self.a, self.p = a, p

    def reset(self):
        self.u = self.p.u0.copy()

    def neighbours(self, u):
        z = np.pad(u, 1)
        return z[:-2, 1:-1], z[2:, 1:-1], z[1:-1, :-2], z[1:-1, 2:]

    def step(self):
        p = self.p
        for _ in range(2 * self.a.sweeps):
            up, dn, lf, rt = self.neighbours(self.u)
            self.u = p.dtype.type(0.25) * (up + dn + lf + rt + p.h2 * p.f)
        up, dn, lf, rt = self.neighbours(self.u)
        r = (p.f - p.inv_h2 * (p.dtype.type(4) * self.u - up - dn - lf - rt)).astype(np.float64)
        return float(np.sqrt(np.sum(r * r))), float(np.sum(self.u.astype(np.float64)))

    def solution(self):
        return self.u


class CoreSolver:
    """The solver's kernels compiled and launched with cuda.core."""

    def __init__(self, a, p):
        try:
            from cuda.core import Device, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch
        except ImportError:  # cuda-core before 0.5
            from cuda.core.experimental import (Device, LaunchConfig, LegacyPinnedMemoryResource, Program,
                                                ProgramOptions, launch)
        self.a, self.p, self.launch = a, p, launch
        self.dev = Device(0)
        self.dev.set_current()
        self.stream = self.dev.create_stream()
        ctype = "float" if p.dtype == np.float32 else "double"
        names = ("jacobi<%s>" % ctype, "residual_partial<%s>" % ctype)
        prog = Program(SOURCE, code_type="c++", options=ProgramOptions(std="c++17", arch=f"sm_{self.dev.arch}"))
        mod = prog.compile("cubin", name_expressions=names)
        self.jacobi = mod.get_kernel(names[0])
        self.residual = mod.get_kernel(names[1])
        self.sum_partials = mod.get_kernel("sum_partials")
        tiles = (a.n + TILE - 1) // TILE
        self.rblocks = min(MAX_RBLOCKS, (a.n * a.n + TPB - 1) // TPB)
        self.sweep_cfg = LaunchConfig(grid=(tiles, tiles), block=(TILE, TILE))
        self.residual_cfg = LaunchConfig(grid=self.rblocks, block=TPB)
        self.sum_cfg = LaunchConfig(grid=1, block=TPB)
        nbytes = p.f.nbytes
        if a.memory == "cupy":
            import cupy as cp
            self.cp = cp
            self.f = cp.asarray(p.f)
            self.v = cp.empty_like(self.f)
            self.partial = cp.empty(2 * self.rblocks, dtype=cp.float64)
            self.out = cp.empty(2, dtype=cp.float64)
        else:
            s = self.stream
            self.pinned = LegacyPinnedMemoryResource()
            # Host staging buffers, NumPy views of pinned memory.
            self.host_f = self.pinned.allocate(nbytes, stream=s)
            self.host_u0 = self.pinned.allocate(nbytes, stream=s)
            self.host_out = self.pinned.allocate(2 * 8, stream=s)
            np.from_dlpack(self.host_f).view(p.dtype)[:] = p.f.reshape(-1)
            np.from_dlpack(self.host_u0).view(p.dtype)[:] = p.u0.reshape(-1)
            self.out_view = np.from_dlpack(self.host_out).view(np.float64)
            self.f = self.dev.allocate(nbytes, stream=s)
            self.u = self.dev.allocate(nbytes, stream=s)
            self.v = self.dev.allocate(nbytes, stream=s)
            self.partial = self.dev.allocate(2 * self.rblocks * 8, stream=s)
            self.out = self.dev.allocate(2 * 8, stream=s)
            self.host_f.copy_to(self.f, stream=s)
            s.sync()

    def reset(self):
        if self.a.memory == "cupy":
            self.u = self.cp.asarray(self.p.u0)
            self.dev.sync()  # CuPy copied on its own stream; the kernels run on ours
        else:
            self.host_u0.copy_to(self.u, stream=self.stream)

    def args(self, x):
        """What launch() gets for a device array: CuPy's pointer, or the Buffer itself."""
        return x.data.ptr if self.a.memory == "cupy" else x

    def step(self):
        p, s, launch = self.p, self.stream, self.launch
        n = np.int32(self.a.n)
        u, v, f = self.args(self.u), self.args(self.v), self.args(self.f)
        for _ in range(self.a.sweeps):
            launch(s, self.sweep_cfg, self.jacobi, u, v, f, n, p.h2)
            launch(s, self.sweep_cfg, self.jacobi, v, u, f, n, p.h2)
        partial, out = self.args(self.partial), self.args(self.out)
        launch(s, self.residual_cfg, self.residual, u, f, partial, n, p.inv_h2)
        launch(s, self.sum_cfg, self.sum_partials, partial, np.int32(self.rblocks), out)
        if self.a.memory == "cupy":
            s.sync()
            res = self.out.get()
        else:
            self.out.copy_to(self.host_out, stream=s)
            s.sync()
            res = self.out_view
        return float(res[0]), float(res[1])

    def solution(self):
        if self.a.memory == "cupy":
            return self.u.get()
        host = self.pinned.allocate(self.p.f.nbytes, stream=self.stream)
        self.u.copy_to(host, stream=self.stream)
        self.stream.sync()
        return np.from_dlpack(host).view(self.p.dtype).copy()


def main():
    a = parse()
    p = Problem(a)
    solver = NumpySolver(a, p) if a.device == "cpu" else CoreSolver(a, p)
    solver.reset()
    for _ in range(a.warmup):
        solver.step()
    solver.reset()
    values, times = [], []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        values += solver.step()
        times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as fh:
            fh.write(struct.pack("<%dd" % len(values), *values))
            fh.write(np.ascontiguousarray(solver.solution(), dtype=p.dtype.newbyteorder("<")).tobytes())
    if a.time:
        if a.device == "cpu":
            variant, version = "numpy", "numpy=" + np.__version__
        else:
            from importlib.metadata import version as package_version
            variant, version = a.memory, "cuda_core=" + package_version("cuda-core")
        print("gs-wl: cuda_python variant=jacobi-%s device=%s dtype=%s n=%d sweeps=%d steps=%d warmup=%d %s "
              "median_us=%.3f mean_us=%.3f" % (
                  variant, a.device, a.dtype, a.n, a.sweeps, len(times), a.warmup, version,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
