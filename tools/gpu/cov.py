#!/usr/bin/env python3
"""Coverage of every statistics file real.sh left: one line a program and
mode (whole run, steady state, retirements, gate-eager passes).

    tools/gpu/cov.py [DIR]    (default: $GS_WORK/real)
"""
import glob
import json
import os
import re
import sys


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("GS_WORK", "/tmp/gs-gpu-work"), "real")
    rows = {}
    for f in sorted(glob.glob(os.path.join(d, "*.json"))):
        m = re.match(r"(.+)\.(graphshim|before)\.(\d+|count)\.\d+\.json$", os.path.basename(f))
        if not m:
            continue
        try:
            s = json.load(open(f))
        except (OSError, ValueError):
            continue
        c = s.get("counters", {})
        if not c.get("launches"):
            continue  # a helper process
        rows.setdefault((m.group(1), m.group(2)), []).append(
            (s.get("coverage", 0), s.get("coverage_steady", 0), c.get("retirements", 0), c.get("gated", 0)))
    print("%-18s %-9s %s" % ("program", "mode", "runs: cov/steady/retired/gated"))
    for (prog, mode), v in sorted(rows.items()):
        print("%-18s %-9s %s" % (prog, mode, "  ".join("%.3f/%.3f/%d/%d" % r for r in v)))


if __name__ == "__main__":
    main()
