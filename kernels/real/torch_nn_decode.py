#!/usr/bin/env python3
"""A GPT built from torch.nn modules, decoding greedily, for the real-program suite.

The model is what a PyTorch user writes from a tutorial: nn.Embedding for
tokens and positions, pre-norm blocks of nn.LayerNorm, nn.Linear (with bias)
for qkv/out/MLP, exact nn.GELU(), F.scaled_dot_product_attention, a final
nn.LayerNorm and an LM head; random weights from --seed, nothing downloaded.
The generate loop reads every token back with .item() (.tolist() for a
batch), as loops that test for end of sequence do.

  --cache dynamic  the KV cache grows by torch.cat every token: grids, copy
                   sizes and allocations change from one token to the next.
  --cache static   preallocated cache written with index_copy_ at a position
                   tensor, attention over the whole cache under a mask: every
                   token issues the same kernels with the same arguments.
  --graph          (static only) one decode step captured in a
                   torch.cuda.CUDAGraph and replayed per token: the
                   hand-written alternative to graphshim.  With --sample
                   topk only the model is captured (its logits land in the
                   graph's output tensor) and the sampler runs eagerly
                   after each replay, as serving engines do (vLLM captures
                   the model's forward, not its sampler).
  --sample topk    sample instead of taking the argmax, as a chat loop
                   does: a repetition penalty over the tokens each sequence
                   has produced (a [batch, vocab] mask updated by scatter_),
                   temperature, top-k (torch.topk's k-th value as a
                   threshold), top-p (a stable sort, softmax, cumsum, the
                   mask scattered back) and torch.multinomial from a seeded
                   torch.Generator on the device (its Philox offset moves
                   every call: a kernel argument that changes every token).

--warmup W runs a whole generation of W tokens first (lazy loading, cuBLAS
heuristics, the caching allocator); then the timed generation of --tokens.
--out writes every generated token id of both (int32 little-endian); --time
prints one gs-wl line with the median wall time of one decode token,
read-back included.
"""
import argparse
import math
import statistics
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class DynamicKV:
    """Per layer: keys and values grown with torch.cat, a token at a time."""

    def __init__(self):
        self.k = self.v = None

    def update(self, k, v, pos):
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=2)
            self.v = torch.cat([self.v, v], dim=2)
        # The prompt (several queries) attends causally; a single new token
        # attends to everything cached.
        return self.k, self.v, None, k.shape[2] > 1


class StaticKV:
    """Per layer: a preallocated [B, H, ctx, hd] cache and the step's mask."""

    def __init__(self, b, h, ctx, hd, device, dtype):
        self.k = torch.zeros(b, h, ctx, hd, device=device, dtype=dtype)
        self.v = torch.zeros_like(self.k)
        self.mask = None  # set by the model once per step

    def update(self, k, v, pos):
        self.k.index_copy_(2, pos, k)
        self.v.index_copy_(2, pos, v)
        return self.k, self.v, self.mask, False

    def reset(self):
        self.k.zero_()
        self.v.zero_()


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, kv, pos):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        k, v, mask, causal = kv.update(k, v, pos)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        return self.proj(o.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, kv, pos):
        x = x + self.attn(self.ln1(x), kv, pos)
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.wte = nn.Embedding(a.vocab, a.dim)
        self.wpe = nn.Embedding(a.ctx, a.dim)
        self.blocks = nn.ModuleList(Block(a.dim, a.heads) for _ in range(a.layers))
        self.ln_f = nn.LayerNorm(a.dim)
        self.head = nn.Linear(a.dim, a.vocab, bias=False)

    def forward(self, idx, pos, kvs):
        x = self.wte(idx) + self.wpe(pos)
        for blk, kv in zip(self.blocks, kvs):
            x = blk(x, kv, pos)
        return self.head(self.ln_f(x[:, -1]))  # logits of the last position


class Sampler:
    """Penalty, temperature, top-k, top-p, multinomial, written as
    transformers' logits processors write them (top-k as a threshold on the
    values, top-p through a sort and a scatter back, then one multinomial
    over the whole vocabulary): about twenty small kernels a token, all
    eager.  Nothing depends on the order torch.topk gives tied values
    (bfloat16 logits tie often, and the order of ties may change from run
    to run); the sort is stable."""

    def __init__(self, a, dev):
        self.a, self.dev = a, dev
        self.gen = torch.Generator(device=dev)
        self.seen = None

    def reset(self, batch):
        self.gen.manual_seed(self.a.seed + 3)
        self.seen = torch.zeros(batch, self.a.vocab, dtype=torch.bool, device=self.dev)

    def __call__(self, logits):
        a = self.a
        x = logits.float()
        x = torch.where(self.seen, torch.where(x > 0, x / a.penalty, x * a.penalty), x)
        x = x / a.temperature
        kth = torch.topk(x, a.top_k, dim=-1).values[..., -1:]
        x = x.masked_fill(x < kth, -float("inf"))
        srt, idx = torch.sort(x, dim=-1, stable=True)  # ascending
        cum = srt.softmax(-1).cumsum(-1)
        drop = cum <= 1 - a.top_p
        drop[..., -1:] = False  # the most likely token always stays
        x = x.masked_fill(drop.scatter(1, idx, drop), -float("inf"))
        tok = torch.multinomial(x.softmax(-1), 1, generator=self.gen)
        self.seen.scatter_(1, tok, True)
        return tok


def read_tokens(tok):
    """The per-token read-back: .item() for one sequence, a list for a batch."""
    return [tok.item()] if tok.numel() == 1 else tok.view(-1).tolist()


def pick(logits, sampler):
    return sampler(logits) if sampler is not None else logits.argmax(-1, keepdim=True)


