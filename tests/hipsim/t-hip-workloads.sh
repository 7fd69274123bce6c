#!/bin/sh
# The workloads of kernels/, built for HIP (kernels/*-hip), on the CPU
# simulator's HIP runtime (tests/sim/hiplib/libamdhip64.so.5), without and
# with graphshim: every output byte must match, the stable workloads must
# replay from graphs, and every fault the simulator injects into
# graphshim's own HIP calls must leave the outputs unchanged and show up as
# a fallback in graphshim's statistics.  The HIP twin of
# tests/integ/t-workloads.sh.
set -u
b=${top_builddir:-.}
lib="$b/.libs/libgraphshim.so"
sim="$b/tests/sim/hiplib"
k="$b/kernels"
for f in "$lib" "$sim/libamdhip64.so.5" "$b/tests/hipsim/t_hip_forms" "$k/decode-hip" "$k/tiny-hip" "$k/nrepeat-hip" \
	"$k/tiny.sim.so" "$k/decode.sim.so" "$k/nrepeat.sim.so"; do
	[ -e "$f" ] || { echo "SKIP: $f not built"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The programs are linked against the real libamdhip64; this puts the
# simulator in its place.
export LD_LIBRARY_PATH="$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Deterministic: graphs are built in the call that completes the learning,
# and armed sequences replay (the gate's choice follows the simulator's
# timing, which models no GPU; tests/integ/t-gate.sh covers the gate).
export GRAPHSHIM_ASYNC_BUILD=0 GRAPHSHIM_OVERWRITE=1 GRAPHSHIM_GATE=replay
fails=0
stat() { # stat FILE KEY -> the counter's value
	sed -n "s/.*\"$2\": *\([0-9.]*\).*/\1/p" "$1" | head -n 1
}
# run NAME MIN_COVERAGE_PERCENT ENV... -- PROGRAM ARGS...
# MIN_COVERAGE_PERCENT: replayed*100/launches must reach it; "+" means > 0.
run() {
	name=$1 min=$2
	shift 2
	envs=""
	while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
	shift
	"$@" --out "$tmp/e.bin" >"$tmp/e.log" 2>&1 || { echo "FAIL $name: eager run failed"; cat "$tmp/e.log"; fails=$((fails + 1)); return; }
	env $envs GRAPHSHIM_STATS="$tmp/s.json" LD_PRELOAD="${GS_TEST_PRELOAD_PREFIX:+$GS_TEST_PRELOAD_PREFIX }$lib" "$@" --out "$tmp/g.bin" >"$tmp/g.log" 2>&1 ||
		{ echo "FAIL $name: run under graphshim failed"; cat "$tmp/g.log"; fails=$((fails + 1)); return; }
	if ! cmp -s "$tmp/e.bin" "$tmp/g.bin"; then
		echo "FAIL $name: outputs differ"; fails=$((fails + 1)); return
	fi
	launches=$(stat "$tmp/s.json" launches) replayed=$(stat "$tmp/s.json" replayed)
	fallbacks=$(stat "$tmp/s.json" fallbacks)
	cov=$(( launches ? replayed * 100 / launches : 0 ))
	if [ "$min" = "+" ]; then
		if [ "${replayed:-0}" -eq 0 ]; then
			echo "FAIL $name: nothing replayed ($launches launches)"; fails=$((fails + 1)); return
		fi
	elif [ "$cov" -lt "$min" ]; then
		echo "FAIL $name: replayed $replayed of $launches launches ($cov% < $min%)"; fails=$((fails + 1)); return
	fi
	case "$envs" in *GS_SIM_FAIL*)
		if [ "${fallbacks:-0}" -lt 1 ]; then
			echo "FAIL $name: the injected fault was not counted as a fallback"; fails=$((fails + 1)); return
		fi ;;
	esac
	echo "ok   $name: identical, replayed $replayed/$launches ($cov%), fallbacks $fallbacks"
}

