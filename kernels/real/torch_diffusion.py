#!/usr/bin/env python3
"""DDIM / DDPM sampling with a small UNet, for the real-program suite.

What a diffusion user writes with plain torch.nn (the shape of diffusers'
UNet2DModel and its schedulers): a UNet of nn.Conv2d, nn.GroupNorm, nn.SiLU
residual blocks, each adding a projection of the timestep embedding
(sinusoidal, flip_sin_to_cos, then nn.Linear-SiLU-nn.Linear), strided-conv
downsampling and nearest-neighbour upsampling with skip connections by
torch.cat, and one self-attention block (F.scaled_dot_product_attention) at
the lowest resolution; random weights from --seed.  A sampling loop of
--sample-steps denoising steps turns a batch of --batch noise images of
--size x --size into images:

    for i, t in enumerate(timesteps):
        eps = unet(x, torch.full((batch,), t, device=...))
        x = scheduler_step(eps, t, x)          # Python-float coefficients
    images = x.cpu()

The scheduler is written as diffusers' are: alphas_cumprod precomputed on
the host (a linear beta schedule of --train-steps), the timesteps "leading"
spaced, and every step's coefficients computed in Python and passed as
floats into tensor expressions, so the scalar arguments of the scheduler's
elementwise kernels change every step, as does the fill value of the
timestep tensor made per step.  The pred-x0 division is written as a
multiplication by the host-computed reciprocal (the graph variant below
computes the same bits with its coefficients in a device tensor).  There is
no read-back inside a sampling loop; a generation ends with x.cpu().

  --scheduler ddim  (default) deterministic DDIM (eta 0): about 6
                    elementwise kernels a step after the UNet.
  --scheduler ddpm  DDPM ancestral sampling (fixed_small variance,
                    clip_sample): pred-x0 clamped, and torch.randn noise
                    from a seeded torch.Generator on the device added every
                    step but the last (a Philox kernel whose offset
                    argument advances every step).
  --graph           (ddim, cuda) one denoising step captured once in a
                    torch.cuda.CUDAGraph with static tensors: the image, the
                    timestep and a 4-element coefficient tensor; every step
                    copies its timestep row and coefficient row in from
                    pinned host tables (two small cudaMemcpyAsync H2D) and
                    replays the graph, the way a user hand-optimising a
                    pipeline does.

At the defaults a denoising step is about 230 kernels and 4 memsets
(CUPTI on the H100 machine, torch 2.11: cuDNN convolutions and their bias
adds, GroupNorm, SiLU, the embedding's small kernels, SDPA's attention
kernel, cuBLAS for the linears, the scheduler's), ddpm about 4 more.  Eager
is host-bound there, about 5 ms a step (a process about 10 s); --graph
about 0.76 ms a step.

One step of this program is one denoising step; --steps and --warmup count
denoising steps and are rounded up to whole generations.  Every generation
draws its initial noise from the device generator seeded with --seed + 1 +
its index.  --out writes every generation's final images (float32 bytes,
[batch, 3, size, size]) in order; --time prints one gs-wl line whose
median_us is the median over the timed generations of (the host wall clock
of the whole generation, the read-back included) / --sample-steps.
Determinism: cuDNN benchmarking off and its deterministic mode on, no
atomics-based reduction, the device generator reseeded per generation.
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t, dim, max_period=10000):
    """diffusers' get_timestep_embedding (flip_sin_to_cos=True, shift 0)."""
    half = dim // 2
    exponent = -math.log(max_period) * torch.arange(0, half, dtype=torch.float32, device=t.device)
    emb = torch.exp(exponent / half)
    emb = t[:, None].float() * emb[None, :]
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)
    return torch.cat([emb[:, half:], emb[:, :half]], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim, groups):
        super().__init__()
        self.norm1 = nn.GroupNorm(math.gcd(groups, cin), cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.temb_proj = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(math.gcd(groups, cout), cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.act = nn.SiLU()
        self.shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(self.act(self.norm1(x)))
        h = h + self.temb_proj(self.act(temb))[:, :, None, None]
        h = self.conv2(self.act(self.norm2(h)))
        return self.shortcut(x) + h


class AttnBlock(nn.Module):
    def __init__(self, c, heads, groups):
        super().__init__()
        self.norm = nn.GroupNorm(math.gcd(groups, c), c)
        self.qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)
        self.heads = heads

    def forward(self, x):
        b, c, h, w = x.shape
        y = self.norm(x).view(b, c, h * w).transpose(1, 2)  # [b, hw, c]
        q, k, v = self.qkv(y).view(b, h * w, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v)
        o = self.proj(o.transpose(1, 2).reshape(b, h * w, c))
        return x + o.transpose(1, 2).reshape(b, c, h, w)


class Upsample(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


class UNet(nn.Module):
    def __init__(self, width, mults, heads, groups):
        super().__init__()
        self.width, tdim = width, 4 * width
        self.time_mlp = nn.Sequential(nn.Linear(width, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.conv_in = nn.Conv2d(3, width, 3, padding=1)
        chans = [width * m for m in mults]
        self.down, self.downsample, skip = nn.ModuleList(), nn.ModuleList(), []
        c = width
        for i, co in enumerate(chans):
            self.down.append(ResBlock(c, co, tdim, groups))
            c = co
            skip.append(c)
            last = i == len(chans) - 1
            self.downsample.append(nn.Identity() if last else nn.Conv2d(c, c, 3, stride=2, padding=1))
        self.mid1 = ResBlock(c, c, tdim, groups)
        self.attn = AttnBlock(c, heads, groups)
        self.mid2 = ResBlock(c, c, tdim, groups)
        self.up, self.upsample = nn.ModuleList(), nn.ModuleList()
        for i in reversed(range(len(chans))):
            self.up.append(ResBlock(c + skip[i], chans[i], tdim, groups))
            c = chans[i]
            self.upsample.append(Upsample(c) if i > 0 else nn.Identity())
        self.norm_out = nn.GroupNorm(math.gcd(groups, c), c)
        self.conv_out = nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, x, t):
        emb = self.time_mlp(timestep_embedding(t, self.width).to(x.dtype))
        h = self.conv_in(x)
        skips = []
        for blk, ds in zip(self.down, self.downsample):
            h = blk(h, emb)
            skips.append(h)
            h = ds(h)
        h = self.mid2(self.attn(self.mid1(h, emb)), emb)
        for blk, us in zip(self.up, self.upsample):
            h = us(blk(torch.cat([h, skips.pop()], dim=1), emb))
        return self.conv_out(F.silu(self.norm_out(h)))


def schedule(a):
    """Timesteps and, per step, the scheduler's coefficients (Python floats)."""
    betas = torch.linspace(a.beta_start, a.beta_end, a.train_steps, dtype=torch.float32)
    ac = torch.cumprod(1.0 - betas, dim=0).tolist()  # alphas_cumprod, on the host
    ratio = a.train_steps // a.sample_steps
    steps = []
    for t in reversed(range(0, a.train_steps, ratio)[:a.sample_steps]):  # "leading" spacing
        at, prev = ac[t], t - ratio
        ap = ac[prev] if prev >= 0 else 1.0
        c_eps, c_inv = (1.0 - at) ** 0.5, 1.0 / at ** 0.5  # pred_x0 = (x - c_eps * eps) * c_inv
        if a.scheduler == "ddim":  # eta = 0
            coef = (c_eps, c_inv, ap ** 0.5, (1.0 - ap) ** 0.5)
        else:  # DDPM posterior mean and fixed_small std
            cur_alpha = at / ap
            cur_beta = 1.0 - cur_alpha
            std = (max((1.0 - ap) / (1.0 - at) * cur_beta, 1e-20)) ** 0.5 if t > 0 else 0.0
            coef = (c_eps, c_inv, ap ** 0.5 * cur_beta / (1.0 - at),
                    cur_alpha ** 0.5 * (1.0 - ap) / (1.0 - at), std)
        steps.append((t, coef))
    return steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=400,
                    help="timed denoising steps (whole generations)")
    ap.add_argument("--warmup", type=int, default=50, help="untimed denoising steps first (whole generations)")
    ap.add_argument("--sample-steps", type=int, default=50, help="denoising steps of one generation")
    ap.add_argument("--scheduler", choices=("ddim", "ddpm"), default="ddim")
    ap.add_argument("--graph", action="store_true", help="ddim: replay a CUDAGraph per denoising step")
    ap.add_argument("--batch", type=int, default=4, help="images per generation")
    ap.add_argument("--size", type=int, default=32, help="image height and width")
    ap.add_argument("--width", type=int, default=64, help="channels of the first level")
    ap.add_argument("--heads", type=int, default=4, help="attention heads at the lowest resolution")
    ap.add_argument("--groups", type=int, default=32, help="GroupNorm groups (at most)")
    ap.add_argument("--train-steps", type=int, default=1000, help="the noise schedule's length")
    ap.add_argument("--beta-start", type=float, default=1e-4)
    ap.add_argument("--beta-end", type=float, default=0.02)
    ap.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    mults = (1, 2, 2)
    if a.graph and (a.scheduler != "ddim" or dev.type != "cuda"):
        ap.error("--graph needs --scheduler ddim and --device cuda")
    if a.size % (1 << (len(mults) - 1)) or (a.width * mults[-1]) % a.heads:
        ap.error("--size must be a multiple of 4 and --width * 2 of --heads")
    if not 1 <= a.sample_steps <= a.train_steps or a.steps < 1:
        ap.error("--sample-steps must be in [1, --train-steps] and --steps >= 1")
    S = a.sample_steps
    gens_warm, gens_timed = -(-a.warmup // S), -(-a.steps // S)
    dtype = getattr(torch, a.dtype)
    # The same kernels in every process: no timing-based algorithm choice.
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    torch.manual_seed(a.seed)
    unet = UNet(a.width, mults, a.heads, a.groups).eval().to(device=dev, dtype=dtype)
    steps = schedule(a)
    gen = torch.Generator(device=dev)
    shape = (a.batch, 3, a.size, a.size)
    ddpm = a.scheduler == "ddpm"

    def eager_step(x, t, c):
        eps = unet(x, torch.full((a.batch,), t, device=dev))
        x0 = (x - c[0] * eps) * c[1]
        if not ddpm:
            return c[2] * x0 + c[3] * eps
        x = c[2] * x0.clamp_(-1.0, 1.0) + c[3] * x
        if c[4] > 0.0:
            x = x + c[4] * torch.randn(shape, generator=gen, device=dev, dtype=dtype)
        return x

    with torch.no_grad():
        if a.graph:
            s_x = torch.zeros(shape, device=dev, dtype=dtype)
            s_t = torch.zeros(a.batch, device=dev, dtype=torch.long)
            s_c = torch.zeros(4, device=dev, dtype=torch.float32)
            t_rows = torch.tensor([[t] * a.batch for t, _ in steps], dtype=torch.long).pin_memory()
            c_rows = torch.tensor([list(c) for _, c in steps], dtype=torch.float32).pin_memory()

            def graph_body():
                eps = unet(s_x, s_t)
                x0 = (s_x - s_c[0] * eps) * s_c[1]
                s_x.copy_(s_c[2] * x0 + s_c[3] * eps)

            # As the CUDA graphs documentation says: warm up on a side stream, then capture.
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    graph_body()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                graph_body()

        def generate(g):
            gen.manual_seed(a.seed + 1 + g)
            x = torch.randn(shape, generator=gen, device=dev, dtype=dtype)
            if a.graph:
                s_x.copy_(x)
                for i in range(S):
                    s_t.copy_(t_rows[i], non_blocking=True)
                    s_c.copy_(c_rows[i], non_blocking=True)
                    graph.replay()
                x = s_x
            else:
                for t, c in steps:
                    x = eager_step(x, t, c)
            return x.float().cpu()  # the read-back: the generation's images

        results, times = [], []
        for g in range(gens_warm + gens_timed):
            t0 = time.perf_counter()
            img = generate(g)
            if g >= gens_warm:
                times.append((time.perf_counter() - t0) / S)
            results.append(img.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        print("gs-wl: torch_diffusion variant=%s-%s device=%s dtype=%s batch=%d size=%d width=%d "
              "sample_steps=%d generations=%d steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  a.scheduler, "graph" if a.graph else "eager", dev.type, a.dtype, a.batch, a.size, a.width,
                  S, len(times), len(times) * S, gens_warm * S,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
