#!/usr/bin/env python3
"""A continuous-batching decode server in plain PyTorch, for the real-program suite.

What a user writes to serve a small GPT to many requests without a
serving engine: a fixed pool of --slots cache slots, each a row of a
preallocated per-layer KV cache [slots, heads, ctx, head_dim]; requests
arrive on a seeded schedule, each with its own prompt length and number
of tokens to generate.  Every step of the loop:

  1. admit waiting requests into free slots (at most --admit a step): each
     admitted prompt is prefilled on its own (a [1, p] forward pass,
     causal attention, its keys and values written into its slot with
     index_copy_), its first token read back;
  2. one decode step of every active request together: tokens and
     positions gathered into [B] tensors from Python lists (a small
     host-to-device copy each), the slot rows of every layer's cache
     gathered by index_select, the new keys and values scattered back with
     index_put_ at (slot, position), attention over the gathered rows
     under a length mask, greedy argmax, .tolist() of the B new tokens;
  3. finished requests free their slots.

B, the batch of a decode step, changes as requests come and go (between
1 and --slots), so grid sizes, GEMM shapes (and cuBLAS's choice of
kernel) change from step to step, and prefills of several lengths fall
between decode steps at no fixed period: continuous batching as vLLM and
TGI do it, without their CUDA graphs or paged kernels.  Every process
computes the same bytes for the same seed (the schedule is fixed).

The model: nn.Embedding for tokens and positions, pre-norm blocks of
nn.LayerNorm, nn.Linear (bias) for qkv/out/MLP, nn.GELU, attention with
F.scaled_dot_product_attention and an explicit mask, a final
nn.LayerNorm and an LM head; random weights from --seed.

--warmup W steps of the loop run first (untimed; the schedule goes on),
then --steps timed steps.  --out writes every request's generated token
ids (int32 LE, in request order) and the per-step batch sizes; --time
prints one gs-wl line with the median wall time of one loop step.
"""
import argparse
import random
import statistics
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def split(self, x):
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x, attend):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = self.split(q), self.split(k), self.split(v)
        y = attend(q, k, v)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.tok = nn.Embedding(a.vocab, a.dim)
        self.pos = nn.Embedding(a.ctx, a.dim)
        self.blocks = nn.ModuleList(Block(a.dim, a.heads) for _ in range(a.layers))
        self.ln = nn.LayerNorm(a.dim)
        self.head = nn.Linear(a.dim, a.vocab, bias=False)


