#!/usr/bin/env python3
"""Training steps of a small flax.linen model with optax, for the real-program suite.

The loop a flax + optax user writes: a flax.linen Module, its parameters
from model.init(jax.random.PRNGKey(seed), x), an optax optimizer
(optax.chain(optax.clip_by_global_norm, optax.adamw)), and one @jax.jit
train_step(params, opt_state, batch) that takes jax.value_and_grad of the
loss (optax.softmax_cross_entropy_with_integer_labels(...).mean()), calls
tx.update and optax.apply_updates, and returns the new params, the new
optimizer state and the loss.  params and opt_state are donated
(donate_argnums=(0, 1)), so XLA updates them in place.  The Python loop
cycles through --batches fixed batches of random inputs and random integer
labels and reads the loss back every step (float(loss)), as a loop that
logs it does.  Nothing is downloaded.

  --arch mlp    a residual MLP: nn.Dense, then --layers blocks of
                nn.LayerNorm, nn.Dense, nn.gelu, nn.Dense; nn.LayerNorm and a
                nn.Dense classifier.
  --arch block  a tiny transformer encoder on [batch, seq, features]: nn.Dense
                and a learned position embedding (self.param), then --layers
                pre-norm blocks of nn.MultiHeadDotProductAttention and a
                nn.gelu MLP, the mean over the sequence, nn.LayerNorm, nn.Dense.
  --feed device  the batches are device arrays made once (default).
  --feed host    the batches are NumPy arrays, as a data loader hands them
                 out: jit copies each one to the device every step.
  --clip C      optax.clip_by_global_norm(C) before adamw (0: adamw alone).
  --dtype       the modules' computation dtype (parameters stay float32).
  --callback K  the step also logs metrics from inside jit, as users who
                want them without a read-back do: debug:
                jax.debug.callback(log, loss, grad_norm, ordered=True);
                io: jax.experimental.io_callback(log, None, ..., ordered=True).
                XLA runs the host function in the step's stream (a host
                function between its kernels, cuLaunchHostFunc, or a copy
                to the host and a wait); the values logged go to --out after
                the losses.  none (default): no callback.

What it exercises: XLA's GPU runtime, which reaches the driver through its
own libcuda handle (cuLaunchKernel, cuLaunchKernelEx), its fused forward,
backward and optimizer kernels and cuBLAS custom calls.  XLA fuses the
optimizer per parameter, not across them: at the defaults (--arch mlp, 30
parameter arrays) a step is about 170 kernels (29 cuBLAS GEMMs, a reduction
per array for the global norm, an AdamW fusion per array), about 500 with
--arch block at 4 layers (71 arrays).  XLA command buffers (CUDA graphs XLA
builds itself: cuGraphAddKernelNode, cuGraphLaunch) are chosen by the
caller through XLA_FLAGS: --xla_gpu_enable_command_buffer= turns them off;
the default is on.  Set XLA_PYTHON_CLIENT_PREALLOCATE=false so that JAX
does not take most of the GPU's memory.

Determinism: unless --autotune is given, --xla_gpu_autotune_level=0 is added
to XLA_FLAGS (XLA does not time GEMM algorithms and pick by speed), and
--xla_gpu_deterministic_ops=true (XLA's "guarantees run-to-run determinism
on GPU": no atomics in scatter, such as the gradient of the labels' gather,
or in reductions) unless XLA_FLAGS names that flag already.  Flags the
caller set in XLA_FLAGS are kept.

--warmup W steps first (the first compiles), then --steps timed ones;
--out writes every step's loss (float32 little-endian) and then the final
parameters' bytes (float32), leaf by leaf in jax.tree_util.tree_leaves
order; --time prints one gs-wl line with the median wall time of one step,
float(loss) included.
"""
import argparse
import functools
import os
import statistics
import struct
import time

import xla_env


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=100, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps first (the first compiles)")
    ap.add_argument("--arch", choices=("mlp", "block"), default="mlp")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=32, help="block: sequence length")
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--classes", type=int, default=16)
    ap.add_argument("--batches", type=int, default=4, help="distinct fixed batches cycled through")
    ap.add_argument("--feed", choices=("device", "host"), default="device")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--clip", type=float, default=1.0, help="global-norm clipping (0: none)")
    ap.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32",
                    help="computation dtype of the modules (parameters are float32)")
    ap.add_argument("--autotune", action="store_true", help="leave XLA's GEMM autotuning on")
    ap.add_argument("--callback", choices=("none", "debug", "io"), default="none",
                    help="log metrics from inside the jitted step through a host callback")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.dim % a.heads:
        ap.error("--dim must be a multiple of --heads")
    return a


