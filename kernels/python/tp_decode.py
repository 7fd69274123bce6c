"""Tensor-parallel decode across processes, one GPU each (torchrun + NCCL).

Each rank holds half of every layer's MLP and attention output projection;
the partial results are summed with an all-reduce per layer, as tensor
parallel inference does.  Greedy decoding with a per-token .item(), static
shapes, weights from a seed (no downloads).  Rank 0 writes the token ids.

  torchrun --nproc_per_node=2 decode... tp_decode.py --tokens 64 --out FILE
"""
import argparse
import os
import struct
import time

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dev = torch.device("cuda")
    g = torch.Generator(device="cpu").manual_seed(a.seed)
    D, F, L, V = a.dim, 4 * a.dim, a.layers, a.vocab
    assert F % world == 0

    def rnd(*shape):
        return (torch.randn(*shape, generator=g) * (1.0 / shape[-1] ** 0.5)).to(dev)

    emb = rnd(V, D)
    layers = []
    for _ in range(L):
        w_in, w_out = rnd(F, D), rnd(D, F)  # the same on every rank (same seed)
        shard = F // world
        layers.append((w_in[rank * shard:(rank + 1) * shard].contiguous(),
                       w_out[:, rank * shard:(rank + 1) * shard].contiguous()))
    head = rnd(V, D)
    tok = torch.zeros((), dtype=torch.long, device=dev)
    out = []
    times = []
    with torch.no_grad():
        for t in range(a.tokens):
            t0 = time.perf_counter()
            x = emb[tok]
            for w_in, w_out in layers:
                h = torch.nn.functional.gelu(w_in @ torch.nn.functional.layer_norm(x, (D,)))
                part = w_out @ h
                dist.all_reduce(part)  # sum of the shards' contributions
                x = x + part
            tok = torch.argmax(head @ torch.nn.functional.layer_norm(x, (D,)))
            out.append(int(tok.item()))  # the per-token read-back
            times.append(time.perf_counter() - t0)
    if rank == 0:
        times.sort()
        print("tp_decode: world=%d tokens=%d median_us=%.1f" % (world, a.tokens, 1e6 * times[len(times) // 2]))
        if a.out:
            with open(a.out, "wb") as f:
                f.write(struct.pack("<%di" % len(out), *out))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
