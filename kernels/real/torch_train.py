#!/usr/bin/env python3
"""A few training steps of a small model with AdamW, for the real-program suite.

The loop a PyTorch user writes: forward, loss, backward, optimizer.step()
(AdamW with foreach=True: the multi-tensor-apply kernels),
optimizer.zero_grad(set_to_none=True) (so gradients are reallocated every
step and the caching allocator hands out rotating addresses), and
loss.item() to log the loss: one host read-back a step.

  --arch mlp    a residual MLP: nn.LayerNorm, nn.Linear, nn.GELU blocks.
  --arch block  transformer blocks with attention written out (matmul,
                softmax, matmul) and an MLP, on a [batch, seq, dim] input.

Options for the other loops users write (all off by default):

  --amp fp16    mixed precision as in PyTorch's AMP recipe: the forward pass
                and the loss under torch.autocast(device_type="cuda",
                dtype=torch.float16), and a torch.amp.GradScaler("cuda")
                (torch.cuda.amp.GradScaler on versions without it):
                scaler.scale(loss).backward(), scaler.step(opt) (unscales the
                gradients, checks them for inf/NaN and reads that check back
                to the host before it runs or skips the step: a second
                read-back a step), scaler.update().  --amp alone means fp16.
                With --fused the fused optimizer takes the scale and the
                inf flag itself and nothing is read back inside the step.
  --amp bf16    autocast to bfloat16 and no scaler (bfloat16 has fp32's range).
                On --device cpu both run autocast(device_type="cpu",
                dtype=torch.bfloat16) (the CPU's autocast type); fp16 keeps
                its GradScaler("cpu") where this torch has one (2.3+), else
                it runs without one.  Parameters and optimizer state stay
                float32; the loss is float32 (log_softmax autocasts to it).
  --prefetch    the classic data prefetcher (NVIDIA's apex ImageNet example):
                the fixed batches live in pinned host memory (.pin_memory()),
                each step's batch is copied with .to(device, non_blocking=True)
                on a side torch.cuda.Stream() one step ahead, the compute
                stream waits on it (current_stream().wait_stream(s)) and the
                copies are record_stream()ed to it.  The same bytes as without
                it.  On --device cpu: no pinning, no stream, and .to() hands
                the host batches back as they are.
  --loader N    the loop most training scripts have: a torch.utils.data
                DataLoader over a TensorDataset of --batches x --batch fixed
                samples, shuffle=True from a seeded generator, N worker
                processes (forked, persistent_workers), pin_memory=True (its
                pin-memory thread in this process pins each batch), and
                x.to(device, non_blocking=True) in the loop; epochs go on
                as long as the steps do.  N 0: no workers, the batches
                collated in this process, still pinned.  On --device cpu:
                no pinning.
  --log-every K loss.item() only every K steps (the losses of the K steps
                kept on the device and read back together, stacked): no
                read-back inside a step, K steps between synchronisations.
                The times are then those of K-step windows divided by K.
  --cuda-events each step timed on the GPU as training scripts log it:
                a fresh torch.cuda.Event(enable_timing=True) pair a step
                (recorded before the batch is fetched and after
                zero_grad), and start.elapsed_time(end) read after the
                step's loss.item();
                the median goes into the gs-wl line (gpu_step_us), not into
                --out (times differ between runs).  CUDA only, with
                --log-every 1.
  --checkpoint  activation checkpointing as fine-tuning scripts turn it on
                (torch.utils.checkpoint.checkpoint(block, h,
                use_reentrant=False) around every block): each block's
                forward runs again inside the backward pass, up to its last
                saved tensor (early stop), the RNG state saved and
                restored around it.
  --dropout P   nn.Dropout(P) in every block (default 0): Philox kernels
                from the default CUDA generator, whose offset argument
                moves every call; with --checkpoint the recomputation
                draws the same masks again.
  --accum K     gradient accumulation as fine-tuning scripts do it
                (gradient_accumulation_steps): K micro-batches a step, each
                loss divided by K and backpropagated, one optimizer step;
                the step's loss read back is the micro-batches' mean.  Not
                with --ddp.
  --clip C      nn.utils.clip_grad_norm_(model.parameters(), C,
                foreach=True) before every optimizer step (with an fp16
                GradScaler, scaler.unscale_(opt) first): a norm of every
                gradient and a scale, computed on the device.
  --optim sgd   torch.optim.SGD (momentum 0.9, foreach=True) instead of AdamW.
  --fused       the optimizer with fused=True (one fused kernel per dtype
                and device instead of the foreach kernels).
  --compile     model = torch.compile(model) (default mode, Inductor in its
                deterministic mode): the forward and the backward run as
                Inductor's Triton kernels and cuBLAS, launched by Triton's
                launcher; the loss, the optimizer and the read-back stay eager.
  --ddp         torch.nn.parallel.DistributedDataParallel over a process
                group of one rank (init_process_group with a FileStore in a
                temporary directory; backend nccl on CUDA, gloo on the CPU),
                as a script written for several GPUs runs on one:
                gradients are bucketed (--bucket-mb) and all-reduced by
                NCCL on its own stream as the backward pass produces them
                (events join it to the compute stream both ways; NCCL's
                watchdog thread polls its events), then the optimizer.

The task is classification of fixed random inputs into fixed random classes
with the cross entropy written as -(log_softmax * one_hot).sum(): F.cross_entropy
goes through nll_loss, which has no deterministic CUDA implementation.
Determinism: CUBLAS_WORKSPACE_CONFIG is set before torch is imported and
torch.use_deterministic_algorithms(True), so every process computes the same
bytes (with --amp too: the scaler's kernels are elementwise and its skipped
steps the same in every process); no embedding (its backward accumulates with
atomics).

--warmup W steps first, then --steps timed ones; --out writes every step's
loss (float32) and then every parameter's final bytes (with --amp fp16 and a
scaler, then the scaler's final scale as float32); --time prints one gs-wl
line with the median wall time of one step, loss.item() included.
"""
import os

