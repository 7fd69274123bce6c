#!/usr/bin/env python3
"""Streaming keyword spotting with torchaudio features, for the real-program suite.

What a user of a keyword spotter on Speech Commands writes (torchaudio's
Speech Commands tutorial, the KWT and DS-CNN recipes): a front end of
torchaudio.transforms,

    frontend = nn.Sequential(T.MelSpectrogram(sample_rate=16000, n_fft=400,
                                              hop_length=160, n_mels=40),
                             T.AmplitudeToDB(top_db=80)).to(device)

a small classifier over the log-mel frames, model.eval() and
torch.inference_mode(), and a recognition loop that takes one 1-second
16 kHz chunk of audio at a time from the host (a [batch, 1, 16000] waveform,
the channel dimension as torchaudio keeps it, so that AmplitudeToDB's top_db
floor is taken per utterance), copies it to the device, computes the log-mel
features and the logits and reads the decision back:

    ids = model(frontend(chunk.to(device))).argmax(-1).tolist()

as a recogniser that acts on a keyword per chunk does: one synchronising
device-to-host copy a step.  --batch streams are recognised together (a
server's batch).  The audio is a seeded synthetic signal: each stream's
chunks are sums of three tone bursts (random frequencies 150-3500 Hz, Hann
envelopes at random onsets) plus white noise; --chunks distinct seconds
per stream are cycled through.

The model (--classes 35, Speech Commands' words; random weights from
--seed): an input nn.BatchNorm1d over the mel bins, two Conv1d/BatchNorm1d/
ReLU blocks (the second with stride 2: 101 frames to 51), then

  --arch transformer  (default) a learned positional nn.Parameter and an
                      nn.TransformerEncoder of --layers
                      nn.TransformerEncoderLayer(batch_first=True) (in eval
                      and inference_mode PyTorch's fast path: the fused
                      _transformer_encoder_layer_fwd per layer), a mean over
                      time, an nn.Linear classifier;
  --arch dscnn        a DS-CNN: --layers depthwise (groups=channels, kernel
                      9) and pointwise Conv1d blocks with BatchNorm1d and
                      ReLU, a mean over time, an nn.Linear classifier.

The BatchNorm layers' running statistics are measured on the CPU (one
thread, so every process gets the same numbers) over the stream's first
chunks in train() mode, as a trained model's match its inputs; random
affine parameters.

  --augment  the training front end as well: SpecAugment's
             T.FrequencyMasking(freq_mask_param=8, iid_masks=True) and
             T.TimeMasking(time_mask_param=20, iid_masks=True) on the
             [batch, 1, mels, frames] log-mel features, a different mask per
             utterance: torchaudio draws the masks with torch.rand on the
             device (mask_along_axis_iid, no host synchronisation), from
             the default CUDA generator seeded by torch.manual_seed(--seed),
             so every process draws the same masks in the same order (Philox
             kernels whose offset changes every call).  The masked features
             then go through the same model.

On the GPU: cudaMemcpyAsync of the chunk host-to-device; torch.stft's
reflection pad, framing and cuFFT's real-to-complex transform (a planned
cufftExec per step, PyTorch's plan cache), abs/pow, the mel filterbank as a
cuBLAS matmul, log10/clamp/amax/max for the decibels; cuDNN's convolutions
(depthwise ones in dscnn), BatchNorm's inference kernels, the fused
encoder layers' cuBLAS GEMMs and attention kernels, a mean, the classifier,
argmax; then the read-back.  An estimate, not measured on the GPU: the CPU
dispatches 27 ATen operations a step other than views (transformer; dscnn
36), among them one stft and two fused encoder layers of about a dozen
kernels each, so about 50-60 kernels a step; --augment adds about 25
operations (the masks' torch.rand, arange, comparisons, masked_fill).

--warmup W chunks first (cuFFT's plan, cuDNN's and cuBLAS's initialisation,
the allocator), then --steps timed ones.  --out writes every step's argmax
ids (int32 little-endian, [batch]) and then, after the loop, every step's
logits (float32, [batch, classes]: kept on the device and read back at the
end); --time prints one gs-wl line with the median wall time of one step
(the chunk's copy, features, model and read-back).  Determinism: inference
only; cuFFT, cuBLAS and the fused encoder's kernels are deterministic run to
run, cuDNN benchmarking off and its deterministic mode on;
torch.use_deterministic_algorithms is not turned on (nothing here needs
it).
"""
import argparse
import math
import statistics
import struct
import time

import torch
import torch.nn as nn
import torchaudio.transforms as T

SAMPLE_RATE = 16000
N_FFT = 400
HOP = 160


class KWSModel(nn.Module):
    """Conv1d stem, then a small transformer encoder or a DS-CNN, then a classifier."""

    def __init__(self, mels, frames, channels, arch, layers, heads, classes):
        super().__init__()
        self.arch = arch
        self.stem = nn.Sequential(
            nn.BatchNorm1d(mels),
            nn.Conv1d(mels, channels, 3, padding=1, bias=False), nn.BatchNorm1d(channels), nn.ReLU(),
            nn.Conv1d(channels, channels, 3, stride=2, padding=1, bias=False), nn.BatchNorm1d(channels), nn.ReLU(),
        )
        frames = (frames - 1) // 2 + 1  # after the stride-2 convolution
        if arch == "transformer":
            self.pos = nn.Parameter(torch.randn(1, frames, channels) * 0.02)
            layer = nn.TransformerEncoderLayer(channels, heads, dim_feedforward=2 * channels, dropout=0.1,
                                               batch_first=True)
            self.body = nn.TransformerEncoder(layer, layers)
        else:
            blocks = []
            for _ in range(layers):
                blocks += [nn.Conv1d(channels, channels, 9, padding=4, groups=channels, bias=False),
                           nn.BatchNorm1d(channels), nn.ReLU(),
                           nn.Conv1d(channels, channels, 1, bias=False), nn.BatchNorm1d(channels), nn.ReLU()]
            self.body = nn.Sequential(*blocks)
        self.head = nn.Linear(channels, classes)

    def forward(self, feats):
        x = self.stem(feats)  # [batch, channels, frames]
        if self.arch == "transformer":
            x = self.body(x.transpose(1, 2) + self.pos).mean(1)
        else:
            x = self.body(x).mean(-1)
        return self.head(x)


