#!/usr/bin/env python3
"""A preconditioned CG solver on a torch sparse CSR matrix, for the real-program suite.

How a PyTorch user solves a sparse linear system without leaving PyTorch:
the 5-point Laplacian of an --n x --n grid plus a seeded positive
diagonal (a screened Poisson problem, so the system is well conditioned
and every run converges the same way), built once on the host as COO
triplets and turned into a CSR tensor on the device
(torch.sparse_coo_tensor(...).to_sparse_csr()); then CG with a Jacobi
preconditioner written with plain tensor operations:

    q = A @ p                       (cuSPARSE SpMV; --rhs R > 1: SpMM on R columns)
    alpha = rz / (p . q)            (per column, on the device)
    x += alpha p; r -= alpha q; z = r / diag(A)
    rz_new = r . z; beta = rz_new / rz; p = z + beta p

Nothing is read back inside an iteration: alpha and beta stay tensors.  A
step is --check iterations and then the residual's norm read back
(.item()), as a solver checks convergence; after every --restart steps
the next of --sets right-hand sides is loaded (an index into a tensor kept
on the device) and the iteration restarts from zero, so the steps never
run out of work.

--warmup W steps first (cuSPARSE's handle and buffers, PyTorch's caching
allocator), then --steps timed steps.  --out writes every norm read back
(float64) and the final solution; --time prints one gs-wl line with the
median wall time of one step.  The matrix and right-hand sides come from
the CPU generator (--seed), so every process computes the same bytes.
"""
import argparse
import statistics
import struct
import time

import torch


def laplacian(n, shift, gen, dtype):
    """The screened 5-point Laplacian of an n x n grid as COO triplets (host)."""
    idx = torch.arange(n * n).reshape(n, n)
    rows, cols, vals = [], [], []
    diag = 4.0 + shift * (1.0 + torch.rand(n * n, generator=gen, dtype=torch.float64))
    rows.append(idx.reshape(-1))
    cols.append(idx.reshape(-1))
    vals.append(diag)
    for a, b in ((idx[1:, :], idx[:-1, :]), (idx[:-1, :], idx[1:, :]),
                 (idx[:, 1:], idx[:, :-1]), (idx[:, :-1], idx[:, 1:])):
        rows.append(a.reshape(-1))
        cols.append(b.reshape(-1))
        vals.append(-torch.ones(a.numel(), dtype=torch.float64))
    ij = torch.stack([torch.cat(rows), torch.cat(cols)])
    return ij, torch.cat(vals).to(dtype), diag.to(dtype)


class CG:
    def __init__(self, a, dev, dtype):
        self.a = a
        gen = torch.Generator(device="cpu").manual_seed(a.seed)
        m = a.n * a.n
        ij, vals, diag = laplacian(a.n, a.shift, gen, dtype)
        coo = torch.sparse_coo_tensor(ij, vals, (m, m)).coalesce()
        self.A = coo.to(dev).to_sparse_csr()
        self.inv_diag = (1.0 / diag).to(dev).reshape(m, 1)
        self.B = torch.randn(a.sets, m, a.rhs, generator=gen, dtype=dtype).to(dev)
        self.set = 0
        self.restart()

    def restart(self):
        b = self.B[self.set % self.a.sets]
        self.set += 1
        self.x = torch.zeros_like(b)
        self.r = b.clone()
        self.z = self.r * self.inv_diag
        self.p = self.z.clone()
        self.rz = (self.r * self.z).sum(0)

    def matvec(self, p):
        if self.a.rhs == 1:
            return (self.A @ p.reshape(-1)).reshape(-1, 1)  # SpMV
        return self.A @ p  # SpMM

    def iterate(self):
        q = self.matvec(self.p)
        alpha = self.rz / (self.p * q).sum(0)
        self.x += alpha * self.p
        self.r -= alpha * q
        self.z = self.r * self.inv_diag
        rz = (self.r * self.z).sum(0)
        beta = rz / self.rz
        self.rz = rz
        self.p = self.z + beta * self.p

    def norm(self):
        return torch.linalg.vector_norm(self.r).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--n", type=int, default=128, help="grid points a side")
    ap.add_argument("--rhs", type=int, default=1, help="right-hand sides solved at once (1: SpMV, more: SpMM)")
    ap.add_argument("--check", type=int, default=4, help="iterations between norm read-backs")
    ap.add_argument("--restart", type=int, default=25, help="steps before the next right-hand side")
    ap.add_argument("--sets", type=int, default=3, help="right-hand sides kept on the device")
    ap.add_argument("--shift", type=float, default=0.5, help="the diagonal's screening term")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float64")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.n < 4 or a.rhs < 1 or a.check < 1 or a.restart < 1 or a.sets < 1:
        ap.error("--n must be >= 4; --rhs, --check, --restart and --sets positive")
    if a.steps < 1 or a.warmup < 0 or not a.shift > 0:
        ap.error("--steps must be positive, --warmup >= 0, --shift positive")
    dev = torch.device(a.device)
    dtype = torch.float64 if a.dtype == "float64" else torch.float32

    reads, times = [], []
    with torch.no_grad():
        cg = CG(a, dev, dtype)
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            if i and i % a.restart == 0:
                cg.restart()
            for _ in range(a.check):
                cg.iterate()
            reads.append(cg.norm())
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
        final = cg.x.cpu().contiguous().numpy().tobytes()
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            f.write(final)
    if a.time:
        print("gs-wl: torch_sparse n=%d rhs=%d check=%d dtype=%s device=%s steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f" % (
                  a.n, a.rhs, a.check, a.dtype, dev.type, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
