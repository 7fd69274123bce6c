#!/bin/bash
# make check-gpu: every workload and variant run eagerly and under graphshim
# (LD_PRELOAD), outputs compared byte for byte, graphshim's coverage
# (replayed / launches, from its statistics JSON) checked on the workloads
# whose launches are stable.  Prints a table; exits 0 when all pass, 1 on a
# failure, 77 (skipped) where no GPU is present.  Builds nothing: run `make`
# first.  Settings (environment):
#   GS_CHECK_STEPS  steps of each run (default 200)
#   GS_MIN_COV      coverage required of the stable workloads (default 0.95)
#   GS_CHECK_DECODE extra decode arguments, e.g. sizes (default: none, full size)
#   GS_CHECK_FWSTEP extra fwstep arguments (default: none, full size)
#   GS_CHECK_ONLY   a regular expression: run only the cases it matches
#   GS_PY_TOKENS    tokens of the PyTorch case (default 100; 0 skips it)
#   GS_NO_GPU_OK=1  run even when nvidia-smi sees no GPU (simulator)
#   GS_TABLE        also write the table to this file
# and those of common.sh (GS_BUILD, GS_LIB, GS_WORK...).
set -u
. "$(dirname "$0")/common.sh"

if [ "${GS_NO_GPU_OK:-0}" != 1 ] && ! gs_gpu_present; then
	echo "check-gpu: no GPU (nvidia-smi -L found none): skipped"
	exit 77
fi
if [ ! -f "$GS_LIB" ]; then
	echo "check-gpu: $GS_LIB not found: build first (make -j)"
	exit 99
fi
for w in tiny decode nrepeat hostwork fwstep; do
	if [ ! -x "$GS_KBIN/$w" ]; then
		echo "check-gpu: $GS_KBIN/$w not built (configure found no cuda.h?)"
		exit 99
	fi
done

STEPS=${GS_CHECK_STEPS:-200}
MIN=${GS_MIN_COV:-0.95}
PYTOK=${GS_PY_TOKENS:-100}
K=$GS_KBIN
D="$K/decode --steps $STEPS ${GS_CHECK_DECODE:-}"
F="$K/fwstep --tokens $STEPS ${GS_CHECK_FWSTEP:-}"
FS="$F --no-grow --rotate 1 --no-events --readback-every 0"

# name | coverage required ("-": reported only) | command
# fwstep: reported only, until the learner replays a framework's step.
# The *-3steps cases: does replay begin by the third sighting of a step?
# tiny-spin: the host polls mapped memory halfway through each step, no
# call (the idle watchdog submits what is held; a hang there fails the run;
# after four steps a chunk ends there, so it must replay nearly as tiny
# does: 0.969 on an H100 when the cut came after two, 0.362 before it).
# (launches 3 x a step; replayed: those of the third step from graphs)
CASES="tiny|$MIN|$K/tiny --steps $STEPS
tiny-3steps|-|$K/tiny --steps 3
decode-3steps|-|$K/decode --steps 3 ${GS_CHECK_DECODE:-}
tiny-graph|-|$K/tiny --steps $STEPS --explicit-graph
tiny-stream0|-|$K/tiny --steps $STEPS --stream0
tiny-stages|-|$K/tiny --steps $STEPS --kernels 40 --stages 24
tiny-spin|0.90|$K/tiny --steps $STEPS --spin
tiny-spin-moves|-|$K/tiny --steps $STEPS --spin-moves
decode|$MIN|$D
decode-noreadback|$MIN|$D --no-readback
decode-async|$MIN|$D --readback async
decode-pingpong|$MIN|$D --pingpong
decode-copies|$MIN|$D --copies
decode-workspace|-|$D --workspace
decode-check-workspace|-|$K/decode --check --steps $STEPS --workspace
decode-posarg|-|$D --pos-arg
decode-noreadback-posarg|-|$D --no-readback --pos-arg
decode-twostreams|-|$D --two-streams
decode-prefetch|-|$D --prefetch
decode-prefetch-absorb|-|env GRAPHSHIM_ABSORB=1 $D --prefetch
decode-branch|-|$D --branch
decode-branch-late|-|$D --branch-late
decode-branch-late-noshare|-|env GRAPHSHIM_SHARE=0 $D --branch-late
decode-threads|-|$D --threads 2
decode-graph|-|$D --explicit-graph
decode-check|-|$K/decode --check
decode-check-mix|-|$K/decode --check --steps $STEPS --pingpong --copies --two-streams --branch
decode-check-late|-|$K/decode --check --steps $STEPS --branch-late
nrepeat|-|$K/nrepeat --steps $STEPS
hostwork|-|$K/hostwork --steps $STEPS
hostwork-replay|-|env GRAPHSHIM_GATE=replay $K/hostwork --steps $STEPS
hostwork-graph|-|$K/hostwork --steps $STEPS --explicit-graph
hostwork-short|-|env GRAPHSHIM_GATE=replay $K/hostwork --steps $STEPS --kernels 32 --host-us 10
fwstep|-|$F
fwstep-wide|-|$F --wide-args --rotate 5
fwstep-wide-checkorder|-|env GRAPHSHIM_CHECK_ORDER=1 $F --wide-args --rotate 5
fwstep-noevents|-|$F --no-events
fwstep-norotate|-|$F --rotate 1
fwstep-nogrow|-|$F --no-grow
fwstep-twostreams|-|$F --two-streams
fwstep-sidestreams|-|$F --side-streams 12
fwstep-sides-noadopt|-|env GRAPHSHIM_ADOPT=0 $F --side-streams 12
fwstep-sides-adopt|-|env GRAPHSHIM_ADOPT=1 GRAPHSHIM_ABSORB=1 $F --side-streams 12
fwstep-twostr-adopt|-|env GRAPHSHIM_ADOPT=1 GRAPHSHIM_ABSORB=1 $F --two-streams
fwstep-fresh-adopt|-|env GRAPHSHIM_ADOPT=1 GRAPHSHIM_ABSORB=1 $F --two-streams --fresh-events
fwstep-copy-adopt|-|env GRAPHSHIM_ADOPT=1 GRAPHSHIM_ABSORB=1 $F --two-streams --fresh-events --copy-stream
fwstep-poll-absorb|-|env GRAPHSHIM_ABSORB=1 $F --tail-records 4 --poll
fwstep-kvcopy|-|$F --kv-copy
fwstep-setattr|-|$F --set-attr
fwstep-augment|-|$F --augment 6
fwstep-augment-warmrep|-|env GRAPHSHIM_COLD_REPLAY=0 $F --augment 6
fwstep-static|-|$FS
fwstep-graph|-|$FS --explicit-graph"
if [ "$PYTOK" -gt 0 ] 2>/dev/null && gs_torch_present; then
	CASES="$CASES
