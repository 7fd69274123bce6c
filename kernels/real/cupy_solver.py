#!/usr/bin/env python3
"""Iterative solvers and a spectral time stepper written with CuPy, for the real-program suite.

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
  --method spcg    the same problem and the same conjugate gradients, written
                   the way a SciPy user ports them: the matrix assembled with
                   cupyx.scipy.sparse (diags, identity, kron; CSR), A @ p
                   through cuSPARSE's SpMV, the vector updates as plain CuPy
                   array expressions (alpha * p, r + beta * p: one kernel
                   and one temporary per operator), cupy.dot for the inner
                   products.  The loop is written out, as in CuPy's own
                   examples/cg, rather than calling
                   cupyx.scipy.sparse.linalg.cg: that function tests its
                   residual with a host read-back in every iteration, and
                   calling it --check iterations at a time would restart the
                   search directions at every call (not CG any more).
  --method spectral
                   a pseudo-spectral Gray-Scott reaction-diffusion model on an
                   --n x --n periodic grid (no solve, no restarts): each time
                   step evaluates the reaction terms with plain CuPy array
                   expressions and takes the diffusion implicitly in Fourier
                   space, cupy.fft.rfft2, a multiply by 1 / (1 + dt D k^2),
                   cupy.fft.irfft2, for both species (cuFFT plans from CuPy's
                   plan cache).  A step is --check time steps and float() of
                   the sum of v.

What it exercises: CuPy compiles with NVRTC, loads modules with
cuModuleLoadData and launches with cuLaunchKernel; cupy.dot goes to cuBLAS,
A @ p to cuSPARSE (cusparseSpMV; a fresh output vector, zeroed with a memset,
and a workspace from CuPy's memory pool every call), the FFTs to cuFFT
(cufftExec* on a cached plan, its work area from the memory pool).
Compiled kernels are cached on disk (CUPY_CACHE_DIR).  Reductions run in a
fixed order (no atomics; CUB's device reductions for sums and norms), and
cuFFT computes the same bytes for the same plan, so every process computes
the same bytes.  One caveat: CuPy's A @ x asks cuSPARSE for its default SpMV
algorithm, which for CSR is CUSPARSE_SPMV_CSR_ALG1, documented as "may
produce slightly different results during different runs" (only CSR_ALG2 is
documented as bit-wise deterministic, and CuPy offers no way to choose it):
spcg's outputs are compared between processes like every other program's.

--warmup W steps first (compilation, the memory pool, cuFFT plans and
cuSPARSE's handle), then the solver starts again from zero (spectral: from
its initial state) for --steps timed steps.  --out writes every read-back
value (float64) and then the final solution's bytes (spectral: u, then v);
--time prints one gs-wl line with the median wall time of one step.

Options: --steps (--tokens) N, --warmup W, --method cg|jacobi|spcg|spectral,
--n grid points per side, --check iterations (time steps) between
read-backs, --max-iter iterations before a new system (solvers), --dtype
float32|float64, --seed S (right-hand side; spectral: the initial noise),
--device cuda (CuPy runs on the GPU only), --out FILE, --time.
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
        if a.method == "spcg":
            # Imported here so that cg and jacobi do not load cuSPARSE.
            import cupyx.scipy.sparse as sparse

            # The same 5-point Laplacian as a CSR matrix, the textbook way:
            # T = tridiag(-1, 2, -1), A = I (x) T + T (x) I.
            t = sparse.diags([-1, 2, -1], [-1, 0, 1], shape=(a.n, a.n), dtype=self.dtype, format="csr")
            i = sparse.identity(a.n, dtype=self.dtype, format="csr")
            self.A = (sparse.kron(i, t) + sparse.kron(t, i)).tocsr()
        else:
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
        elif self.a.method == "spcg":
            self.r = self.b.copy()
            self.p = self.r.copy()
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
        elif self.a.method == "spcg":
            ap = self.A @ self.p  # cuSPARSE SpMV
            alpha = self.rr / cp.dot(self.p, ap)
            self.x += alpha * self.p
            self.r -= alpha * ap
            rr_new = cp.dot(self.r, self.r)
            self.p = self.r + (rr_new / self.rr) * self.p
            self.rr = rr_new
        else:
            self.jacobi(self.grid, (256,), (self.x, self.b, self.y, n))
            self.x, self.y = self.y, self.x
        self.iters += 1

    def residual_norm(self):
        if self.a.method in ("cg", "spcg"):
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

    def final(self):
        return cp.asnumpy(self.x).tobytes()

    def describe(self):
        return "systems=%d" % self.rhs


class GrayScott:
    """Gray-Scott reaction-diffusion, u + 2v -> 3v, on a periodic grid:
        du/dt = Du lap(u) - u v^2 + F (1 - u)
        dv/dt = Dv lap(v) + u v^2 - (F + k) v
    pseudo-spectral, semi-implicit: the reaction explicit (forward Euler),
    the diffusion implicit (backward Euler) in Fourier space."""
    DU, DV, F, K, DT = 0.16, 0.08, 0.060, 0.062, 1.0  # grid spacing 1

    def __init__(self, a):
        self.a = a
        self.dtype = cp.float32 if a.dtype == "float32" else cp.float64
        n = a.n
        kx = 2 * cp.pi * cp.fft.fftfreq(n)
        ky = 2 * cp.pi * cp.fft.rfftfreq(n)
        k2 = kx[:, None] ** 2 + ky[None, :] ** 2  # (n, n // 2 + 1), rfft2's layout
        self.lu = (1 / (1 + self.DT * self.DU * k2)).astype(self.dtype)
        self.lv = (1 / (1 + self.DT * self.DV * k2)).astype(self.dtype)
        # A square of v in the middle of u = 1, v = 0, and seeded noise that
        # breaks the symmetry (CuPy's generator is deterministic for a seed).
        rng = cp.random.default_rng(a.seed)
        i = cp.arange(n)
        side = cp.abs(i - n // 2) < max(n // 10, 2)
        square = (side[:, None] & side[None, :]).astype(cp.float64)
        self.u0 = (1 - 0.5 * square - 0.02 * rng.random((n, n), dtype=cp.float64)).astype(self.dtype)
        self.v0 = (0.25 * square + 0.02 * rng.random((n, n), dtype=cp.float64)).astype(self.dtype)
        self.rhs = 0

    def start(self):
        """Back to the initial state."""
        self.u = self.u0.copy()
        self.v = self.v0.copy()
        self.rhs += 1

    def iterate(self):
        u, v = self.u, self.v
        uvv = u * v * v
        fu = u + self.DT * (self.F * (1 - u) - uvv)
        fv = v + self.DT * (uvv - (self.F + self.K) * v)
        self.u = cp.fft.irfft2(cp.fft.rfft2(fu) * self.lu, s=u.shape)
        self.v = cp.fft.irfft2(cp.fft.rfft2(fv) * self.lv, s=v.shape)

    def step(self):
        """--check time steps and the read-back."""
        for _ in range(self.a.check):
            self.iterate()
        return float(self.v.sum())  # the host read-back

    def final(self):
        return cp.asnumpy(self.u).tobytes() + cp.asnumpy(self.v).tobytes()

    def describe(self):
        return "model=gray-scott"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--method", choices=("cg", "jacobi", "spcg", "spectral"), default="cg")
    ap.add_argument("--n", type=int, default=256, help="grid points per side")
    ap.add_argument("--check", type=int, default=10, help="iterations (spectral: time steps) between read-backs")
    ap.add_argument("--max-iter", type=int, default=4000, help="iterations before a new system (solvers)")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("cuda",), default="cuda", help="CuPy runs on the GPU only")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--pool", choices=("default", "async"), default="default",
                    help="CuPy's memory pool, or its stream-ordered one (cudaMallocAsync)")
    a = ap.parse_args()

    if a.pool == "async":
        cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
    s = GrayScott(a) if a.method == "spectral" else Solver(a)
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
            f.write(s.final())
    if a.time:
        print("gs-wl: cupy_solver variant=%s n=%d check=%d dtype=%s pool=%s %s steps=%d warmup=%d "
              "cupy=%s median_us=%.3f mean_us=%.3f" % (
                  a.method, a.n, a.check, a.dtype, a.pool, s.describe(), len(times), a.warmup, cp.__version__,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
