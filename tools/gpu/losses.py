#!/usr/bin/env python3
"""Where a run's steady state went eager, from its GRAPHSHIM_TRACE events.

    python3 tools/gpu/losses.py TRACE [--top N]

TRACE is a trace (.json, or a killed process's .part) or the file of its
events other than launches that tools/gpu/real.sh keeps beside it
(NAME.trace.json.events): launch events are not needed, so this works on
runs whose whole traces were too large to bring back.

The steady state is the second half of the run's launches, counted from
the segment events (a segment's length less its marks; the statistics'
coverage_steady counts its half the same way, launch by launch).  For it,
this prints the launches and those replayed (the replay events' lengths),
then each segment length with its boundary, how many launches came in
segments of that length and how many sequences of that length replayed:
the difference is what went eagerly there.  A step learned between its
boundaries has its segment's length, so a length with launches lost
points at a step that did not replay; a periodic sequence replays inside
longer segments and shows as replayed with no segments of its own.  Then,
for every sequence with a pass or a mismatch in the steady state: its
passes replayed and sent eagerly by the gate, its gate samples (a trial's
eager passes are these), its mismatches by reason, position and field,
those forgiven, and its retirements.

`detect`'s trace said so (docs/performance.md, thirty-third session): a
family of segments of 10-38 launches lost, their sequences retired and
charged at positions 4, 7 and 9 by one another.
"""
import argparse
import collections
import signal
import sys

from gate_trials import events  # one event a line; a killed process's last line may be cut


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quietly, into `head`
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=12, help="segment lengths and sequences shown (default 12)")
    a = ap.parse_args()
    try:
        ev = list(events(a.trace))
    except OSError as e:
        sys.exit("%s: %s" % (a.trace, e.strerror))
    length = {}
    for e in ev:
        if e.get("cat") == "sequence" and e.get("name") in ("learned", "built"):
            length[e["args"]["id"]] = e["args"].get("length")
    segs = [i for i, e in enumerate(ev) if e.get("cat") == "segment"]
    if not segs:
        sys.exit("%s: no segment events (a trace of GRAPHSHIM_TRACE, or its .events file)" % a.trace)

    def ops(e):
        return e["args"]["length"] - e["args"].get("marks", 0)

    total = sum(ops(ev[i]) for i in segs)
    # The steady state begins after the segment that holds the run's middle launch.
    at, start = 0, 0
    for i in segs:
        at += ops(ev[i])
        if at * 2 >= total:
            start = i + 1
            break
    steady = ev[start:]
    seg_n, seg_ops = collections.Counter(), collections.Counter()
    rep_by_len = collections.Counter()
    seq = collections.defaultdict(lambda: collections.Counter())
    mism = collections.defaultdict(collections.Counter)
    launches = replayed = 0
    for e in steady:
        c, name, g = e.get("cat"), e.get("name"), e.get("args", {})
        if c == "segment":
            k = (g["length"], g.get("reason", "?"))
            seg_n[k] += 1
            seg_ops[k] += ops(e)
            launches += ops(e)
        elif c == "replay":
            replayed += g.get("length", 0)
            rep_by_len[g.get("seq_length")] += g.get("length", 0)
            seq[g["id"]]["replayed"] += g.get("length", 0)
        elif name == "pass":
            seq[g["id"]]["eager" if g.get("how") == "eager" else "passes"] += 1
        elif name == "gate_sample":
            seq[g["id"]]["samples"] += 1
        elif name == "mismatch":
            seq[g["id"]]["mismatches"] += 1
            mism[g["id"]]["%s@%s %s" % (g.get("reason"), g.get("position"), g.get("field"))] += 1
        elif name == "forgiven":
            seq[g["id"]]["forgiven"] += 1
        elif name == "retired":
            seq[g["id"]]["retired"] += 1
    print("%s: steady state (the second half of %d launches): %d launches, %d replayed (%.3f)"
          % (a.trace, total, launches, replayed, replayed / launches if launches else 0.0))
    by_len = collections.Counter()
    for (n, why), o in seg_ops.items():
        by_len[n] += o
    lost = {n: by_len[n] - rep_by_len.get(n, 0) for n in by_len}
    print("segments by length, most launches lost first (lost: launches of that length less those")
    print("replayed by sequences of that length):")
    print("  %7s %-8s %9s %9s %9s %9s" % ("length", "boundary", "segments", "launches", "replayed", "lost"))
    shown = sorted(seg_ops, key=lambda k: (-lost[k[0]], -seg_ops[k]))[: a.top]
    for k in shown:
        n = k[0]
        print("  %7d %-8s %9d %9d %9d %9d" % (n, k[1], seg_n[k], seg_ops[k], rep_by_len.get(n, 0), lost[n]))
    inside = sorted((n for n in rep_by_len if n not in by_len), key=lambda n: -rep_by_len[n])
    for n in inside:
        print("  %7s %-8s %9s %9s %9d %9s   (sequences of %d launches replayed inside longer segments)"
              % (n, "-", "-", "-", rep_by_len[n], "-", n))
    print("sequences in the steady state, most mismatched or gated first:")
    order = sorted(seq, key=lambda q: (-seq[q]["retired"], -seq[q]["mismatches"], -seq[q]["eager"], q))
    for q in order[: a.top]:
        s = seq[q]
        mm = ", ".join("%s x%d" % (k, v) for k, v in mism[q].most_common(3))
        print("  %s %5s launches: passes %d replayed, %d eager (gate samples %d); replayed %d launches; "
              "mismatches %d%s, forgiven %d, retired %d"
              % (q, length.get(q, "?"), s["passes"], s["eager"], s["samples"], s["replayed"], s["mismatches"],
                 " (" + mm + ")" if mm else "", s["forgiven"], s["retired"]))


if __name__ == "__main__":
    main()