python-decode|-|$GS_PY $GS_SRC/kernels/python/decode.py --tokens $PYTOK --rounds 1"
else
	echo "check-gpu: PyTorch with a GPU not found (or GS_PY_TOKENS=0): python-decode skipped"
fi

print_table() {
	{
		echo
		echo "== check-gpu: eager vs graphshim, byte-identical outputs, coverage =="
		printf '%-18s %-9s %10s %10s %6s %5s %10s %10s  %s\n' case identical eager_us shim_us cov need \
			launches replayed verdict
		printf '%s' "$ROWS"
		if [ $FAILS -eq 0 ]; then
			echo "check-gpu: all passed (report: no coverage required; step times are medians)"
		else
			echo "check-gpu: $FAILS FAILED"
		fi
	} | tee ${GS_TABLE:+-a "$GS_TABLE"}
}
# Cut short (all.sh's time limit): still show the rows finished.
trap 'echo "check-gpu: interrupted"; FAILS=$((FAILS + 1)); print_table; exit 124' TERM INT

echo "check-gpu: work directory $GS_WORK, library $GS_LIB, $STEPS steps"
ROWS=""
FAILS=0
while IFS='|' read -r name need cmd; do
	if [ -n "${GS_CHECK_ONLY:-}" ] && ! echo "$name" | grep -Eq "$GS_CHECK_ONLY"; then
		continue
	fi
	w=$GS_WORK/$name
	rm -f "$w".*
	$cmd --time --out "$w.eager.out" >"$w.eager.log" 2>&1
	rc_e=$?
	# These runs last a fraction of a second: adoption's grace after
	# arming (100 ms by default) would be most of them.
	GRAPHSHIM_STATS=$w.stats.json GRAPHSHIM_OVERWRITE=1 GRAPHSHIM_ADOPT_GRACE_US=0 LD_PRELOAD=$GS_LIB \
		$cmd --time --out "$w.shim.out" >"$w.shim.log" 2>&1
	rc_s=$?
	same=no
	[ $rc_e -eq 0 ] && [ $rc_s -eq 0 ] && cmp -s "$w.eager.out" "$w.shim.out" && same=yes
	read -r launches replayed cov <<<"$(gs_stats "$w.stats.json")"
	t_e=$(gs_field median_us "$w.eager.log")
	t_s=$(gs_field median_us "$w.shim.log")
	verdict=pass
	if [ $rc_e -ne 0 ]; then
		verdict="FAIL(eager rc=$rc_e)"
	elif [ $rc_s -ne 0 ]; then
		verdict="FAIL(graphshim rc=$rc_s)"
	elif [ $same != yes ]; then
		verdict="FAIL(outputs differ)"
	elif [ "$need" != - ] && ! gs_ge "$cov" "$need"; then
		verdict="FAIL(coverage<$need)"
	elif [ "$need" = - ]; then
		verdict=report
	fi
	case $verdict in FAIL*)
		FAILS=$((FAILS + 1))
		echo "check-gpu: $name: $verdict; logs: $w.eager.log $w.shim.log"
		tail -n 5 "$w.shim.log" | sed 's/^/    /' ;;
	esac
	ROWS="$ROWS$(printf '%-18s %-9s %10s %10s %6s %5s %10s %10s  %s' "$name" "$same" \
		"${t_e:--}" "${t_s:--}" "$cov" "$need" "$launches" "$replayed" "$verdict")
"
	echo "check-gpu: $name: $verdict (identical=$same coverage=$cov)"
done <<<"$CASES"

print_table
[ $FAILS -eq 0 ]
