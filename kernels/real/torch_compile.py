#!/usr/bin/env python3
"""A small decoder under torch.compile, decoding a token a step, for the real-program suite.

The decode step of a GPT-like model (token and position embeddings,
pre-norm attention + GELU MLP blocks, a static KV cache written at a position
held in a buffer, argmax) is one nn.Module whose forward() reads the current
token and position from its buffers and updates them in place, compiled
with torch.compile(fullgraph=True, dynamic=False).  Every token is read back
with .item().

  --mode default          Inductor's Triton kernels (and cuBLAS for the
                          matmuls), launched one by one: Triton's launcher
                          goes through cuLaunchKernelEx.
  --mode reduce-overhead  the same kernels replayed from CUDA graphs that
                          PyTorch captures itself (CUDAGraph Trees): the
                          application's own capture.

  --cache dynamic         no buffers: forward(tok, pos, past) takes the
                          token, its position and the KV cache as tensors
                          and returns the next token and the cache grown
                          by torch.cat, compiled with dynamic=True (the way
                          a decoder with a growing cache is compiled
                          without recompiling every token): Inductor's
                          kernels take the cache length as an argument and
                          their grids grow with it.  Default: --cache
                          static.

  --breaks                (static cache) a graph break after every block:
                          between blocks the activation goes through a
                          function under torch._dynamo.disable (a clamp to
                          float16's range, as code kept out of the
                          compiler for a custom operation is), compiled
                          with fullgraph=False.  A break inside the loop
                          over the blocks makes Dynamo run the decoder's
                          forward eagerly and compile each block's forward
                          as a graph of its own, as it does for a user's
                          model with a break in its layer loop: the
                          embeddings, mask, head, argmax and the token's
                          update run eagerly around the blocks' kernels.
                          Under reduce-overhead CUDAGraph Trees replay each
                          block's graph (each layer's cache view is made
                          once and marked static, so that the blocks'
                          in-place cache writes do not keep them from
                          graphs; a step begins with
                          torch.compiler.cudagraph_mark_step_begin()).

With --cache static the cache, token and position buffers are marked static
(torch._dynamo.mark_static_address, as transformers does for its static
cache), so CUDA graphs may mutate them in place.  Inductor runs in its
deterministic mode (no on-device benchmarking that could choose different
kernels in different processes).  Set TORCHINDUCTOR_CACHE_DIR to share
compiled kernels between runs: with a warm cache a process compiles in a
few seconds.

--warmup W: a whole generation of W tokens first (compilation, graph
capture); then the timed generation of --tokens.  --out writes every token
id (int32 little-endian); --time prints one gs-wl line with the median time
of one token, read-back included, and how many graphs were skipped
(cudagraph_skips: 0 means reduce-overhead really replays graphs).
"""
import argparse
import statistics
import struct
import sys
import time