class Server:
    def __init__(self, model, a, dev, dtype):
        self.m, self.a, self.dev = model, a, dev
        hd = a.dim // a.heads
        shape = (a.slots, a.heads, a.ctx, hd)
        self.k = [torch.zeros(shape, device=dev, dtype=dtype) for _ in range(a.layers)]
        self.v = [torch.zeros(shape, device=dev, dtype=dtype) for _ in range(a.layers)]
        self.free = list(range(a.slots))
        self.active = {}  # slot -> request
        self.ar = torch.arange(a.ctx, device=dev)
        rng = random.Random(a.seed)
        # The schedule: request i arrives at step arrive[i].
        self.reqs, t = [], 0
        for i in range(a.requests):
            t += rng.choice((0, 0, 1, 1, 2, 3))
            p = rng.randint(a.min_prompt, a.max_prompt)
            n = rng.randint(a.min_new, a.max_new)
            prompt = [rng.randrange(a.vocab) for _ in range(p)]
            self.reqs.append({"id": i, "arrive": t, "prompt": prompt, "n": n, "out": []})
        self.waiting = 0  # next request not admitted
        self.step_no = 0
        self.batches = []

    def prefill(self, slot, r):
        p = len(r["prompt"])
        idx = torch.tensor([r["prompt"]], device=self.dev)
        x = self.m.tok(idx) + self.m.pos(self.ar[:p])
        s = torch.tensor([slot], device=self.dev)

        for li, blk in enumerate(self.m.blocks):
            def attend(q, k, v, li=li):
                self.k[li].index_copy_(0, s, F.pad(k, (0, 0, 0, self.a.ctx - p)))
                self.v[li].index_copy_(0, s, F.pad(v, (0, 0, 0, self.a.ctx - p)))
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = blk(x, attend)
        logits = self.m.head(self.m.ln(x[:, -1]))
        r["out"].append(int(logits.argmax(-1).item()))
        r["len"] = p

    def decode(self):
        slots = sorted(self.active)
        reqs = [self.active[s] for s in slots]
        b = len(slots)
        self.batches.append(b)
        sl = torch.tensor(slots, device=self.dev)
        pos = torch.tensor([r["len"] for r in reqs], device=self.dev)
        tok = torch.tensor([r["out"][-1] for r in reqs], device=self.dev)
        x = (self.m.tok(tok) + self.m.pos(pos)).unsqueeze(1)
        mask = (self.ar.unsqueeze(0) <= pos.unsqueeze(1)).view(b, 1, 1, self.a.ctx)
        for li, blk in enumerate(self.m.blocks):
            def attend(q, k, v, li=li):
                self.k[li][sl, :, pos] = k[:, :, 0]
                self.v[li][sl, :, pos] = v[:, :, 0]
                kk = self.k[li].index_select(0, sl)
                vv = self.v[li].index_select(0, sl)
                return F.scaled_dot_product_attention(q, kk, vv, attn_mask=mask)
            x = blk(x, attend)
        new = self.m.head(self.m.ln(x[:, 0])).argmax(-1).tolist()
        for s, r, t in zip(slots, reqs, new):
            r["out"].append(t)
            r["len"] += 1
            if len(r["out"]) >= r["n"] or r["len"] >= self.a.ctx:
                del self.active[s]
                self.free.append(s)
                self.free.sort()

    def step(self):
        admitted = 0
        while (self.free and self.waiting < len(self.reqs) and admitted < self.a.admit and
               self.reqs[self.waiting]["arrive"] <= self.step_no):
            r = self.reqs[self.waiting]
            self.waiting += 1
            slot = self.free.pop(0)
            self.prefill(slot, r)
            admitted += 1
            if len(r["out"]) >= r["n"]:
                self.free.insert(0, slot)
            else:
                self.active[slot] = r
        if not self.active and self.waiting >= len(self.reqs):
            # Every request served: the schedule starts again (same requests).
            for r in self.reqs:
                r["out"] = []
            self.waiting = 0
            self.step_no = -1
        elif self.active:
            self.decode()
        self.step_no += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=400, help="timed loop steps")
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--slots", type=int, default=8, help="the most requests decoded together")
    ap.add_argument("--admit", type=int, default=2, help="the most prefills a step")
    ap.add_argument("--requests", type=int, default=64, help="requests in the schedule (then it repeats)")
    ap.add_argument("--min-prompt", type=int, default=4)
    ap.add_argument("--max-prompt", type=int, default=24)
    ap.add_argument("--min-new", type=int, default=8)
    ap.add_argument("--max-new", type=int, default=48)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.dim % a.heads or a.slots < 1 or a.admit < 1 or a.requests < 1:
        ap.error("--dim must be a multiple of --heads; --slots, --admit, --requests positive")
    if not 1 <= a.min_prompt <= a.max_prompt or not 1 <= a.min_new <= a.max_new:
        ap.error("need 1 <= --min-prompt <= --max-prompt and 1 <= --min-new <= --max-new")
    if a.max_prompt + a.max_new > a.ctx:
        ap.error("--max-prompt + --max-new must fit in --ctx")
    dev = torch.device(a.device)
    dtype = getattr(torch, a.dtype)
    torch.manual_seed(a.seed)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = GPT(a).to(dev, dtype).eval()
    srv = Server(model, a, dev, dtype)
    times = []
    with torch.inference_mode():
        for _ in range(a.warmup):
            srv.step()
        for _ in range(a.steps):
            t0 = time.perf_counter()
            srv.step()
            times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            for r in srv.reqs:
                f.write(struct.pack("<%di" % len(r["out"]), *r["out"]))
            f.write(struct.pack("<%di" % len(srv.batches), *srv.batches))
    if a.time:
        b = srv.batches[-a.steps:] if srv.batches else [0]
        print("gs-wl: torch_serve slots=%d admit=%d requests=%d layers=%d dim=%d dtype=%s device=%s "
              "steps=%d warmup=%d mean_batch=%.2f median_us=%.3f mean_us=%.3f" % (
                  a.slots, a.admit, a.requests, a.layers, a.dim, a.dtype, dev.type, len(times),
                  a.warmup, statistics.mean(b), statistics.median(times) * 1e6,
                  statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
