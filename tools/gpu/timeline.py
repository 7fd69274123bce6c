#!/usr/bin/env python3
"""Where a program's GPU time goes: read libgscupti's timeline
(GS_CUPTI_TIMELINE, real.sh's GS_REAL_TIMELINE=1) and print, for the second
half of the run (its steady state), per kernel name and per stream: count,
total and mean time; and per step, a step being what lies between two
device-to-host copies (a read-back), the medians of its span (first start to
the read-back's end), of the time some record ran (busy) and of the idle
time within.  Two files (eager, then graphshim) are printed one after the other.

    tools/gpu/timeline.py A.gpu.txt [B.gpu.txt] [--top N]
"""
import argparse
import statistics
import sys


def load(path):
    recs = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            w = line.split()
            if len(w) < 5 or w[0] not in "KCS":
                sys.exit(f"{path}:{n}: not a timeline line: {line.strip()[:80]}")
            kind, start, end, stream, graph = w[0], int(w[1]), int(w[2]), int(w[3]), int(w[4])
            if kind == "K":
                name = " ".join(w[5:])[:60]
            elif kind == "C":
                name = {"1": "copy HtoD", "2": "copy DtoH", "8": "copy DtoD"}.get(w[5], "copy " + w[5])
            else:
                name = "memset"
            recs.append((start, end, stream, graph, kind, name, w[5] if kind == "C" else ""))
    recs.sort()
    return recs


def steady(recs):
    return recs[len(recs) // 2:]


def busy(recs):
    """Time covered by at least one record (the union of the intervals)."""
    tot, cur_s, cur_e = 0, None, None
    for s, e, *_ in recs:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                tot += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        tot += cur_e - cur_s
    return tot


def steps(recs):
    """Spans between device-to-host copies: (span, busy, records) each."""
    out, cur = [], []
    for r in recs:
        cur.append(r)
        if r[4] == "C" and r[6] == "2":
            if len(cur) > 1:
                span = cur[-1][1] - cur[0][0]
                out.append((span, busy(cur), len(cur)))
            cur = []
    return out


def gaps(recs, top):
    """Idle time before each record (its start less the latest end before it,
    when positive), totalled by the record's name: what the GPU waited for."""
    agg, last = {}, None
    for s, e, stream, graph, kind, name, _ in recs:
        if last is not None and s > last:
            a = agg.setdefault(name, [0, 0])
            a[0] += 1
            a[1] += s - last
        last = e if last is None else max(last, e)
    return rows(agg, top)


def rows(agg, top):
    """The `top` keys of agg {key: [count, ns]} by time: (key, count, us, mean us)."""
    best = sorted(agg.items(), key=lambda kv: -kv[1][1])[:top]
    return [(k, c, t / 1e3, t / c / 1e3) for k, (c, t) in best]


def table(recs, key, top):
    agg = {}
    for s, e, stream, graph, kind, name, _ in recs:
        k = key(stream, graph, name)
        a = agg.setdefault(k, [0, 0])
        a[0] += 1
        a[1] += e - s
    return rows(agg, top)


def show(title, rs):
    print(f"  {title}:")
    for k, c, t, m in rs:
        print(f"    {c:7d} {t / 1e3:9.3f} {m:9.2f}  {k}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    if len(a.files) > 2:
        sys.exit("timeline.py: one or two files")
    for path in a.files:
        recs = steady(load(path))
        if not recs:
            print(f"{path}: no records")
            continue
        st = steps(recs)
        print(f"== {path}: {len(recs)} records in the second half, "
              f"{sum(1 for r in recs if r[3])} of them in graphs")
        if st:
            print(f"  steps (between DtoH copies): {len(st)}; median span "
                  f"{statistics.median(x[0] for x in st) / 1e3:.1f} us, busy "
                  f"{statistics.median(x[1] for x in st) / 1e3:.1f} us, idle "
                  f"{statistics.median(x[0] - x[1] for x in st) / 1e3:.1f} us, "
                  f"{statistics.median(x[2] for x in st):.0f} records")
        show("by kernel (count, total ms, mean us)", table(recs, lambda st_, g, n: n, a.top))
        show("idle before (count, total ms, mean us)", gaps(recs, a.top))
        show("by stream (graph records apart)",
             table(recs, lambda st_, g, n: f"stream {st_}{' graph' if g else ''}", a.top))


if __name__ == "__main__":
    main()