import torch
import torch._dynamo
import torch._inductor.config as inductor_config
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x, kc, vc, pos, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        kc.index_copy_(2, pos, k)
        vc.index_copy_(2, pos, v)
        o = F.scaled_dot_product_attention(q, kc, vc, attn_mask=mask)
        x = x + self.proj(o.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


@torch._dynamo.disable
def between(x):
    """Run eagerly between compiled blocks (--breaks): a graph break."""
    return x.clamp(-60000.0, 60000.0)


class Decoder(nn.Module):
    def __init__(self, a, dtype):
        super().__init__()
        self.breaks = a.breaks
        self.wte = nn.Embedding(a.vocab, a.dim)
        self.wpe = nn.Embedding(a.ctx, a.dim)
        self.blocks = nn.ModuleList(Block(a.dim, a.heads) for _ in range(a.layers))
        self.ln_f = nn.LayerNorm(a.dim)
        self.head = nn.Linear(a.dim, a.vocab, bias=False)
        hd = a.dim // a.heads
        self.register_buffer("k_cache", torch.zeros(a.layers, a.batch, a.heads, a.ctx, hd, dtype=dtype))
        self.register_buffer("v_cache", torch.zeros(a.layers, a.batch, a.heads, a.ctx, hd, dtype=dtype))
        self.register_buffer("tok", torch.zeros(a.batch, 1, dtype=torch.long))
        self.register_buffer("pos", torch.zeros(1, dtype=torch.long))
        self.register_buffer("slots", torch.arange(a.ctx))

    def forward(self):
        x = self.wte(self.tok) + self.wpe(self.pos)
        mask = (self.slots <= self.pos).view(1, -1)
        for i, blk in enumerate(self.blocks):
            if self.breaks:
                kc, vc = self.kv_views[i]
                x = between(blk(x, kc, vc, self.pos, mask))
            else:
                x = blk(x, self.k_cache[i], self.v_cache[i], self.pos, mask)
        nxt = self.head(self.ln_f(x[:, -1])).argmax(-1, keepdim=True)
        self.tok.copy_(nxt)
        self.pos.add_(1)
        return nxt

    def reset(self):
        self.k_cache.zero_()
        self.v_cache.zero_()
        self.pos.zero_()


class DynDecoder(Decoder):
    """The same weights; the cache passed in and grown by torch.cat."""

    def forward(self, tok, pos, past):
        x = self.wte(tok) + self.wpe(pos)
        grown = []
        for blk, (kc, vc) in zip(self.blocks, past):
            b, t, d = x.shape
            q, k, v = blk.qkv(blk.ln1(x)).view(b, t, 3, blk.heads, blk.hd).permute(2, 0, 3, 1, 4)
            kc, vc = torch.cat([kc, k], dim=2), torch.cat([vc, v], dim=2)
            o = F.scaled_dot_product_attention(q, kc, vc)
            x = x + blk.proj(o.transpose(1, 2).reshape(b, t, d))
            x = x + blk.fc2(F.gelu(blk.fc1(blk.ln2(x))))
            grown.append((kc, vc))
        return self.head(self.ln_f(x[:, -1])).argmax(-1, keepdim=True), grown


def generate_dynamic(model, step, prompt, n, times):
    b = prompt.shape[0]
    hd = model.blocks[0].hd
    heads = model.blocks[0].heads
    empty = torch.zeros(b, heads, 0, hd, dtype=model.head.weight.dtype, device=prompt.device)
    past = [(empty, empty) for _ in model.blocks]
    pos = torch.zeros(1, dtype=torch.long, device=prompt.device)
    for i in range(prompt.shape[1]):  # the prompt, a token a step
        nxt, past = step(prompt[:, i:i + 1], pos, past)
        pos = pos + 1
    out = nxt.view(-1).tolist()
    for _ in range(n - 1):
        t0 = time.perf_counter()
        nxt, past = step(nxt, pos, past)
        pos = pos + 1
        out += [nxt.item()] if nxt.numel() == 1 else nxt.view(-1).tolist()
        times.append(time.perf_counter() - t0)
    return out


def generate(model, step, prompt, n, times):
    model.reset()
    for i in range(prompt.shape[1]):  # the prompt, a token a step
        model.tok.copy_(prompt[:, i:i + 1])
        nxt = step()
    out = nxt.view(-1).tolist()
    for _ in range(n - 1):
        t0 = time.perf_counter()
        nxt = step()
        out += [nxt.item()] if nxt.numel() == 1 else nxt.view(-1).tolist()
        times.append(time.perf_counter() - t0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", "--steps", dest="tokens", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=16, help="tokens of the warm-up generation")
    ap.add_argument("--mode", choices=("default", "reduce-overhead", "none"), default="default",
                    help="torch.compile mode (none: not compiled, for comparison)")
    ap.add_argument("--cache", choices=("static", "dynamic"), default="static",
                    help="static: buffers updated in place (dynamic=False); dynamic: the cache grown by "
                    "torch.cat and passed in (dynamic=True)")
    ap.add_argument("--breaks", action="store_true",
                    help="static cache: a graph break after every block (fullgraph=False)")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--prompt", type=int, default=8)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"), default="auto",
                    help="auto: bfloat16 on cuda, float32 on cpu")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.dim % a.heads:
        sys.exit("torch_compile.py: --dim must be a multiple of --heads")
    if a.prompt + max(a.tokens, a.warmup) > a.ctx:
        sys.exit("torch_compile.py: --prompt + --tokens must fit in --ctx")
    if a.breaks and a.cache != "static":
        sys.exit("torch_compile.py: --breaks needs --cache static")
    dtype = {"auto": torch.bfloat16 if dev.type == "cuda" else torch.float32,
             "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[a.dtype]
    inductor_config.deterministic = True

    torch.manual_seed(a.seed)
    dynamic = a.cache == "dynamic"
    model = (DynDecoder if dynamic else Decoder)(a, dtype).eval().to(device=dev, dtype=dtype)
    if not dynamic:
        for name in ("k_cache", "v_cache", "tok", "pos", "slots"):
            torch._dynamo.mark_static_address(getattr(model, name))
    if a.breaks:
        # The blocks are compiled apart and get their layer's cache as an
        # argument: a view made once and marked static (a fresh view every
        # call would not carry the mark, and CUDA graphs would be skipped).
        model.kv_views = [(model.k_cache[i], model.v_cache[i]) for i in range(a.layers)]
        for kc, vc in model.kv_views:
            torch._dynamo.mark_static_address(kc)
            torch._dynamo.mark_static_address(vc)
    step = model if a.mode == "none" else torch.compile(model, mode=a.mode, fullgraph=not a.breaks,
                                                         dynamic=dynamic)
    if a.breaks and a.mode == "reduce-overhead":
        compiled = step

        def step():
            torch.compiler.cudagraph_mark_step_begin()  # a new step: the last one's outputs are done with
            return compiled()
    gen = generate_dynamic if dynamic else generate
    g = torch.Generator().manual_seed(a.seed + 1)
    prompt = torch.randint(0, a.vocab, (a.batch, a.prompt), generator=g).to(dev)

    tokens, times = [], []
    with torch.no_grad():
        if a.warmup > 0:
            tokens += gen(model, step, prompt, a.warmup, [])
        tokens += gen(model, step, prompt, a.tokens, times)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(tokens), *tokens))
    if a.time:
        skips = torch._dynamo.utils.counters["inductor"]["cudagraph_skips"]
        print("gs-wl: torch_compile variant=%s%s cache=%s device=%s dtype=%s layers=%d dim=%d batch=%d steps=%d "
              "warmup=%d cudagraph_skips=%d median_us=%.3f mean_us=%.3f" % (
                  a.mode, "-breaks" if a.breaks else "", a.cache, dev.type, str(dtype).split(".")[-1], a.layers, a.dim, a.batch, len(times),
                  a.warmup, skips, statistics.median(times) * 1e6, statistics.mean(times) * 1e6),
              flush=True)


if __name__ == "__main__":
    main()
