#!/usr/bin/env python3
"""Reinforcement-learning policy rollouts (CleanRL / Stable-Baselines style), for the real-program suite.

What an RL user writes for on-policy collection (CleanRL's ppo.py, SB3's
OnPolicyAlgorithm.collect_rollouts): a vectorised environment on the CPU,
an actor-critic nn.Module on the GPU, and a loop that crosses the
host-device boundary every environment step:

    obs = torch.as_tensor(obs_np, dtype=torch.float32, device=device)
    with torch.no_grad():
        logits, value = model(obs)
    dist = torch.distributions.Categorical(logits=logits)
    action = dist.sample()
    logp = dist.log_prob(action)
    obs_np, reward, terminated, truncated = envs.step(action.cpu().numpy())

with obs/dones/values/actions/log-probs/rewards stored into preallocated
GPU rollout buffers by index assignment (buf[t] = ...), and after every
--rollout steps CleanRL's GAE: a reversed Python loop over the time steps of
small tensor ops on [envs] rows, then adv.mean().item() read back (a
logging scalar).  Inference only (no optimizer), so every process computes
the same bytes.

The environment is CartPole-v1 (gymnasium's physics: Euler integration,
float64, the 12-degree / 2.4 termination, truncation at 500 steps) for
--envs environments stepped together in NumPy, reset from a NumPy Generator
seeded with --seed; finished environments are reset at once and their new
first observation returned (SB3's VecEnv auto-reset).  The model:
nn.Sequential(nn.Linear, nn.Tanh, nn.Linear, nn.Tanh) of --hidden units and
two nn.Linear heads (policy logits over 2 actions, a value), nn.Linear's
default initialisation from --seed.  Sampling uses torch's global generator
(torch.manual_seed(--seed) once: Categorical.sample takes no generator), so
the actions are the same in every process; they steer the environments,
so the episodes' lengths, and the resets, follow from them.  Defaults:
16 environments, 64 hidden units (4.7K parameters), rollouts of 64 steps,
128 warm-up and 1024 timed env steps; random policies end CartPole
episodes after about 25 steps, so some environment resets most steps.

Path to the driver (CUDA): PyTorch's kernels through cudaLaunchKernel and
cuBLAS/cuBLASLt for the four tiny GEMMs (on Hopper cuLaunchKernelEx); per
env step three pageable host-to-device copies (observations, rewards, done
flags: blocking copies that synchronise the stream; as far as we read
PyTorch's copy, the float64 and bool arrays are converted to float32 on
the host before the transfer) and synchronising device-to-host reads: the
action (.cpu()) and the two checks of torch.distributions' argument
validation (on by default: Categorical's logits constraint in __init__ and
log_prob's support check end in `if not torch._is_all_true(valid)`, a
read-back each).  Categorical itself is small-kernel heavy (about 38 of
the step's kernels): the logsumexp normalisation (about 10), the two
validation checks (about 10), softmax, multinomial (its min/max/sum checks
ending in two torch._assert_async kernels, which read nothing back on
CUDA; an exponential_ Philox kernel whose offset advances every call; a
division; an argmax), a gather.  An estimate from the ATen ops that
torch.profiler lists for these calls on the CPU (torch 2.11), NOT measured
on a GPU: about 50-55 kernels, 3 host-to-device copies and 3 synchronising
device-to-host reads an env step, plus about 600 kernels (9 a time step of
GAE and the bootstrap value's forward pass) and one read-back per rollout.
Host-bound: the GPU work of a step is microseconds.

One step of this program is one vectorised env step; --steps and --warmup
count env steps and are rounded up to whole rollouts; the environments run
on from warm-up into the timed rollouts.  --out writes, per rollout, every
action taken ([rollout, envs] int32 little-endian) then adv.mean().item()
(float64 little-endian); --time prints one gs-wl line whose median_us is
the median over the timed rollouts of (the rollout's host wall clock, GAE
and its read-back included) / --rollout.  Determinism: the environment in
float64 NumPy from its own Generator, sampling from the seeded global
generator, no atomics-based reduction, no training (so no
use_deterministic_algorithms: every kernel here is deterministic as it is).
"""
import argparse
import math
import statistics
import struct
import time

import numpy as np
import torch
import torch.nn as nn


