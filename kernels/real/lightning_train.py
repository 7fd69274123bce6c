#!/usr/bin/env python3
"""Training with PyTorch Lightning's LightningModule and Trainer, for the real-program suite.

What a Lightning user writes (the Lightning docs' quick start: a
LightningModule, a DataLoader, a Trainer, trainer.fit()):

    class LitClassifier(L.LightningModule):
        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.cross_entropy(self.net(x), y)
            self.log("train_loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=...)

    loader = DataLoader(TensorDataset(x, y), batch_size=..., shuffle=True)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_steps=...,
                        logger=CSVLogger(...), deterministic=True, ...)
    trainer.fit(model, loader)

  --arch mlp   an MLP classifier: nn.Linear in, residual blocks of
               nn.LayerNorm, nn.Linear, nn.GELU, nn.Linear, then nn.LayerNorm
               and an nn.Linear head, on [batch, --features] inputs.
  --arch cnn   a small CNN on 3x32x32 images, as in PyTorch's CIFAR-10
               tutorial: three stages of two Conv2d(3x3, no bias),
               BatchNorm2d, ReLU and a MaxPool2d(2), then nn.Flatten and an
               nn.Linear head on the 4x4 maps (no AdaptiveAvgPool2d: its CUDA
               backward has no deterministic implementation, and
               deterministic=True makes it an error).
  --precision 32-true (default) or bf16-mixed: the Trainer's precision
               plugin (torch.autocast to bfloat16 around training_step;
               parameters and AdamW's state stay float32).
  --sched cosine  configure_optimizers returns the dict form,
               {"optimizer": opt, "lr_scheduler": {"scheduler":
               CosineAnnealingLR(opt, T_max=max_steps), "interval": "step"}}:
               Lightning steps the scheduler after every optimizer step
               (the learning rate, a Python float, changes every step).

The data: a TensorDataset of --samples random inputs and random classes
(from --seed + 1), a DataLoader with batch_size --batch, shuffle=True from a
seeded torch.Generator (--seed + 2), num_workers=0 (so no worker processes),
drop_last; epochs follow one another until max_steps.  The targets are
one-hot rows and the loss F.cross_entropy(logits, probabilities): with class
indices it would go through nll_loss, which deterministic=True makes an
error on CUDA (it has no deterministic implementation there).  The Trainer:
accelerator "gpu" (or "cpu"), devices=1 (the single-device strategy: no
processes are spawned), max_steps=--warmup + --steps, checkpointing,
progress bar and model summary off, deterministic=True
(Lightning calls torch.use_deterministic_algorithms(True), which also fills
the memory of new empty tensors, sets cudnn.benchmark False and
CUBLAS_WORKSPACE_CONFIG; the latter is also set here before torch is
imported, since cuBLAS reads it when it initialises), and the logger users
get without TensorBoard installed, a CSVLogger, here into a temporary
directory, with Lightning's default log_every_n_steps=50
(--log-every-n-steps).  Lightning's console messages are silenced through
the logging module, and its PossibleUserWarnings filtered, as its docs show.

What Lightning reads back (lightning 2.6, read in its source): self.log with
on_step=True and prog_bar=False only clones the loss on the device
(_ResultMetric.update); nothing in the step synchronises.  The logger
connector converts the logged tensors to Python floats (.item(), one
synchronising read) only on logging steps, every log_every_n_steps steps
(reaching max_steps logs nothing more), after the on_train_batch_end hooks,
and the CSVLogger appends them to metrics.csv at once.  A progress bar would read the value
back every step (prog_bar metrics are converted to scalars at each batch);
it is off.  On the GPU a step is the forward pass (mlp: cuBLAS GEMMs,
LayerNorm, GELU; cnn: cuDNN convolutions, batch-norm, ReLU, max-pool
kernels), the backward pass, AdamW's foreach (multi-tensor-apply) kernels
over every parameter, Lightning's own small kernels (the loss divided by
accumulate_grad_batches, its detached clone for the closure's result, the
clone of the logged value), and the batch's pageable host-to-device copies
(Lightning's batch_to_device, non_blocking); the launches go through
cudaLaunchKernel, cuBLAS(Lt) and cuDNN.

Timing: a Callback takes time.perf_counter() at every on_train_batch_end;
a step's time is the interval from the previous step's on_train_batch_end to
its own (the first step's from its on_train_batch_start).  Each interval
holds one whole loop iteration: the logger's read-back of the previous step
where it logged, the next batch from the DataLoader, the transfer, the
hooks, training_step, backward, the optimizer and scheduler steps.  No
synchronisation is added: between logging steps the host runs ahead of the
GPU, and the read-back of a logging step waits for the work queued before
it, so the median is the host's step time and the mean includes the GPU's
(with --log-every-n-steps 1 every interval holds one read-back).

--warmup W steps first, then --steps timed ones (one trainer.fit() of
W + N steps); --out writes the losses Lightning logged, as metrics.csv has
them (the train_loss column, float32 little-endian: 4 at the defaults, at
steps 50, 100, 150 and 200), then every tensor of the
final state_dict in order (BatchNorm's running statistics and its int64
num_batches_tracked included); --time prints one gs-wl line with the median
and mean of the timed steps' intervals.
"""
import os

