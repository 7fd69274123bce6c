#!/usr/bin/env python3
"""Autoregressive audio generation with a small WaveNet, for the real-program suite.

What a WaveNet user writes with plain torch.nn (the shape of r9y9's
wavenet_vocoder and of "pytorch-wavenet"): an nn.Embedding of the 256
mu-law classes, a causal input nn.Conv1d (kernel 2), a stack of residual
blocks, each a dilated causal nn.Conv1d(kernel_size=2, dilation=2**i,
padding=dilation, its output trimmed to the input's length) whose output is
split with torch.chunk into the gated activation tanh(a) * sigmoid(b),
then 1x1 residual and skip nn.Conv1d's; the dilations cycle --cycles times
over 1, 2, ..., 2**(--dilations - 1); the skips are summed, then ReLU, 1x1
conv, ReLU, 1x1 conv to 256 logits.  Random weights from --seed; a primer
of one receptive field of random mu-law classes (--seed + 1) stands for the
audio clip users start from.  At the defaults (2 cycles of 8) the receptive
field is 512 samples.

The naive loop, what users write first: the last receptive field of samples
is a LongTensor window on the GPU, and every sample runs the whole network
over it:

    for _ in range(n):
        logits = model(window)[..., -1]                # [batch, 256]
        nxt = logits.argmax(-1)                        # or torch.multinomial
        samples.append(nxt.item())                     # .tolist() for a batch
        window = torch.cat([window[:, 1:], nxt[:, None]], dim=1)

  --fast    the "fast wavenet" queues users write for speed: the primer runs
            through the whole network once (its last position gives the first
            sample), keeping each kernel-2 conv's input; per conv a small GPU
            tensor then holds its last dilation + 1 input positions, pushed
            with torch.cat and slicing every sample, and each step runs every
            conv (F.conv1d with the module's weight and bias) on just 2 time
            positions, t - dilation and t; the 1x1 convs run on one position.
            The same function as the window up to rounding.
  --sample  torch.multinomial(softmax(logits / --temperature), 1) instead of
            argmax, from the default generator seeded once (torch.manual_seed
            before the model is built: the device's generator is untouched
            by the CPU weight draws): about 15 more kernels a sample (the
            softmax, multinomial's validity checks through _assert_async,
            no sync on the GPU, an exponential_ Philox kernel whose offset
            argument advances every sample, a division, an argmax).

Every sample is read back (.item(), .tolist() for --batch > 1): one
synchronising device-to-host copy a sample.  The path to the driver:
PyTorch's kernels (embedding index_select, the torch.cat of the window or
the queues, copies making strided inputs contiguous, bias adds, tanh,
sigmoid, mul, adds, relu, argmax) through cudaLaunchKernel, and cuDNN's
convolution kernels for every nn.Conv1d (run as 2-D convolutions of height
1; cudnn.benchmark off, so heuristics pick them).  An estimate, not
measured: per sample about 10-15 kernels a residual block (the dilated
conv, its bias add, tanh, sigmoid, mul, the residual and skip convs with
their bias adds, the residual add, the skip sum; --fast adds a queue cat
and a contiguous copy), so about 200-260 kernels and one device-to-host
copy a sample at the defaults for both loops (the window's convolutions
run over 512 positions, --fast's over 2), tiny kernels: launch-bound,
likely 1-3 ms a sample eager.

--warmup W: a whole generation of W samples first (cuDNN's and the
allocator's initialisation), then the timed generation of --tokens, both
from the same primer (--sample: the generator goes on).  --out writes every
generated sample id of both (int32 little-endian, a step's --batch ids in
row order); --time prints one gs-wl line with the median wall time of one
sample, read-back included (--fast: the timed steps after the primer's
pass).  Determinism: cuDNN benchmarking off, its deterministic mode on;
inference only, no atomics-based op.
"""
import argparse
import statistics
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

CLASSES = 256  # 8-bit mu-law


class ResidualBlock(nn.Module):
    def __init__(self, channels, skip, dilation):
        super().__init__()
        self.dilation = dilation
        self.conv = nn.Conv1d(channels, 2 * channels, kernel_size=2, dilation=dilation, padding=dilation)
        self.res = nn.Conv1d(channels, channels, 1)
        self.skip = nn.Conv1d(channels, skip, 1)

    def gate(self, h, x):
        a, b = torch.chunk(h, 2, dim=1)
        z = torch.tanh(a) * torch.sigmoid(b)
        return self.res(z) + x, self.skip(z)

    def forward(self, x):  # x: [B, C, T]
        return self.gate(self.conv(x)[:, :, :x.shape[2]], x)  # causal: trim the right padding

    def step(self, pair):  # pair: [B, C, 2], positions t - dilation and t
        return self.gate(F.conv1d(pair, self.conv.weight, self.conv.bias), pair[:, :, 1:])


