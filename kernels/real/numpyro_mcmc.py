#!/usr/bin/env python3
"""Bayesian logistic regression with NumPyro's NUTS, for the real-program suite.

What a NumPyro user writes (its README, the logistic-regression and
baseball examples): a model function of numpyro.sample statements,

    def model(X, y=None):
        w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([d]).to_event(1))
        b = numpyro.sample("b", dist.Normal(0.0, 1.0))
        with numpyro.plate("data", n):
            numpyro.sample("y", dist.Bernoulli(logits=X @ w + b), obs=y)

and MCMC(NUTS(model), num_warmup=..., num_samples=...).run(key, X, y),
then the posterior means of mcmc.get_samples().  One step of this program
is one such inference on one of --datasets fixed datasets (X [--n,
--features] standard normal, y drawn from a logistic model with random true
weights, all from --seed on the host, cycled), with the key
jax.random.PRNGKey(seed + step): NUTS' initialisation, --num-warmup
adaptation iterations (step size and diagonal mass matrix) and
--num-samples draws, the posterior means read back (np.asarray per site)
with the draws' total number of leapfrog steps
(extra_fields=("num_steps",), summed).  Nothing is downloaded.

Every NUTS iteration builds a trajectory by doubling (a while loop over
tree depths), each doubling a while loop over leapfrog steps (the
gradient of the log density: X @ w, X.T @ residual) with a while loop over
the stored checkpoints for the U-turn test: the trip counts are the
data's and the random draws' (about 7 leapfrog steps an iteration at the
defaults).  Without command buffers XLA's GPU runtime copies each loop's
predicate to the host and synchronises once an iteration.

  --loop jit     (default) the whole inference under one jax.jit, as
                 NumPyro's developers suggest for repeated inference
                 (github.com/pyro-ppl/numpyro/issues/644):
                 jax.jit(nuts_fit), nuts_fit building the MCMC object,
                 calling run(progress_bar=False) and returning the samples:
                 one executable a step (initialisation, warmup and sampling
                 as nested device loops), compiled once.
  --loop run     mcmc.run on one MCMC(..., progress_bar=False,
                 jit_model_args=True) object, as the documentation writes
                 it: the chain runs as one jitted fori_loop, but NumPyro
                 0.21 and 0.22 hand that jit a freshly jitted body function
                 as a static argument every run, so every run traces and
                 compiles it again (3 to 5 s of XLA compilation a run on a
                 2-core CPU; a persistent compilation cache, as real.sh
                 sets, turns it into a load, but every run still loads a
                 new executable); the initialisation runs op by op.
  --loop python  the same with progress_bar=True: NumPyro's fori_collect then
                 loops in Python, one jitted call a sample, and formats the
                 progress bar's diagnostics (tree size, step size,
                 acceptance rate) from the state every sample, three small
                 device-to-host reads.  The bar itself is silenced by
                 TQDM_DISABLE=1 (set here unless the environment names it),
                 so the code path is the progress bar's with no output.

XLA reaches the driver through its own libcuda handle (cuLaunchKernel,
cuLaunchKernelEx).  XLA command buffers (CUDA graphs XLA builds itself,
with conditional nodes for loops where it supports them) are chosen by the
caller through XLA_FLAGS: --xla_gpu_enable_command_buffer= turns them off;
the default is on.  Set XLA_PYTHON_CLIENT_PREALLOCATE=false so that JAX
does not take most of the GPU's memory.

Determinism: fixed PRNG keys; --xla_gpu_deterministic_ops=true is added to
XLA_FLAGS unless it names that flag already (no atomics in reductions), and
--xla_gpu_autotune_level=0 unless --autotune is given (XLA does not time
GEMM algorithms and pick by speed).  Flags the caller set in XLA_FLAGS are
kept.  float32 throughout.

--warmup W inferences first (the first compiles), then --steps timed ones
(--loop jit and python: 1 and 10; run: 1 and 3).  --out writes, for every
inference in order, the posterior means (float32 little-endian, site by
site in sorted name order: b, then w) and the draws' total number of
leapfrog steps (int32).  --time prints one gs-wl line with the median wall
time of one inference, its read-backs included, that time divided by the
iterations of the chain, warmup and draws (per_iter_us), and the mean
number of leapfrog steps a draw.
"""
import argparse
import os
import statistics
import struct
import time

