#!/usr/bin/env python3
"""What a stream's segments are made of, from a GRAPHSHIM_TRACE file.

    python3 tools/gpu/segments.py TRACE.json [--stream 0x...] [--top N]

A segment is what a stream issued between two boundaries (the trace's
"segment" events).  This prints, for the stream with the most launches (or
--stream), the distinct segment structures (each launch's kind, kernel name
or API, and a copy's or memset's size), how often each came, how many of its
launches replayed, which structure followed which, and for every sequence
that mismatched: the structures of the segments its mismatches ended.  It
answers "why does this stream not replay" for steps that branch: how many
different steps begin alike, and how often each comes.

Reads the trace line by line (graphshim writes one event a line), so a
trace of millions of events fits in memory as counts.
"""
import argparse
import collections
import json
import sys


def events(path):
    with open(path) as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            try:
                yield json.loads(line)
            except ValueError:
                continue


def short(name, width=28):
    if not name:
        return "?"
    return name if len(name) <= width else name[: width - 3] + "..."


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--stream", help="the stream's handle (default: the one with most launches)")
    ap.add_argument("--top", type=int, default=25, help="structures listed (default 25)")
    ap.add_argument("--show", type=int, default=0, help="also print the whole of the N most common structures")
    a = ap.parse_args()

    per_stream = collections.Counter()
    for e in events(a.trace):
        if e.get("cat") == "launch":
            per_stream[e.get("args", {}).get("stream")] += 1
    if not per_stream:
        sys.exit("segments: no launch events in %s" % a.trace)
    stream = a.stream or per_stream.most_common(1)[0][0]

    structs = {}  # tuple -> index
    names = []
    count = collections.Counter()
    replayed = collections.Counter()
    reasons = collections.defaultdict(collections.Counter)
    follows = collections.Counter()
    mism = collections.defaultdict(collections.Counter)  # seq id -> struct -> n
    mism_pos = collections.defaultdict(collections.Counter)
    cur, cur_rep, pending, prev = [], 0, [], None
    nseg = 0
    for e in events(a.trace):
        args = e.get("args", {})
        if args.get("stream") != stream:
            continue
        cat = e.get("cat")
        if cat == "launch":
            if args.get("state") in ("gated", "released"):
                continue  # a held launch, submitted eagerly: traced once already, as held
            kind = args.get("kind", "?")
            what = args.get("kernel") or args.get("api") or "?"
            if kind != "kernel":
                what = "%s %s" % (what, args.get("nbytes", ""))
            cur.append("%s:%s" % (kind[0], short(what)))
            if args.get("state") == "replayed":
                cur_rep += 1
        elif cat == "replay":
            cur_rep += int(args.get("length", 0) or 0)
        elif e.get("name") == "mismatch":
            pending.append((args.get("id"), args.get("position"), args.get("reason"), args.get("field")))
        elif cat == "segment":
            t = tuple(cur)
            if t not in structs:
                structs[t] = len(names)
                names.append(t)
            i = structs[t]
            count[i] += 1
            replayed[i] += min(cur_rep, len(t)) if cur_rep else 0
            reasons[i][args.get("reason", "?")] += 1
            if prev is not None:
                follows[(prev, i)] += 1
            for sid, pos, why, field in pending:
                mism[sid][i] += 1
                mism_pos[sid][(pos, why, field)] += 1
            prev, cur, cur_rep, pending = i, [], 0, []
            nseg += 1

    total = sum(count[i] * len(names[i]) for i in count)
    print("stream %s: %d launches in %d segments, %d distinct structures" % (stream, total, nseg, len(names)))
    print("\nstructures (by launches): #  count  length  launches  replayed  boundaries  first launches")
    for i, n in sorted(count.items(), key=lambda kv: -kv[1] * len(names[kv[0]]))[: a.top]:
        t = names[i]
        print("  S%-4d %6d %6d %9d %9d  %-12s %s" % (
            i, n, len(t), n * len(t), replayed[i],
            ",".join("%s %d" % kv for kv in reasons[i].most_common(2)),
            " ".join(t[:4]) + (" ..." if len(t) > 4 else "")))
    for i, n in sorted(count.items(), key=lambda kv: -kv[1])[: a.show]:
        print("\nS%d (x%d, %d launches):\n  %s" % (i, n, len(names[i]), "\n  ".join(names[i])))
    print("\nstructures that begin alike (same first launch, more than one structure):")
    by_first = collections.defaultdict(list)
    for i in count:
        if names[i]:
            by_first[names[i][0]].append(i)
    for first, lst in sorted(by_first.items(), key=lambda kv: -sum(count[i] for i in kv[1])):
        if len(lst) < 2:
            continue
        lst.sort(key=lambda i: -count[i])
        desc = []
        for i in lst[:8]:
            other = names[lst[0]]
            t = names[i]
            d = next((k for k in range(min(len(t), len(other))) if t[k] != other[k]), min(len(t), len(other)))
            desc.append("S%d x%d len %d (differs from S%d at %d)" % (i, count[i], len(t), lst[0], d) if i != lst[0]
                        else "S%d x%d len %d" % (i, count[i], len(t)))
        print("  %s: %d structures: %s" % (first, len(lst), "; ".join(desc)))
    print("\nmost common successions: from -> to  count")
    for (x, y), n in follows.most_common(min(a.top, 20)):
        print("  S%d -> S%d  %d" % (x, y, n))
    if mism:
        print("\nmismatches: sequence  total  (position, reason, field) most common  segment structures they ended")
        for sid, c in sorted(mism.items(), key=lambda kv: -sum(kv[1].values()))[: a.top]:
            pos = mism_pos[sid].most_common(1)[0]
            print("  %s %6d  %s x%d  %s" % (sid, sum(c.values()), pos[0], pos[1],
                                           ", ".join("S%d x%d" % kv for kv in c.most_common(5))))


if __name__ == "__main__":
    main()
