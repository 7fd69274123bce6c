#!/usr/bin/env python3
"""A physics-informed neural network (PINN) trained in PyTorch, for the real-program suite.

What a scientific-ML user writes after the PINN papers and tutorials: an
MLP u(x, t) of --layers hidden nn.Linear layers of --width with nn.Tanh,
trained so that it solves the viscous Burgers equation

    u_t + u u_x - nu u_xx = 0,   x in [-1, 1], t in [0, 1],
    u(x, 0) = -sin(pi x),   u(-1, t) = u(1, t) = 0,

on --points seeded collocation points, with --edge initial and as many
boundary points.  The PDE residual takes u_x and u_t from
torch.autograd.grad(u, (x, t), create_graph=True) and u_xx from a second
torch.autograd.grad of u_x: the backward pass runs through a
double-backward graph.

--optim adam: torch.optim.Adam (PyTorch's default foreach on CUDA), a step
is zero_grad, the loss, backward, step and loss.item().  --optim lbfgs: the
L-BFGS fine-tuning that follows Adam in most PINN code,
torch.optim.LBFGS(max_iter=--max-iter, history_size=20,
line_search_fn="strong_wolfe") stepping a closure; a step is one
opt.step(closure) and loss.item().  L-BFGS reads scalars back to the host
inside its step (its convergence tests, the line search's Wolfe
conditions), and how many closures the line search evaluates depends on
the data: steps differ in their launches and read-backs.

What it exercises: PyTorch's elementwise kernels (tanh and its first and
second derivatives, the residual), cuBLAS GEMMs of the forward, backward
and double-backward passes, reductions, Adam's multi-tensor kernels or
L-BFGS's dot products and vector updates, synchronising reads inside a
step.  torch.use_deterministic_algorithms(True): every process computes the
same bytes.

--warmup W steps first (untimed), then --steps timed steps.  --out writes
every read-back loss (float64) and the final parameters; --time prints one
gs-wl line with the median wall time of one step, read-back included.
"""
import argparse
import math
import os
import statistics
import struct
import time

# Deterministic cuBLAS needs its workspace fixed before CUDA starts.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
from torch import nn  # noqa: E402


class Pinn(nn.Module):
    def __init__(self, layers, width):
        super().__init__()
        mods, d = [], 2
        for _ in range(layers):
            mods += [nn.Linear(d, width), nn.Tanh()]
            d = width
        mods.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*mods)

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


class Burgers:
    def __init__(self, a, dev):
        g = torch.Generator(device="cpu").manual_seed(a.seed)
        n, e = a.points, a.edge
        self.nu = 0.01 / math.pi
        self.xf = (2 * torch.rand(n, 1, generator=g) - 1).to(dev).requires_grad_(True)
        self.tf = torch.rand(n, 1, generator=g).to(dev).requires_grad_(True)
        x0 = 2 * torch.rand(e, 1, generator=g) - 1
        self.x0, self.t0 = x0.to(dev), torch.zeros(e, 1, device=dev)
        self.u0 = (-torch.sin(math.pi * x0)).to(dev)
        side = torch.randint(0, 2, (e, 1), generator=g).to(torch.float32) * 2 - 1
        self.xb, self.tb = side.to(dev), torch.rand(e, 1, generator=g).to(dev)

    def loss(self, model):
        u = model(self.xf, self.tf)
        ones = torch.ones_like(u)
        u_x, u_t = torch.autograd.grad(u, (self.xf, self.tf), grad_outputs=ones, create_graph=True)
        u_xx = torch.autograd.grad(u_x, self.xf, grad_outputs=torch.ones_like(u_x), create_graph=True)[0]
        f = u_t + u * u_x - self.nu * u_xx
        ic = model(self.x0, self.t0) - self.u0
        bc = model(self.xb, self.tb)
        return f.pow(2).mean() + ic.pow(2).mean() + bc.pow(2).mean()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=60, help="timed steps")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--optim", choices=("adam", "lbfgs"), default="adam")
    ap.add_argument("--layers", type=int, default=6, help="hidden layers")
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--points", type=int, default=2048, help="collocation points")
    ap.add_argument("--edge", type=int, default=256, help="initial points, and as many boundary points")
    ap.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
    ap.add_argument("--max-iter", type=int, default=5, help="L-BFGS iterations a step")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if min(a.steps, a.layers, a.width, a.points, a.edge, a.max_iter) < 1 or a.warmup < 0:
        ap.error("sizes and --steps must be positive, --warmup not negative")
    dev = torch.device(a.device)
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(a.seed)
    model = Pinn(a.layers, a.width).to(dev)
    prob = Burgers(a, dev)
    if a.optim == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    else:
        opt = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=a.max_iter, history_size=20,
                                tolerance_grad=1e-12, tolerance_change=1e-15, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad(set_to_none=True)
        loss = prob.loss(model)
        loss.backward()
        return loss

    losses, times = [], []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        if a.optim == "adam":
            loss = closure()
            opt.step()
        else:
            loss = opt.step(closure)
        losses.append(loss.item())  # the per-step read-back
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(losses), *losses))
            for p in model.parameters():
                f.write(p.detach().cpu().numpy().tobytes())
    if a.time:
        print("gs-wl: torch_pinn variant=%s layers=%d width=%d points=%d device=%s steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f final_loss=%.6g" % (
                  a.optim, a.layers, a.width, a.points, dev.type, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6, losses[-1]),
              flush=True)


if __name__ == "__main__":
    main()
