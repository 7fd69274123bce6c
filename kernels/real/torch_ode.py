#!/usr/bin/env python3
"""Neural-ODE solves with torchdiffeq, for the real-program suite.

What a torchdiffeq user writes (its README, examples/ode_demo.py, the latent
ODE and FFJORD models): the dynamics f(t, y) as an nn.Module, here a small
time-conditioned MLP (FFJORD's ConcatLinear: the time concatenated to the
input of every nn.Linear; nn.Tanh and nn.Softplus between) plus a stiff
linear decay, dy/dt = MLP(t, y) - decay * y, and

    from torchdiffeq import odeint
    y1 = odeint(func, y0, t, method=..., rtol=..., atol=...)[-1].cpu()

for a batch of initial states y0 [batch, dim] over t = [0, T] (a CUDA
tensor), the final state read back to the host.  One step of this program
is one odeint() solve; solves cycle through 8 fixed random batches of y0;
the weights are nn.Linear's default initialisation from --seed; evaluation
under torch.no_grad().  The module counts its forward calls (the function
evaluations, NFE); torchdiffeq's callback_accept_step/callback_reject_step
hooks count the adaptive solver's accepted and rejected steps.  The decay
term (--decay, default 50) puts dopri5 near its stability limit, where its
step control rejects a few steps per solve (about 30 accepted and 2-3
rejected at the defaults, the counts differing between batches); without it
the random MLP's flow is smooth and dopri5 never rejects.

  --batch --dim --hidden   initial states per solve, state size, MLP width
  --end-time T             integrate over [0, T]
  --method dopri5  (default) Dormand-Prince 5(4), adaptive step size
                   (--rtol, --atol: 1e-5, 1e-6).
                   torchdiffeq decides everything on the host, on values
                   it reads back from the GPU: Python comparisons, `if`s and
                   asserts on 0-d CUDA tensors, each a synchronising
                   device-to-host copy (torch.cuda.set_sync_debug_mode
                   counted about 670 synchronising operations in one solve
                   of 34 steps on an H100, about 20 a step):
                   * odeint's input checks on t (increasing, reversed?);
                   * _select_initial_step: the norms d0, d1, d2 against
                     thresholds and max(d1, d2);
                   * _before_integrate: (counts > 1).any() after
                     torch.unique of the (empty) step_t/jump_t, and
                     step_t.tolist();
                   * every step (_advance, _adaptive_step): next_t > t1,
                     n_steps < max_num_steps (a CUDA int32 tensor),
                     isfinite(dt), t0 + dt > t0, isfinite(y0).all(),
                     dt > max_step, dt <= min_step, the accept/reject test
                     error_ratio <= 1 (an RMS norm of the error estimate),
                     and in _optimal_step_size error_ratio == 0 and
                     error_ratio < 1;
                   * the final interpolation's assert t0 <= t <= t1.
                   So the launch sequence depends on the data: an accepted
                   step fits the interpolation polynomial, a rejected one
                   does not; _optimal_step_size creates a ones tensor only
                   for error_ratio < 1; the number of steps differs from
                   solve to solve and batch to batch.  The solver object is
                   rebuilt by every odeint() call, so each solve also copies
                   the Butcher tableau and the tolerances host-to-device.
                   Time-like values are float64 tensors on the GPU.
                   On the H100 machine a solve takes about 180 ms (about
                   200 NFE, thousands of small launches and the reads above).
  --method rk4     torchdiffeq's fixed-grid RK4 (the 3/8 rule,
                   rk4_alt_step_func) with options=dict(step_size=...)
                   (--step-size, default 1/32: 32 steps, 128 NFE): the same
                   launches every solve (about 65 ms on the H100 machine).
                   Still not capturable: odeint's checks on t compare CUDA
                   tensors, the grid constructor calls .item() on the
                   number of steps, integrate() asserts
                   time_grid[0] == t[0] and, every grid step, tests
                   `t1 >= t[j]` (a device-to-host read) before the
                   interpolation's `t == t0`; one solve makes 40
                   synchronising reads at the defaults (32 steps + 8), and
                   a torch.cuda.graph capture of odeint() fails
                   (cudaErrorStreamCaptureInvalidated, checked on the H100
                   with torch 2.11).  That is why this program has no
                   --graph: a graph variant would have to replace
                   torchdiffeq's loop with a hand-written one, not what its
                   users run.

Every function evaluation also goes through torchdiffeq's _PerturbFunc
wrapper: t.to(y.abs().dtype) (an abs kernel only for its dtype) and, at the
ends of a step, torch.nextafter.

--warmup W solves first (cuBLAS initialisation, the caching allocator), then
--steps timed ones (defaults dopri5 3 and 15, rk4 5 and 40: a solve is a
long step, and a process stays near 10 s).  --out writes, for every solve in
order, the final state (float32 bytes, [batch, dim]) and int32 little-endian
NFE, accepted steps and rejected steps (0 and 0 for rk4); --time prints one
gs-wl line with the median wall time of one solve, its read-back included,
and the mean NFE and step counts.  Determinism: no backward pass, no
atomics-based reduction, no cuDNN; the same seed gave the same bytes in two
processes on the H100 for both methods, so the adaptive solver takes the
same steps in every run too (the CPU's bytes and, near the tolerance, its
step counts may differ from the GPU's).
"""
import argparse
import statistics
import struct
import time

