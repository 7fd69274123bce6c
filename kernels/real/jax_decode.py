#!/usr/bin/env python3
"""A jax.jit decode step in a Python loop, for the real-program suite.

One jitted function decodes a token: embedding lookup, --layers pre-norm
blocks of attention over a fixed-size KV cache (written with
lax.dynamic_update_slice at a position kept on the device, the unfilled
slots masked) and a GELU MLP, a final layer norm, the LM head and argmax.
The caches are donated (donate_argnums), so XLA updates them in place.  The
Python loop reads every token back to the host (tok.tolist()), as a
generate loop that tests for end of sequence does.  Parameters come from jax.random with
--seed; nothing is downloaded.

What it exercises: XLA's GPU runtime, which reaches the driver through its
own libcuda handle (cuLaunchKernel, cuLaunchKernelEx for clusters or PDL).
XLA command buffers (CUDA graphs XLA builds itself: cuGraphAddKernelNode,
cuGraphLaunch) are chosen by the caller through XLA_FLAGS:
--xla_gpu_enable_command_buffer= turns them off; the default is on.  Set
XLA_PYTHON_CLIENT_PREALLOCATE=false so that JAX does not take most of the
GPU's memory.

  --layers-loop unrolled  a Python loop over the layers inside jit (L copies)
  --layers-loop scan      lax.scan over stacked layer weights (an XLA while loop)

Determinism: unless --autotune is given, --xla_gpu_autotune_level=0 is added
to XLA_FLAGS, so XLA does not time GEMM algorithms and pick by speed: every
process then runs the same kernels and writes the same bytes.

--warmup W: a whole generation of W tokens first (compilation); then the
timed generation of --tokens.  --out writes every token id (int32
little-endian); --time prints one gs-wl line with the median time of one
token, read-back included.
"""
import argparse
import os
import statistics
import struct
import time

import xla_env


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", "--steps", dest="tokens", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=16, help="tokens of the warm-up generation")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--prompt", type=int, default=8)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--layers-loop", choices=("unrolled", "scan"), default="unrolled")
    ap.add_argument("--dtype", choices=("auto", "float32", "bfloat16"), default="auto",
                    help="auto: bfloat16 on a GPU, float32 on cpu")
    ap.add_argument("--autotune", action="store_true", help="leave XLA's GEMM autotuning on")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.dim % a.heads:
        ap.error("--dim must be a multiple of --heads")
    if a.prompt + max(a.tokens, a.warmup) > a.ctx:
        ap.error("--prompt + --tokens must fit in --ctx")
    return a