def main():
    a = parse()
    xla_env.configure(a.device, autotune_off=not a.autotune)  # before JAX is imported
    import jax
    import jax.numpy as jnp
    import numpy as np
    import flax.linen as nn
    import optax

    platform = jax.devices()[0].platform
    dtype = jnp.dtype(a.dtype)

    class MLP(nn.Module):
        dim: int
        layers: int
        classes: int
        dtype: jnp.dtype = jnp.float32

        @nn.compact
        def __call__(self, x):
            x = nn.Dense(self.dim, dtype=self.dtype)(x)
            for _ in range(self.layers):
                h = nn.LayerNorm(dtype=self.dtype)(x)
                h = nn.gelu(nn.Dense(4 * self.dim, dtype=self.dtype)(h))
                x = x + nn.Dense(self.dim, dtype=self.dtype)(h)
            x = nn.LayerNorm(dtype=self.dtype)(x)
            return nn.Dense(self.classes, dtype=self.dtype)(x)

    class EncoderBlock(nn.Module):
        dim: int
        heads: int
        dtype: jnp.dtype = jnp.float32

        @nn.compact
        def __call__(self, x):
            h = nn.LayerNorm(dtype=self.dtype)(x)
            # Self-attention: queries, keys and values from the same input
            # (two positional arguments: old and new flax alike).
            x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads, dtype=self.dtype)(h, h)
            h = nn.LayerNorm(dtype=self.dtype)(x)
            h = nn.gelu(nn.Dense(4 * self.dim, dtype=self.dtype)(h))
            return x + nn.Dense(self.dim, dtype=self.dtype)(h)

    class Encoder(nn.Module):
        dim: int
        layers: int
        heads: int
        classes: int
        dtype: jnp.dtype = jnp.float32

        @nn.compact
        def __call__(self, x):  # x: [batch, seq, features]
            x = nn.Dense(self.dim, dtype=self.dtype)(x)
            pos = self.param("pos_embedding", nn.initializers.normal(0.02), x.shape[1:])
            x = x + pos.astype(x.dtype)
            for _ in range(self.layers):
                x = EncoderBlock(self.dim, self.heads, self.dtype)(x)
            x = nn.LayerNorm(dtype=self.dtype)(x.mean(axis=1))
            return nn.Dense(self.classes, dtype=self.dtype)(x)

    if a.arch == "mlp":
        model = MLP(a.dim, a.layers, a.classes, dtype)
        shape = (a.batch, a.features)
    else:
        model = Encoder(a.dim, a.layers, a.heads, a.classes, dtype)
        shape = (a.batch, a.seq, a.features)

    # Fixed random batches, made on the host as a data loader would.
    rng = np.random.default_rng(a.seed + 1)
    batches = [(rng.standard_normal(shape, dtype=np.float32),
                rng.integers(0, a.classes, (a.batch,)).astype(np.int32)) for _ in range(a.batches)]
    if a.feed == "device":
        batches = [jax.device_put(b) for b in batches]

    params = model.init(jax.random.PRNGKey(a.seed), jnp.zeros(shape, jnp.float32))
    tx = optax.adamw(a.lr, weight_decay=0.01)
    if a.clip > 0:
        tx = optax.chain(optax.clip_by_global_norm(a.clip), tx)
    opt_state = tx.init(params)

    def loss_fn(params, x, y):
        logits = model.apply(params, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits.astype(jnp.float32), y).mean()

    logged = []

    def log(loss, gnorm):
        # What a metrics logger keeps: plain floats, in the order they come.
        logged.append((float(loss), float(gnorm)))

    def log_io(loss, gnorm):
        log(loss, gnorm)
        return None

    @functools.partial(jax.jit, donate_argnums=(0, 1))
    def train_step(params, opt_state, batch):
        x, y = batch
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        if a.callback != "none":
            gnorm = optax.global_norm(grads)
            if a.callback == "debug":
                jax.debug.callback(log, loss, gnorm, ordered=True)
            else:
                from jax.experimental import io_callback
                io_callback(log_io, None, loss, gnorm, ordered=True)
        updates, opt_state = tx.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return params, opt_state, loss

    losses, times = [], []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        params, opt_state, loss = train_step(params, opt_state, batches[i % a.batches])
        losses.append(float(loss))  # the per-step read-back (logged)
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    if a.callback != "none":
        jax.effects_barrier()  # every callback has run
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%df" % len(losses), *losses))
            for loss, gnorm in logged:
                f.write(struct.pack("<ff", loss, gnorm))
            for leaf in jax.tree_util.tree_leaves(params):
                f.write(np.asarray(leaf).astype("<f4").tobytes())
    if a.time:
        cb = "default"  # XLA's own choice of command buffers
        for f in os.environ.get("XLA_FLAGS", "").split():
            if f.startswith("--xla_gpu_enable_command_buffer="):
                cb = f.split("=", 1)[1].strip("'\"").replace(",", "+") or "off"
        print("gs-wl: jax_train variant=%s cmdbuf=%s device=%s dtype=%s feed=%s callback=%s logged=%d layers=%d "
              "dim=%d batch=%d steps=%d warmup=%d jax=%s median_us=%.3f mean_us=%.3f" % (
                  a.arch, cb, platform, dtype.name, a.feed, a.callback, len(logged), a.layers, a.dim, a.batch,
                  len(times), a.warmup,
                  jax.__version__, statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