class CartPoleVec:
    """N CartPole-v1 environments stepped together (gymnasium's equations, in float64)."""

    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    x_limit, theta_limit, max_steps = 2.4, 12 * 2 * math.pi / 360, 500
    obs_dim, n_actions = 4, 2

    def __init__(self, n, seed):
        self.n = n
        self.rng = np.random.default_rng(seed)
        self.state = np.zeros((n, 4))
        self.steps = np.zeros(n, dtype=np.int64)

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=(self.n, 4))
        self.steps[:] = 0
        return self.state.copy()

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state.T
        force = np.where(action == 1, self.force_mag, -self.force_mag)
        cos, sin = np.cos(theta), np.sin(theta)
        total_mass = self.masspole + self.masscart
        pml = self.masspole * self.length
        temp = (force + pml * theta_dot ** 2 * sin) / total_mass
        thetaacc = (self.gravity * sin - cos * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * cos ** 2 / total_mass))
        xacc = temp - pml * thetaacc * cos / total_mass
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        self.state = np.stack([x, x_dot, theta, theta_dot], axis=1)
        self.steps += 1
        terminated = (np.abs(x) > self.x_limit) | (np.abs(theta) > self.theta_limit)
        truncated = self.steps >= self.max_steps
        reward = np.ones(self.n)  # float64, 1 a step, the last one included
        done = terminated | truncated
        if done.any():  # auto-reset: the new episode's first observation is returned
            self.state[done] = self.rng.uniform(-0.05, 0.05, size=(int(done.sum()), 4))
            self.steps[done] = 0
        return self.state.copy(), reward, terminated, truncated


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.policy = nn.Linear(hidden, n_actions)
        self.value = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.policy(h), self.value(h).squeeze(-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=1024,
                    help="timed env steps (whole rollouts)")
    ap.add_argument("--warmup", type=int, default=128, help="untimed env steps first (whole rollouts)")
    ap.add_argument("--envs", type=int, default=16, help="environments stepped together")
    ap.add_argument("--hidden", type=int, default=64, help="MLP width")
    ap.add_argument("--rollout", type=int, default=64, help="env steps per rollout (then GAE)")
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--gae-lambda", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.envs < 1 or a.hidden < 1 or a.rollout < 1 or a.steps < 1 or a.warmup < 0:
        ap.error("--envs, --hidden, --rollout and --steps must be >= 1, --warmup >= 0")
    T, N = a.rollout, a.envs
    rolls_warm, rolls_timed = -(-a.warmup // T), -(-a.steps // T)
    # The same kernels in every process: no timing-based algorithm choice.
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    # Weights are drawn on the CPU; the same call seeds the CUDA generator
    # that Categorical.sample draws from.
    torch.manual_seed(a.seed)
    envs = CartPoleVec(N, a.seed)
    model = ActorCritic(envs.obs_dim, envs.n_actions, a.hidden).eval().to(dev)

    # CleanRL's rollout storage, on the device.
    obs_buf = torch.zeros((T, N, envs.obs_dim), device=dev)
    act_buf = torch.zeros((T, N), device=dev)
    logp_buf = torch.zeros((T, N), device=dev)
    rew_buf = torch.zeros((T, N), device=dev)
    done_buf = torch.zeros((T, N), device=dev)
    val_buf = torch.zeros((T, N), device=dev)

    next_obs = torch.as_tensor(envs.reset(), dtype=torch.float32, device=dev)
    next_done = torch.zeros(N, device=dev)
    results, times, episodes = [], [], 0
    for r in range(rolls_warm + rolls_timed):
        t0 = time.perf_counter()
        for t in range(T):
            obs_buf[t] = next_obs
            done_buf[t] = next_done
            with torch.no_grad():
                logits, value = model(next_obs)
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            logp = dist.log_prob(action)
            val_buf[t] = value
            act_buf[t] = action
            logp_buf[t] = logp
            act_np = action.cpu().numpy()  # the per-step read-back
            obs_np, reward, terminated, truncated = envs.step(act_np)
            done_np = np.logical_or(terminated, truncated)
            episodes += int(done_np.sum())
            rew_buf[t] = torch.as_tensor(reward, dtype=torch.float32, device=dev)
            next_obs = torch.as_tensor(obs_np, dtype=torch.float32, device=dev)
            next_done = torch.as_tensor(done_np, dtype=torch.float32, device=dev)
            results.append(act_np.astype("<i4").tobytes())
        # GAE, as CleanRL writes it: a reversed loop of small tensor ops.
        with torch.no_grad():
            _, next_value = model(next_obs)
            advantages = torch.zeros_like(rew_buf)
            lastgaelam = 0
            for t in reversed(range(T)):
                if t == T - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - done_buf[t + 1]
                    nextvalues = val_buf[t + 1]
                delta = rew_buf[t] + a.gamma * nextvalues * nextnonterminal - val_buf[t]
                advantages[t] = lastgaelam = delta + a.gamma * a.gae_lambda * nextnonterminal * lastgaelam
        adv_mean = advantages.mean().item()  # the per-rollout read-back (a logged scalar)
        if r >= rolls_warm:
            times.append((time.perf_counter() - t0) / T)
        results.append(struct.pack("<d", adv_mean))
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        print("gs-wl: torch_rl variant=e%d-h%d device=%s envs=%d hidden=%d rollout=%d rollouts=%d "
              "episodes=%d steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  N, a.hidden, dev.type, N, a.hidden, T, len(times), episodes, len(times) * T,
                  rolls_warm * T, statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
