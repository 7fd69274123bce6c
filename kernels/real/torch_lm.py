#!/usr/bin/env python3
"""Batched Levenberg-Marquardt curve fitting with torch.func and torch.linalg, for the real-program suite.

What a lab's fitting script looks like once it moves to the GPU: --batch
independent curves (damped oscillations y = a exp(-b t) cos(c t + d) + e,
--samples points each, noisy) fitted at once.  One iteration:

    r = f(theta, t) - y                      (residuals, B x M)
    J = vmap(jacfwd(f))(theta, t)            (torch.func: forward-mode AD, B x M x 5)
    A = J^T J,  g = J^T r                    (bmm)
    delta = linalg.solve(A + lam diag(A), -g)
    accept where the new cost is lower: theta, lam updated per curve
                                             (torch.where, no host branch)

torch.linalg.solve checks its info (a singular system raises) and so
reads back to the host every iteration, as it does in every user's
program; --no-check uses torch.linalg.solve_ex instead.  Every --log
iterations the script reads the batch's largest cost back (.item()) and
keeps it, as a fitting script prints its progress.  Every --restart
iterations the next batch of curves (one of --sets, made up front) is
loaded and the parameters start again from their initial guess: the
data tensors change then.

What it exercises: torch.func's vmapped forward-mode AD (batched
elementwise kernels), cuBLAS batched GEMMs, PyTorch's batched LU solves
(cuBLAS's or cuSOLVER's getrf/getrs for small matrices) with their info
arrays, reductions, synchronising reads.  Float64 by default (fits are
run in double precision); --dtype float32 allowed.

--warmup W iterations first, then --steps timed iterations.  --out
writes the read-backs (float64) and the final parameters; --time prints
one gs-wl line with the median wall time of one iteration.  The curves
come from the CPU generator (--seed), so every process computes the same
bytes.
"""
import argparse
import statistics
import struct
import time

import torch
from torch.func import jacfwd, vmap

NPARAM = 5


def model(theta, t):
    """One curve: theta = (a, b, c, d, e), t the sample times."""
    a, b, c, d, e = theta.unbind(-1)
    return a * torch.exp(-b * t) * torch.cos(c * t + d) + e


def cost(theta, t, y):
    r = vmap(model)(theta, t) - y
    return (r * r).sum(-1)


def make_sets(a, dtype):
    g = torch.Generator(device="cpu").manual_seed(a.seed)
    t = torch.linspace(0.0, 10.0, a.samples, dtype=dtype).expand(a.batch, a.samples).contiguous()
    sets = []
    for _ in range(a.sets):
        lo = torch.tensor([0.5, 0.05, 0.5, -1.0, -0.5], dtype=dtype)
        hi = torch.tensor([2.0, 0.50, 3.0, 1.0, 0.5], dtype=dtype)
        true = lo + (hi - lo) * torch.rand(a.batch, NPARAM, generator=g, dtype=dtype)
        y = vmap(model)(true, t) + 0.02 * torch.randn(a.batch, a.samples, generator=g, dtype=dtype)
        # The initial guess: the truth disturbed by up to 20% (a fit from a good guess).
        guess = true * (1 + 0.2 * (2 * torch.rand(a.batch, NPARAM, generator=g, dtype=dtype) - 1))
        sets.append((y, guess))
    return t, sets


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=150, help="timed iterations")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=512, help="curves fitted at once")
    ap.add_argument("--samples", type=int, default=128, help="points on a curve")
    ap.add_argument("--sets", type=int, default=3, help="batches of curves, fitted in turn")
    ap.add_argument("--restart", type=int, default=20, help="iterations before the next batch of curves")
    ap.add_argument("--log", type=int, default=5, help="iterations between progress read-backs")
    ap.add_argument("--no-check", action="store_true", help="torch.linalg.solve_ex: no info read-back")
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if min(a.batch, a.samples, a.sets, a.restart, a.log, a.steps) < 1 or a.warmup < 0:
        ap.error("--batch, --samples, --sets, --restart, --log and --steps must be positive")
    if a.samples < NPARAM:
        ap.error("--samples must be at least %d (the parameters)" % NPARAM)
    dev = torch.device(a.device)
    dtype = torch.float64 if a.dtype == "float64" else torch.float32
    torch.backends.cuda.matmul.allow_tf32 = False
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    t, sets = make_sets(a, dtype)
    t = t.to(dev)
    sets = [(y.to(dev), g.to(dev)) for y, g in sets]
    jac = vmap(jacfwd(model, argnums=0))
    eye = torch.eye(NPARAM, dtype=dtype, device=dev)

    reads, times = [], []
    theta = lam = y = c = None
    # No torch.no_grad(): nothing here requires a gradient, and torch.func's
    # transforms would ignore an outer one anyway.
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        if i % a.restart == 0:
            y, guess = sets[(i // a.restart) % a.sets]
            theta = guess.clone()
            lam = torch.full((a.batch,), 1e-3, dtype=dtype, device=dev)
            c = cost(theta, t, y)
        r = vmap(model)(theta, t) - y
        J = jac(theta, t)  # B x M x 5
        Jt = J.transpose(1, 2)
        A = torch.bmm(Jt, J)
        g = torch.bmm(Jt, r.unsqueeze(-1))
        damped = A + lam.view(-1, 1, 1) * (A * eye)
        if a.no_check:
            delta = torch.linalg.solve_ex(damped, -g).result.squeeze(-1)
        else:
            delta = torch.linalg.solve(damped, -g).squeeze(-1)
        trial = theta + delta
        c_new = cost(trial, t, y)
        ok = c_new < c
        theta = torch.where(ok.unsqueeze(-1), trial, theta)
        c = torch.where(ok, c_new, c)
        lam = torch.where(ok, lam * 0.3, lam * 2.0).clamp(1e-9, 1e9)
        if (i + 1) % a.log == 0:
            reads.append(c.max().item())  # the progress line's read-back
        else:
            sync()  # the timer's, not the script's: an iteration timed to its end
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            f.write(theta.double().cpu().numpy().tobytes())
    if a.time:
        print("gs-wl: torch_lm variant=%s batch=%d samples=%d dtype=%s device=%s steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f" % (
                  "ex" if a.no_check else "checked", a.batch, a.samples, a.dtype, dev.type,
                  len(times), a.warmup, statistics.median(times) * 1e6, statistics.mean(times) * 1e6),
              flush=True)


if __name__ == "__main__":
    main()
