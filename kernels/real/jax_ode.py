#!/usr/bin/env python3
"""Neural-ODE solves and training with diffrax and equinox, for the real-program suite.

What a diffrax user writes (diffrax's neural_ode example): the vector field as
an equinox Module around an eqx.nn.MLP (softplus hidden activations, tanh
on the output), a NeuralODE Module whose __call__(ts, y0) is

    diffrax.diffeqsolve(diffrax.ODETerm(self.func), diffrax.Tsit5(), t0, t1,
                        dt0, y0, stepsize_controller=..., saveat=...)

vmapped over a batch of initial states (jax.vmap(model, in_axes=(None, 0)))
inside an eqx.filter_jit function, so the host dispatches one executable a
solve.  As in torch_ode.py, the field is the MLP plus a stiff linear decay,
dy/dt = MLP(y) - decay * y (--decay 50): without it the random MLP's flow
is so smooth that Tsit5 crosses [0, T] in two or three steps; with it the
adaptive solver works near its stability limit and rejects a few steps.
The weights are eqx.nn.MLP's initialisation from --seed; the initial
states are jax.random.uniform batches, as the example draws them (--batches
fixed batches, cycled).  Nothing is downloaded.

One step of this program is one solve of a batch, its solution saved at
--save evenly spaced times over [0, T] (SaveAt(ts=...); --save 1:
SaveAt(t1=True), the final state only) and read back (np.asarray of the
saved states and of the solver's step counts, sol.stats["num_steps"]).

  --controller pid       (default) diffrax.PIDController(rtol, atol): the
                         adaptive step size; diffrax's loop over steps is an
                         XLA while loop whose condition (t < t1, steps left)
                         is evaluated on the device, and under vmap it runs
                         until the slowest state of the batch is done, so
                         the trip count is the data's (on the CPU, 33
                         steps at the defaults, 3 or 4 of them rejected).
  --controller constant  diffrax.ConstantStepSize (dt0 = --dt0): the same
                         while loop with a trip count fixed by T / dt0 (32
                         steps at the defaults).
  --train                training steps instead of solves, as the example
                         trains: eqx.filter_value_and_grad of the mean squared
                         error between the solution and target trajectories
                         through diffeqsolve with its default adjoint
                         (RecursiveCheckpointAdjoint: a checkpointed while
                         loop forward, its reverse loop backward), optax.adam
                         (the example uses adabelief, an Adam variant),
                         eqx.apply_updates, all under one eqx.filter_jit
                         make_step; float(loss) each step.  The targets are
                         the trajectories of a teacher, the same network
                         with other random weights, solved once at start.

Every while-loop iteration is a few XLA fusions: Tsit5's six new stages
(each the MLP's three GEMMs and their activations), the error estimate and
step-size update, the interpolation to the save times that fall in the step
(an inner while loop of its own) and the loop condition.  Without command
buffers XLA's GPU runtime copies each loop's predicate to the host and
synchronises once an iteration, the inner loops' included.  XLA reaches the
driver through its own libcuda handle (cuLaunchKernel, cuLaunchKernelEx).
XLA command buffers (CUDA graphs XLA builds itself, with conditional nodes
for loops where it supports them) are chosen by the caller through
XLA_FLAGS: --xla_gpu_enable_command_buffer= turns them off; the default is
on.  Set XLA_PYTHON_CLIENT_PREALLOCATE=false so that JAX does not take
most of the GPU's memory.  equinox's runtime checks (eqx.error_if, as
diffeqsolve's throw=True uses) are XLA conditionals whose taken branch,
only on failure, is a host callback that raises.

Determinism: unless --autotune is given, --xla_gpu_autotune_level=0 is added
to XLA_FLAGS (XLA does not time GEMM algorithms and pick by speed), and
--xla_gpu_deterministic_ops=true unless XLA_FLAGS names that flag already
(no atomics in reductions or scatters); float32 throughout.  Flags the
caller set in XLA_FLAGS are kept.

--warmup W steps first (the first compiles), then --steps timed ones
(solves: 5 and 100, --train: 3 and 30).  --out writes, for every solve in
order, the saved states (float32 bytes, [batch, save, dim]) and each
state's step count (int32 [batch]), little-endian; with --train every
step's loss (float32) and then the final weights (float32, leaf by leaf in
jax.tree_util order).  --time prints one gs-wl line with the median wall
time of one step, its read-backs included, and the mean number of solver
steps (the loop's trip count: the largest of the batch) of a solve.
"""
import argparse
import os
import statistics
import struct
import time

import xla_env


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int,
                    help="timed solves or training steps (solves: 100, --train: 30)")
    ap.add_argument("--warmup", type=int, help="untimed steps first, the first compiles (solves: 5, --train: 3)")
    ap.add_argument("--controller", choices=("pid", "constant"), default="pid")
    ap.add_argument("--train", action="store_true", help="training steps (filter_value_and_grad, optax.adam)")
    ap.add_argument("--dim", type=int, default=8, help="state dimension")
    ap.add_argument("--width", type=int, default=64, help="MLP width")
    ap.add_argument("--depth", type=int, default=2, help="MLP hidden layers")
    ap.add_argument("--decay", type=float, default=50.0, help="the stiff linear term's rate")
    ap.add_argument("--end-time", type=float, default=1.0, help="integrate over [0, T]")
    ap.add_argument("--dt0", type=float, default=1 / 32, help="the initial (pid) or fixed (constant) step")
    ap.add_argument("--rtol", type=float, default=1e-5, help="pid")
    ap.add_argument("--atol", type=float, default=1e-6, help="pid")
    ap.add_argument("--save", type=int, default=8, help="save times over [0, T] (1: the final state only)")
    ap.add_argument("--batch", type=int, default=32, help="initial states per solve")
    ap.add_argument("--batches", type=int, default=8, help="distinct fixed batches, cycled")
    ap.add_argument("--lr", type=float, default=3e-3, help="--train: Adam's learning rate")
    ap.add_argument("--autotune", action="store_true", help="leave XLA's GEMM autotuning on")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.steps is None:
        a.steps = 30 if a.train else 100
    if a.warmup is None:
        a.warmup = 3 if a.train else 5
    if a.steps < 1 or a.warmup < 0 or a.save < 1 or a.batch < 1 or a.batches < 1 or a.dt0 <= 0:
        ap.error("--steps, --save, --batch, --batches must be >= 1, --warmup >= 0, --dt0 > 0")
    return a