def main():
    a = parse()
    xla_env.configure(a.device, autotune_off=not a.autotune, deterministic=False)  # before JAX is imported
    import jax
    import jax.numpy as jnp
    from jax import lax

    platform = jax.devices()[0].platform
    dtype = {"auto": jnp.bfloat16 if platform == "gpu" else jnp.float32,
             "float32": jnp.float32, "bfloat16": jnp.bfloat16}[a.dtype]
    L, D, H, V, C, B = a.layers, a.dim, a.heads, a.vocab, a.ctx, a.batch
    hd = D // H

    def init(key):
        keys = iter(jax.random.split(key, 32))

        def rnd(shape, scale, center=0.0):
            return (center + scale * jax.random.normal(next(keys), shape, jnp.float32)).astype(dtype)

        sd = D ** -0.5
        p = dict(wte=rnd((V, D), 1.0), wpe=rnd((C, D), 0.1), lnf_g=rnd((D,), 0.1, 1.0),
                 lnf_b=rnd((D,), 0.1), wlm=rnd((D, V), sd))
        # Layer weights stacked on a leading axis (scanned over; split
        # into a list below when the loop is unrolled).
        p["layers"] = dict(
            ln1_g=rnd((L, D), 0.1, 1.0), ln1_b=rnd((L, D), 0.1),
            wqkv=rnd((L, D, 3 * D), sd), bqkv=rnd((L, 3 * D), 0.02),
            wo=rnd((L, D, D), sd), bo=rnd((L, D), 0.02),
            ln2_g=rnd((L, D), 0.1, 1.0), ln2_b=rnd((L, D), 0.1),
            w1=rnd((L, D, 4 * D), sd), b1=rnd((L, 4 * D), 0.02),
            w2=rnd((L, 4 * D, D), (4 * D) ** -0.5), b2=rnd((L, D), 0.02))
        return p

    def layer_norm(x, g, b):
        x32 = x.astype(jnp.float32)
        m = x32.mean(-1, keepdims=True)
        v = ((x32 - m) ** 2).mean(-1, keepdims=True)
        return ((x32 - m) * lax.rsqrt(v + 1e-5)).astype(dtype) * g + b

    def qkv(x, w):
        h = layer_norm(x, w["ln1_g"], w["ln1_b"])
        q, k, v = jnp.split(h @ w["wqkv"] + w["bqkv"], 3, axis=-1)
        return (t.reshape(B, H, hd) for t in (q, k, v))

    def rest(x, w, q, ck, cv, mask):
        """Attention over one layer's cache [B, C, H, hd], then the MLP."""
        s = jnp.einsum("bhd,bthd->bht", q, ck).astype(jnp.float32) * hd ** -0.5
        s = jnp.where(mask[None, None, :], s, -jnp.inf)
        pr = jax.nn.softmax(s, axis=-1).astype(dtype)
        o = jnp.einsum("bht,bthd->bhd", pr, cv).reshape(B, D)
        x = x + o @ w["wo"] + w["bo"]
        h = layer_norm(x, w["ln2_g"], w["ln2_b"])
        return x + jax.nn.gelu(h @ w["w1"] + w["b1"], approximate=False) @ w["w2"] + w["b2"]

    def step(p, cache_k, cache_v, tok, pos):
        """cache_k, cache_v: [L, B, C, H, hd]; tok: [B] int32; pos: int32 scalar."""
        x = p["wte"][tok] + p["wpe"][pos]
        mask = jnp.arange(C) <= pos
        if a.layers_loop == "scan":
            def body(x, lw):
                w, ck, cv = lw
                q, k, v = qkv(x, w)
                ck = lax.dynamic_update_slice(ck, k[:, None], (0, pos, 0, 0))
                cv = lax.dynamic_update_slice(cv, v[:, None], (0, pos, 0, 0))
                return rest(x, w, q, ck, cv, mask), (ck, cv)
            x, (cache_k, cache_v) = lax.scan(body, x, (p["layers"], cache_k, cache_v))
        else:
            for i in range(L):
                w = p["layers"][i]
                q, k, v = qkv(x, w)
                # Written into the whole (donated) cache in place.
                cache_k = lax.dynamic_update_slice(cache_k, k[None, :, None], (i, 0, pos, 0, 0))
                cache_v = lax.dynamic_update_slice(cache_v, v[None, :, None], (i, 0, pos, 0, 0))
                x = rest(x, w, q, cache_k[i], cache_v[i], mask)
        logits = layer_norm(x, p["lnf_g"], p["lnf_b"]) @ p["wlm"]
        return jnp.argmax(logits, axis=-1).astype(jnp.int32), cache_k, cache_v, pos + 1

    step_jit = jax.jit(step, donate_argnums=(1, 2))
    params = init(jax.random.PRNGKey(a.seed))
    if a.layers_loop == "unrolled":
        # A list of per-layer weights, the way unrolled code holds them
        # (slicing a stacked array inside jit could cost a copy a layer).
        params["layers"] = [jax.tree.map(lambda t, i=i: t[i], params["layers"]) for i in range(L)]
    prompt = jax.random.randint(jax.random.PRNGKey(a.seed + 1), (B, a.prompt), 0, V, jnp.int32)

    def read(tok):
        # The whole token vector to the host at once (tok[0] would be one
        # more dispatch and kernel on the device).
        return [int(t) for t in tok.tolist()]

    def generate(n, times):
        ck = jnp.zeros((L, B, C, H, hd), dtype)
        cv = jnp.zeros((L, B, C, H, hd), dtype)
        pos = jnp.int32(0)
        for i in range(a.prompt):  # the prompt, a token a step
            tok, ck, cv, pos = step_jit(params, ck, cv, prompt[:, i], pos)
        out = read(tok)
        for _ in range(n - 1):
            t0 = time.perf_counter()
            tok, ck, cv, pos = step_jit(params, ck, cv, tok, pos)
            out += read(tok)
            times.append(time.perf_counter() - t0)
        return out

    tokens, times = [], []
    if a.warmup > 0:
        tokens += generate(a.warmup, [])
    tokens += generate(a.tokens, times)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(tokens), *tokens))
    if a.time:
        cb = "default"  # XLA's own choice of command buffers
        for f in os.environ.get("XLA_FLAGS", "").split():
            if f.startswith("--xla_gpu_enable_command_buffer="):
                cb = f.split("=", 1)[1].strip("'\"").replace(",", "+") or "off"
        print("gs-wl: jax_decode variant=%s cmdbuf=%s platform=%s dtype=%s layers=%d dim=%d batch=%d steps=%d "
              "warmup=%d jax=%s median_us=%.3f mean_us=%.3f" % (
                  a.layers_loop, cb, platform, jnp.dtype(dtype).name, L, D, B, len(times), a.warmup,
                  jax.__version__, statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
