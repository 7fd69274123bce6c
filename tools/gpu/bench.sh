#!/bin/bash
# One benchmark invocation: eager, graphshim and a hand-written explicit graph
# of the same work, INTERLEAVED for R rounds (each round runs every mode
# once, the order rotated round by round, so drift in clocks or load hits
# all modes alike).  Each run prints its median step time (host wall clock
# around each step, sync and read-back included); the table gives, per
# mode, the median over rounds, and the ratios.  Every run's output must be
# byte-identical to the first eager run's.  Exits 1 on a failed or
# differing run, 77 where no GPU is present.  Settings (environment):
#   GS_BENCH_ROUNDS     rounds (default 10)
#   GS_BENCH_WORKLOADS  which of: tiny decode nrepeat passthru hostwork fwstep python, and
#                       fwstatic (fwstep's static step, with its hand-written graph),
#                       passlegacy (passthru on the legacy default stream),
#                       onekernel (nrepeat --one-kernel: every operand drifts, replayed patched),
#                       onekernelK (the same, K launches a step, with GS_BENCH_EXTRA's modes),
#                       noreadback (host issue time only: no sync in a step),
#                       branchlate (decode --branch-late: steps alike but for their
#                       last launches, with and without GRAPHSHIM_SHARE),
#                       arm, arm1 (short tiny runs under each GRAPHSHIM_BUILD_SCHED,
#                       on two cores and on one: how long arming blocks a launch)
#                       (default: all but noreadback).  passthru: nrepeat --direct,
#                       graphshim's cost per passed-through launch within one process
#   GS_BENCH_HOSTWORK   hostwork's arguments (default --steps 200)
#   GS_BENCH_FWSTEP     fwstep's arguments, for fwstep and fwstatic (default --tokens 200)
#   GS_BENCH_NREPEAT_MODES  nrepeat's modes (default "eager graphshim"; also
#                       shimoff shimring256 shimring16 shimnoperiod shimnospec shimwarm
#                       preload (an empty library preloaded: the baseline):
#                       where pass-through time goes)
#   GS_BENCH_BEFORE_LIB another build of libgraphshim.so (all.sh sets it from
#                       .gpucarry/before.tar): the mode `before` preloads it,
#                       and passthru runs it by default
#   GS_BENCH_EXTRA      modes added to tiny's, decode's and fwstep's (e.g. "shimnormal";
#                       "shimdp": GRAPHSHIM_DEVICE_PATCH=1; "shimhostp": =0)
#   GS_BENCH_TINY       tiny's arguments (default --steps 1000)
#   GS_BENCH_DECODE     decode's arguments (default --steps 300)
#   GS_BENCH_PY         decode.py's arguments (default --tokens 100 --rounds 2)
#   GS_BENCH_PY_ROUNDS  rounds of the PyTorch workload (default 5: it starts slowly)
#   GS_BENCH_PY_MODES   its modes (default "eager graphshim shimnotail")
#   GS_BENCH_TITLE      the table's title
#   GS_PIN              prefix of every run (default "taskset -c 2,3": two cores, so graphshim's builder thread has one; "" for none)
#   GS_NO_GPU_OK=1      run even when nvidia-smi sees no GPU (simulator)
#   GS_TABLE            also write the table to this file
# and those of common.sh (GS_BUILD, GS_LIB, GS_WORK...).
set -u
. "$(dirname "$0")/common.sh"

if [ "${GS_NO_GPU_OK:-0}" != 1 ] && ! gs_gpu_present; then
	echo "bench: no GPU (nvidia-smi -L found none): skipped"
	exit 77
fi
if [ ! -f "$GS_LIB" ]; then
	echo "bench: $GS_LIB not found: build first (make -j)"
	exit 99
fi

ROUNDS=${GS_BENCH_ROUNDS:-10}
# Every run on the same core (GS_PIN="" to let the scheduler choose): one
# PyTorch process to the next varied 2x in time per token unpinned.
CORES=$([ "$(nproc)" -ge 4 ] && echo 2,3 || echo 0)
PIN=${GS_PIN-$(command -v taskset >/dev/null 2>&1 && [ "$CORES" != 0 ] && echo "taskset -c $CORES")}
# One core, for the arm1 workload: the first of those two (CPU 0 on a small machine).
PIN1="taskset -c ${CORES%%,*}"
PYROUNDS=${GS_BENCH_PY_ROUNDS:-5}
WORKLOADS=${GS_BENCH_WORKLOADS:-tiny decode nrepeat passthru passlegacy hostwork fwstep python}
TITLE=${GS_BENCH_TITLE:-"bench on $(nvidia-smi -L 2>/dev/null | head -n 1 | sed 's/ (UUID.*//')"}
FAILS=0
ROWS=""
NOTES=""

