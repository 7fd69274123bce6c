#!/usr/bin/env python3
"""Conjugate gradients with the loop on the device (jax.lax), for the real-program suite.

What a JAX user writes to solve a linear system inside one jit: the 2-D
Poisson problem (the 5-point Laplacian on an --n x --n grid, zero
boundary) as a matrix-free operator (jnp.pad and four shifted slices), and
conjugate gradients whose iterations run in a jax.lax loop under jax.jit,
so the host dispatches one executable a solve:

    @jax.jit
    def solve(b):
        state = lax.while_loop(not_converged, cg_iteration, init(b))
        return x, iterations, relative_residual

The program solves for a sequence of right-hand sides (--rhs random fields
from jax.random with --seed, cycled), starting every solve from zero, and
reads the iteration count and the relative residual back per solve
(int(k), float(res): two device-to-host transfers).

  --loop while  (default) lax.while_loop whose condition is the convergence
                test, rs > tol^2 * |b|^2 and k < --max-iter (--tol 1e-5):
                XLA's GPU runtime evaluates the condition on the device and
                copies the predicate to the host every iteration (a small
                device-to-host copy and a stream synchronisation an
                iteration, unless a command buffer keeps the loop on the
                device), so the number of iterations, and of launches, is
                the data's: about 280 at the defaults, differing by a few
                between right-hand sides.
  --loop fori   lax.fori_loop over a fixed --iters iterations (default 250),
                no convergence test: a loop with a known trip count.
  --loop python the loop in Python, as users write it when they want to
                watch it: step = jax.jit(cg_iteration) called --iters times,
                the relative residual read back (float) every --check
                iterations, and the solve stops there once it is below
                --tol (or at --max-iter): one executable dispatched an
                iteration, a synchronisation every --check.
  --loop eager  the same Python loop with nothing jitted (op by op, as
                prototypes and notebooks run): every jnp operation is an
                executable of its own, dispatched from Python.

An iteration is a handful of XLA fusions: the stencil, the p.Ap and r.r
reductions, the x/r/p updates, the loop condition (while).  CUPTI on the
H100 machine (jax 0.11.2, command buffers off) counted 7 kernels and 2
memcpys an iteration with --loop while (about 15 ms a solve, 290
iterations), 6 kernels and 1 memcpy with --loop fori (about 9 ms); with
command buffers on, nearly all kernels ran as graph nodes (about 7.6 and
3.1 ms a solve).  XLA reaches the
driver through its own libcuda handle (cuLaunchKernel, cuLaunchKernelEx).
XLA command buffers (CUDA graphs XLA builds itself, with conditional nodes
for loops where it supports them) are chosen by the caller through
XLA_FLAGS: --xla_gpu_enable_command_buffer= turns them off; the default is
on.  Set XLA_PYTHON_CLIENT_PREALLOCATE=false so that JAX does not take
most of the GPU's memory.

Determinism: --xla_gpu_deterministic_ops=true is added to XLA_FLAGS unless
it names that flag already (no atomics in reductions); float32 throughout.

--warmup W solves first (the first compiles), then --steps timed ones.
--out writes every solve's iteration count (int32) and relative residual
(float32), little-endian, then the last solve's solution (float32 bytes,
[n, n]); --time prints one gs-wl line with the median wall time of one
solve, both read-backs included, and the mean iteration count.
"""
import argparse
import os
import statistics
import struct
import time

import xla_env


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed solves")
    ap.add_argument("--warmup", type=int, default=5, help="untimed solves first (the first compiles)")
    ap.add_argument("--loop", choices=("while", "fori", "python", "eager"), default="while")
    ap.add_argument("--check", type=int, default=25, help="python/eager: read the residual back every N iterations")
    ap.add_argument("--n", type=int, default=128, help="grid points per side")
    ap.add_argument("--tol", type=float, default=1e-5, help="while: relative residual to reach")
    ap.add_argument("--max-iter", type=int, default=1000, help="while: iterations at most")
    ap.add_argument("--iters", type=int, default=250, help="fori: iterations of every solve")
    ap.add_argument("--rhs", type=int, default=8, help="distinct right-hand sides, cycled")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.n < 3 or a.rhs < 1 or a.steps < 1 or a.check < 1:
        ap.error("--n must be >= 3, --rhs, --steps and --check >= 1")
    return a


