#!/usr/bin/env python3
"""The gate's trials in graphshim traces, sample by sample.

    gate_trials.py [--all] TRACE...

Each TRACE is a GRAPHSHIM_TRACE file (a closed one or a killed process's
.part).  For every sequence the gate decided by a trial, the samples each
trial read, in the order read (E: an eager pass, R: a replayed one), on the
GPU's clock and the host's, then the decision and its medians: a phase
change inside a trial (a program's first, slow calls ending) shows as a
run of long samples that one kind got more of; a watched move that kept
a decision without a new trial (gate_kept) is shown under it.  By default only sequences
with a decision of eager, two or more decisions or a decision the watch
kept are shown; --all shows every one.  The first line per trace counts them.
"""
import json
import sys


def events(path):
    """The trace's events, one a line; a killed process's last line may be cut."""
    with open(path, encoding="utf-8") as f:
        for num, line in enumerate(f, 1):
            line = line.strip().rstrip(",")
            if line in ("", "[", "]"):
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                # Only a .part's last line may be cut short; anything else is
                # not a graphshim trace.
                if next(f, None) is None:
                    return
                raise SystemExit(f"{path}:{num}: not a trace event line")


def trials(path):
    """{(stream, id): [trial, ...]}, a trial {samples, gate, t_ms}; and t0."""
    seqs = {}
    open_ = {}
    t0 = None
    for e in events(path):
        name = e.get("name")
        if t0 is None and "ts" in e:
            t0 = e["ts"]
        if name not in ("gate_sample", "gate", "gate_kept"):
            continue
        a = e.get("args", {})
        key = (a.get("stream", "?"), a.get("id", "?"))
        if name == "gate_kept":  # a watched move that kept the last decision
            if seqs.get(key):
                seqs[key][-1].setdefault("kept", []).append(
                    ((e["ts"] - t0) / 1e3, a.get("was_us", 0.0), a.get("now_us", 0.0)))
            continue
        cur = open_.get(key)
        if cur is None:
            cur = open_[key] = {"samples": [], "gate": None, "t_ms": (e["ts"] - t0) / 1e3}
        if name == "gate_sample":
            cur["samples"].append((a.get("clock"), a.get("kind"), a.get("us", 0.0)))
        else:
            cur["gate"] = a
            seqs.setdefault(key, []).append(cur)
            del open_[key]
    for key, cur in open_.items():  # a trial the program ended before its decision
        seqs.setdefault(key, []).append(cur)
    return seqs


def line_of(samples, clock):
    s = [f"{k[0].upper()}{us:.0f}" for c, k, us in samples if c == clock]
    return " ".join(s) if s else "-"


def show(path, every):
    seqs = trials(path)
    decided = [k for k, ts in seqs.items() if any(t["gate"] for t in ts)]
    eager_first = [k for k in decided if seqs[k][0]["gate"] and seqs[k][0]["gate"].get("choice") == "eager"]
    twice = [k for k in decided if sum(1 for t in seqs[k] if t["gate"]) > 1]
    kept = [k for k in decided if any(t.get("kept") for t in seqs[k])]
    print(f"{path}: {len(decided)} sequences decided by a trial; first decision eager: "
          f"{len(eager_first)}; two or more decisions: {len(twice)}; kept by the watch: {len(kept)}")
    for key in sorted(seqs, key=lambda k: seqs[k][0]["t_ms"]):
        ts = seqs[key]
        eager = any(t["gate"] and t["gate"].get("choice") == "eager" for t in ts)
        if not every and not eager and len(ts) < 2 and key not in kept:
            continue
        length = next((t["gate"]["length"] for t in ts if t["gate"]), "?")
        print(f"  stream {key[0]} sequence {key[1]} ({length} launches)")
        for i, t in enumerate(ts, 1):
            g = t["gate"]
            verdict = (f"{g.get('choice')}: gpu {g.get('eager_us', 0):.0f}/{g.get('replay_us', 0):.0f}, "
                       f"host {g.get('eager_host_us', 0):.0f}/{g.get('replay_host_us', 0):.0f} us "
                       "(eager/replay medians)") if g else "no decision (the program ended first)"
            print(f"    trial {i} from {t['t_ms']:.1f} ms: {verdict}")
            print(f"      gpu : {line_of(t['samples'], 'gpu')}")
            print(f"      host: {line_of(t['samples'], 'host')}")
            for at, was, now in t.get("kept", []):
                print(f"      kept at {at:.1f} ms: watched passes {now:.0f} us, were {was:.0f} us")


def main(argv):
    every = "--all" in argv
    paths = [a for a in argv if a != "--all"]
    if not paths or any(p.startswith("-") for p in paths):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    for p in paths:
        try:
            show(p, every)
        except OSError as err:
            print(f"gate_trials.py: {p}: {err.strerror}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