# bench_one NAME ROUNDS MODES CMD: run and tabulate one workload.
bench_one() {
	local name=$1 rounds=$2 modes=$3 cmd=$4
	local -a ml=($modes)
	local n=${#ml[@]} r i m w ref="" same=yes
	w=$GS_WORK/bench-$name
	rm -f "$w".*
	# "preload": an empty library preloaded, the baseline of what any
	# LD_PRELOAD costs (process layout), to read hooks-only and graphshim against
	case " $modes " in *" preload "*)
		echo 'int gs_bench_empty;' >"$GS_WORK/empty.c"
		${CC:-cc} -shared -fPIC -o "$GS_WORK/libempty.so" "$GS_WORK/empty.c" || return 1 ;;
	esac
	for ((r = 0; r < rounds; r++)); do
		for ((i = 0; i < n; i++)); do
			m=${ml[$(((i + r) % n))]}
			local out=$w.$m.$r.out log=$w.$m.$r.log rc
			# Every graphshim run writes its statistics (arming, coverage).
			export GRAPHSHIM_STATS=$w.$m.$r.json GRAPHSHIM_OVERWRITE=1
			case $m in
			eager) $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			graphshim) LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			# the builder thread's scheduling policy (GRAPHSHIM_BUILD_SCHED)
			shimnormal | shimbatch | shimidle) GRAPHSHIM_BUILD_SCHED=${m#shim} \
				LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			# graphshim with the gate off: every armed sequence replays
			shimreplay) GRAPHSHIM_GATE=replay LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			# where pass-through time goes: hooks only (engine off), a
			# short history (a 257-record ring), no period detection
			shimoff) GRAPHSHIM_ENABLE=0 LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			shimring256) GRAPHSHIM_MAX_SEQ=256 LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			shimring16) GRAPHSHIM_MAX_SEQ=16 LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			shimnospec) GRAPHSHIM_SPECULATE=0 LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			preload) LD_PRELOAD=$GS_WORK/libempty.so $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			before) LD_PRELOAD=$GS_BENCH_BEFORE_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			# the recorded pass-through: streams never go cold
			shimwarm) GRAPHSHIM_COLD_AFTER=0 LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			shimnoperiod) GRAPHSHIM_PERIOD=0 LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			# graphshim holding every launch alike steps share until one is left
			shimnoshare) GRAPHSHIM_SHARE=0 LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			# graphshim with the chunk plan of a fast host (no shrinking tail)
			shimnotail) GRAPHSHIM_HOST_BOUND_US=1000000 LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			# graph nodes patched on the GPU (cu_devupd.c)
			shimdp) GRAPHSHIM_DEVICE_PATCH=1 LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			# and from the host only
			shimhostp) GRAPHSHIM_DEVICE_PATCH=0 LD_PRELOAD=$GS_LIB $PIN $cmd --time --out "$out" >"$log" 2>&1 ;;
			graph) $PIN $cmd --time --explicit-graph --out "$out" >"$log" 2>&1 ;;
			esac
			rc=$?
			unset GRAPHSHIM_STATS GRAPHSHIM_OVERWRITE
			if [ $rc -ne 0 ]; then
				echo "bench: $name $m round $r failed (rc=$rc): $log"
				tail -n 5 "$log" | sed 's/^/    /'
				same=no
				continue
			fi
			gs_field median_us "$log" >>"$w.$m.times"
			gs_field max_us "$log" >>"$w.$m.maxstep"
			# nrepeat: the host time of a launch call, apart from the GPU's
			local lns
			lns=$(gs_field launch_ns "$log")
			[ -z "$lns" ] || echo "$lns" >>"$w.$m.lns"
			# nrepeat --direct: what the preloaded entry point adds, in-process
			lns=$(gs_field added_ns "$log")
			[ -z "$lns" ] || echo "$lns" >>"$w.$m.added"
			[ -z "$ref" ] && ref=$out
			if ! cmp -s "$ref" "$out"; then
				echo "bench: $name $m round $r: output differs from $ref"
				same=no
			elif [ "$out" != "$ref" ]; then
				rm -f "$out" # decode's outputs are tens of MB a run
			fi
		done
	done
	local e g x
	e=$(gs_median <"$w.eager.times" 2>/dev/null || echo -)
	g=$(gs_median <"$w.graphshim.times" 2>/dev/null || echo -)
	x=-
	case " $modes " in *" graph "*) x=$(gs_median <"$w.graph.times" 2>/dev/null || echo -) ;; esac
	[ $same = yes ] || FAILS=$((FAILS + 1))
	ROWS="$ROWS$(printf '%-14s %7s %10s %10s %10s %9s %9s %9s  %s' "$name" "$rounds" "$e" "$g" "$x" \
		"$(gs_ratio "$e" "$g")" "$(gs_ratio "$e" "$x")" "$(gs_ratio "$x" "$g")" "$same")