# cuBLAS is deterministic only with a fixed workspace configuration, which
# it reads when torch first initialises it: set it before importing torch.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
import csv  # noqa: E402
import logging  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

try:
    import lightning as L  # noqa: E402
    from lightning.pytorch.loggers import CSVLogger  # noqa: E402
    from lightning.pytorch.utilities.warnings import PossibleUserWarning  # noqa: E402
    LOGGERS = ("lightning", "lightning.pytorch", "lightning.fabric")
except ImportError:  # the standalone package of the same release
    import pytorch_lightning as L  # noqa: E402
    from pytorch_lightning.loggers import CSVLogger  # noqa: E402
    from pytorch_lightning.utilities.warnings import PossibleUserWarning  # noqa: E402
    LOGGERS = ("pytorch_lightning", "lightning_fabric")


class MLPBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.ln(x))))


def mlp(a):
    return nn.Sequential(nn.Linear(a.features, a.dim), *[MLPBlock(a.dim) for _ in range(a.layers)],
                         nn.LayerNorm(a.dim), nn.Linear(a.dim, a.classes))


def cnn(a):
    layers, cin = [], 3
    for stage in range(3):  # 32x32 -> 16x16 -> 8x8 -> 4x4
        cout = a.width << stage
        for _ in range(2):
            layers += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
            cin = cout
        layers.append(nn.MaxPool2d(2))
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(cin * 4 * 4, a.classes))


class LitClassifier(L.LightningModule):
    def __init__(self, net, lr, sched, total_steps):
        super().__init__()
        self.net, self.lr, self.sched, self.total_steps = net, lr, sched, total_steps

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, on_step=True, prog_bar=False)
        return loss

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=0.01)
        if self.sched == "none":
            return opt
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.total_steps)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


class StepTimer(L.Callback):
    """Wall-clock intervals between the ends of consecutive training batches."""

    def __init__(self, warmup):
        self.warmup, self.step, self.last, self.times = warmup, 0, None, []

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if self.last is None:
            self.last = time.perf_counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        now = time.perf_counter()
        if self.step >= self.warmup:
            self.times.append(now - self.last)
        self.last, self.step = now, self.step + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--arch", choices=("mlp", "cnn"), default="mlp")
    ap.add_argument("--precision", choices=("32-true", "bf16-mixed"), default="32-true")
    ap.add_argument("--sched", choices=("none", "cosine"), default="none")
    ap.add_argument("--log-every-n-steps", type=int, default=50, help="the Trainer's log_every_n_steps")
    ap.add_argument("--layers", type=int, default=4, help="mlp: residual blocks")
    ap.add_argument("--dim", type=int, default=256, help="mlp: width")
    ap.add_argument("--features", type=int, default=64, help="mlp: input size")
    ap.add_argument("--width", type=int, default=16, help="cnn: channels of the first stage")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--samples", type=int, default=2048, help="dataset size (an epoch: samples / batch steps)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.samples < a.batch or a.log_every_n_steps < 1:
        ap.error("--samples must be at least --batch; --log-every-n-steps at least 1")

    for name in LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=PossibleUserWarning)

    L.seed_everything(a.seed)
    net = mlp(a) if a.arch == "mlp" else cnn(a)
    model = LitClassifier(net, a.lr, a.sched, a.warmup + a.steps)

    gen = torch.Generator().manual_seed(a.seed + 1)
    shape = (a.features,) if a.arch == "mlp" else (3, 32, 32)
    xs = torch.randn(a.samples, *shape, generator=gen)
    ys = torch.eye(a.classes)[torch.randint(0, a.classes, (a.samples,), generator=gen)]
    loader = DataLoader(TensorDataset(xs, ys), batch_size=a.batch, shuffle=True, drop_last=True,
                        num_workers=0, generator=torch.Generator().manual_seed(a.seed + 2))

    timer = StepTimer(a.warmup)
    with tempfile.TemporaryDirectory() as logdir:
        logger = CSVLogger(logdir, name="lightning_train")
        trainer = L.Trainer(
            accelerator="gpu" if a.device == "cuda" else "cpu", devices=1,
            max_steps=a.warmup + a.steps, precision=a.precision, deterministic=True,
            logger=logger, log_every_n_steps=a.log_every_n_steps, callbacks=[timer],
            enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
        trainer.fit(model, loader)
        # What users read back after training: the logger's metrics.csv
        # (written at the first logging step: none when the run is shorter).
        losses, path = [], os.path.join(logger.log_dir, "metrics.csv")
        if os.path.exists(path):
            with open(path, newline="") as f:
                losses = [float(row["train_loss"]) for row in csv.DictReader(f) if row.get("train_loss")]

    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%df" % len(losses), *losses))
            for t in model.state_dict().values():
                f.write(t.detach().cpu().numpy().tobytes())
    if a.time:
        variant = "%s-%s" % (a.arch, a.precision)
        if a.sched != "none":
            variant += "-" + a.sched
        print("gs-wl: lightning_train variant=%s device=%s batch=%d steps=%d warmup=%d log_every=%d "
              "logged=%d median_us=%.3f mean_us=%.3f" % (
                  variant, a.device, a.batch, len(timer.times), a.warmup, a.log_every_n_steps, len(losses),
                  statistics.median(timer.times) * 1e6, statistics.mean(timer.times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
