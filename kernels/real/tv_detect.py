#!/usr/bin/env python3
"""Object detection inference with torchvision, for the real-program suite.

What a user serving a detector from torchvision's model zoo writes: the
model made by name with random weights (weights=None,
weights_backbone=None: nothing downloaded), eval(), torch.inference_mode(),
a list of --batch images a request, and each image's boxes, labels and
scores read back with .cpu().

  --model frcnn      fasterrcnn_mobilenet_v3_large_320_fpn: a MobileNetV3
                     backbone with an FPN, a region proposal network
                     (anchors, objectness top-k, box decoding, clipping,
                     small-box removal, batched NMS), RoIAlign (MultiScale),
                     a two-layer box head, per-class score thresholding and
                     NMS again.
  --model retinanet  retinanet_resnet50_fpn_v2 on --size images: a ResNet-50
                     with an FPN, classification and regression heads on
                     five levels, per-level top-k, box decoding and batched NMS.
  --model ssdlite    ssdlite320_mobilenet_v3_large: depthwise heads on six
                     feature maps, per-class thresholding and NMS.

Detectors make data-dependent work on the host's side: proposals are
filtered by score and size (boolean masks, torch.where: synchronising
reads), NMS keeps a data-dependent number of boxes, and so the shapes, grids
and read-backs of the later kernels change from image to image.  With
random weights the scores are spread evenly over --classes classes (5 by
default, so the score threshold keeps boxes).

Requests cycle through 4 fixed batches of seeded random images of --size
(the model's transform resizes them itself).  --warmup W requests first,
then --steps timed ones.  --out writes every request's boxes, labels and
scores in order; --time prints one gs-wl line with the median wall time of
one request, read-back included.  cuDNN benchmarking is off and
torch.use_deterministic_algorithms on: every process computes the same
bytes.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402

MODELS = ("frcnn", "retinanet", "ssdlite")


def create(name, classes):
    from torchvision.models import detection as d
    if name == "frcnn":
        return d.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None, num_classes=classes)
    if name == "retinanet":
        return d.retinanet_resnet50_fpn_v2(weights=None, weights_backbone=None, num_classes=classes)
    return d.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=classes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=40, help="timed requests")
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--model", choices=MODELS, default="frcnn")
    ap.add_argument("--batch", type=int, default=2, help="images a request")
    ap.add_argument("--size", type=int, default=320, help="image height and width")
    ap.add_argument("--classes", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if min(a.steps, a.batch, a.size, a.classes) < 1 or a.warmup < 0:
        ap.error("sizes and --steps must be positive, --warmup not negative")
    dev = torch.device(a.device)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.manual_seed(a.seed)
    model = create(a.model, a.classes).eval().to(dev)
    g = torch.Generator(device="cpu").manual_seed(a.seed + 1)
    batches = [[torch.rand(3, a.size, a.size, generator=g).to(dev) for _ in range(a.batch)] for _ in range(4)]

    outs, times = [], []
    with torch.inference_mode():
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            dets = model(batches[i % len(batches)])
            got = [(d["boxes"].cpu(), d["labels"].cpu(), d["scores"].cpu()) for d in dets]
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
            outs.append(got)
    if a.out:
        with open(a.out, "wb") as f:
            for got in outs:
                for boxes, labels, scores in got:
                    f.write(len(scores).to_bytes(4, "little"))
                    f.write(boxes.numpy().tobytes() + labels.numpy().tobytes() + scores.numpy().tobytes())
    if a.time:
        kept = statistics.mean(len(s) for got in outs for _, _, s in got)
        print("gs-wl: tv_detect variant=%s batch=%d size=%d classes=%d device=%s steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f boxes=%.1f" % (
                  a.model, a.batch, a.size, a.classes, dev.type, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6, kept),
              flush=True)


if __name__ == "__main__":
    main()