"
	echo "bench: $name: eager ${e}us graphshim ${g}us graph ${x}us (medians of $rounds rounds)"
	# The gate's choices in graphshim's last round: per sequence of 4+
	# launches, its length, choice and the two medians it compared.
	local js
	js=$(ls -t "$w".graphshim.*.json 2>/dev/null | head -n 1)
	if [ -n "$js" ]; then
		NOTES="$NOTES$name: gate (last round): $(python3 - "$js" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["counters"]
seqs = sorted((q for q in d["sequences"] if q["length"] >= 4 and q["gate"] != "none"),
              key=lambda q: -q["length"] * max(q["replays"] + q["eager_passes"], 1))[:3]
print("decisions %d (eager %d);" % (c.get("gate_decisions", 0), c.get("gate_eager", 0)),
      "; ".join("%d launches: %s, eager %.1f us / replay %.1f us" %
                (q["length"], q["gate"], q["eager_us"], q["replay_us"]) if q["gate_trials"] else
                "%d launches: %s, not timed" % (q["length"], q["gate"]) for q in seqs) or "no sequence")
PY
)
"
	fi
	# Host time per launch call in each mode, and what it adds to eager's.
	if [ -f "$w.eager.lns" ]; then
		local le lm parts=""
		le=$(gs_median <"$w.eager.lns")
		for m in "${ml[@]}"; do
			lm=$(gs_median <"$w.$m.lns" 2>/dev/null || echo -)
			parts="$parts${parts:+; }$m $lm ns"
			[ "$m" = eager ] || [ "$lm" = - ] ||
				parts="$parts ($(awk "BEGIN { printf \"%+.1f\", $lm - $le }"))"
		done
		NOTES="$NOTES$name: host time per launch call (median of per-step issue time / launches): $parts
"
	fi
	# nrepeat --direct: per launch, the linked cuLaunchKernel minus the
	# driver's own, step by step in one process (eager: both are the driver's).
	if [ -f "$w.graphshim.added" ]; then
		local parts=""
		for m in "${ml[@]}"; do
			[ "$m" != eager ] && [ -f "$w.$m.added" ] || continue
			parts="$parts${parts:+; }$m $(gs_median <"$w.$m.added") ns (rounds $(sort -g "$w.$m.added" | head -n 1) to $(sort -g "$w.$m.added" | tail -n 1))"
		done
		NOTES="$NOTES$name: in one process, cuLaunchKernel as linked minus the driver's own entry point, per launch (median over rounds of each run's median step difference): $parts; eager, both the driver (the method's noise): $(gs_median <"$w.eager.added" 2>/dev/null || echo -) ns
"
	fi
	# Each mode's speed-up over eager with a bootstrap 95% interval (and
	# graphshim's over an empty preload, the same process layout without
	# its code): what the medians can and cannot tell apart.
	if [ "$rounds" -ge 5 ]; then
		local parts="" ci
		for m in "${ml[@]}"; do
			[ "$m" != eager ] || continue
			ci=$(gs_interval "$w.eager.times" "$w.$m.times")
			[ "$ci" = - ] || parts="$parts${parts:+; }$m $ci"
		done
		case " $modes " in *" preload "*)
			ci=$(gs_interval "$w.preload.times" "$w.graphshim.times")
			[ "$ci" = - ] || parts="$parts; graphshim over preload $ci" ;;
		esac
		[ -z "$parts" ] || NOTES="$NOTES$name: speed-up over eager, bootstrap 95% interval: $parts
