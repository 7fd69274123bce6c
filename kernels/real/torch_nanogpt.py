#!/usr/bin/env python3
"""nanoGPT's model and its generate(), for the real-program suite.

The GPT that minGPT and nanoGPT teach, written as they write it: token and
position nn.Embedding, blocks of LayerNorm -> CausalSelfAttention (one
nn.Linear for q, k and v, F.scaled_dot_product_attention(is_causal=True),
an output nn.Linear) and LayerNorm -> MLP (nn.Linear, nn.GELU, nn.Linear),
a final LayerNorm and an lm_head tied to the token embedding.  Random
weights (nanoGPT's init: normal(0, 0.02), scaled residual projections).

generate() is nanoGPT's, with no KV cache: every new token runs the model
over the whole context so far (cropped to --block), takes the last
position's logits, divides by the temperature, keeps the top --top-k,
softmax, torch.multinomial (a seeded device torch.Generator), and
torch.cat's the token onto the context.  So every token's launches have
new sizes: the sequence length grows by one, every GEMM's and the
attention's shapes with it, until the context reaches --block and slides.
--greedy takes the argmax instead of sampling.  Each generation's tokens
are read back once at its end (idx.tolist()), as nanoGPT's sample.py
does; --readback reads every token back (.item(), a chat loop).

What it exercises: PyTorch's kernels (cudaLaunchKernel), cuBLAS(Lt) GEMMs
whose shapes change every token, SDPA's causal attention kernel, topk,
softmax, Philox kernels (multinomial: seed/offset arguments change every
token), no synchronisation inside a generation by default.

--warmup W generations first, then --steps timed generations of --tokens
tokens from --batch prompts of --prompt random tokens (the same prompts
every generation, the generator reseeded, so every generation is the
same work).  A step is one token: the median of whole generations' wall
time / --tokens.  --out writes every generation's token ids (int64 LE);
--time prints one gs-wl line.
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.c_attn = nn.Linear(a.dim, 3 * a.dim)
        self.c_proj = nn.Linear(a.dim, a.dim)
        self.n_head = a.heads

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.c_fc = nn.Linear(a.dim, 4 * a.dim)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * a.dim, a.dim)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.ln_1 = nn.LayerNorm(a.dim)
        self.attn = CausalSelfAttention(a)
        self.ln_2 = nn.LayerNorm(a.dim)
        self.mlp = MLP(a)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.block_size = a.block
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(a.vocab, a.dim),
            wpe=nn.Embedding(a.block, a.dim),
            h=nn.ModuleList([Block(a) for _ in range(a.layers)]),
            ln_f=nn.LayerNorm(a.dim),
        ))
        self.lm_head = nn.Linear(a.dim, a.vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * a.layers))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        return self.lm_head(x[:, [-1], :])  # inference: the last position only

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, greedy=False, gen=None,
                 readback=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if greedy:
                idx_next = torch.argmax(logits, dim=-1, keepdim=True)
            else:
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float("Inf")
                probs = F.softmax(logits, dim=-1)
                idx_next = torch.multinomial(probs, num_samples=1, generator=gen)
            idx = torch.cat((idx, idx_next), dim=1)
            if readback is not None:
                readback.append(idx_next[0, 0].item())
        return idx


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=8, help="timed generations")
    ap.add_argument("--tokens", type=int, default=64, help="tokens a generation")
    ap.add_argument("--warmup", type=int, default=2, help="generations first")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--block", type=int, default=256, help="context length (block_size)")
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--top-k", type=int, default=200)
    ap.add_argument("--greedy", action="store_true", help="argmax instead of sampling")
    ap.add_argument("--readback", action="store_true", help="read every token back (.item())")
    ap.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.dim % a.heads or a.tokens < 1 or a.prompt < 1 or a.prompt > a.block:
        ap.error("--dim must be a multiple of --heads; --tokens, --prompt positive, --prompt <= --block")
    dev = torch.device(a.device)
    dtype = getattr(torch, a.dtype)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    torch.manual_seed(a.seed)
    model = GPT(a).eval().to(device=dev, dtype=dtype)
    prompt = torch.randint(0, a.vocab, (a.batch, a.prompt), generator=torch.Generator().manual_seed(a.seed + 1))
    prompt = prompt.to(dev)
    gen = torch.Generator(device=dev)

    outs, times = [], []
    for i in range(a.warmup + a.steps):
        gen.manual_seed(a.seed + 2)
        reads = [] if a.readback else None
        t0 = time.perf_counter()
        idx = model.generate(prompt, a.tokens, temperature=a.temperature, top_k=a.top_k, greedy=a.greedy,
                             gen=gen, readback=reads)
        toks = idx.tolist()  # the generation's read-back
        if i >= a.warmup:
            times.append((time.perf_counter() - t0) / a.tokens)
        outs.append(toks)
    if a.out:
        with open(a.out, "wb") as f:
            for toks in outs:
                f.write(torch.tensor(toks, dtype=torch.int64).numpy().tobytes())
    if a.time:
        print("gs-wl: torch_nanogpt variant=%s%s device=%s dtype=%s layers=%d dim=%d block=%d batch=%d "
              "tokens=%d steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  "greedy" if a.greedy else "sample", "-readback" if a.readback else "", dev.type, a.dtype,
                  a.layers, a.dim, a.block, a.batch, a.tokens, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
