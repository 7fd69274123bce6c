#!/usr/bin/env python3
"""A PyTorch decode loop, the kind of program graphshim runs under unmodified.

A small GPT-like model is built in plain torch from a seed (no downloads):
token embedding, L pre-norm blocks of multi-head attention with rotary
positions and a KV cache tensor, a tanh-GELU MLP, a final layernorm and an
LM head.  Decoding is greedy, eager, with static shapes: the position is a
device tensor, the cache is a ring of --ctx slots written with index_copy_,
and attention always spans the whole cache under a mask, so every token
issues the same kernels with the same arguments.  Each token is read back
with .item(), as a generate loop does to test for end of sequence.

  decode.py [--tokens N] [--rounds R] [--layers L] [--dim D] [--heads H]
            [--vocab V] [--ctx C] [--seed S] [--out FILE] [--time]

--out writes the token ids of every round (int32, little-endian); --time
prints the median tokens/s over the timed rounds and the median time of one
token.  Run it plainly, or with LD_PRELOAD=libgraphshim.so: both must write
the same bytes.
"""
import argparse
import math
import statistics
import struct
import sys
import time

import torch
import torch.nn.functional as F


class Model:
    """The weights and the KV cache; step() decodes one token."""

    def __init__(self, a, device):
        self.a = a
        self.dev = device
        D, H, V, C, L = a.dim, a.heads, a.vocab, a.ctx, a.layers
        self.hd = D // H
        g = torch.Generator(device="cpu").manual_seed(a.seed)

        def rnd(*shape, scale, center=0.0):
            t = (torch.rand(*shape, generator=g, dtype=torch.float32) * 2 - 1) * scale + center
            return t.to(device)

        sd, sf = 1 / math.sqrt(D), 1 / math.sqrt(4 * D)
        self.emb = rnd(V, D, scale=1.0)
        self.layers = []
        for _ in range(L):
            self.layers.append(dict(
                ln1_g=rnd(D, scale=0.1, center=1.0), ln1_b=rnd(D, scale=0.1),
                wqkv=rnd(3 * D, D, scale=sd), bqkv=rnd(3 * D, scale=0.02),
                wo=rnd(D, D, scale=sd), bo=rnd(D, scale=0.02),
                ln2_g=rnd(D, scale=0.1, center=1.0), ln2_b=rnd(D, scale=0.1),
                w1=rnd(4 * D, D, scale=sd), b1=rnd(4 * D, scale=0.02),
                w2=rnd(D, 4 * D, scale=sf), b2=rnd(D, scale=0.02)))
        self.lnf_g = rnd(D, scale=0.1, center=1.0)
        self.lnf_b = rnd(D, scale=0.1)
        self.wlm = rnd(V, D, scale=3 * sd)
        # One cache tensor: [layer, k|v, head, slot, head dim].
        self.cache = torch.zeros(L, 2, H, C, self.hd, device=device)
        self.inv_freq = torch.pow(10000.0, -2.0 * torch.arange(self.hd // 2, device=device) / self.hd)
        self.slots = torch.arange(C, device=device)
        self.pos = torch.zeros(1, dtype=torch.long, device=device)
        self.tok = torch.zeros(1, dtype=torch.long, device=device)

    def reset(self):
        self.cache.zero_()
        self.pos.zero_()
        self.tok.fill_(self.a.seed % self.a.vocab)

    def rope(self, t, cos, sin):
        h = self.hd // 2
        a, b = t[..., :h], t[..., h:]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)

    def step(self):
        a, D, H, hd = self.a, self.a.dim, self.a.heads, self.hd
        x = self.emb.index_select(0, self.tok)  # [1, D]
        ang = self.pos.to(torch.float32) * self.inv_freq  # [hd/2]
        cos, sin = torch.cos(ang), torch.sin(ang)
        slot = torch.remainder(self.pos, a.ctx)
        mask = self.slots > self.pos  # unfilled slots, until the ring wraps
        for i, w in enumerate(self.layers):
            h = F.layer_norm(x, (D,), w["ln1_g"], w["ln1_b"])
            qkv = torch.addmm(w["bqkv"], h, w["wqkv"].t())
            q, k, v = qkv.view(3, H, 1, hd).unbind(0)
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
            kc, vc = self.cache[i, 0], self.cache[i, 1]
            kc.index_copy_(1, slot, k)
            vc.index_copy_(1, slot, v)
            s = torch.bmm(q, kc.transpose(1, 2)) * (1.0 / math.sqrt(hd))  # [H, 1, C]
            s = s.masked_fill(mask, float("-inf"))
            p = torch.softmax(s, dim=-1)
            o = torch.bmm(p, vc).reshape(1, D)
            x = x + torch.addmm(w["bo"], o, w["wo"].t())
            h = F.layer_norm(x, (D,), w["ln2_g"], w["ln2_b"])
            u = F.gelu(torch.addmm(w["b1"], h, w["w1"].t()), approximate="tanh")
            x = x + torch.addmm(w["b2"], u, w["w2"].t())
        h = F.layer_norm(x, (D,), self.lnf_g, self.lnf_b)
        logits = h @ self.wlm.t()
        torch.argmax(logits, dim=-1, out=self.tok)
        self.pos += 1
        return self.tok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds (after one warm-up round)")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.dim % a.heads or (a.dim // a.heads) % 2:
        sys.exit("decode.py: --dim must be --heads times an even head size")

    dev = torch.device(a.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    tokens, rates, per_token = [], [], []
    with torch.inference_mode():
        m = Model(a, dev)
        for r in range(a.rounds + 1):
            m.reset()
            sync()
            t0 = time.perf_counter()
            for _ in range(a.tokens):
                t1 = time.perf_counter()
                tok = m.step().item()  # the per-token read-back
                if r > 0:
                    per_token.append(time.perf_counter() - t1)
                tokens.append(tok)
            sync()
            if r > 0:  # round 0 warms up (lazy loading, allocator)
                rates.append(a.tokens / (time.perf_counter() - t0))
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(tokens), *tokens))
    if a.time and rates:
        print("gs-wl: python-decode mode=eager device=%s L=%d D=%d tokens=%d rounds=%d "
              "median_tok_s=%.1f median_us=%.3f" % (
                  dev.type, a.layers, a.dim, a.tokens, a.rounds,
                  statistics.median(rates), statistics.median(per_token) * 1e6))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