def synth_stream(chunks, batch, gen):
    """[chunks, batch, 1, 16000] seconds of tone bursts and noise."""
    t = torch.arange(SAMPLE_RATE) / SAMPLE_RATE
    shape = (chunks, batch, 1, 3, 1)  # three tone bursts a second
    freq = torch.rand(shape, generator=gen) * 3350 + 150
    amp = torch.rand(shape, generator=gen) * 0.4 + 0.1
    phase = torch.rand(shape, generator=gen) * 2 * math.pi
    onset = torch.rand(shape, generator=gen) * 0.5
    length = torch.rand(shape, generator=gen) * 0.3 + 0.2
    u = ((t - onset) / length).clamp(0, 1)
    envelope = torch.sin(math.pi * u) ** 2  # a Hann window over the burst
    tones = (amp * envelope * torch.sin(2 * math.pi * freq * t + phase)).sum(3)
    return tones + 0.01 * torch.randn(chunks, batch, 1, SAMPLE_RATE, generator=gen)


def calibrate_batchnorm(model, frontend, waves, gen):
    """Random affine parameters and running statistics measured in train()
    mode (cumulative averages) over the stream's first chunks, on the CPU on
    one thread; dropout stays off."""
    model.eval()
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm1d)]
    momenta = [m.momentum for m in bns]
    for m in bns:
        n = m.num_features
        m.weight.data.copy_(torch.rand(n, generator=gen) + 0.5)
        m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)
        m.reset_running_stats()
        m.momentum = None
        m.train()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with torch.no_grad():
        model(frontend(waves).squeeze(1))
    torch.set_num_threads(threads)
    for m, momentum in zip(bns, momenta):
        m.momentum = momentum
        m.eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=300, help="timed chunks")
    ap.add_argument("--warmup", type=int, default=20, help="untimed chunks first")
    ap.add_argument("--arch", choices=("transformer", "dscnn"), default="transformer")
    ap.add_argument("--batch", type=int, default=1, help="streams recognised together")
    ap.add_argument("--mels", type=int, default=40, help="mel bins (40-80)")
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2, help="encoder layers / DS-CNN blocks")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--classes", type=int, default=35)
    ap.add_argument("--chunks", type=int, default=16, help="distinct seconds of audio per stream, cycled")
    ap.add_argument("--augment", action="store_true", help="SpecAugment frequency and time masking")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.channels % a.heads:
        ap.error("--channels must be a multiple of --heads")
    dev = torch.device(a.device)
    # The same kernels in every process: no timing-based algorithm choice.
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    # Weights, audio and masks from the seed; weights and audio drawn on the CPU.
    torch.manual_seed(a.seed)
    frontend = nn.Sequential(T.MelSpectrogram(sample_rate=SAMPLE_RATE, n_fft=N_FFT, hop_length=HOP, n_mels=a.mels),
                             T.AmplitudeToDB(stype="power", top_db=80))
    frames = SAMPLE_RATE // HOP + 1  # center=True
    model = KWSModel(a.mels, frames, a.channels, a.arch, a.layers, a.heads, a.classes)
    gen = torch.Generator().manual_seed(a.seed + 1)
    stream = synth_stream(a.chunks, a.batch, gen)
    calibrate_batchnorm(model, frontend, stream[:4].reshape(-1, 1, SAMPLE_RATE), gen)
    frontend.to(dev)
    model.to(dev)
    augment = None
    if a.augment:
        augment = nn.Sequential(T.FrequencyMasking(freq_mask_param=8, iid_masks=True),
                                T.TimeMasking(time_mask_param=20, iid_masks=True))

    ids, kept, times = [], [], []
    with torch.inference_mode():
        for i in range(a.warmup + a.steps):
            chunk = stream[i % a.chunks]
            t0 = time.perf_counter()
            feats = frontend(chunk.to(dev))  # [batch, 1, mels, frames]
            if augment is not None:
                feats = augment(feats)
            logits = model(feats.squeeze(1))
            ids += logits.argmax(-1).tolist()  # the per-chunk decision, read back
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
            kept.append(logits)
        logits = torch.stack(kept).cpu()
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%di" % len(ids), *ids))
            f.write(logits.clone().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    if a.time:
        print("gs-wl: audio_kws variant=%s%s device=%s batch=%d mels=%d channels=%d layers=%d steps=%d warmup=%d "
              "cudnn=%s median_us=%.3f mean_us=%.3f" % (
                  a.arch, "-augment" if a.augment else "", dev.type, a.batch, a.mels, a.channels, a.layers,
                  len(times), a.warmup, torch.backends.cudnn.version() if dev.type == "cuda" else "-",
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
