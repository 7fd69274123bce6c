#!/usr/bin/env python3
"""CNN training with torchvision's v2 augmentations run on the GPU, for the real-program suite.

What an image-classification script looks like once its augmentation
moves to the GPU (to spare the data loader's CPU): the batch is already
on the device, torchvision.transforms.v2 crops, flips and colour-jitters
it there, then a small CNN of torch.nn modules (strided convolutions,
BatchNorm2d, ReLU, a global mean, nn.Linear) trains on it with SGD and
loss.item() a step.

The augmentation draws its parameters on the host from PyTorch's CPU
generator (torch.manual_seed), every call: RandomResizedCrop a box of
another size and place (the resize's input shape and its kernels'
arguments change nearly every time; no resize at all when the box is
already --crop a side), RandomHorizontalFlip a coin (a flip kernel
or none), ColorJitter a factor for each adjustment and their order
(torch.randperm): the step's kernels differ from step to step in their
arguments, their number and their order, as real augmentation pipelines
make them.

  --per-sample  each image of the batch augmented on its own (a Python
                loop over the batch and torch.stack, as code ported
                from a Dataset's __getitem__ does): hundreds of small
                launches a step, each image's own.
  (default)     the batch augmented as one tensor: one set of parameters
                a step for the whole batch.
  --no-augment  no augmentation: the top-left --crop square of each
                image, the same every step (suite entry `augment-fixed`):
                the same training step with every kernel's shape fixed,
                to tell what the augmentation's changing work costs from
                what the training step does (cuDNN's convolutions, some
                of them cooperative launches).

Determinism: CUBLAS_WORKSPACE_CONFIG is set before torch is imported and
torch.use_deterministic_algorithms(True) (cuDNN's deterministic
algorithms); no max pooling (its backward accumulates with atomics) and
the cross entropy written as -(log_softmax * one_hot).sum(); images,
labels and weights from seeded generators, so every process computes the
same bytes.

--warmup W steps first, then --steps timed ones; --out writes every
step's loss (float64) and the final parameters; --time prints one gs-wl
line with the median wall time of one step, augmentation and read-back
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
import torch.nn as nn  # noqa: E402
from torchvision.transforms import v2  # noqa: E402


def conv_bn(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Net(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        self.features = nn.Sequential(conv_bn(3, width, 1), conv_bn(width, width, 1),
                                      conv_bn(width, 2 * width, 2), conv_bn(2 * width, 2 * width, 1),
                                      conv_bn(2 * width, 4 * width, 2))
        self.head = nn.Linear(4 * width, classes)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=60, help="timed steps")
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--images", type=int, default=256, help="training images (on the device)")
    ap.add_argument("--size", type=int, default=40, help="stored image side")
    ap.add_argument("--crop", type=int, default=32, help="side after RandomResizedCrop")
    ap.add_argument("--width", type=int, default=32, help="channels of the first convolution")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--per-sample", action="store_true", help="augment each image apart (a Python loop)")
    ap.add_argument("--no-augment", action="store_true",
                    help="no augmentation: the top-left --crop square of each image, every step")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if min(a.batch, a.images, a.crop, a.width, a.classes, a.steps) < 1 or a.warmup < 0:
        ap.error("--batch, --images, --crop, --width, --classes and --steps must be positive")
    if a.images % a.batch or a.size < a.crop:
        ap.error("--images must be a multiple of --batch and --size at least --crop")
    if a.no_augment and a.per_sample:
        ap.error("--no-augment and --per-sample exclude each other")
    dev = torch.device(a.device)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(a.seed)  # the CPU generator the augmentations draw from

    g = torch.Generator(device="cpu").manual_seed(a.seed + 1)
    images = torch.rand(a.images, 3, a.size, a.size, generator=g).to(dev)
    labels = torch.randint(0, a.classes, (a.images,), generator=g)
    onehot = torch.eye(a.classes)[labels].to(dev)
    model = Net(a.width, a.classes).to(dev).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9, foreach=True)
    augment = v2.Compose([
        v2.RandomResizedCrop(a.crop, scale=(0.5, 1.0), antialias=True),
        v2.RandomHorizontalFlip(),
        v2.ColorJitter(brightness=0.3, contrast=0.3, saturation=0.3, hue=0.05),
    ])
    nb = a.images // a.batch

    losses, times = [], []
    model.train()
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        lo = (i % nb) * a.batch
        xb, yb = images[lo:lo + a.batch], onehot[lo:lo + a.batch]
        if a.no_augment:
            xb = xb[:, :, :a.crop, :a.crop]
        elif a.per_sample:
            xb = torch.stack([augment(img) for img in xb])
        else:
            xb = augment(xb)
        xb = xb.contiguous(memory_format=torch.channels_last)
        logits = model(xb)
        loss = -(torch.log_softmax(logits, dim=-1) * yb).sum(dim=-1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())  # the per-step read-back
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(losses), *losses))
            for p in model.parameters():
                f.write(p.detach().double().cpu().contiguous().numpy().tobytes())
    if a.time:
        print("gs-wl: torch_augment variant=%s device=%s batch=%d crop=%d width=%d steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f" % (
                  "none" if a.no_augment else "per-sample" if a.per_sample else "batch", dev.type,
                  a.batch, a.crop, a.width,
                  len(times), a.warmup, statistics.median(times) * 1e6, statistics.mean(times) * 1e6),
              flush=True)


if __name__ == "__main__":
    main()