"
	fi
	# Per mode, over every run: the longest a launch call spent arming a
	# sequence (the target: at most 100 us), how many runs exceeded that,
	# in how many the scheduler took the thread's CPU while it armed, the
	# longest single step, and the median share of launches replayed.
	for m in "${ml[@]}"; do
		ls "$w".$m.*.json >/dev/null 2>&1 || continue
		NOTES="$NOTES$name: $m: $("$GS_PY" - "$w.$m.maxstep" "$w".$m.*.json <<'PY'
import json, statistics, sys
arm, pre, cov = [], 0, []
for f in sys.argv[2:]:
    try:
        c = json.load(open(f))["counters"]
    except Exception:
        continue
    arm.append(c.get("arm_max_ns", 0) / 1e3)
    pre += c.get("arm_preempted", 0) > 0
    cov.append(c["replayed"] / c["launches"] if c.get("launches") else 0.0)
steps = [float(x) for x in open(sys.argv[1]) if x.strip()]
print("arming at most %.1f us (runs over 100 us: %d of %d; preempted while arming: %d); "
      "longest step %s us; replayed %.3f (median)" %
      (max(arm), sum(a > 100 for a in arm), len(arm), pre,
       "%.0f" % max(steps) if steps else "-", statistics.median(cov)) if arm else "no statistics")
PY
)
"
	done
	# The extra graphshim variants, each a line under the table.
	local v t
	for v in "shimreplay:with GRAPHSHIM_GATE=replay" "shimnotail:without the shrinking tail" \
		"shimoff:hooks only (GRAPHSHIM_ENABLE=0)" "shimring256:with GRAPHSHIM_MAX_SEQ=256" \
		"shimnoperiod:with GRAPHSHIM_PERIOD=0" "shimring16:with GRAPHSHIM_MAX_SEQ=16" \
		"shimnospec:with GRAPHSHIM_SPECULATE=0" "shimwarm:never cold (GRAPHSHIM_COLD_AFTER=0)" \
		"preload:replaced by an empty preloaded library" "before:of the earlier build (GS_BENCH_BEFORE_LIB)" \
		"shimnormal:with GRAPHSHIM_BUILD_SCHED=normal" "shimbatch:with GRAPHSHIM_BUILD_SCHED=batch" \
		"shimidle:with GRAPHSHIM_BUILD_SCHED=idle" "shimnoshare:with GRAPHSHIM_SHARE=0" \
		"shimdp:with GRAPHSHIM_DEVICE_PATCH=1" "shimhostp:with GRAPHSHIM_DEVICE_PATCH=0"; do
		case " $modes " in *" ${v%%:*} "*) ;; *) continue ;; esac
		t=$(gs_median <"$w.${v%%:*}.times" 2>/dev/null || echo -)
		NOTES="$NOTES$(printf '%s: graphshim %s %sus, speedup %s (interleaved in the same rounds)' \
			"$name" "${v#*:}" "$t" "$(gs_ratio "$e" "$t")")
"
	done
}

print_table() {
	{
		echo
		echo "== $TITLE: median step time (us), $ROUNDS rounds interleaved =="
		printf '%-14s %7s %10s %10s %10s %9s %9s %9s  %s\n' workload rounds eager graphshim graph \
			"speedup" "graph_x" "shim/grph" identical
		printf '%s' "$ROWS"
		printf '%s' "${NOTES:-}"
		echo "speedup = eager/graphshim; graph_x = eager/explicit graph; shim/grph = graph/graphshim"
		echo "(1.00 = graphshim as fast as the hand-written graph)"
	} | tee ${GS_TABLE:+-a "$GS_TABLE"}
}
# Cut short (all.sh's time limit): still show the rows finished.
trap 'echo "bench: interrupted"; FAILS=$((FAILS + 1)); print_table; exit 124' TERM INT

