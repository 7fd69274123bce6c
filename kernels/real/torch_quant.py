#!/usr/bin/env python3
"""A decoder with quantized linear layers, decoding a batch greedily, for the real-program suite.

What quantized inference written by hand in PyTorch looks like (the recipe
of torchao's and many serving repositories' "fp8 linear" and "int8 linear"
before any library wraps it): weights quantized once, activations quantized
dynamically every call, the matrix product through PyTorch's private
quantized GEMMs, which reach cuBLASLt's Hopper kernels.

  --quant fp8    weights float8_e4m3fn with a per-tensor float32 scale;
                 activations scaled by their absolute maximum (amax on the
                 device, no read-back) and cast to float8_e4m3fn;
                 torch._scaled_mm(x, w.t(), scale_a, scale_b, bias,
                 out_dtype=bfloat16).  Hopper's FP8 GEMMs take their
                 operands through TMA descriptors passed by value.
  --quant int8   weights int8 with a per-output-channel scale, activations
                 int8 with a per-row scale (round, clamp); torch._int_mm
                 (int32 result), then the scales and the bias applied in
                 bfloat16.
  --quant none   nn.Linear in bfloat16: the same model unquantized.

The model: token embedding, --layers blocks of RMSNorm, attention over a
preallocated KV cache (qkv and output projections quantized; the cache
written with index_copy_ at a position tensor; scaled_dot_product_attention
under a mask of the filled slots) and a SwiGLU MLP (gate, up, down
quantized), a final RMSNorm and a bfloat16 LM head.  --batch sequences
decode together (the quantized GEMMs want at least 17 rows: --batch 32 by
default); each token is read back with .tolist(), as a loop testing for end
of sequence does.

--warmup W tokens first (cuBLASLt's heuristics, the caching allocator),
then --tokens timed ones.  --out writes every token id (int32 little-endian);
--time prints one gs-wl line with the median time of one token, read-back
included.  Weights come from the CPU generator (--seed), so every process
computes the same bytes.
"""
import argparse
import os
import statistics
import struct
import sys
import time

# cuBLAS(Lt) then picks no reduction whose order can change between runs.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

FP8_MAX = 448.0  # float8_e4m3fn's largest finite value


class QuantLinear(nn.Module):
    """y = x @ w.t() + b with w quantized once and x quantized every call."""

    def __init__(self, lin, quant):
        super().__init__()
        self.quant = quant
        w = lin.weight.detach().float()
        self.register_buffer("bias", lin.bias.detach().to(torch.bfloat16))
        if quant == "fp8":
            sw = w.abs().amax().clamp(min=1e-12) / FP8_MAX
            self.register_buffer("w", (w / sw).to(torch.float8_e4m3fn))
            self.register_buffer("sw", sw.reshape(()).float())
        else:  # int8, a scale per output channel
            sw = w.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / 127.0
            self.register_buffer("w", (w / sw).round().clamp(-127, 127).to(torch.int8))
            self.register_buffer("sw", sw.reshape(1, -1).to(torch.bfloat16))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        if self.quant == "fp8":
            sx = x.abs().amax().float().clamp(min=1e-12) / FP8_MAX
            xq = (x.float() / sx).to(torch.float8_e4m3fn)
            y = torch._scaled_mm(xq, self.w.t(), scale_a=sx, scale_b=self.sw, bias=self.bias,
                                 out_dtype=torch.bfloat16)
        else:
            sx = x.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12) / 127.0
            xq = (x.float() / sx).round().clamp(-127, 127).to(torch.int8)
            acc = torch._int_mm(xq, self.w.t())
            y = (acc.float() * sx).to(torch.bfloat16) * self.sw + self.bias
        return y.reshape(*shape[:-1], -1)


def linear(dim_in, dim_out, quant):
    lin = nn.Linear(dim_in, dim_out)
    return lin if quant == "none" else QuantLinear(lin, quant)


class Block(nn.Module):
    def __init__(self, a, quant, dev):
        super().__init__()
        self.heads, self.hd = a.heads, a.dim // a.heads
        self.n1 = nn.RMSNorm(a.dim)
        self.qkv = linear(a.dim, 3 * a.dim, quant)
        self.proj = linear(a.dim, a.dim, quant)
        self.n2 = nn.RMSNorm(a.dim)
        self.gate = linear(a.dim, a.ffn, quant)
        self.up = linear(a.dim, a.ffn, quant)
        self.down = linear(a.ffn, a.dim, quant)
        self.k = torch.zeros(a.batch, a.heads, a.ctx, self.hd, dtype=torch.bfloat16, device=dev)
        self.v = torch.zeros_like(self.k)

    def forward(self, x, pos, mask):
        b, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, 3, self.heads, 1, self.hd).unbind(1)
        self.k.index_copy_(2, pos, k)
        self.v.index_copy_(2, pos, v)
        o = F.scaled_dot_product_attention(q, self.k, self.v, attn_mask=mask)
        x = x + self.proj(o.reshape(b, d))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self, a, quant, dev):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.dim)
        self.blocks = nn.ModuleList(Block(a, quant, dev) for _ in range(a.layers))
        self.norm = nn.RMSNorm(a.dim)
        self.head = nn.Linear(a.dim, a.vocab, bias=False)

    def forward(self, tok, pos, mask):
        x = self.emb(tok)
        for blk in self.blocks:
            x = blk(x, pos, mask)
        return self.head(self.norm(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quant", choices=("fp8", "int8", "none"), default="fp8")
    ap.add_argument("--tokens", "--steps", dest="tokens", type=int, default=96)
    ap.add_argument("--warmup", type=int, default=16)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--ffn", type=int, default=1536)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.dim % a.heads or a.dim % 16 or a.ffn % 16:
        sys.exit("torch_quant.py: --dim must be a multiple of --heads and of 16, --ffn of 16")
    if a.quant != "none" and dev.type != "cuda":
        sys.exit("torch_quant.py: --quant fp8 and int8 need a CUDA device (--quant none on the CPU)")
    if a.quant == "int8" and a.batch <= 16:
        sys.exit("torch_quant.py: --quant int8 needs --batch above 16 (torch._int_mm)")
    a.ctx = a.warmup + a.tokens + 1

    torch.manual_seed(a.seed)  # weights drawn and quantized on the CPU
    model = Model(a, a.quant, dev).eval()
    model = model.to(dev)
    for m in model.modules():  # float parameters to bfloat16, quantized buffers kept
        for name, p in list(m.named_parameters(recurse=False)):
            p.data = p.data.to(torch.bfloat16)
    start = torch.randint(0, a.vocab, (a.batch,), generator=torch.Generator().manual_seed(a.seed + 1))
    tok = start.to(dev)
    pos = torch.zeros(1, dtype=torch.long, device=dev)
    slots = torch.arange(a.ctx, device=dev)

    tokens, times = [], []
    with torch.no_grad():
        for i in range(a.warmup + a.tokens):
            t0 = time.perf_counter()
            mask = (slots <= pos).view(1, 1, 1, -1)
            logits = model(tok, pos, mask)
            tok = logits.argmax(-1)
            pos.add_(1)
            tokens += tok.tolist()
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(tokens), *tokens))
    if a.time:
        print("gs-wl: torch_quant variant=%s device=%s layers=%d dim=%d batch=%d steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f" % (a.quant, dev.type, a.layers, a.dim, a.batch, len(times),
                                                a.warmup, statistics.median(times) * 1e6,
                                                statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
