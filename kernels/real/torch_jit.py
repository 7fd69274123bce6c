#!/usr/bin/env python3
"""A TorchScript character model generating greedily, for the real-program suite.

Models deployed before torch.compile are TorchScript: torch.jit.script of
an nn.Module, run by the profiling executor, which after a few calls
specializes the graph and fuses elementwise work into kernels it generates
at run time (NNC, the TensorExpr fuser: CUDA C compiled by NVRTC, loaded
with cuModuleLoadData and launched with cuLaunchKernel through the driver
entry points libtorch looks up itself).  This is the LSTM written out as
PyTorch's "custom RNNs with TorchScript" write-up writes it: per layer two
matrix products (cuBLAS) and the gates' sigmoid/tanh/multiply-add, which
the fuser makes one or a few kernels.

The model: nn.Embedding, --layers scripted LSTM cells (--hidden wide), an
nn.Linear head; --batch sequences, one character a call with the hidden
and cell states carried as lists of tensors, the argmax read back every
step with .tolist().  --warmup W steps first (the profiling runs, NVRTC),
then --steps timed ones.  --out writes every token id (int32
little-endian); --time prints one gs-wl line with the median step time,
read-back included, and fusion_groups: the fused groups in the last
optimized graph (0 means the fuser did not run on this build).  Weights
come from the CPU generator (--seed); every kernel here reduces in a fixed
order.
"""
import argparse
import os
import re
import statistics
import struct
import time
from typing import List, Tuple

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch import Tensor  # noqa: E402


class LSTMCell(nn.Module):
    def __init__(self, inp: int, hid: int):
        super().__init__()
        k = hid ** -0.5
        self.weight_ih = nn.Parameter(torch.empty(4 * hid, inp).uniform_(-k, k))
        self.weight_hh = nn.Parameter(torch.empty(4 * hid, hid).uniform_(-k, k))
        self.bias_ih = nn.Parameter(torch.empty(4 * hid).uniform_(-k, k))
        self.bias_hh = nn.Parameter(torch.empty(4 * hid).uniform_(-k, k))

    def forward(self, x: Tensor, h: Tensor, c: Tensor) -> Tuple[Tensor, Tensor]:
        gates = torch.mm(x, self.weight_ih.t()) + self.bias_ih + torch.mm(h, self.weight_hh.t()) + self.bias_hh
        i, f, g, o = gates.chunk(4, 1)
        i = torch.sigmoid(i)
        f = torch.sigmoid(f)
        g = torch.tanh(g)
        o = torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
        return h, c


class CharModel(nn.Module):
    def __init__(self, vocab: int, embed: int, hidden: int, layers: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.cells = nn.ModuleList([LSTMCell(embed if n == 0 else hidden, hidden) for n in range(layers)])
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tok: Tensor, hs: List[Tensor], cs: List[Tensor]) -> Tuple[Tensor, List[Tensor], List[Tensor]]:
        x = self.embed(tok)
        new_h: List[Tensor] = []
        new_c: List[Tensor] = []
        n = 0
        for cell in self.cells:
            h, c = cell(x, hs[n], cs[n])
            new_h.append(h)
            new_c.append(c)
            x = h
            n += 1
        return self.head(x).argmax(-1), new_h, new_c


def fusion_groups():
    """Fused groups in the last graph the executor ran (-1: none ran).  A
    graph prints each group twice, at its use and in its definition
    (`with prim::TensorExprGroup_0 = graph(...)`): the definitions count."""
    g = torch.jit.last_executed_optimized_graph()
    if g is None:
        return -1
    return len(re.findall(r"^with prim::(?:TensorExprGroup|CudaFusionGroup|FusionGroup)_\d+ =", str(g), re.M))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--embed", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=128)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    model = torch.jit.script(CharModel(a.vocab, a.embed, a.hidden, a.layers).eval().to(dev))
    start = torch.randint(0, a.vocab, (a.batch,), generator=torch.Generator().manual_seed(a.seed + 1))
    tok = start.to(dev)
    hs = [torch.zeros(a.batch, a.hidden, device=dev) for _ in range(a.layers)]
    cs = [torch.zeros(a.batch, a.hidden, device=dev) for _ in range(a.layers)]

    tokens, times = [], []
    with torch.no_grad():
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            tok, hs, cs = model(tok, hs, cs)
            tokens += tok.tolist()
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(tokens), *tokens))
    if a.time:
        print("gs-wl: torch_jit device=%s layers=%d hidden=%d batch=%d steps=%d warmup=%d fusion_groups=%d "
              "median_us=%.3f mean_us=%.3f" % (dev.type, a.layers, a.hidden, a.batch, len(times), a.warmup,
                                                fusion_groups(), statistics.median(times) * 1e6,
                                                statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
