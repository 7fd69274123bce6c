#!/usr/bin/env python3
"""k-means clustering in PyTorch with restarts and a convergence test, for the real-program suite.

What a data scientist writes when scikit-learn's KMeans is too slow and
the data already sits on the GPU: k-means++ seeding (each next centre
drawn with torch.multinomial in proportion to the squared distance to
the nearest chosen one), then Lloyd's iterations

    d = torch.cdist(X, C)                 (cuBLAS for the cross terms)
    labels = d.argmin(1)
    onehot = labels[:, None] == arange(k) (no scatter: the same bytes every run)
    C' = (onehot.T @ X) / counts          (an empty cluster keeps its centre)
    shift = ((C' - C) ** 2).sum().item()  (the read-back that ends the loop)

until the shift falls below --tol or --max-iter iterations, --restarts
times from different seedings, keeping the run of least inertia (read
back at each restart's end).  The number of iterations depends on the
data: the loop ends where the values say, as iterative solvers do.

--warmup W restarts first (untimed), then --restarts timed ones; a step
is one Lloyd iteration, read-back included (--time prints the median of
all timed iterations).  --out writes every shift and inertia read back
(float64), each restart's iteration count and the best centres.  Data
and seeding come from seeded generators (--seed; the seeding's draws
from a CUDA generator on the device), so every process computes the same
bytes.
"""
import argparse
import os
import statistics
import struct
import time

# cuBLAS then picks no reduction whose order can change between runs.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402


def make_blobs(a):
    g = torch.Generator(device="cpu").manual_seed(a.seed)
    centres = torch.randn(a.blobs, a.dim, generator=g) * 6.0
    which = torch.randint(0, a.blobs, (a.points,), generator=g)
    return centres[which] + torch.randn(a.points, a.dim, generator=g)


def seed_centres(x, k, gen):
    """k-means++: the first centre uniform, each next one drawn by D^2."""
    n = x.shape[0]
    first = torch.randint(0, n, (1,), generator=gen, device=x.device)
    centres = [x[first]]
    d2 = ((x - centres[0]) ** 2).sum(1)
    for _ in range(1, k):
        nxt = torch.multinomial(d2, 1, generator=gen)
        c = x[nxt]
        centres.append(c)
        d2 = torch.minimum(d2, ((x - c) ** 2).sum(1))
    return torch.cat(centres)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--points", type=int, default=65536)
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--k", type=int, default=32, help="clusters")
    ap.add_argument("--blobs", type=int, default=24, help="Gaussian blobs the data is drawn from")
    ap.add_argument("--restarts", "--steps", "--tokens", dest="restarts", type=int, default=8,
                    help="timed restarts")
    ap.add_argument("--warmup", type=int, default=1, help="untimed restarts")
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument("--tol", type=float, default=1e-4, help="squared centre shift that ends a restart")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if min(a.points, a.dim, a.k, a.blobs, a.restarts, a.max_iter) < 1 or a.warmup < 0:
        ap.error("--points, --dim, --k, --blobs, --restarts and --max-iter must be positive")
    if a.k > a.points or a.tol < 0:
        ap.error("--k must not exceed --points; --tol must be >= 0")
    dev = torch.device(a.device)
    torch.use_deterministic_algorithms(True)

    x = make_blobs(a).to(dev)
    gen = torch.Generator(device=dev).manual_seed(a.seed + 1)
    ar = torch.arange(a.k, device=dev)
    reads, iters, times = [], [], []
    best, best_inertia = None, float("inf")
    for r in range(a.warmup + a.restarts):
        c = seed_centres(x, a.k, gen)
        n = 0
        while n < a.max_iter:
            t0 = time.perf_counter()
            labels = torch.cdist(x, c).argmin(1)
            onehot = (labels[:, None] == ar).to(x.dtype)
            counts = onehot.sum(0)
            new = (onehot.T @ x) / counts.clamp(min=1)[:, None]
            new = torch.where((counts > 0)[:, None], new, c)
            shift = ((new - c) ** 2).sum().item()  # the convergence test's read-back
            c = new
            n += 1
            reads.append(shift)
            if r >= a.warmup:
                times.append(time.perf_counter() - t0)
            if shift <= a.tol:
                break
        inertia = (torch.cdist(x, c).min(1).values ** 2).sum().item()
        reads.append(inertia)
        iters.append(n)
        if r >= a.warmup and inertia < best_inertia:
            best, best_inertia = c, inertia
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            f.write(struct.pack("<%di" % len(iters), *iters))
            f.write(best.double().cpu().contiguous().numpy().tobytes())
    if a.time:
        print("gs-wl: torch_kmeans device=%s points=%d dim=%d k=%d restarts=%d warmup=%d iterations=%d "
              "steps=%d median_us=%.3f mean_us=%.3f" % (
                  dev.type, a.points, a.dim, a.k, a.restarts, a.warmup, sum(iters), len(times),
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
