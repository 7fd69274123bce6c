#!/usr/bin/env python3
"""Small-batch inference of a non-transformer model, for the real-program suite.

What a PyTorch user serving a small vision model writes: a model from
torch.nn modules in eval() mode, a batch of 1-8 images per request, the
result read back to the host after every request.

  --arch cnn    a small ResNet: nn.Conv2d / nn.BatchNorm2d / nn.ReLU blocks with
                residual adds, strided downsampling, nn.AdaptiveAvgPool2d and a
                linear classifier (cuDNN convolutions).
  --arch mixer  an MLP-Mixer: a strided nn.Conv2d patch embedding, then blocks of
                nn.LayerNorm + token-mixing MLP (over the transposed patches)
                + channel MLP with nn.GELU.
  --graph       the forward pass captured once in a torch.cuda.CUDAGraph with a
                static input tensor; each request copies its images in and
                replays the graph.

Requests cycle through 8 fixed batches of random images.  --warmup W
requests first (cuDNN and cuBLAS choose their kernels, the allocator warms
up), then --steps timed ones.  --out writes every request's logits (float32
bytes) in order; --time prints one gs-wl line with the median wall time of
one request, read-back included.  cuDNN benchmarking is off and its
deterministic mode on, so every process picks the same kernels.
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn


class ResBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + (x if self.down is None else self.down(x)))


class SmallResNet(nn.Module):
    def __init__(self, width, depth, classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width),
                                  nn.ReLU(inplace=True))
        blocks, c = [], width
        for stage in range(3):
            cout = width << stage
            for i in range(depth):
                blocks.append(ResBlock(c, cout, 2 if (i == 0 and stage > 0) else 1))
                c = cout
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


class MixerBlock(nn.Module):
    def __init__(self, patches, dim):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(patches, 2 * patches), nn.GELU(), nn.Linear(2 * patches, patches))
        self.ln2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):  # [B, patches, dim]
        x = x + self.token_mlp(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.ln2(x))


class Mixer(nn.Module):
    def __init__(self, size, patch, dim, depth, classes):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, patch, patch)
        patches = (size // patch) ** 2
        self.blocks = nn.Sequential(*[MixerBlock(patches, dim) for _ in range(depth)])
        self.ln = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)  # [B, patches, dim]
        return self.fc(self.ln(self.blocks(x)).mean(dim=1))


def randomize_batchnorm(model, gen):
    """Fresh BatchNorm layers are an identity in eval(); give them the running
    statistics and affine parameters a trained model would have."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)


def tensor_bytes(t):
    """A tensor's raw bytes, C order (the host is little-endian).  Not
    bytes(storage): a storage has no buffer protocol, and bytes() then reads
    it one Python call a byte (tens of seconds for a model's parameters)."""
    return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def serve(model, images, graph, warmup, steps):
    """The request loop (timm_infer.py's too): warmup + steps requests cycling
    through the batches in images, each request's logits read back.  With
    graph, the forward pass is captured once in a torch.cuda.CUDAGraph with a
    static input, and each request copies its images in and replays it.
    Returns every request's logits bytes and the timed requests' times (s)."""
    results, times = [], []
    with torch.inference_mode() if not graph else torch.no_grad():
        if graph:
            static_in = images[0].clone()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    model(static_in)
            torch.cuda.current_stream().wait_stream(s)
            cuda_graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(cuda_graph):
                static_out = model(static_in)

            def infer(x):
                static_in.copy_(x)
                cuda_graph.replay()
                return static_out
        else:
            infer = model
        for i in range(warmup + steps):
            t0 = time.perf_counter()
            logits = infer(images[i % len(images)]).float().cpu()  # the read-back
            if i >= warmup:
                times.append(time.perf_counter() - t0)
            results.append(tensor_bytes(logits))
    return results, times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed requests")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--arch", choices=("cnn", "mixer"), default="cnn")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--size", type=int, default=64, help="image height and width")
    ap.add_argument("--width", type=int, default=32, help="cnn: first stage's channels; mixer: channels")
    ap.add_argument("--depth", type=int, default=2, help="cnn: blocks per stage; mixer: blocks")
    ap.add_argument("--patch", type=int, default=8, help="mixer: patch size")
    ap.add_argument("--classes", type=int, default=100)
    ap.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32")
    ap.add_argument("--channels-last", action="store_true", help="cnn: NHWC tensors")
    ap.add_argument("--graph", action="store_true", help="replay a torch.cuda.CUDAGraph per request")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.graph and dev.type != "cuda":
        ap.error("--graph needs --device cuda")
    if a.arch == "mixer" and a.size % a.patch:
        ap.error("--size must be a multiple of --patch")
    dtype = getattr(torch, a.dtype)
    # The same kernels in every process: no timing-based algorithm choice.
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed + 1)
    if a.arch == "cnn":
        model = SmallResNet(a.width, a.depth, a.classes)
        randomize_batchnorm(model, gen)
    else:
        model = Mixer(a.size, a.patch, a.width * 4, a.depth, a.classes)
    fmt = torch.channels_last if a.channels_last and a.arch == "cnn" else torch.contiguous_format
    model = model.eval().to(device=dev, dtype=dtype, memory_format=fmt)
    images = torch.randn(8, a.batch, 3, a.size, a.size, generator=gen).to(device=dev, dtype=dtype)
    images = [images[i].contiguous(memory_format=fmt) for i in range(8)]

    results, times = serve(model, images, a.graph, a.warmup, a.steps)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        print("gs-wl: torch_infer variant=%s-%s device=%s dtype=%s batch=%d size=%d width=%d depth=%d "
              "steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  a.arch, "graph" if a.graph else "eager", dev.type, a.dtype, a.batch, a.size, a.width,
                  a.depth, len(times), a.warmup, statistics.median(times) * 1e6,
                  statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
