#!/usr/bin/env python3
"""Small-batch image classification with timm and torchvision models, for the real-program suite.

What a user serving a vision model from timm's or torchvision's model zoo
writes: the model made by name, random weights (pretrained=False /
weights=None: nothing downloaded), eval() mode, torch.inference_mode(), a
batch of 1-8 images per request, the logits read back to the host after
every request.

  --model vit_tiny_patch16_224   timm.create_model(..., img_size=--size): a
                  ViT-Tiny (patch-16 Conv2d embedding, class token, position
                  embedding, 12 pre-norm blocks of nn.LayerNorm, a fused qkv
                  nn.Linear, F.scaled_dot_product_attention, GELU MLP).
  --model efficientnet_b0        timm: a conv stem, 16 MBConv / depthwise
                  separable blocks (1x1 expansion, 3x3 / 5x5 depthwise
                  convolutions, BatchNorm + SiLU, squeeze-excitation: a mean,
                  two 1x1 convolutions and a sigmoid gate), a 1x1 head
                  convolution, global pooling and a linear classifier.
  --model convnext_atto          timm: a patchify stem, ConvNeXt blocks (7x7
                  depthwise convolutions, LayerNorm over channels, GELU MLP,
                  layer scale), LayerNorm2d + strided-conv downsampling.
  --model tv_resnet18            torchvision.models.resnet18(weights=None).
  --model tv_mobilenet_v3_small  torchvision.models.mobilenet_v3_small(weights=None):
                  depthwise convolutions, Hardswish, squeeze-excitation with
                  a hard sigmoid.
  --graph         the forward pass captured once in a torch.cuda.CUDAGraph with
                  a static input tensor; each request copies its images in and
                  replays the graph.

Options: --batch (images a request), --size (height and width; the ViT is
made for it with img_size), --classes, --dtype float32|float16|bfloat16 (the
model and images converted with .to()), --channels-last (model and images in
torch.channels_last).  Weights are each library's own random initialisation
under torch.manual_seed(--seed).  A fresh BatchNorm in eval() is an identity
and ConvNeXt's layer scale starts at 1e-6, so the blocks would hardly touch
the result: BatchNorm affine parameters and layer scales are set at random
like a trained model's, and BatchNorm running statistics measured over a
batch of random images (on the CPU, before the model moves to --device), so
the logits depend on the image through every layer.

Requests cycle through 8 fixed batches of random images.  --warmup W
requests first (cuDNN and cuBLAS choose their kernels, the allocator warms
up), then --steps timed ones.  --out writes every request's logits (float32
bytes) in order; --time prints one gs-wl line with the median wall time of
one request, read-back included.  cuDNN benchmarking is off and its
deterministic mode on, so every process picks the same kernels.
"""
import argparse
import statistics

import torch
import torch.nn as nn

from torch_infer import serve  # the suite's request loop, shared with torch_infer.py

TIMM_MODELS = ("vit_tiny_patch16_224", "efficientnet_b0", "convnext_atto")
TV_MODELS = ("tv_resnet18", "tv_mobilenet_v3_small")


def create(name, classes, size):
    """The model as its library's users make it, random weights."""
    if name.startswith("tv_"):
        import torchvision
        return getattr(torchvision.models, name[3:])(weights=None, num_classes=classes)
    import timm
    kwargs = {"img_size": size} if name.startswith("vit_") else {}
    return timm.create_model(name, pretrained=False, num_classes=classes, **kwargs)


def randomize_batchnorm(model, gen, size):
    """Fresh BatchNorm layers are an identity in eval(); give them what a
    trained model's have: random affine parameters (as torch_infer.py) and
    running statistics that match the activations reaching them, measured
    over a batch of 16 random images in train() mode (cumulative averages).
    Random running statistics (torch_infer.py's) suit its ResNet, but in
    EfficientNet and MobileNetV3 they leave the logits almost independent of
    the image.  The measurement runs on the CPU in float32 on one thread, so
    it gives the same numbers in every process whatever the pinning.  (timm's
    BatchNormAct2d is a subclass of nn.BatchNorm2d.)"""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    if not bns:
        return
    momenta = [m.momentum for m in bns]
    for m in bns:
        n = m.num_features
        m.weight.data.copy_(torch.rand(n, generator=gen) + 0.5)
        m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)
        m.reset_running_stats()
        m.momentum = None  # a cumulative average: the batch's own statistics
    calib = torch.randn(16, 3, size, size, generator=gen)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    model.train()
    with torch.no_grad():
        model(calib)
    model.eval()
    torch.set_num_threads(threads)
    for m, momentum in zip(bns, momenta):
        m.momentum = momentum


def randomize_layer_scale(model, gen):
    """Layer scales (timm's ConvNeXt blocks' `gamma`) start at 1e-6, which
    makes every block nearly an identity; trained ones are far larger."""
    for name, p in model.named_parameters():
        if name.split(".")[-1] == "gamma":
            p.data.copy_(torch.rand(p.shape, generator=gen) * 0.4 + 0.1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed requests")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--model", choices=TIMM_MODELS + TV_MODELS, default="vit_tiny_patch16_224")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--size", type=int, default=64, help="image height and width")
    ap.add_argument("--classes", type=int, default=100)
    ap.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32")
    ap.add_argument("--channels-last", action="store_true", help="NHWC model and images")
    ap.add_argument("--graph", action="store_true", help="replay a torch.cuda.CUDAGraph per request")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if a.graph and dev.type != "cuda":
        ap.error("--graph needs --device cuda")
    if a.model.startswith("vit_") and a.size % 16:
        ap.error("--size must be a multiple of 16 (the ViT's patch)")
    dtype = getattr(torch, a.dtype)
    # The same kernels in every process: no timing-based algorithm choice.
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed + 1)
    model = create(a.model, a.classes, a.size)
    randomize_layer_scale(model, gen)
    randomize_batchnorm(model, gen, a.size)
    fmt = torch.channels_last if a.channels_last else torch.contiguous_format
    model = model.eval().to(device=dev, dtype=dtype, memory_format=fmt)
    images = torch.randn(8, a.batch, 3, a.size, a.size, generator=gen).to(device=dev, dtype=dtype)
    images = [images[i].contiguous(memory_format=fmt) for i in range(8)]

    results, times = serve(model, images, a.graph, a.warmup, a.steps)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(b"".join(results))
    if a.time:
        print("gs-wl: timm_infer variant=%s-%s device=%s dtype=%s batch=%d size=%d channels_last=%d "
              "steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  a.model, "graph" if a.graph else "eager", dev.type, a.dtype, a.batch, a.size,
                  int(a.channels_last), len(times), a.warmup, statistics.median(times) * 1e6,
                  statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
