#!/usr/bin/env python3
"""An iterative solver written with CuPy, for the real-program suite.

Solves the 2-D Poisson problem (the 5-point Laplacian on an --n x --n grid,
zero boundary) the way a CuPy user writes it:
  - cupy.RawKernel for the stencil (matrix-free A @ x),
  - cupy.ElementwiseKernel for the fused vector updates,
  - cupy.ReductionKernel for p . Ap,
  - ordinary CuPy reductions (cupy.dot, cupy.linalg.norm),
with every scalar kept on the device (0-d arrays), and the residual norm
read back to the host (float()) every --check iterations to test for
convergence.  A step is --check iterations and that read-back.  When a
solve converges (or reaches --max-iter) the next right-hand side is
started, so the program does the same kind of work for as long as asked.

  --method cg      conjugate gradients: stencil, p.Ap reduction, fused x/r
                   update, cupy.dot(r, r), fused p update per iteration.
  --method jacobi  Jacobi sweeps: one stencil-update RawKernel per iteration;
                   the check computes the residual (stencil + elementwise)
                   and its norm.

What it exercises: CuPy compiles with NVRTC, loads modules with
cuModuleLoadData and launches with cuLaunchKernel; cupy.dot goes to cuBLAS.
Compiled kernels are cached on disk (CUPY_CACHE_DIR).  Reductions run in a
fixed order (no atomics), so every process computes the same bytes.

--warmup W steps first (compilation, the memory pool), then the solver
starts again from zero for --steps timed steps.  --out writes every
read-back residual (float64) and then the final solution's bytes; --time
prints one gs-wl line with the median wall time of one step.
"""
import argparse
import statistics
import struct
import time

import cupy as cp

STENCIL = r"""
extern "C" __global__ void laplace5(const REAL *x, REAL *y, int n)
{
    /* y = A x, A the 5-point Laplacian with zero (Dirichlet) boundary. */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n * n)
        return;
    int r = i / n, c = i - r * n;
    REAL v = (REAL)4 * x[i];
    if (r > 0) v -= x[i - n];
    if (r < n - 1) v -= x[i + n];
    if (c > 0) v -= x[i - 1];
    if (c < n - 1) v -= x[i + 1];
    y[i] = v;
}

extern "C" __global__ void jacobi5(const REAL *x, const REAL *b, REAL *y, int n)
{
    /* One Jacobi sweep: y = (b + sum of the neighbours of x) / 4. */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n * n)
        return;
    int r = i / n, c = i - r * n;
    REAL s = b[i];
    if (r > 0) s += x[i - n];
    if (r < n - 1) s += x[i + n];
    if (c > 0) s += x[i - 1];
    if (c < n - 1) s += x[i + 1];
    y[i] = s * (REAL)0.25;
}
"""

# x += alpha p, r -= alpha Ap, alpha = rr / pAp (device scalars, broadcast).
cg_update = cp.ElementwiseKernel(
    "T rr, T pap, T p, T ap", "T x, T r",
    "T alpha = rr / pap; x += alpha * p; r -= alpha * ap;", "cg_update")
# p = r + (rr_new / rr_old) p
cg_direction = cp.ElementwiseKernel(
    "T r, T rr_new, T rr_old", "T p", "p = r + (rr_new / rr_old) * p;", "cg_direction")
# p . Ap
dot_kernel = cp.ReductionKernel("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "cg_dot")
# r = b - Ax
residual = cp.ElementwiseKernel("T b, T ax", "T r", "r = b - ax;", "residual")


class Solver:
    def __init__(self, a):
        self.a = a
        self.dtype = cp.float32 if a.dtype == "float32" else cp.float64
        real = "float" if a.dtype == "float32" else "double"
        module = cp.RawModule(code=STENCIL, options=("-DREAL=" + real,))
        self.laplace = module.get_function("laplace5")
        self.jacobi = module.get_function("jacobi5")
        self.size = a.n * a.n
        self.grid = ((self.size + 255) // 256,)
        # The right-hand side: seeded uniform noise (CuPy's generator is
        # deterministic for a seed, so every process has the same bytes).
        rng = cp.random.default_rng(a.seed)
        self.b0 = (rng.random(self.size, dtype=cp.float64) - 0.5).astype(self.dtype)
        self.rhs = 0
        self.tol = 1e-4 if self.dtype == cp.float32 else 1e-9

    def start(self):
        """A new system: the next right-hand side, x = 0."""
        self.b = cp.roll(self.b0, self.rhs * 7919) * (1 + 0.125 * (self.rhs % 4))
        self.rhs += 1
        self.bnorm = float(cp.linalg.norm(self.b))
        self.x = cp.zeros(self.size, self.dtype)
        self.iters = 0
        if self.a.method == "cg":
            self.r = self.b.copy()
            self.p = self.r.copy()
            self.ap = cp.empty_like(self.r)
            self.rr = cp.dot(self.r, self.r)
        else:
            self.y = cp.empty_like(self.x)
            self.ax = cp.empty_like(self.x)
            self.res = cp.empty_like(self.x)

    def iterate(self):
        n = cp.int32(self.a.n)
        if self.a.method == "cg":
            self.laplace(self.grid, (256,), (self.p, self.ap, n))
            pap = dot_kernel(self.p, self.ap)
            cg_update(self.rr, pap, self.p, self.ap, self.x, self.r)
            rr_new = cp.dot(self.r, self.r)
            cg_direction(self.r, rr_new, self.rr, self.p)
            self.rr = rr_new
        else:
            self.jacobi(self.grid, (256,), (self.x, self.b, self.y, n))
            self.x, self.y = self.y, self.x
        self.iters += 1

    def residual_norm(self):
        if self.a.method == "cg":
            return cp.linalg.norm(self.r)
        self.laplace(self.grid, (256,), (self.x, self.ax, cp.int32(self.a.n)))
        residual(self.b, self.ax, self.res)
        return cp.linalg.norm(self.res)

    def step(self):
        """--check iterations and the read-back; a converged system makes
        way for the next one."""
        for _ in range(self.a.check):
            self.iterate()
        res = float(self.residual_norm())  # the host read-back
        if res <= self.tol * self.bnorm or self.iters >= self.a.max_iter:
            self.start()
        return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--method", choices=("cg", "jacobi"), default="cg")
    ap.add_argument("--n", type=int, default=256, help="grid points per side")
    ap.add_argument("--check", type=int, default=10, help="iterations between read-backs")
    ap.add_argument("--max-iter", type=int, default=4000, help="iterations before a new system")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("cuda",), default="cuda", help="CuPy runs on the GPU only")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()

    s = Solver(a)
    s.start()
    for _ in range(a.warmup):
        s.step()
    s.rhs = 0
    s.start()
    residuals, times = [], []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        residuals.append(s.step())
        times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(residuals), *residuals))
            f.write(s.x.get().tobytes())
    if a.time:
        print("gs-wl: cupy_solver variant=%s n=%d check=%d dtype=%s systems=%d steps=%d warmup=%d "
              "cupy=%s median_us=%.3f mean_us=%.3f" % (
                  a.method, a.n, a.check, a.dtype, s.rhs, len(times), a.warmup, cp.__version__,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
