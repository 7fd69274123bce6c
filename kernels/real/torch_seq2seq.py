#!/usr/bin/env python3
"""Greedy sequence-to-sequence decoding with torch.nn.Transformer and no cache, for the real-program suite.

Written the way PyTorch's translation tutorial writes it: an
nn.Transformer (batch_first) with token embeddings and a sinusoidal
position table; a request's source is encoded once (model.encoder), then
the target grows a token at a time, and every token runs the whole
decoder over the whole target so far, with a causal mask made afresh
(nn.Transformer.generate_square_subsequent_mask(t)), the last position's
logits through the output layer, argmax, and the token read back
(.item(), or .tolist() for --batch > 1) before torch.cat appends it.
Nothing is cached: every kernel's shapes grow token by token within a
request, and the requests (--requests fixed sources, cycled) repeat them.
One step is one request of --len tokens; weights are random.

--warmup W steps first, then --steps timed steps.  --out writes every
token read back (float64) and the output layer's weight; --time prints
one gs-wl line with the median wall time of one request.
"""
import argparse
import math
import statistics
import struct
import time

import torch
import torch.nn as nn


class Seq2Seq(nn.Module):
    def __init__(self, vocab, d, heads, enc, dec, ff, max_len):
        super().__init__()
        self.src_emb = nn.Embedding(vocab, d)
        self.tgt_emb = nn.Embedding(vocab, d)
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(max_len, d)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)
        self.model = nn.Transformer(d_model=d, nhead=heads, num_encoder_layers=enc, num_decoder_layers=dec,
                                    dim_feedforward=ff, dropout=0.0, batch_first=True)
        self.out = nn.Linear(d, vocab)
        self.scale = math.sqrt(d)

    def embed(self, emb, tokens):
        return emb(tokens) * self.scale + self.pe[: tokens.shape[1]]

    def encode(self, src):
        return self.model.encoder(self.embed(self.src_emb, src))

    def next_token(self, ys, memory):
        t = ys.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=ys.device)
        h = self.model.decoder(self.embed(self.tgt_emb, ys), memory, tgt_mask=mask)
        return self.out(h[:, -1]).argmax(dim=-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=20, help="timed requests")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--len", type=int, default=24, help="tokens generated a request")
    ap.add_argument("--src-len", type=int, default=20)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--enc", type=int, default=2, help="encoder layers")
    ap.add_argument("--dec", type=int, default=2, help="decoder layers")
    ap.add_argument("--ff", type=int, default=256)
    ap.add_argument("--requests", type=int, default=4, help="fixed sources, cycled")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if min(a.steps, a.len, a.src_len, a.batch, a.vocab, a.dim, a.heads, a.enc, a.dec, a.ff,
           a.requests) < 1 or a.warmup < 0:
        ap.error("sizes and --steps must be positive, --warmup >= 0")
    if a.dim % a.heads or a.dim % 2:
        ap.error("--dim must be even and a multiple of --heads")
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    torch.manual_seed(a.seed)
    gen = torch.Generator(device="cpu").manual_seed(a.seed)
    model = Seq2Seq(a.vocab, a.dim, a.heads, a.enc, a.dec, a.ff, max(a.src_len, a.len + 1)).to(dev).eval()
    srcs = torch.randint(2, a.vocab, (a.requests, a.batch, a.src_len), generator=gen).to(dev)
    bos = torch.ones(a.batch, 1, dtype=torch.long, device=dev)

    reads, times = [], []
    with torch.no_grad():
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            memory = model.encode(srcs[i % a.requests])
            ys = bos
            for _ in range(a.len):
                nxt = model.next_token(ys, memory)
                if a.batch == 1:
                    reads.append(float(nxt.item()))
                else:
                    reads.extend(float(v) for v in nxt.tolist())
                ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
            if cuda:
                torch.cuda.synchronize()
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            f.write(model.out.weight.detach().float().cpu().contiguous().numpy().tobytes())
    if a.time:
        print("gs-wl: torch_seq2seq len=%d batch=%d enc=%d dec=%d device=%s steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f" % (
                  a.len, a.batch, a.enc, a.dec, dev.type, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