# cuBLAS is deterministic only with a fixed workspace configuration, which
# it reads when torch first initialises it: set it before importing torch.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import itertools  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.utils.checkpoint  # noqa: E402
import torch.utils.data  # noqa: E402


def dropped(drop, h):
    """--dropout: no module at all without it (the suite's other entries
    launch the very kernels they launched before the option existed)."""
    return h if drop is None else drop(h)


class MLPBlock(nn.Module):
    def __init__(self, dim, dropout=0.0):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(dropout) if dropout > 0 else None

    def forward(self, x):
        return x + dropped(self.drop, self.fc2(self.act(self.fc1(self.ln(x)))))


class AttnBlock(nn.Module):
    def __init__(self, dim, heads, dropout=0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout) if dropout > 0 else None
        self.heads, self.hd = heads, dim // heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) * self.hd ** -0.5, dim=-1)
        o = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + dropped(self.drop, self.proj(o))
        return x + dropped(self.drop, self.mlp(self.ln2(x)))


class Net(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.arch = a.arch
        self.checkpoint = a.checkpoint
        self.inp = nn.Linear(a.features, a.dim)
        if a.arch == "mlp":
            self.blocks = nn.Sequential(*[MLPBlock(a.dim, a.dropout) for _ in range(a.layers)])
        else:
            self.blocks = nn.Sequential(*[AttnBlock(a.dim, a.heads, a.dropout) for _ in range(a.layers)])
        self.ln = nn.LayerNorm(a.dim)
        self.head = nn.Linear(a.dim, a.classes)

    def forward(self, x):
        h = self.inp(x)
        if self.checkpoint and self.training:
            # Activation checkpointing as fine-tuning scripts enable it: each
            # block's activations are recomputed in the backward pass, with
            # the RNG state saved and restored around it (dropout repeats).
            for blk in self.blocks:
                h = torch.utils.checkpoint.checkpoint(blk, h, use_reentrant=False)
        else:
            h = self.blocks(h)
        if self.arch == "block":
            h = h.mean(dim=1)  # [batch, seq, dim] -> [batch, dim]
        return self.head(self.ln(h))


class DataPrefetcher:
    """The data prefetcher of NVIDIA's apex ImageNet example: the next batch
    is copied to the GPU on a side stream while the current step computes."""

    def __init__(self, loader, device):
        self.loader = iter(loader)
        self.device = device
        self.stream = torch.cuda.Stream() if device.type == "cuda" else None
        self.preload()

    def preload(self):
        self.next_input, self.next_target = next(self.loader)
        with torch.cuda.stream(self.stream) if self.stream is not None else contextlib.nullcontext():
            self.next_input = self.next_input.to(self.device, non_blocking=True)
            self.next_target = self.next_target.to(self.device, non_blocking=True)

    def next(self):
        if self.stream is not None:
            torch.cuda.current_stream().wait_stream(self.stream)
        x, y = self.next_input, self.next_target
        if self.stream is not None:
            # Allocated on the side stream, used on this one: tell the
            # allocator, so it does not reuse them before this stream is done.
            x.record_stream(torch.cuda.current_stream())
            y.record_stream(torch.cuda.current_stream())
        self.preload()
        return x, y


def loader_batches(a, xs, ys, device):
    """Batches from a DataLoader, epoch after epoch, as training scripts
    iterate it: a TensorDataset of every fixed sample, shuffled by a seeded
    generator, N forked workers, pinned by the loader's pin-memory thread."""
    data = torch.utils.data.TensorDataset(torch.cat(xs), torch.cat(ys))
    loader = torch.utils.data.DataLoader(
        data, batch_size=a.batch, shuffle=True, drop_last=True,
        generator=torch.Generator().manual_seed(a.seed + 2), num_workers=a.loader,
        pin_memory=device.type == "cuda", persistent_workers=a.loader > 0,
        multiprocessing_context="fork" if a.loader > 0 else None)
    while True:
        for x, y in loader:
            yield x, y


def make_scaler(device_type):
    """torch.amp.GradScaler(device) where this torch has it; else the older
    torch.cuda.amp.GradScaler on CUDA; None on a CPU without one."""
    if hasattr(torch.amp, "GradScaler"):
        try:
            return torch.amp.GradScaler(device_type)
        except (TypeError, RuntimeError, AssertionError):
            pass
    if device_type == "cuda":
        return torch.cuda.amp.GradScaler()
    return None


def tensor_bytes(t):
    """A tensor's raw bytes, C order (the host is little-endian).  Not
    bytes(storage): a storage has no buffer protocol, and bytes() then reads
    it one Python call a byte (tens of seconds for a model's parameters)."""
    return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=100, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--arch", choices=("mlp", "block"), default="mlp")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=32, help="block: sequence length")
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--classes", type=int, default=16)
    ap.add_argument("--batches", type=int, default=4, help="distinct fixed batches cycled through")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--amp", nargs="?", const="fp16", choices=("none", "fp16", "bf16"), default="none",
                    help="autocast the forward pass and loss (fp16: with a GradScaler)")
    ap.add_argument("--prefetch", action="store_true",
                    help="pinned host batches copied on a side stream one step ahead")
    ap.add_argument("--loader", type=int, default=-1, metavar="N",
                    help="a DataLoader with N worker processes and pin_memory (N 0: none)")
    ap.add_argument("--log-every", type=int, default=1, metavar="K",
                    help="read the losses back every K steps (1: every step)")
    ap.add_argument("--optim", choices=("adamw", "sgd"), default="adamw")
    ap.add_argument("--fused", action="store_true", help="the optimizer with fused=True")
    ap.add_argument("--checkpoint", action="store_true",
                    help="torch.utils.checkpoint around every block (use_reentrant=False)")
    ap.add_argument("--dropout", type=float, default=0.0, help="nn.Dropout in every block")
    ap.add_argument("--accum", type=int, default=1, metavar="K",
                    help="gradient accumulation: K micro-batches an optimizer step")
    ap.add_argument("--clip", type=float, default=0.0, metavar="C",
                    help="clip_grad_norm_(parameters, C, foreach=True) before each optimizer step (0: off)")
    ap.add_argument("--cuda-events", action="store_true",
                    help="time each step with a fresh pair of timing CUDA events")
    ap.add_argument("--compile", action="store_true", help="torch.compile(model), default mode")
    ap.add_argument("--ddp", action="store_true", help="DistributedDataParallel over one rank")
    ap.add_argument("--bucket-mb", type=float, default=1.0, help="--ddp: gradient bucket size (MB)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if a.dim % a.heads:
        ap.error("--dim must be a multiple of --heads")
    if a.log_every < 1 or (a.loader >= 0 and a.prefetch):
        ap.error("--log-every must be >= 1; --loader and --prefetch are two ways to feed the same loop")
    if not 0 <= a.dropout < 1:
        ap.error("--dropout must be in [0, 1)")
    if a.accum < 1 or a.clip < 0:
        ap.error("--accum must be >= 1 and --clip >= 0")
    if a.accum > 1 and a.ddp:
        ap.error("--accum with --ddp would all-reduce every micro-batch (no no_sync here): not supported")
    if a.cuda_events and (torch.device(a.device).type != "cuda" or a.log_every != 1):
        ap.error("--cuda-events needs a CUDA device and --log-every 1")
    dev = torch.device(a.device)
    torch.use_deterministic_algorithms(True)

    torch.manual_seed(a.seed)
    model = Net(a).to(dev)
    if a.ddp:
        import tempfile
        import torch.distributed as dist
        store_dir = tempfile.mkdtemp(prefix="gs-ddp-")
        dist.init_process_group("nccl" if dev.type == "cuda" else "gloo",
                                store=dist.FileStore(os.path.join(store_dir, "store"), 1),
                                rank=0, world_size=1)
        model = nn.parallel.DistributedDataParallel(
            model, device_ids=[dev.index or 0] if dev.type == "cuda" else None,
            bucket_cap_mb=a.bucket_mb)
    if a.compile:
        # No on-device benchmarking that could pick different kernels (and
        # so different bits) in different processes.
        import torch._inductor.config as inductor_config
        inductor_config.deterministic = True
        model = torch.compile(model)
    kind = dict(fused=True) if a.fused else dict(foreach=True)
    if a.optim == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01, **kind)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9, **kind)
    gen = torch.Generator().manual_seed(a.seed + 1)
    shape = (a.batch, a.features) if a.arch == "mlp" else (a.batch, a.seq, a.features)
    xs = [torch.randn(*shape, generator=gen) for _ in range(a.batches)]
    # The targets as dense one-hot rows, made once on the host: no scatter
    # in the loop.
    ys = [torch.eye(a.classes)[torch.randint(0, a.classes, (a.batch,), generator=gen)]
          for _ in range(a.batches)]
    if a.prefetch:
        if dev.type == "cuda":
            xs = [x.pin_memory() for x in xs]
            ys = [y.pin_memory() for y in ys]
        prefetcher = DataPrefetcher(itertools.cycle(zip(xs, ys)), dev)
    elif a.loader >= 0:
        loader_iter = loader_batches(a, xs, ys, dev)
    else:
        xs = [x.to(dev) for x in xs]
        ys = [y.to(dev) for y in ys]

    # Mixed precision: the CPU's autocast type is bfloat16.
    amp_dtype = None
    if a.amp != "none":
        amp_dtype = torch.float16 if (a.amp == "fp16" and dev.type == "cuda") else torch.bfloat16
    scaler = make_scaler(dev.type) if a.amp == "fp16" else None

    losses, times, pending, gpu_times = [], [], [], []
    model.train()
    t0 = time.perf_counter()
    for i in range(a.warmup + a.steps):
        if a.log_every == 1:
            t0 = time.perf_counter()
        if a.cuda_events:
            ev = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            ev[0].record(torch.cuda.current_stream(dev))
        # --accum K: K micro-batches' gradients summed before one optimizer
        # step (each loss divided by K); the step's logged loss their mean.
        for micro in range(a.accum):
            if a.prefetch:
                x, y = prefetcher.next()
            elif a.loader >= 0:
                x, y = next(loader_iter)
                x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
            else:
                n = i * a.accum + micro
                x, y = xs[n % a.batches], ys[n % a.batches]
            if amp_dtype is None:
                logits = model(x)
                micro_loss = -(torch.log_softmax(logits, dim=-1) * y).sum(dim=-1).mean()
            else:
                with torch.autocast(device_type=dev.type, dtype=amp_dtype):
                    logits = model(x)
                    micro_loss = -(torch.log_softmax(logits, dim=-1) * y).sum(dim=-1).mean()
            if a.accum > 1:
                micro_loss = micro_loss / a.accum
                loss = micro_loss.detach() if micro == 0 else loss + micro_loss.detach()
            else:
                loss = micro_loss
            if scaler is not None:
                scaler.scale(micro_loss).backward()
            else:
                micro_loss.backward()
        if a.clip > 0:
            if scaler is not None:
                scaler.unscale_(opt)  # clip the true gradients, as the AMP recipe says
            nn.utils.clip_grad_norm_(model.parameters(), a.clip, foreach=True)
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)
        if a.cuda_events:
            ev[1].record(torch.cuda.current_stream(dev))
        if a.log_every == 1:
            losses.append(loss.item())  # the per-step read-back
            if a.cuda_events:
                ev[1].synchronize()  # as scripts do before elapsed_time (the read-back waited already)
                if i >= a.warmup:
                    gpu_times.append(ev[0].elapsed_time(ev[1]) * 1e3)
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
            continue
        pending.append(loss.detach())
        if len(pending) == a.log_every or i == a.warmup + a.steps - 1:
            losses.extend(torch.stack(pending).tolist())  # the read-back, every K steps
            if i >= a.warmup and len(pending) == a.log_every:
                times.append((time.perf_counter() - t0) / a.log_every)
            pending = []
            t0 = time.perf_counter()
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%df" % len(losses), *losses))
            for p in model.parameters():
                f.write(tensor_bytes(p.float()))
            if scaler is not None:
                f.write(struct.pack("<f", scaler.get_scale()))
    if a.time:
        variant = a.arch
        if a.amp != "none":
            variant += "-amp_%s%s" % (str(amp_dtype).split(".")[-1], "_scaler" if scaler is not None else "")
        if a.prefetch:
            variant += "-prefetch"
        if a.loader >= 0:
            variant += "-loader%d" % a.loader
        if a.log_every > 1:
            variant += "-log%d" % a.log_every
        if a.optim != "adamw" or a.fused:
            variant += "-%s%s" % (a.optim, "_fused" if a.fused else "")
        if a.compile:
            variant += "-compiled"
        if a.ddp:
            variant += "-ddp"
        if a.checkpoint:
            variant += "-ckpt"
        if a.dropout > 0:
            variant += "-drop%g" % a.dropout
        if a.accum > 1:
            variant += "-accum%d" % a.accum
        if a.clip > 0:
            variant += "-clip%g" % a.clip
        extra = ""
        if a.cuda_events:
            variant += "-events"
            extra = " gpu_step_us=%.3f" % statistics.median(gpu_times)
        print("gs-wl: torch_train variant=%s device=%s layers=%d dim=%d batch=%d steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f%s" % (
                  variant, dev.type, a.layers, a.dim, a.batch, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6, extra), flush=True)
    if a.ddp:
        import torch.distributed as dist
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