for wl in $WORKLOADS; do
	case $wl in
	tiny) bench_one tiny "$ROUNDS" "eager graphshim graph${GS_BENCH_EXTRA:+ $GS_BENCH_EXTRA}" \
		"$GS_KBIN/tiny ${GS_BENCH_TINY:---steps 1000}" ;;
	decode) bench_one decode "$ROUNDS" "eager graphshim graph${GS_BENCH_EXTRA:+ $GS_BENCH_EXTRA}" \
		"$GS_KBIN/decode ${GS_BENCH_DECODE:---steps 300}" ;;
	nrepeat) bench_one nrepeat "$ROUNDS" "${GS_BENCH_NREPEAT_MODES:-eager graphshim}" \
		"$GS_KBIN/nrepeat ${GS_BENCH_NREPEAT:---steps 500}" ;;
	# nrepeat issuing each step twice, through the linked cuLaunchKernel
	# and the driver's own: graphshim's pass-through cost without the
	# process-to-process spread (kernels/nrepeat.c)
	# one kernel whose grid and arguments change on every launch: the
	# structure repeats, so graphshim replays it with every node patched
	onekernel) bench_one nrepeat-one "$ROUNDS" "eager graphshim${GS_BENCH_BEFORE_LIB:+ before}" \
		"$GS_KBIN/nrepeat --one-kernel ${GS_BENCH_NREPEAT:---steps 500}" ;;
	# the same with K launches a step (K nodes patched every launch), and
	# GS_BENCH_EXTRA's modes: where patches on the GPU begin to pay
	onekernel[0-9]*) bench_one "nrepeat-one${wl#onekernel}" "$ROUNDS" "eager graphshim${GS_BENCH_EXTRA:+ $GS_BENCH_EXTRA}" \
		"$GS_KBIN/nrepeat --one-kernel --kernels ${wl#onekernel} ${GS_BENCH_NREPEAT:---steps 500}" ;;
	passthru) bench_one passthru "$ROUNDS" "eager graphshim${GS_BENCH_BEFORE_LIB:+ before}" \
		"$GS_KBIN/nrepeat --direct ${GS_BENCH_NREPEAT:---steps 500}" ;;
	# the same on the legacy default stream (the lane asks for the context)
	passlegacy) bench_one passlegacy "$ROUNDS" "eager graphshim${GS_BENCH_BEFORE_LIB:+ before}" \
		"$GS_KBIN/nrepeat --direct --legacy ${GS_BENCH_NREPEAT:---steps 500}" ;;
	hostwork) bench_one hostwork "$ROUNDS" "eager graphshim graph shimreplay" \
		"$GS_KBIN/hostwork ${GS_BENCH_HOSTWORK:---steps 200}" ;;
	# A step issued as a framework issues it (kernels/README.md); its static
	# form (no growth, rotation, events or read-backs) has a hand-written graph.
	fwstep) bench_one fwstep "$ROUNDS" "eager graphshim${GS_BENCH_EXTRA:+ $GS_BENCH_EXTRA}" \
		"$GS_KBIN/fwstep ${GS_BENCH_FWSTEP:---tokens 200}" ;;
	fwstatic) bench_one fwstatic "$ROUNDS" "eager graphshim graph" \
		"$GS_KBIN/fwstep --no-grow --rotate 1 --no-events --readback-every 0 ${GS_BENCH_FWSTEP:---tokens 200}" ;;
	# Arming and the builder's policy: many short runs of tiny (a build a
	# run), on two cores and on one, where the builder shares the
	# application's CPU (GS_BENCH_ARM: tiny's arguments)
	arm) bench_one arm "$ROUNDS" "eager shimnormal shimbatch shimidle" \
		"$GS_KBIN/tiny ${GS_BENCH_ARM:---steps 30}" ;;
	arm1) PIN=$PIN1 bench_one arm1 "$ROUNDS" "eager shimnormal shimbatch shimidle" \
		"$GS_KBIN/tiny ${GS_BENCH_ARM:---steps 30}" ;;
	# two steps alike but for their last launches (decode --branch-late),
	# with and without the chunks they share going while both match
	branchlate) bench_one branch-late "$ROUNDS" "eager graphshim graph shimnoshare" \
		"$GS_KBIN/decode --branch-late ${GS_BENCH_DECODE:---steps 300}" ;;
	noreadback) bench_one decode-noread "$ROUNDS" "eager graphshim graph" \
		"$GS_KBIN/decode --no-readback ${GS_BENCH_DECODE:---steps 300}" ;;
	python)
		if gs_torch_present; then
			bench_one python-decode "$PYROUNDS" "${GS_BENCH_PY_MODES:-eager graphshim shimnotail}" \
				"$GS_PY $GS_SRC/kernels/python/decode.py ${GS_BENCH_PY:---tokens 100 --rounds 2}"
		else
			echo "bench: PyTorch with a GPU not found: python-decode skipped"
		fi ;;
	*) echo "bench: unknown workload $wl"; exit 1 ;;
	esac
done

print_table
[ $FAILS -eq 0 ]