class WaveNet(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(CLASSES, a.channels)
        self.causal = nn.Conv1d(a.channels, a.channels, kernel_size=2, padding=1)
        self.blocks = nn.ModuleList(ResidualBlock(a.channels, a.skip, 2 ** i)
                                    for _ in range(a.cycles) for i in range(a.dilations))
        self.head = nn.Sequential(nn.ReLU(), nn.Conv1d(a.skip, a.skip, 1), nn.ReLU(),
                                  nn.Conv1d(a.skip, CLASSES, 1))
        self.receptive_field = 2 + sum(blk.dilation for blk in self.blocks)

    def forward(self, x, keep=None):
        """x: [B, T] class ids -> [B, 256, T] logits.  keep: a list that
        receives every kernel-2 conv's input (--fast's primer pass)."""
        t = x.shape[1]
        h = self.embed(x).transpose(1, 2)  # [B, C, T]
        if keep is not None:
            keep.append(h)
        h = self.causal(h)[:, :, :t]
        skips = None
        for blk in self.blocks:
            if keep is not None:
                keep.append(h)
            h, s = blk(h)
            skips = s if skips is None else skips + s
        return self.head(skips)

    def step(self, x, queues):
        """x: [B] the newest sample -> [B, 256] logits of the next one."""
        h = F.conv1d(queues[0].push(self.embed(x)[:, :, None]), self.causal.weight, self.causal.bias)
        skips = None
        for blk, q in zip(self.blocks, queues[1:]):
            h, s = blk.step(q.push(h))
            skips = s if skips is None else skips + s
        return self.head(skips)[:, :, -1]


class Queue:
    """One conv's past inputs: positions t - dilation .. t after a push."""

    def __init__(self, seq, dilation):
        self.d = dilation
        self.buf = seq[:, :, -(dilation + 1):]  # the primer's last positions

    def push(self, x):  # x: [B, C, 1]
        self.buf = torch.cat([self.buf[:, :, 1:], x], dim=2)
        return self.buf[:, :, ::self.d]  # [B, C, 2]: t - dilation and t


def read_samples(nxt):
    """The per-sample read-back: .item() for one sequence, a list for a batch."""
    return [nxt.item()] if nxt.numel() == 1 else nxt.tolist()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", "--steps", dest="tokens", type=int, default=400,
                    help="samples of the timed generation")
    ap.add_argument("--warmup", type=int, default=50, help="samples of the warm-up generation")
    ap.add_argument("--fast", action="store_true", help="per-conv queues: every conv on 2 positions a sample")
    ap.add_argument("--sample", action="store_true", help="torch.multinomial instead of argmax")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--channels", type=int, default=32, help="residual channels")
    ap.add_argument("--skip", type=int, default=64, help="skip channels")
    ap.add_argument("--dilations", type=int, default=8, help="layers of a cycle: dilations 1 .. 2**(N-1)")
    ap.add_argument("--cycles", type=int, default=2)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dtype", choices=("float32", "float16"), default="float32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.tokens < 2 or a.dilations < 1 or a.cycles < 1 or a.temperature <= 0:
        ap.error("--tokens must be >= 2, --dilations and --cycles >= 1, --temperature > 0")
    if a.dtype == "float16" and dev.type != "cuda":
        ap.error("--dtype float16 needs --device cuda")
    dtype = getattr(torch, a.dtype)
    # The same kernels in every process: no timing-based algorithm choice.
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    # Seeded once: the weights (drawn on the CPU) and, for --sample, the
    # device's default generator.
    torch.manual_seed(a.seed)
    model = WaveNet(a).eval().to(device=dev, dtype=dtype)
    rf = model.receptive_field
    g = torch.Generator().manual_seed(a.seed + 1)
    primer = torch.randint(0, CLASSES, (a.batch, rf), generator=g).to(dev)

    def pick(logits):  # [B, 256] -> [B]
        if not a.sample:
            return logits.argmax(-1)
        probs = F.softmax(logits.float() / a.temperature, dim=-1)
        return torch.multinomial(probs, 1).view(-1)

    def generate_window(n, times):
        window, out = primer, []
        for _ in range(n):
            t0 = time.perf_counter()
            nxt = pick(model(window)[..., -1])
            out += read_samples(nxt)
            window = torch.cat([window[:, 1:], nxt[:, None]], dim=1)
            times.append(time.perf_counter() - t0)
        return out

    def generate_fast(n, times):
        keep = []
        nxt = pick(model(primer, keep)[..., -1])  # the primer's pass gives the first sample
        out = read_samples(nxt)
        dil = [1] + [blk.dilation for blk in model.blocks]
        queues = [Queue(seq, d) for seq, d in zip(keep, dil)]
        del keep
        for _ in range(n - 1):
            t0 = time.perf_counter()
            nxt = pick(model.step(nxt, queues))
            out += read_samples(nxt)
            times.append(time.perf_counter() - t0)
        return out

    generate = generate_fast if a.fast else generate_window
    samples, times = [], []
    with torch.no_grad():
        if a.warmup > 0:
            samples += generate(a.warmup, [])
        samples += generate(a.tokens, times)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(samples), *samples))
    if a.time:
        print("gs-wl: torch_wavenet variant=%s-%s device=%s dtype=%s channels=%d skip=%d layers=%d rf=%d "
              "batch=%d steps=%d warmup=%d cudnn=%s median_us=%.3f mean_us=%.3f" % (
                  "fast" if a.fast else "window", "sample" if a.sample else "greedy", dev.type, a.dtype,
                  a.channels, a.skip, len(model.blocks), rf, a.batch, len(times), a.warmup,
                  torch.backends.cudnn.version() if dev.type == "cuda" else "-",
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
