#!/usr/bin/env python3
"""torch.func (functorch) programs, for the real-program suite: DP-SGD with per-sample gradients, or a vmapped ensemble.

Written the way the torch.func tutorials write them.  --mode dpsgd trains
an MLP with differentially private SGD: torch.func.functional_call over
the model's parameters, per-sample gradients by vmap(grad(loss)), each
sample's gradient clipped to --clip by its norm, summed, Gaussian noise
added from a CUDA generator (torch.randn(generator=...): its Philox offset,
a kernel argument, moves every call), and the parameters updated
functionally (new tensors every step, no optimizer object); the batch's
loss is read back (.item()) every --log steps.  --mode ensemble predicts
with --models MLPs at once: torch.func.stack_module_state stacks their
weights, vmap(functional_call) runs them over one batch, the ensemble's
averaged probabilities give each row's class and confidence, read back
(.cpu()) every step.  Data are random, fixed (--batches of them, cycled).

--warmup W steps first, then --steps timed steps.  --out writes every value
read back (float64) and the final parameters; --time prints one gs-wl
line with the median wall time of one step.
"""
import argparse
import copy
import statistics
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap


def mlp(d_in, width, layers, classes):
    mods, d = [], d_in
    for _ in range(layers):
        mods += [nn.Linear(d, width), nn.LayerNorm(width), nn.ReLU()]
        d = width
    mods.append(nn.Linear(d, classes))
    return nn.Sequential(*mods)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["dpsgd", "ensemble"], default="dpsgd")
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=100, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--batches", type=int, default=4, help="fixed batches, cycled")
    ap.add_argument("--models", type=int, default=8, help="ensemble members (--mode ensemble)")
    ap.add_argument("--clip", type=float, default=1.0, help="per-sample gradient norm bound")
    ap.add_argument("--sigma", type=float, default=0.5, help="noise multiplier")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--log", type=int, default=1, help="steps between loss read-backs (dpsgd)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if min(a.steps, a.features, a.width, a.layers, a.classes, a.batch, a.batches, a.models,
           a.log) < 1 or a.warmup < 0 or a.clip <= 0 or a.sigma < 0:
        ap.error("sizes, --steps and --log must be positive, --warmup and --sigma >= 0, --clip > 0")
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    torch.manual_seed(a.seed)
    cpu_gen = torch.Generator(device="cpu").manual_seed(a.seed)
    xs = torch.randn(a.batches, a.batch, a.features, generator=cpu_gen).to(dev)
    ys = torch.randint(0, a.classes, (a.batches, a.batch), generator=cpu_gen).to(dev)

    reads, times = [], []
    if a.mode == "dpsgd":
        model = mlp(a.features, a.width, a.layers, a.classes).to(dev)
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}
        noise_gen = torch.Generator(device=dev).manual_seed(a.seed + 1)

        def loss_one(p, x, y):
            out = functional_call(model, (p, buffers), (x.unsqueeze(0),))
            return F.cross_entropy(out, y.unsqueeze(0))

        per_sample = vmap(grad(loss_one), in_dims=(None, 0, 0))

        def step(i):
            nonlocal params
            x, y = xs[i % a.batches], ys[i % a.batches]
            g = per_sample(params, x, y)
            norms = torch.stack([t.reshape(a.batch, -1).norm(dim=1) for t in g.values()]).norm(dim=0)
            scale = (a.clip / (norms + 1e-6)).clamp(max=1.0)
            new = {}
            for k, t in g.items():
                s = (t * scale.view(-1, *([1] * (t.dim() - 1)))).sum(0)
                noise = torch.randn(s.shape, device=dev, generator=noise_gen) * (a.sigma * a.clip)
                new[k] = params[k] - a.lr * (s + noise) / a.batch
            params = new
            if i % a.log == 0:
                with torch.no_grad():
                    out = functional_call(model, (params, buffers), (x,))
                    reads.append(F.cross_entropy(out, y).item())

        final = lambda: params  # noqa: E731
    else:
        models = [mlp(a.features, a.width, a.layers, a.classes).to(dev).eval() for _ in range(a.models)]
        sparams, sbuffers = stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")

        def one(p, b, x):
            return functional_call(base, (p, b), (x,))

        ens = vmap(one, in_dims=(0, 0, None))

        def step(i):
            with torch.no_grad():
                logits = ens(sparams, sbuffers, xs[i % a.batches])
                probs = torch.softmax(logits, dim=-1).mean(0)
                conf, cls = probs.max(dim=-1)
                both = torch.stack([conf.double(), cls.double()]).cpu()
            reads.extend(both.reshape(-1).tolist())

        final = lambda: sparams  # noqa: E731

    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        step(i)
        if cuda:
            torch.cuda.synchronize()
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            for k in sorted(final()):
                f.write(final()[k].detach().float().cpu().contiguous().numpy().tobytes())
    if a.time:
        print("gs-wl: torch_func mode=%s batch=%d models=%d device=%s steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f" % (
                  a.mode, a.batch, a.models if a.mode == "ensemble" else 1, dev.type, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
