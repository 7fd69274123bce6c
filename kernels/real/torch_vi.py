#!/usr/bin/env python3
"""A Bayesian neural network trained by variational inference with torch.distributions, for the real-program suite.

What a probabilistic-ML user writes in plain PyTorch (the "Bayes by
backprop" recipe): an MLP classifier whose every weight has a mean-field
Gaussian posterior q(w) = Normal(mu, softplus(rho)), trained by
maximising the evidence lower bound on minibatches:

    w = Normal(mu, softplus(rho)).rsample()          (reparameterised, per layer)
    logits = MLP(x; w)                               (--samples draws a step, averaged)
    elbo = N/B * Bernoulli(logits=logits).log_prob(y).sum()
           - sum kl_divergence(q, Normal(0, prior_scale))
    (-elbo).backward(); Adam.step(); elbo.item()     (the per-step read-back)

torch.distributions validates its arguments by default: constructing
Normal checks that every scale is positive, Bernoulli that the logits are
real, log_prob that every label lies in {0, 1}, and each check ends in a
Python `if not ...all()`, a read-back the user never wrote: about fifty
a step at the default sizes (each Normal checks its mean and its scale;
the KL term builds two posteriors and two priors a layer, each draw two
posteriors a layer and a Bernoulli that checks its logits and its
sample; suite entry `vi-bnn`).  --no-validate turns validation off the way
tuned code does (`Distribution.set_default_validate_args(False)`: suite
entry `vi-bnn-fast`), leaving the step's one read-back.

The draws come from PyTorch's default CUDA generator (Philox, its offset
advancing every draw), seeded by torch.manual_seed(--seed); the data and
the initial parameters from a CPU generator (--seed + 1), so every
process computes the same bytes.  Validation changes no value: `vi-bnn`
and `vi-bnn-fast` write the same bytes.

--warmup W steps first, then --steps timed steps.  --out writes every
read-back (float64) and the final posterior means and scales; --time
prints one gs-wl line with the median wall time of one step, read-backs
included.
"""
import argparse
import os
import statistics
import struct
import time

# cuBLAS then picks no reduction whose order can change between runs.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.distributions import Bernoulli, Distribution, Normal, kl_divergence  # noqa: E402


class BayesLinear(torch.nn.Module):
    def __init__(self, fan_in, fan_out, prior_scale, g):
        super().__init__()
        k = fan_in ** -0.5
        self.w_mu = torch.nn.Parameter((torch.rand(fan_in, fan_out, generator=g) * 2 - 1) * k)
        self.w_rho = torch.nn.Parameter(torch.full((fan_in, fan_out), -5.0))
        self.b_mu = torch.nn.Parameter(torch.zeros(fan_out))
        self.b_rho = torch.nn.Parameter(torch.full((fan_out,), -5.0))
        self.prior_scale = prior_scale

    def posteriors(self):
        return (Normal(self.w_mu, F.softplus(self.w_rho)), Normal(self.b_mu, F.softplus(self.b_rho)))

    def forward(self, x):
        qw, qb = self.posteriors()
        return x @ qw.rsample() + qb.rsample()

    def kl(self):
        total = 0.0
        for q in self.posteriors():
            prior = Normal(torch.zeros_like(q.loc), torch.full_like(q.scale, self.prior_scale))
            total = total + kl_divergence(q, prior).sum()
        return total


class BayesMLP(torch.nn.Module):
    def __init__(self, a, g):
        super().__init__()
        sizes = [a.features] + [a.hidden] * a.layers + [1]
        self.layers = torch.nn.ModuleList(BayesLinear(i, o, a.prior_scale, g) for i, o in zip(sizes, sizes[1:]))

    def forward(self, x):
        for n, layer in enumerate(self.layers):
            x = layer(x)
            if n < len(self.layers) - 1:
                x = torch.tanh(x)
        return x.squeeze(-1)

    def kl(self):
        return sum(layer.kl() for layer in self.layers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=100, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--features", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2, help="hidden layers")
    ap.add_argument("--points", type=int, default=8192, help="training set size")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--samples", type=int, default=2, help="posterior draws a step")
    ap.add_argument("--prior-scale", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--no-validate", action="store_true",
                    help="Distribution.set_default_validate_args(False): no hidden read-backs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if min(a.features, a.hidden, a.layers, a.batch, a.samples, a.steps) < 1 or a.warmup < 0:
        ap.error("--features, --hidden, --layers, --batch, --samples and --steps must be positive")
    if a.points < a.batch or a.points % a.batch:
        ap.error("--points must be a multiple of --batch")
    if not (a.prior_scale > 0 and a.lr > 0):
        ap.error("--prior-scale and --lr must be positive")
    dev = torch.device(a.device)
    Distribution.set_default_validate_args(not a.no_validate)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(a.seed)  # the default generators, the CUDA one included: the posterior draws

    g = torch.Generator(device="cpu").manual_seed(a.seed + 1)
    # A nonlinear labelling of Gaussian points, 5% of the labels flipped.
    x = torch.randn(a.points, a.features, generator=g)
    w_true = torch.randn(a.features, 16, generator=g)
    score = torch.sin(x @ w_true).sum(-1)
    y = (score > 0).float()
    flip = torch.rand(a.points, generator=g) < 0.05
    y = torch.where(flip, 1 - y, y)
    x, y = x.to(dev), y.to(dev)
    model = BayesMLP(a, g).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, foreach=True)
    nb = a.points // a.batch

    reads, times = [], []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        lo = (i % nb) * a.batch
        xb, yb = x[lo:lo + a.batch], y[lo:lo + a.batch]
        loglik = 0.0
        for _ in range(a.samples):
            loglik = loglik + Bernoulli(logits=model(xb)).log_prob(yb).sum()
        elbo = (a.points / a.batch) * loglik / a.samples - model.kl()
        opt.zero_grad(set_to_none=True)
        (-elbo).backward()
        opt.step()
        reads.append(elbo.item())  # the progress read-back
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            for layer in model.layers:
                for q in layer.posteriors():
                    for t in (q.loc, q.scale):
                        f.write(t.detach().double().cpu().contiguous().numpy().tobytes())
    if a.time:
        print("gs-wl: torch_vi variant=%s device=%s features=%d hidden=%d layers=%d batch=%d samples=%d "
              "steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  "fast" if a.no_validate else "validated", dev.type, a.features, a.hidden, a.layers,
                  a.batch, a.samples, len(times), a.warmup, statistics.median(times) * 1e6,
                  statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
