#!/usr/bin/env python3
"""Host time of one call of a few PyTorch operations (diagnostic, not a
benchmark): each operation called --calls times in a row, five batches,
the median per call in microseconds.  Run it without graphshim, with
graphshim's hooks only (GRAPHSHIM_ENABLE=0) and with graphshim, to see
whether graphshim's hooks of the calls a library makes besides its
launches cost that library's host path anything.

    tools/gpu/host-probe.py [--calls N] [--ops fp8,int8,bf16,amax]
    tools/gpu/host-probe.sh [PAIRS] [these arguments]   (the three ways, alternating)

One process's figures say little alone: on an H200 in the forty-eighth
session six processes, none with graphshim (four were meant to preload it
but named no file), timed _scaled_mm at 145 to 236 us a call.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--ops", default="fp8,int8,bf16,amax")
    ap.add_argument("--label", default=os.environ.get("GS_PROBE_LABEL", "-"))
    a = ap.parse_args()
    dev = torch.device("cuda")
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 512, generator=g).to(dev, torch.bfloat16)
    w = torch.randn(1536, 512, generator=g).to(dev, torch.bfloat16)
    bias = torch.zeros(1536, device=dev, dtype=torch.bfloat16)
    one = torch.ones((), device=dev)
    x8, w8 = x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    xi, wi = x.to(torch.int8), w.to(torch.int8)
    ops = {
        "fp8": lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one, bias=bias,
                                        out_dtype=torch.bfloat16),
        "int8": lambda: torch._int_mm(xi, wi.t()),
        "bf16": lambda: torch.nn.functional.linear(x, w, bias),
        "amax": lambda: x.abs().amax(),
    }
    names = a.ops.split(",")
    unknown = [n for n in names if n not in ops]
    if unknown:
        ap.error("--ops: unknown %s (known: %s)" % (", ".join(unknown), ",".join(ops)))
    for name in names:
        op = ops[name]
        for _ in range(20):
            op()
        torch.cuda.synchronize()
        per = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(a.calls):
                op()
            per.append((time.perf_counter() - t0) / a.calls * 1e6)
            torch.cuda.synchronize()
        print("probe: %-6s %-5s host us a call: median %.2f (min %.2f, max %.2f)" % (
            a.label, name, statistics.median(per), min(per), max(per)), flush=True)


if __name__ == "__main__":
    main()
