#!/usr/bin/env python3
"""Latency-critical requests on a high-priority stream beside a background job, for the real-program suite.

How a PyTorch service keeps small requests fast while the same GPU does
bulk work: two streams made with priorities (torch.cuda.Stream(priority=-1)
for requests, priority=0 for the background job, cuStreamCreateWithPriority
underneath).  Every step the background stream gets --bulk layers of a
wide MLP over a large batch (a bulk scoring or embedding job), and the
request stream a small MLP over one request (--req-batch rows), whose
answer is read back at once (.cpu() after an event's synchronize) as the
request's latency demands; every --join steps the background stream's
result is joined (the request stream waits on it through an event:
wait_stream) and a checksum of it read back, and the job starts on the
next of --inputs fixed inputs.  The two streams share only the weights,
which nothing writes, so every process computes the same bytes.

--warmup W steps first, then --steps timed steps.  --out writes every
answer and checksum read back (float64) and the final background output;
--time prints one gs-wl line with the median wall time of one step.
"""
import argparse
import contextlib
import statistics
import struct
import time

import torch
import torch.nn as nn


def mlp(d_in, width, layers, d_out):
    mods, d = [], d_in
    for _ in range(layers):
        mods += [nn.Linear(d, width), nn.GELU()]
        d = width
    mods.append(nn.Linear(d, d_out))
    return nn.Sequential(*mods)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", "--tokens", dest="steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--features", type=int, default=128)
    ap.add_argument("--req-batch", type=int, default=4, help="rows of one request")
    ap.add_argument("--req-width", type=int, default=256)
    ap.add_argument("--req-layers", type=int, default=4)
    ap.add_argument("--bulk-batch", type=int, default=4096)
    ap.add_argument("--bulk-width", type=int, default=1024)
    ap.add_argument("--bulk", type=int, default=2, help="background layers launched a step")
    ap.add_argument("--join", type=int, default=8, help="steps between joins of the background job")
    ap.add_argument("--inputs", type=int, default=4, help="fixed inputs of each kind, cycled")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out")
    ap.add_argument("--time", action="store_true")
    a = ap.parse_args()
    if min(a.steps, a.features, a.req_batch, a.req_width, a.req_layers, a.bulk_batch, a.bulk_width,
           a.bulk, a.join, a.inputs) < 1 or a.warmup < 0:
        ap.error("sizes, --steps, --bulk, --join and --inputs must be positive, --warmup >= 0")
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    torch.manual_seed(a.seed)
    gen = torch.Generator(device="cpu").manual_seed(a.seed)
    req_model = mlp(a.features, a.req_width, a.req_layers, 8).to(dev).eval()
    bulk_layer = nn.Linear(a.bulk_width, a.bulk_width).to(dev).eval()
    bulk_in = nn.Linear(a.features, a.bulk_width).to(dev).eval()
    reqs = torch.randn(a.inputs, a.req_batch, a.features, generator=gen).to(dev)
    bulks = torch.randn(a.inputs, a.bulk_batch, a.features, generator=gen).to(dev)
    if cuda:
        lo, hi = torch.cuda.Stream.priority_range()  # (lowest, greatest): greater is numerically lower
        req_stream = torch.cuda.Stream(priority=hi)
        bulk_stream = torch.cuda.Stream(priority=lo)
        torch.cuda.synchronize()  # the inputs and weights, made on the default stream
    else:
        req_stream = bulk_stream = None

    def on(stream):
        return torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext()

    reads, times = [], []
    job, h, job_step = 0, None, 0
    with torch.no_grad():
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            with on(bulk_stream):
                if h is None:
                    h = torch.tanh(bulk_in(bulks[job % a.inputs]))
                for _ in range(a.bulk):
                    h = torch.tanh(bulk_layer(h)) * 0.5 + h * 0.5
                job_step += 1
            with on(req_stream):
                ans = torch.softmax(req_model(reqs[i % a.inputs]), dim=-1)
                if cuda:
                    done = torch.cuda.Event()
                    done.record(req_stream)
            if cuda:
                done.synchronize()
            reads.extend(ans.cpu().reshape(-1).double().tolist())
            if job_step == a.join:
                with on(req_stream):
                    if cuda:
                        req_stream.wait_stream(bulk_stream)
                    total = h.double().sum().item()
                reads.append(total)
                final = h
                if cuda:
                    final.record_stream(req_stream)
                h, job, job_step = None, job + 1, 0
            if i >= a.warmup:
                times.append(time.perf_counter() - t0)
        if cuda:
            torch.cuda.synchronize()
        last = (h if h is not None else final).float().cpu().contiguous().numpy().tobytes()
    if a.out:
        with open(a.out, "wb") as f:
            f.write(struct.pack("<%dd" % len(reads), *reads))
            f.write(last)
    if a.time:
        print("gs-wl: torch_priority req_batch=%d bulk=%d join=%d device=%s steps=%d warmup=%d "
              "median_us=%.3f mean_us=%.3f" % (
                  a.req_batch, a.bulk, a.join, dev.type, len(times), a.warmup,
                  statistics.median(times) * 1e6, statistics.mean(times) * 1e6), flush=True)


if __name__ == "__main__":
    main()
