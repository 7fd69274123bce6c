#!/usr/bin/env python3
"""A few training steps of a small model with AdamW, for the real-program suite.

The loop a PyTorch user writes: forward, loss, backward, optimizer.step()
(AdamW with foreach=True: the multi-tensor-apply kernels),
optimizer.zero_grad(set_to_none=True) (so gradients are reallocated every
step and the caching allocator hands out rotating addresses), and
loss.item() to log the loss: one host read-back a step.

  --arch mlp    a residual MLP: nn.LayerNorm, nn.Linear, nn.GELU blocks.
  --arch block  transformer blocks with attention written out (matmul,
                softmax, matmul) and an MLP, on a [batch, seq, dim] input.

The task is classification of fixed random inputs into fixed random classes
with the cross entropy written as -(log_softmax * one_hot).sum(): F.cross_entropy
goes through nll_loss, which has no deterministic CUDA implementation.
Determinism: CUBLAS_WORKSPACE_CONFIG is set before torch is imported and
torch.use_deterministic_algorithms(True), so every process computes the same
bytes; no embedding (its backward accumulates with atomics).

--warmup W steps first, then --steps timed ones; --out writes every step's
loss (float32) and then every parameter's final bytes; --time prints one
gs-wl line with the median wall time of one step, loss.item() included.
"""
import os

# cuBLAS is deterministic only with a fixed workspace configuration, which
# it reads when torch first initialises it: set it before importing torch.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402


class MLPBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.ln(x))))


class AttnBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) * self.hd ** -0.5, dim=-1)
        o = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(o)
        return x + self.mlp(self.ln2(x))


class Net(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.arch = a.arch
        self.inp = nn.Linear(a.features, a.dim)
        if a.arch == "mlp":
            self.blocks = nn.Sequential(*[MLPBlock(a.dim) for _ in range(a.layers)])
        else:
            self.blocks = nn.Sequential(*[AttnBlock(a.dim, a.heads) for _ in range(a.layers)])
        self.ln = nn.LayerNorm(a.dim)
        self.head = nn.Linear(a.dim, a.classes)

    def forward(self, x):
        h = self.blocks(self.inp(x))
        if self.arch == "block":
            h = h.mean(dim=1)  # [batch, seq, dim] -> [batch, dim]
        return self.head(self.ln(h))


def tensor_bytes(t):
    """A tensor's raw bytes (a fresh copy owns exactly its own storage)."""
    return bytes(t.detach().cpu().clone().untyped_storage())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=100, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--arch", choices=("mlp", "block"), default="mlp")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=32, help="block: sequence length")
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--classes", type=int, default=16)
    ap.add_argument("--batches", type=int, default=4, help="distinct fixed batches cycled through")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.dim % a.heads:
        ap.error("--dim must be a multiple of --heads")
    dev = torch.device(a.device)
    torch.use_deterministic_algorithms(True)

    torch.manual_seed(a.seed)
    model = Net(a).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01, foreach=True)
    gen = torch.Generator().manual_seed(a.seed + 1)
    shape = (a.batch, a.features) if a.arch == "mlp" else (a.batch, a.seq, a.features)
    xs = [torch.randn(*shape, generator=gen).to(dev) for _ in range(a.batches)]
    # The targets as dense one-hot rows, made once on the host: no scatter
    # in the loop.
    ys = [torch.eye(a.classes)[torch.randint(0, a.classes, (a.batch,), generator=gen)].to(dev)
          for _ in range(a.batches)]

    losses, times = [], []
    model.train()
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        x, y = xs[i % a.batches], ys[i % a.batches]
        logits = model(x)
        loss = -(torch.log_softmax(logits, dim=-1) * y).sum(dim=-1).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())  # the per-step read-back
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%df" % len(losses), *losses))
            for p in model.parameters():
                f.write(tensor_bytes(p.float()))
    if a.time:
        print("gs-wl: torch_train variant=%s device=%s layers=%d dim=%d batch=%d steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f" % (
                  a.arch, dev.type, a.layers, a.dim, a.batch, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
