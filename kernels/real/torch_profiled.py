#!/usr/bin/env python3
"""A training loop profiled by torch.profiler for a window of its steps, for the real-program suite.

What a PyTorch user does to see where a training step's time goes: the
loop as usual (an MLP classifier of --layers hidden layers of --width with
LayerNorm and GELU, cross-entropy, AdamW, gradients clipped), wrapped in
torch.profiler.profile(activities=[CPU, CUDA], schedule=schedule(wait,
warmup, active, repeat=1)) with prof.step() after every step, and the
profile summarised when the window ends (on_trace_ready: the table of
key_averages(), kept, not printed, and the number of CUDA kernels it saw).
The profiler turns on CUPTI's activity records and callbacks in the
application itself at the window's start and off at its end, inside the
run: graphshim must keep working, and change nothing, while the
application's own CUPTI session comes and goes.  The loss is read back
every --log steps (.item()).

--warmup W steps first, then --steps timed steps; the profiler's window
starts --wait steps into the timed steps (--warmup-prof steps of its
warm-up, then --active recorded steps).  --out writes every loss read back
(float64), the number of profiled steps whose summary came back, and the
final weights; --time prints one gs-wl line with the median wall time of
one step (the profiled ones included: what the user's run costs).  The
data and the initial weights come from the CPU generator (--seed).
"""
import argparse
import statistics
import struct
import time

import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, d_in, width, layers, classes):
        super().__init__()
        mods, d = [], d_in
        for _ in range(layers):
            mods += [nn.Linear(d, width), nn.LayerNorm(width), nn.GELU()]
            d = width
        mods.append(nn.Linear(d, classes))
        self.net = nn.Sequential(*mods)

    def forward(self, x):
        return self.net(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=120, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--batches", type=int, default=8, help="distinct batches, cycled")
    ap.add_argument("--log", type=int, default=1, help="steps between loss read-backs")
    ap.add_argument("--wait", type=int, default=30, help="timed steps before the profiler's window")
    ap.add_argument("--warmup-prof", type=int, default=2, help="the profiler's warm-up steps")
    ap.add_argument("--active", type=int, default=20, help="steps the profiler records")
    ap.add_argument("--no-profile", action="store_true", help="the same loop without the profiler")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if min(a.steps, a.batch, a.width, a.layers, a.features, a.classes, a.batches, a.log, a.active) < 1:
        ap.error("sizes, --steps, --log and --active must be positive")
    if a.warmup < 0 or a.wait < 0 or a.warmup_prof < 0:
        ap.error("--warmup, --wait and --warmup-prof must be >= 0")
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    gen = torch.Generator(device="cpu").manual_seed(a.seed)
    xs = torch.randn(a.batches, a.batch, a.features, generator=gen).to(dev)
    ys = torch.randint(0, a.classes, (a.batches, a.batch), generator=gen).to(dev)
    model = MLP(a.features, a.width, a.layers, a.classes).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    loss_fn = nn.CrossEntropyLoss()

    summaries = []

    def ready(prof):
        # What a user looks at: the table of averages (kept, not printed).
        events = prof.key_averages()
        summaries.append((len(events), events.table(sort_by="self_cpu_time_total", row_limit=5)))

    acts = [torch.profiler.ProfilerActivity.CPU]
    if dev.type == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    prof = None
    if not a.no_profile:
        prof = torch.profiler.profile(
            activities=acts,
            schedule=torch.profiler.schedule(wait=a.warmup + a.wait, warmup=a.warmup_prof,
                                             active=a.active, repeat=1),
            on_trace_ready=ready)
        prof.start()

    losses, times = [], []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        k = i % a.batches
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xs[k]), ys[k])
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if (i + 1) % a.log == 0:
            losses.append(loss.item())
        elif dev.type == "cuda":
            torch.cuda.synchronize()  # the timer's: a step ends on the device
        if prof is not None:
            prof.step()
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    if prof is not None:
        prof.stop()
    with torch.no_grad():
        final = torch.cat([p.detach().reshape(-1).cpu() for p in model.parameters()])
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(losses), *losses))
            f.write(struct.pack("<q", len(summaries)))
            f.write(final.numpy().tobytes())
    if a.time:
        print("gs-wl: torch_profiled batch=%d width=%d layers=%d profiled=%d windows=%d events=%d "
              "device=%s steps=%d warmup=%d median_us=%.3f mean_us=%.3f" % (
                  a.batch, a.width, a.layers, 0 if a.no_profile else a.active, len(summaries),
                  summaries[0][0] if summaries else 0, dev.type, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