D="$k/decode-hip --layers 2 --dim 64 --ctx 64 --vocab 256 --steps 100"
run tiny 90 -- "$k/tiny-hip" --kernels 64 --steps 200
run tiny-null-stream 90 -- "$k/tiny-hip" --kernels 64 --steps 200 --stream0
run decode 90 -- $D
run decode-no-readback + -- $D --no-readback
run decode-async-readback + -- $D --readback async
run decode-pos-arg + -- $D --pos-arg
# No boundary and the position by value: a period whose launches drift
# (replayed nothing before the run was carried by the shape).
run decode-no-readback-pos-arg + -- $D --no-readback --pos-arg
run decode-pingpong + -- $D --pingpong
run decode-two-streams + -- $D --two-streams
run decode-copies + -- $D --copies
# A workspace freed after each step: the HIP backend makes no stand-ins, so
# a node on the freed one is refused and runs eagerly; identical either way.
run decode-workspace + -- $D --workspace
# The same while each instantiation takes 5 ms, the program freeing a
# workspace every step: hipFree takes the builder's lock as cuMemFree does.
# (The simulator aborts where a graph is instantiated with a node on memory
# freed since it was made; here the HIP backend's nodes on the workspace are
# refused before that could happen: without the lock it passed 6 runs of 6.
# t-workloads.sh has the case that fails without it.)
run decode-workspace-slowbuild + GS_SIM_INSTANTIATE_US=5000 -- "$k/decode-hip" --check --steps 100 --workspace --pingpong
run decode-branch + -- $D --branch
run decode-threads + -- $D --threads 2
run decode-everything + -- $D --pingpong --two-streams --copies --branch --threads 2
run nrepeat 0 -- "$k/nrepeat-hip" --steps 200
# A step forked onto side streams and joined with events: adopted into the
# stream it forks from (hip_adopt.c, on by default), it replays as one
# stream's step (94%; 60% and 77% with GRAPHSHIM_ADOPT=0, which the ADOPT
# runs check it must beat).
F="$k/fwstep-hip --layers 4 --dim 32 --ctx 64 --tokens 100"
[ -e "$k/fwstep-hip" ] && [ -e "$k/fwstep.sim.so" ] && {
	run fwstep-side-streams 90 -- $F --side-streams 12
	run fwstep-two-streams 90 -- $F --two-streams
	run fwstep-side-streams-fresh 90 -- $F --side-streams 12 --fresh-events
	run fwstep-copy-stream 90 -- $F --two-streams --fresh-events --copy-stream
	run fwstep-side-streams-noadopt 50 GRAPHSHIM_ADOPT=0 -- $F --side-streams 12
	run fwstep-two-streams-noadopt 50 GRAPHSHIM_ADOPT=0 -- $F --two-streams
	# Each layer's scratch from the stream's pool (hipMallocAsync) and freed
	# after it (hipFreeAsync, a held mark): 86% when each free ended a segment.
	run fwstep-pool 90 -- $F --pool
	run fwstep-pool-sides 90 -- $F --pool --side-streams 12
	run decode-everything-absorb + GRAPHSHIM_ABSORB=1 -- $D --pingpong --two-streams --copies --branch --threads 2
}
# extra buffers with drifting values (patched), ext launches, memsets,
# device and pinned copies; a non-multiple ext launch every third step.
run forms + -- "$b/tests/hipsim/t_hip_forms" --steps 200
run forms-node-patch + GS_SIM_FAIL_NODE_PATCH=1 -- "$b/tests/hipsim/t_hip_forms" --steps 200
# Faults in graphshim's own HIP calls: same results, counted, eager.
run fault-graph-build 0 GS_SIM_FAIL_GRAPH_BUILD=1 -- $D
run fault-instantiate 0 GS_SIM_FAIL_INSTANTIATE=1 -- $D
run fault-graph-launch 0 GS_SIM_FAIL_GRAPH_LAUNCH=1 -- $D
run fault-node-patch 0 GS_SIM_FAIL_NODE_PATCH=1 -- $D --pos-arg
# Nodes the runtime will not add (every copy and memset) run eagerly at
# their place; the rest of each step replays (c3ce1ee).
run refused-copies 70 GS_SIM_REFUSE_NODES=copy,memset -- $D --copies
run fault-every-launch 0 "GS_SIM_FAIL_GRAPH_LAUNCH=1+" -- $D
# A failing parameter-layout query makes kernelParams launches pass through.
GS_SIM_FAIL_PARAM_INFO="1+" run fault-param-info 0 -- $D
[ "$fails" -eq 0 ] && echo "all HIP workloads identical" && exit 0
echo "$fails failed"
exit 1
