#!/usr/bin/env python3
"""A batch of Kalman filters with torch.linalg, for the real-program suite.

What a tracking or state-estimation user writes in PyTorch: --batch
independent linear-Gaussian models (a constant-velocity model of --dim / 2
positions and as many velocities, --obs observed coordinates), filtered
one time step at a time over a stream of observations:

    x = F @ x;  P = F @ P @ F.T + Q                      (predict, bmm)
    S = H @ P @ H.T + R;  L = torch.linalg.cholesky(S)   (innovation)
    K = torch.cholesky_solve(H @ P, L).transpose(-1, -2) (gain)
    v = y - H @ x;  x = x + K @ v;  P = (I - K @ H) @ P  (update)
    loglik += -0.5 * (v . S^-1 v + log det S)            (from L)

Observations are simulated from the same models with a seeded device
generator before timing starts.  torch.linalg.cholesky checks its info
(the factorisation's success) and so reads back to the host every time
step, as it does in every user's program; --no-check uses
torch.linalg.cholesky_ex instead, which does not.  A step is --check time
steps and the log-likelihood read back (.item()); every --horizon time
steps the filters start again from their prior.

What it exercises: cuBLAS batched GEMMs (bmm) and PyTorch's elementwise
kernels; torch.linalg's Cholesky and triangular solves (cuSOLVER's batched
potrf/potrs, or the kernels PyTorch picks for small batched matrices),
with their info arrays; synchronising reads.  Float64 by default (filters
are run in double precision; --dtype float32 allowed).  Every process
computes the same bytes: no atomics, fixed reduction order.

--warmup W steps first, then the filters restart and --steps timed steps
run.  --out writes every read-back (float64) and the final state means and
covariances; --time prints one gs-wl line with the median wall time of one
step, read-back included.
"""
import argparse
import statistics
import struct
import time

import torch


class Filters:
    def __init__(self, a, dev, dtype):
        self.a, self.dev, self.dtype = a, dev, dtype
        g = torch.Generator(device="cpu").manual_seed(a.seed)
        n, m, b = a.dim, a.obs, a.batch
        half = n // 2
        dt = 0.1
        f = torch.eye(n, dtype=torch.float64)
        f[:half, half:] = dt * torch.eye(half, dtype=torch.float64)
        self.F = f.expand(b, n, n).contiguous()
        h = torch.zeros(m, n, dtype=torch.float64)
        h[:, :m] = torch.eye(m, dtype=torch.float64)
        self.H = h.expand(b, m, n).contiguous()
        q_scale = 0.01 + 0.05 * torch.rand(b, 1, 1, generator=g, dtype=torch.float64)
        self.Q = q_scale * torch.eye(n, dtype=torch.float64)
        r_scale = 0.1 + 0.5 * torch.rand(b, 1, 1, generator=g, dtype=torch.float64)
        self.R = r_scale * torch.eye(m, dtype=torch.float64)
        # The observations: a trajectory of each model, simulated on the host.
        steps = a.horizon
        x = torch.randn(b, n, 1, generator=g, dtype=torch.float64)
        ys = []
        for _ in range(steps):
            x = self.F @ x + q_scale.sqrt() * torch.randn(b, n, 1, generator=g, dtype=torch.float64)
            ys.append(self.H @ x + r_scale.sqrt() * torch.randn(b, m, 1, generator=g, dtype=torch.float64))
        self.ys = torch.stack(ys).to(dev, dtype)
        for name in ("F", "H", "Q", "R"):
            setattr(self, name, getattr(self, name).to(dev, dtype))
        self.Ft = self.F.transpose(-1, -2).contiguous()
        self.Ht = self.H.transpose(-1, -2).contiguous()
        self.I = torch.eye(n, dtype=dtype, device=dev).expand(b, n, n)

    def start(self):
        b, n = self.a.batch, self.a.dim
        self.x = torch.zeros(b, n, 1, dtype=self.dtype, device=self.dev)
        self.P = torch.eye(n, dtype=self.dtype, device=self.dev).repeat(b, 1, 1)
        self.loglik = torch.zeros(b, dtype=self.dtype, device=self.dev)
        self.t = 0

    def update(self, y):
        x = self.F @ self.x
        P = self.F @ self.P @ self.Ft + self.Q
        S = self.H @ P @ self.Ht + self.R
        L = torch.linalg.cholesky_ex(S).L if self.a.no_check else torch.linalg.cholesky(S)
        K = torch.cholesky_solve(self.H @ P, L).transpose(-1, -2)
        v = y - self.H @ x
        self.x = x + K @ v
        self.P = (self.I - K @ self.H) @ P
        w = torch.cholesky_solve(v, L)
        logdet = 2.0 * torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1)
        self.loglik = self.loglik - 0.5 * ((v * w).sum((-2, -1)) + logdet)

    def step(self):
        for _ in range(self.a.check):
            if self.t == self.a.horizon:
                self.start()
            self.update(self.ys[self.t])
            self.t += 1
        return self.loglik.sum().item()  # the host read-back

    def final(self):
        return self.x.cpu().numpy().tobytes() + self.P.cpu().numpy().tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=256, help="independent filters")
    ap.add_argument("--dim", type=int, default=8, help="state size (positions and velocities)")
    ap.add_argument("--obs", type=int, default=4, help="observed coordinates")
    ap.add_argument("--check", type=int, default=4, help="time steps between read-backs")
    ap.add_argument("--horizon", type=int, default=96, help="time steps before the filters restart")
    ap.add_argument("--no-check", action="store_true", help="torch.linalg.cholesky_ex: no info read-back")
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.dim % 2 or a.obs > a.dim // 2 or a.obs < 1:
        ap.error("--dim must be even and --obs between 1 and --dim / 2")
    if a.check < 1 or a.horizon < 1 or a.batch < 1:
        ap.error("--check, --horizon and --batch must be positive")
    dev = torch.device(a.device)
    dtype = torch.float64 if a.dtype == "float64" else torch.float32
    torch.backends.cuda.matmul.allow_tf32 = False

    with torch.no_grad():
        kf = Filters(a, dev, dtype)
        kf.start()
        for _ in range(a.warmup):
            kf.step()
        kf.start()
        reads, times = [], []
        for _ in range(a.steps):
            t0 = time.perf_counter()
            reads.append(kf.step())
            times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            f.write(kf.final())
    if a.time:
        print("gs-wl: torch_kalman variant=%s batch=%d dim=%d obs=%d check=%d dtype=%s device=%s "
              "steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  "ex" if a.no_check else "checked", a.batch, a.dim, a.obs, a.check, a.dtype, dev.type,
                  len(times), a.warmup, statistics.median(times) * 1e6, statistics.mean(times) * 1e6),
              flush=True)


if __name__ == "__main__":
    main()