def main():
    a = parse()
    xla_env.configure(a.device, autotune_off=False)  # before JAX is imported
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    platform = jax.devices()[0].platform
    tol2 = a.tol * a.tol

    def laplace(x):
        """y = A x: the 5-point Laplacian with a zero (Dirichlet) boundary."""
        xp = jnp.pad(x, 1)
        return 4.0 * x - xp[:-2, 1:-1] - xp[2:, 1:-1] - xp[1:-1, :-2] - xp[1:-1, 2:]

    def cg_init(b):
        x = jnp.zeros_like(b)
        r = b - laplace(x)
        return x, r, r, jnp.vdot(r, r), jnp.int32(0)

    def cg_iteration(state):
        x, r, p, rs, k = state
        ap = laplace(p)
        alpha = rs / jnp.vdot(p, ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = jnp.vdot(r, r)
        p = r + (rs_new / rs) * p
        return x, r, p, rs_new, k + 1

    def solve(b):
        bb = jnp.vdot(b, b)
        if a.loop == "while":
            def not_converged(state):
                return (state[3] > tol2 * bb) & (state[4] < a.max_iter)
            x, r, p, rs, k = lax.while_loop(not_converged, cg_iteration, cg_init(b))
        else:
            x, r, p, rs, k = lax.fori_loop(0, a.iters, lambda i, state: cg_iteration(state), cg_init(b))
        return x, k, jnp.sqrt(rs / bb)

    def solve_python(b, step):
        """The Python loop: step (jitted or not) every iteration, the
        residual read back every --check iterations."""
        bb = float(jnp.vdot(b, b))
        state = cg_init(b)
        k = 0
        while k < a.max_iter:
            for _ in range(min(a.check, a.max_iter - k)):
                state = step(state)
                k += 1
            if float(state[3]) <= tol2 * bb:  # the read-back
                break
        return state[0], k, float(np.sqrt(float(state[3]) / bb))

    if a.loop == "python":
        step_jit = jax.jit(cg_iteration)
        solve_jit = lambda b: solve_python(b, step_jit)  # noqa: E731
    elif a.loop == "eager":
        solve_jit = lambda b: solve_python(b, cg_iteration)  # noqa: E731
    else:
        solve_jit = jax.jit(solve)
    keys = jax.random.split(jax.random.PRNGKey(a.seed), a.rhs)
    rhs = [jax.random.normal(k, (a.n, a.n), jnp.float32) for k in keys]

    results, times, iters = [], [], []
    x = None
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        x, k, res = solve_jit(rhs[i % a.rhs])
        k, res = int(k), float(res)  # the read-backs
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
            iters.append(k)
        results.append(struct.pack("<if", k, res))
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
            f.write(np.asarray(x).astype("<f4").tobytes())
    if a.time:
        cb = "default"  # XLA's own choice of command buffers
        for f in os.environ.get("XLA_FLAGS", "").split():
            if f.startswith("--xla_gpu_enable_command_buffer="):
                cb = f.split("=", 1)[1].strip("'\"").replace(",", "+") or "off"
        print("gs-wl: jax_solver variant=%s cmdbuf=%s platform=%s n=%d steps=%d warmup=%d jax=%s "
              "median_us=%.3f mean_us=%.3f iters=%.1f" % (
                  a.loop, cb, platform, a.n, len(times), a.warmup, jax.__version__,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6,
                  statistics.mean(iters)), flush=True)


if __name__ == "__main__":
    main()