class DynamicDecoder:
    def __init__(self, model, a, dev, sampler):
        self.model, self.a, self.dev, self.sampler = model, a, dev, sampler

    def generate(self, prompt, n, times):
        kvs = [DynamicKV() for _ in self.model.blocks]
        if self.sampler is not None:
            self.sampler.reset(prompt.shape[0])
        p = prompt.shape[1]
        logits = self.model(prompt, torch.arange(p, device=self.dev), kvs)
        tok = pick(logits, self.sampler)
        out = read_tokens(tok)
        for i in range(n - 1):
            t0 = time.perf_counter()
            logits = self.model(tok, torch.arange(p + i, p + i + 1, device=self.dev), kvs)
            tok = pick(logits, self.sampler)
            out += read_tokens(tok)
            times.append(time.perf_counter() - t0)
        return out


class StaticDecoder:
    """Fixed shapes: the token, the position and the cache live in tensors
    that one step reads and updates in place, so the step can be captured."""

    def __init__(self, model, a, dev, dtype, sampler):
        self.model, self.a, self.dev, self.sampler = model, a, dev, sampler
        self.logits = None
        hd = a.dim // a.heads
        self.kvs = [StaticKV(a.batch, a.heads, a.ctx, hd, dev, dtype) for _ in model.blocks]
        self.tok = torch.zeros(a.batch, 1, dtype=torch.long, device=dev)
        self.pos = torch.zeros(1, dtype=torch.long, device=dev)
        self.slots = torch.arange(a.ctx, device=dev)
        self.graph = None

    def step(self):
        mask = (self.slots <= self.pos).view(1, -1)  # [1 query, ctx]: the filled slots
        for kv in self.kvs:
            kv.mask = mask
        logits = self.model(self.tok, self.pos, self.kvs)
        if self.sampler is None:
            self.tok.copy_(logits.argmax(-1, keepdim=True))
        else:
            self.logits = logits  # under capture: the graph's output tensor
        self.pos.add_(1)

    def reset(self):
        for kv in self.kvs:
            kv.reset()
        self.pos.zero_()

    def capture(self):
        # As the CUDA graphs documentation says: warm up on a side stream,
        # capture, then start from a clean state (warm-up moved the cache).
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                self.step()
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.step()
        self.reset()

    def run_step(self):
        if self.graph is not None:
            self.graph.replay()
        else:
            self.step()
        if self.sampler is not None:
            self.tok.copy_(self.sampler(self.logits))

    def generate(self, prompt, n, times):
        self.reset()
        if self.sampler is not None:
            self.sampler.reset(prompt.shape[0])
        for i in range(prompt.shape[1]):  # the prompt, a token a step
            self.tok.copy_(prompt[:, i:i + 1])
            self.run_step()
        out = read_tokens(self.tok)
        for _ in range(n - 1):
            t0 = time.perf_counter()
            self.run_step()
            out += read_tokens(self.tok)
            times.append(time.perf_counter() - t0)
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", "--steps", dest="tokens", type=int, default=128,
                    help="tokens of the timed generation")
    ap.add_argument("--warmup", type=int, default=32, help="tokens of the warm-up generation")
    ap.add_argument("--cache", choices=("dynamic", "static"), default="dynamic")
    ap.add_argument("--graph", action="store_true", help="static cache: replay a CUDAGraph per token")
    ap.add_argument("--sample", choices=("greedy", "topk"), default="greedy")
    ap.add_argument("--top-k", type=int, default=50)
    ap.add_argument("--top-p", type=float, default=0.9)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--penalty", type=float, default=1.1, help="repetition penalty")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=512, help="position table and static cache size")
    ap.add_argument("--prompt", type=int, default=16)
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
        sys.exit("torch_nn_decode.py: --dim must be a multiple of --heads")
    if a.prompt + max(a.tokens, a.warmup) > a.ctx:
        sys.exit("torch_nn_decode.py: --prompt + --tokens must fit in --ctx")
    if a.graph and (a.cache != "static" or dev.type != "cuda"):
        sys.exit("torch_nn_decode.py: --graph needs --cache static on cuda")
    dtype = {"auto": torch.bfloat16 if dev.type == "cuda" else torch.float32,
             "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[a.dtype]

    # Weights are drawn on the CPU, so every process gets the same ones.
    torch.manual_seed(a.seed)
    model = GPT(a).eval().to(device=dev, dtype=dtype)
    g = torch.Generator().manual_seed(a.seed + 1)
    prompt = torch.randint(0, a.vocab, (a.batch, a.prompt), generator=g).to(dev)

    if a.sample == "topk" and not 0 < a.top_k <= a.vocab:
        sys.exit("torch_nn_decode.py: --top-k must be in 1..--vocab")
    sampler = Sampler(a, dev) if a.sample == "topk" else None
    tokens, times = [], []
    with torch.no_grad():
        if a.cache == "dynamic":
            dec = DynamicDecoder(model, a, dev, sampler)
        else:
            dec = StaticDecoder(model, a, dev, dtype, sampler)
            if a.graph:
                dec.capture()
        if a.warmup > 0:
            tokens += dec.generate(prompt, a.warmup, [])
        tokens += dec.generate(prompt, a.tokens, times)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(tokens), *tokens))
    if a.time:
        print("gs-wl: torch_nn_decode variant=%s-%s%s device=%s dtype=%s layers=%d dim=%d batch=%d "
              "steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  a.cache, "graph" if a.graph else "eager", "-topk" if sampler else "", dev.type, str(dtype).split(".")[-1],
                  a.layers, a.dim, a.batch, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