import xla_env


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, help="timed inferences (jit, python: 10; run: 3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed inferences first (the first compiles)")
    ap.add_argument("--loop", choices=("jit", "run", "python"), default="jit")
    ap.add_argument("--num-warmup", type=int, default=100, help="NUTS adaptation iterations per inference")
    ap.add_argument("--num-samples", type=int, default=100, help="NUTS draws per inference")
    ap.add_argument("--n", type=int, default=500, help="data points")
    ap.add_argument("--features", type=int, default=8)
    ap.add_argument("--datasets", type=int, default=4, help="distinct fixed datasets, cycled")
    ap.add_argument("--autotune", action="store_true", help="leave XLA's GEMM autotuning on")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.steps is None:
        a.steps = 3 if a.loop == "run" else 10
    if a.steps < 1 or a.warmup < 0 or a.num_samples < 1 or a.num_warmup < 0 or a.datasets < 1:
        ap.error("--steps, --num-samples, --datasets must be >= 1, --warmup, --num-warmup >= 0")
    return a


def main():
    a = parse()
    xla_env.configure(a.device, autotune_off=not a.autotune)  # before JAX is imported
    # tqdm reads TQDM_* variables as its defaults: the progress-bar path
    # runs, but draws nothing.
    os.environ.setdefault("TQDM_DISABLE", "1")
    import jax
    import jax.numpy as jnp
    import numpy as np
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    platform = jax.devices()[0].platform

    def model(X, y=None):
        w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([X.shape[1]]).to_event(1))
        b = numpyro.sample("b", dist.Normal(0.0, 1.0))
        with numpyro.plate("data", X.shape[0]):
            numpyro.sample("y", dist.Bernoulli(logits=X @ w + b), obs=y)

    # Datasets drawn on the host from the seed, then put on the device once.
    rng = np.random.default_rng(a.seed)
    datasets = []
    for _ in range(a.datasets):
        X = rng.standard_normal((a.n, a.features)).astype(np.float32)
        w_true = rng.standard_normal(a.features).astype(np.float32)
        b_true = np.float32(0.5 * rng.standard_normal())
        p = 1.0 / (1.0 + np.exp(-(X @ w_true + b_true)))
        y = (rng.random(a.n) < p).astype(np.float32)
        datasets.append((jnp.asarray(X), jnp.asarray(y)))

    def new_mcmc(progress_bar):
        return MCMC(NUTS(model), num_warmup=a.num_warmup, num_samples=a.num_samples,
                    progress_bar=progress_bar, jit_model_args=True)

    if a.loop == "jit":
        @jax.jit
        def nuts_fit(rng_key, X, y):
            mcmc = new_mcmc(False)
            mcmc.run(rng_key, X, y, extra_fields=("num_steps",))
            return mcmc.get_samples(), mcmc.get_extra_fields()["num_steps"]

        infer = nuts_fit
    else:
        mcmc = new_mcmc(a.loop == "python")

        def infer(rng_key, X, y):
            mcmc.run(rng_key, X, y, extra_fields=("num_steps",))
            return mcmc.get_samples(), mcmc.get_extra_fields()["num_steps"]

    results, times, leapfrogs = [], [], []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        samples, num_steps = infer(jax.random.PRNGKey(a.seed + i), *datasets[i % a.datasets])
        # The read-backs: the posterior means and the leapfrog count.
        means = {k: np.asarray(v.mean(axis=0)) for k, v in samples.items()}
        total = int(num_steps.sum())
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
            leapfrogs.append(total)
        results.append(b"".join(np.asarray(means[k]).astype("<f4").tobytes() for k in sorted(means))
                       + struct.pack("<i", total))
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        cb = "default"  # XLA's own choice of command buffers
        for f in os.environ.get("XLA_FLAGS", "").split():
            if f.startswith("--xla_gpu_enable_command_buffer="):
                cb = f.split("=", 1)[1].strip("'\"").replace(",", "+") or "off"
        iters = a.num_warmup + a.num_samples
        median = statistics.median(times)
        print("gs-wl: numpyro_mcmc variant=nuts-%s cmdbuf=%s platform=%s n=%d features=%d iters=%d steps=%d "
              "warmup=%d jax=%s numpyro=%s median_us=%.3f mean_us=%.3f per_iter_us=%.3f leapfrogs=%.2f" % (
                  a.loop, cb, platform, a.n, a.features, iters, len(times), a.warmup, jax.__version__,
                  numpyro.__version__, median * 1e6, statistics.mean(times) * 1e6, median * 1e6 / iters,
                  statistics.mean(leapfrogs) / a.num_samples), flush=True)


if __name__ == "__main__":
    main()