def main():
    a = parse()
    xla_env.configure(a.device, autotune_off=not a.autotune)  # before JAX is imported
    import diffrax
    import equinox as eqx
    import jax
    import jax.nn as jnn
    import jax.numpy as jnp
    import jax.random as jr
    import numpy as np
    import optax

    platform = jax.devices()[0].platform

    class Func(eqx.Module):
        """The vector field f(t, y, args) = MLP(y) - decay * y."""
        mlp: eqx.nn.MLP
        decay: float

        def __init__(self, key):
            self.mlp = eqx.nn.MLP(in_size=a.dim, out_size=a.dim, width_size=a.width, depth=a.depth,
                                  activation=jnn.softplus, final_activation=jnn.tanh, key=key)
            self.decay = a.decay

        def __call__(self, t, y, args):
            return self.mlp(y) - self.decay * y

    class NeuralODE(eqx.Module):
        func: Func

        def __init__(self, key):
            self.func = Func(key)

        def __call__(self, ts, y0):
            if a.controller == "pid":
                controller = diffrax.PIDController(rtol=a.rtol, atol=a.atol)
            else:
                controller = diffrax.ConstantStepSize()
            saveat = diffrax.SaveAt(ts=ts) if a.save > 1 else diffrax.SaveAt(t1=True)
            return diffrax.diffeqsolve(diffrax.ODETerm(self.func), diffrax.Tsit5(), t0=0.0, t1=a.end_time,
                                       dt0=a.dt0, y0=y0, stepsize_controller=controller, saveat=saveat)

    @eqx.filter_jit
    def solve(model, ts, y0):
        sol = jax.vmap(model, in_axes=(None, 0))(ts, y0)
        return sol.ys, sol.stats["num_steps"]

    model_key, teacher_key, data_key = jr.split(jr.PRNGKey(a.seed), 3)
    model = NeuralODE(model_key)
    ts = jnp.linspace(0.0, a.end_time, a.save)
    y0s = [jr.uniform(k, (a.batch, a.dim), minval=-0.6, maxval=1.0) for k in jr.split(data_key, a.batches)]

    if a.train:
        # The targets: a teacher's trajectories from the same initial states.
        teacher = NeuralODE(teacher_key)
        targets = [solve(teacher, ts, y0)[0] for y0 in y0s]
        optim = optax.adam(a.lr)
        opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))

        @eqx.filter_value_and_grad
        def grad_loss(model, ts, y0, yt):
            ys = jax.vmap(model, in_axes=(None, 0))(ts, y0).ys
            return jnp.mean((yt - ys) ** 2)

        @eqx.filter_jit
        def make_step(model, opt_state, ts, y0, yt):
            loss, grads = grad_loss(model, ts, y0, yt)
            updates, opt_state = optim.update(grads, opt_state)
            model = eqx.apply_updates(model, updates)
            return loss, model, opt_state

    results, times, nsteps = [], [], []
    for i in range(a.warmup + a.steps):
        y0 = y0s[i % a.batches]
        t0 = time.perf_counter()
        if a.train:
            loss, model, opt_state = make_step(model, opt_state, ts, y0, targets[i % a.batches])
            loss = float(loss)  # the per-step read-back (logged)
            results.append(struct.pack("<f", loss))
        else:
            ys, n = solve(model, ts, y0)
            ys, n = np.asarray(ys), np.asarray(n)  # the read-backs
            results.append(ys.astype("<f4").tobytes() + n.astype("<i4").tobytes())
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
            if not a.train:
                nsteps.append(int(n.max()))
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
            if a.train:
                for leaf in jax.tree_util.tree_leaves(eqx.filter(model, eqx.is_array)):
                    f.write(np.asarray(leaf).astype("<f4").tobytes())
    if a.time:
        cb = "default"  # XLA's own choice of command buffers
        for f in os.environ.get("XLA_FLAGS", "").split():
            if f.startswith("--xla_gpu_enable_command_buffer="):
                cb = f.split("=", 1)[1].strip("'\"").replace(",", "+") or "off"
        extra = "" if a.train else " solver_steps=%.1f" % statistics.mean(nsteps)
        print("gs-wl: jax_ode variant=tsit5-%s%s cmdbuf=%s platform=%s batch=%d dim=%d save=%d steps=%d warmup=%d "
              "jax=%s median_us=%.3f mean_us=%.3f%s" % (
                  a.controller, "-train" if a.train else "", cb, platform, a.batch, a.dim, a.save, len(times),
                  a.warmup, jax.__version__, statistics.median(times) * 1e6, statistics.mean(times) * 1e6, extra),
              flush=True)


if __name__ == "__main__":
    main()
