#!/bin/bash
# How a program reaches the CUDA driver, and whether graphshim sees it:
# runs the program once under graphshim with the dynamic linker's binding
# log (LD_DEBUG=bindings) and graphshim's debug log, then reports
#   - which object each driver entry point, dlsym, dlvsym and
#     cuGetProcAddress was bound to, per calling object (a launch entry
#     point bound to libcuda itself is one graphshim does not see);
#   - graphshim's own lines (entry points it does not wrap, layouts it
#     could not read, attributes it passed through);
#   - the statistics' kernel counts.
# Usage: tools/gpu/visibility.sh NAME COMMAND...   (writes under $OUT or
# $GS_WORK/visibility/NAME; prints a short report).  Needs only the program
# and libgraphshim.so (common.sh's GS_LIB).
set -u
. "$(dirname "$0")/common.sh"
if [ $# -lt 2 ]; then
	echo "usage: $0 NAME COMMAND..." >&2
	exit 2
fi
name=$1
shift
d=${OUT:-$GS_WORK}/visibility-$name
mkdir -p "$d"
rm -f "$d"/ld.* "$d"/stats.*.json
LD_DEBUG=bindings LD_DEBUG_OUTPUT="$d/ld" GRAPHSHIM_LOG=debug \
	GRAPHSHIM_STATS="$d/stats.%p.json" LD_PRELOAD="$GS_LIB" \
	timeout "${GS_VIS_TIMEOUT:-300}" "$@" >"$d/out.log" 2>"$d/err.log"
rc=$?
echo "== visibility of $name (exit $rc) =="
# Bindings: "binding file A [0] to B [0]: normal symbol `S'" (A: the object
# whose reference, or whose handle's lookup, it was).  A driver entry point
# that an object other than libcuda and graphshim binds to libcuda, and a
# dlsym or dlvsym that an object other than graphshim binds to the C
# library, bypass graphshim: those are the lines to read.
cat "$d"/ld.* 2>/dev/null |
	sed -n "s/.*binding file \([^ ]*\) \[[0-9]*\] to \([^ ]*\) \[[0-9]*\]: normal symbol \`\([^']*\)'.*/\1|\2|\3/p" |
	awk -F'|' '{ n = split($1, a, "/"); m = split($2, b, "/"); f = a[n]; t = b[m]; s = $3 }
		s ~ /^cu[A-Z]/ && f !~ /^libcuda/ && f !~ /graphshim/ { k = (t ~ /graphshim/) ? "seen    " : "BYPASS  "; print k f " -> " t " : " s; next }
		s ~ /^dlv?sym$/ && f !~ /graphshim/ { k = (t ~ /graphshim/) ? "seen    " : "BYPASS  "; print k f " -> " t " : " s }' |
	sort | uniq -c | sort -k2,2 -k1,1rn | head -n 60
echo "-- graphshim's own lines (most frequent first):"
grep -h '^graphshim:' "$d/err.log" | sed 's/0x[0-9a-f]*/0x…/g' | sort | uniq -c | sort -rn | head -n 25
echo "-- statistics per process (launches kernels boundary_launches layouts_unreadable replayed):"
for f in "$d"/stats.*.json; do
	[ -f "$f" ] || continue
	"$GS_PY" - "$f" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["counters"]
print("  %s: %s" % (sys.argv[1].rsplit("/", 1)[-1], " ".join(
    str(c.get(k, "-")) for k in ("launches", "kernels", "boundary_launches", "layouts_unreadable", "replayed"))))
PY
done
# The binding logs are large: keep a compressed digest only.
cat "$d"/ld.* 2>/dev/null | grep -E "symbol \`(dl[v]?sym|cu[A-Z][A-Za-z_0-9]*)'" | gzip >"$d/bindings.txt.gz"
rm -f "$d"/ld.*
