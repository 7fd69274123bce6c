#!/bin/sh
# The gate on the CPU simulator (real interposition; the GPU timers are the
# CUDA backend's cuEvent pairs, then, where the HIP builds exist, the HIP
# backend's hipEvent pairs): under each GRAPHSHIM_GATE setting the outputs of
# hostwork (long kernels with host work between them) and tiny are those of
# the run without graphshim, and the statistics show what the setting
# promises: auto times sequences and reports the medians it compared,
# eager launches no graph, replay times nothing.  Which way auto decides
# follows the simulator's timing, which models no GPU: that choice is
# tested with a controlled clock in tests/unit/test_gate.c and measured on
# the GPU (tools/gpu/bench.sh).
set -u
b=${top_builddir:-.}
lib="$b/.libs/libgraphshim.so"
sim="$b/tests/sim/lib"
k="$b/kernels"
for f in "$lib" "$sim/libcuda.so.1" "$k/hostwork" "$k/tiny" "$b/tools/graphshim"; do
	[ -e "$f" ] || { echo "SKIP: $f not built"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base_ldpath=${LD_LIBRARY_PATH:-}
export GRAPHSHIM_OVERWRITE=1
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
stat() { # stat FILE KEY -> the first value of KEY
	sed -n "s/.*\"$2\": *\"*\([0-9a-z.]*\).*/\1/p" "$1" | head -n 1
}

# gate NAME SETTING PROGRAM ARGS...: run without and with graphshim.
gate() {
	name=$1 setting=$2
	shift 2
	timeout 120 "$@" --out "$tmp/e.bin" >"$tmp/e.log" 2>&1 || { fail "$name: eager run failed"; cat "$tmp/e.log"; return 1; }
	# The first timing after 4 replays, so that a close call (three times
	# the samples) still decides within the 40 steps; every sequence has
	# its trial unless $trust says otherwise (GRAPHSHIM_GATE_TRUST).
	timeout 120 env GRAPHSHIM_GATE="$setting" GRAPHSHIM_GATE_AFTER=4 GRAPHSHIM_GATE_TRUST="${trust:-0}" \
		GRAPHSHIM_SELFTIME="${selftime:-0}" \
		GRAPHSHIM_STATS="$tmp/s.json" GRAPHSHIM_TRACE="$tmp/t.json" \
		LD_PRELOAD="${GS_TEST_PRELOAD_PREFIX:+$GS_TEST_PRELOAD_PREFIX }$lib" "$@" --out "$tmp/g.bin" >"$tmp/g.log" 2>&1 ||
		{ fail "$name: run under graphshim failed"; cat "$tmp/g.log"; return 1; }
	cmp -s "$tmp/e.bin" "$tmp/g.bin" || { fail "$name: outputs differ"; return 1; }
	decisions=$(stat "$tmp/s.json" gate_decisions) replays=$(stat "$tmp/s.json" replays)
	gated=$(stat "$tmp/s.json" gated) trusted=$(stat "$tmp/s.json" gate_trusted)
	return 0
}

for flavour in cuda hip; do
if [ $flavour = hip ]; then
	x=-hip
	sim="$b/tests/sim/hiplib"
	if [ ! -x "$k/tiny-hip" ] || [ ! -e "$sim/libamdhip64.so.5" ]; then
		echo "note: no HIP builds (configure --with-hip): the HIP flavour is skipped"
		continue
	fi
else
	x=
fi
export LD_LIBRARY_PATH="$sim${base_ldpath:+:$base_ldpath}"
H="$k/hostwork$x --kernels 6 --steps 40 --iters 20 --host-us 100 --n 256"
T="$k/tiny$x --kernels 32 --steps 40"
for w in hostwork$x tiny$x; do
	case $w in hostwork*) cmd=$H ;; *) cmd=$T ;; esac
	if gate "$w-auto" auto $cmd; then
		# At least one decision with both medians, the GPU's and the host's,
		# in the statistics and the trace (a sequence whose watched passes
		# moved may be in a new trial at exit: its last decision's medians).
		d=$(grep -c '"gate": "\(eager\|replay\|trial\)", "eager_us": [1-9][0-9.]*, "replay_us": [0-9.]*, "eager_host_us": [1-9]' "$tmp/s.json")
		if [ "${decisions:-0}" -lt 1 ] || [ "$d" -lt 1 ]; then
			fail "$w-auto: no gate decision with its measured times"; grep '"gate' "$tmp/s.json"
		elif ! grep -q '"name":"gate".*"eager_us":[0-9.]*,"replay_us":[0-9.]*,"choice":"\(eager\|replay\)","eager_host_us":[1-9][0-9.]*,"replay_host_us":[1-9]' "$tmp/t.json"; then
			fail "$w-auto: the trace has no gate event"
		elif [ "$(grep -c '"name":"gate_sample".*"kind":"eager","clock":"gpu","us":[1-9]' "$tmp/t.json")" -lt 2 ] ||
			[ "$(grep -c '"name":"gate_sample".*"kind":"replay","clock":"gpu","us":[1-9]' "$tmp/t.json")" -lt 2 ] ||
			! grep -q '"name":"gate_sample".*"clock":"host","us":[1-9]' "$tmp/t.json"; then
			# The trial's samples: of GRAPHSHIM_GATE_SAMPLES (4) of each kind
			# on the GPU's clock, at least half (a clear win decides there).
			fail "$w-auto: the trace lacks the trial's gate_sample events"
		elif ! "$b/tools/graphshim" trace summarize "$tmp/t.json" | grep -Eq ' (eager|replay) [0-9]+/[0-9]+( |$)'; then
			fail "$w-auto: graphshim trace summarize shows no gate decision"
		else
			echo "ok   $w-auto: identical, $decisions decision(s): $(grep -o '"gate": "[a-z]*", "eager_us": [0-9.]*, "replay_us": [0-9.]*' "$tmp/s.json" | head -n 1)"
		fi
	fi
	# tiny's 32-launch step patches nothing: at the default trust it
	# replays without a first trial.  (A watched move may still start one:
	# the simulator's passes vary by more than twice now and then.)
	case $w in tiny*)
		trust=32
		gate "$w-trust" auto $cmd
		ok=$?
		trust=
		if [ $ok -eq 0 ]; then
			if [ "${replays:-0}" -lt 5 ]; then
				# A machine so loaded that the builder's graph came with
				# the run's last steps: nothing for the gate to decide.
				echo "note $w-trust: $replays graph launches (a slow build): not checked"
			elif [ "${trusted:-0}" -ne 1 ]; then
				fail "$w-trust: gate_trusted $trusted, $gated gated launches"
			elif ! "$b/tools/graphshim" trace summarize "$tmp/t.json" 2>/dev/null | grep -q "replayed without a first trial"; then
				fail "$w-trust: graphshim trace summarize does not say it was trusted"
			else
				echo "ok   $w-trust: identical, replayed without a first trial ($gated launches gated after, by watched moves)"
			fi
		fi
		# GRAPHSHIM_SELFTIME: every launch call is counted once, by what it
		# did (held, eager, a chunk's last), or passed by the cold lane.
		selftime=1
		gate "$w-selftime" replay $cmd
		ok=$?
		selftime=
		if [ $ok -eq 0 ]; then
			sum=0
			for c in host_held_calls host_eager_calls host_chunk_calls cold_passed; do
				sum=$((sum + $(stat "$tmp/s.json" $c)))
			done
			kernels=$(stat "$tmp/s.json" kernels) graphs=$(stat "$tmp/s.json" host_graph_launches)
			if [ "$sum" -ne "$kernels" ] || [ "$(stat "$tmp/s.json" host_held_calls)" -lt 1 ]; then
				fail "$w-selftime: $sum launch calls counted by class, $kernels launched"
			elif [ "${replays:-0}" -ge 1 ] && [ "${graphs:-0}" -lt 1 ]; then
				fail "$w-selftime: $replays graph launches, none timed"
			else
				echo "ok   $w-selftime: $kernels launch calls counted by class, $graphs graph launches timed"
			fi
		fi
	esac
	if gate "$w-eager" eager $cmd; then
		if [ "${replays:-1}" -ne 0 ] || [ "${gated:-0}" -lt 1 ]; then
			fail "$w-eager: $replays graph launches, $gated gated launches"
		else
			echo "ok   $w-eager: identical, no graph launched, $gated launches matched and sent eagerly"
		fi
	fi
	if gate "$w-replay" replay $cmd; then
		if [ "${decisions:-1}" -ne 0 ] || [ "${replays:-0}" -lt 1 ]; then
			fail "$w-replay: $decisions decisions, $replays replays"
		else
			echo "ok   $w-replay: identical, $replays graph launches, nothing timed"
		fi
	fi
done
done
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