import torch
import torch.nn as nn
from torchdiffeq import odeint


class ConcatLinear(nn.Module):
    """A linear layer that also sees the time: FFJORD's ConcatLinear."""

    def __init__(self, din, dout):
        super().__init__()
        self.layer = nn.Linear(din + 1, dout)

    def forward(self, t, x):
        tt = torch.ones_like(x[:, :1]) * t
        return self.layer(torch.cat([tt, x], 1))


class ODEFunc(nn.Module):
    """dy/dt = MLP(t, y) - decay * y: a concat-time MLP and a stiff linear decay."""

    def __init__(self, dim, hidden, decay):
        super().__init__()
        self.fc1 = ConcatLinear(dim, hidden)
        self.act1 = nn.Tanh()
        self.fc2 = ConcatLinear(hidden, hidden)
        self.act2 = nn.Softplus()
        self.fc3 = ConcatLinear(hidden, dim)
        self.decay = decay
        self.nfe = 0

    def forward(self, t, y):
        self.nfe += 1
        h = self.act1(self.fc1(t, y))
        h = self.act2(self.fc2(t, h))
        return self.fc3(t, h) - self.decay * y


class AdaptiveODEFunc(ODEFunc):
    """The same dynamics with torchdiffeq's step callbacks (adaptive solvers only)."""

    def __init__(self, dim, hidden, decay):
        super().__init__(dim, hidden, decay)
        self.accepted = 0
        self.rejected = 0

    def callback_accept_step(self, t0, y0, dt):
        self.accepted += 1

    def callback_reject_step(self, t0, y0, dt):
        self.rejected += 1


def tensor_bytes(t):
    """A tensor's raw bytes, C order (the host is little-endian).  Not
    bytes(storage): a storage has no buffer protocol, and bytes() then reads
    it one Python call a byte (tens of seconds for a model's parameters)."""
    return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, help="timed solves (dopri5: 15, rk4: 40)")
    ap.add_argument("--warmup", type=int, help="untimed solves first (dopri5: 3, rk4: 5)")
    ap.add_argument("--method", choices=("dopri5", "rk4"), default="dopri5")
    ap.add_argument("--batch", type=int, default=32, help="initial states per solve")
    ap.add_argument("--dim", type=int, default=8, help="state dimension")
    ap.add_argument("--hidden", type=int, default=64, help="MLP width")
    ap.add_argument("--decay", type=float, default=50.0, help="the stiff linear term's rate")
    ap.add_argument("--end-time", type=float, default=1.0, help="integrate over [0, T]")
    ap.add_argument("--rtol", type=float, default=1e-5, help="dopri5")
    ap.add_argument("--atol", type=float, default=1e-6, help="dopri5")
    ap.add_argument("--step-size", type=float, default=1 / 32, help="rk4: the fixed step")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.steps is None:
        a.steps = 15 if a.method == "dopri5" else 40
    if a.warmup is None:
        a.warmup = 3 if a.method == "dopri5" else 5
    dev = torch.device(a.device)

    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed + 1)
    adaptive = a.method == "dopri5"
    func = (AdaptiveODEFunc if adaptive else ODEFunc)(a.dim, a.hidden, a.decay).to(dev)
    batches = [y.to(dev) for y in torch.randn(8, a.batch, a.dim, generator=gen).unbind(0)]
    t = torch.tensor([0.0, a.end_time]).to(dev)
    if adaptive:
        kw = dict(method="dopri5", rtol=a.rtol, atol=a.atol)
    else:
        kw = dict(method="rk4", options=dict(step_size=a.step_size))

    results, times, counts = [], [], []
    with torch.no_grad():
        for i in range(a.warmup + a.steps):
            func.nfe = 0
            if adaptive:
                func.accepted = func.rejected = 0
            t0 = time.perf_counter()
            y1 = odeint(func, batches[i % 8], t, **kw)[-1].cpu()  # the read-back
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
            acc, rej = (func.accepted, func.rejected) if adaptive else (0, 0)
            counts.append((func.nfe, acc, rej))
            results.append(tensor_bytes(y1) + struct.pack("<iii", func.nfe, acc, rej))
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        timed = counts[a.warmup:]
        print("gs-wl: torch_ode variant=%s device=%s batch=%d dim=%d hidden=%d end_time=%g steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f nfe=%.1f accepted=%.1f rejected=%.1f" % (
                  a.method, dev.type, a.batch, a.dim, a.hidden, a.end_time, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6,
                  statistics.mean(c[0] for c in timed), statistics.mean(c[1] for c in timed),
                  statistics.mean(c[2] for c in timed)), flush=True)


if __name__ == "__main__":
    main()
