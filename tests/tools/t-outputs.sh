#!/bin/sh
# The statistics and the trace end to end, on the CPU simulator: what a CI
# gate depends on (issue 19).
#  1. a stale file never passes for this run's: `graphshim run` refuses it
#     before the program starts, --overwrite replaces it; the library
#     writes beside a file it may not replace;
#  2. `trace summarize` and the statistics agree on every figure they share,
#     for every workload of kernels/ (`trace summarize --check`);
#  3. SIGINT and SIGTERM leave both files whole, chained with the
#     program's own handlers; `graphshim run` passes signals on;
#  4. several processes under one name: each keeps its file, noted in the
#     first, read together; never a broken file, --overwrite or not;
#  5. a longer run is no regression (steps, given or estimated);
#  6. compare says when a coverage change comes from the gate;
#     docs/tools.md's CI example gives the same figures every time;
#  7. relative names, --disable, a process with no GPU call, write failures
#     with their reason, a misspelt variable;
#  9. kernels by name in the trace and the summary.
# (8, secure mode and GRAPHSHIM_HIP_LIBRARY: tests/reliability/t-secure.sh.)
set -u
fw=0
# Paths, the preload line (a sanitizer's runtime first), $tmp, ok/bad/finish.
. "${top_srcdir:-.}/tests/reliability/r_lib.sh"
k="$b/kernels"
GS="$b/tools/graphshim"
app="$b/tests/tools/sig_app"
for f in "$GS" "$app" "$k/decode" "$k/tiny" "$k/fwstep" "$k/hostwork" "$k/nrepeat" "$k/twodev"; do
	[ -e "$f" ] || { echo "SKIP: $f not built"; exit 77; }
done
export LD_LIBRARY_PATH="$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# `graphshim run` puts the library first in LD_PRELOAD, where a sanitized
# library cannot go (its runtime must be first): its cases are left to the
# plain build.
runs_ok=true
$sanitized && runs_ok=false
# jv FILE KEY: a top-level string or number of a statistics file.
jv() { sed -n "s/^  \"$2\": \"*\([^\",]*\)\"*,*\$/\1/p" "$1" | head -n 1; }
# counter FILE NAME
counter() { sed -n "s/^    \"$2\": \([0-9]*\).*/\1/p" "$1" | head -n 1; }
# shim ENV... -- PROGRAM ARGS: PROGRAM with graphshim preloaded, these
# variables set (r_lib.sh's shim, with variables).
shim() {
	envs=""
	while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
	shift
	timeout 120 env $envs LD_PRELOAD="$PRELOAD" "$@"
}
# agree NAME TRACE STATS: trace summarize --check passes.
agree() {
	if "$GS" trace summarize "$2" --check "$3" >"$tmp/sum.txt" 2>&1; then
		ok "$1: $(tail -n 1 "$tmp/sum.txt")"
	else
		bad "$1: the trace and the statistics disagree"
		grep -e DIFFERS -e graphshim: -e check "$tmp/sum.txt"
	fi
}
# wait_ready FILE: wait up to 60 s for "ready" in a program's output.
wait_ready() {
	i=0
	while ! grep -q '^ready' "$1" 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
# sig_run MODE SIG [VAR=VALUE...]: run sig_app MODE under graphshim with
# stats and trace (and these variables), send SIG once it is stepping;
# leaves $status, $tmp/k.json, $tmp/kt.json.
sig_run() {
	m=$1 s=$2
	shift 2
	rm -f "$tmp"/k.json "$tmp"/kt.json "$tmp"/k*.part "$tmp/app.out"
	env "$@" GRAPHSHIM_STATS="$tmp/k.json" GRAPHSHIM_TRACE="$tmp/kt.json" LD_PRELOAD="$PRELOAD" \
		"$app" "$m" >"$tmp/app.out" 2>"$tmp/app.err" &
	pid=$!
	wait_ready "$tmp/app.out"
	kill -s "$s" $pid
	wait $pid
	status=$?
}

# --- 2. the trace and the statistics agree, workload by workload -----------
# The default gate (auto) too: its eager passes are traced ("gated").
D="$k/decode --layers 2 --dim 64 --ctx 64 --vocab 256 --steps 150"
F="$k/fwstep --layers 4 --dim 32 --ctx 64 --tokens 60"
i=0
while read -r name envs args; do
	i=$((i + 1))
	[ "$envs" = - ] && envs=
	rm -f "$tmp/s$i.json" "$tmp/t$i.json"
	# shellcheck disable=SC2086
	shim GRAPHSHIM_STATS="$tmp/s$i.json" GRAPHSHIM_TRACE="$tmp/t$i.json" $envs -- $args \
		--out "$tmp/o.bin" >"$tmp/w.log" 2>&1 || { bad "$name: the run failed"; cat "$tmp/w.log"; continue; }
	agree "$name" "$tmp/t$i.json" "$tmp/s$i.json"
	[ "$name" = fwstep-variants ] && fw=$i
done <<EOF
tiny - $k/tiny --kernels 64 --steps 150
tiny-legacy-stream - $k/tiny --kernels 64 --steps 150 --stream0
tiny-gate-replay GRAPHSHIM_GATE=replay $k/tiny --kernels 64 --steps 150
tiny-gate-eager GRAPHSHIM_GATE=eager $k/tiny --kernels 64 --steps 150
decode - $D
decode-async-build GRAPHSHIM_ASYNC_BUILD=1 $D
decode-no-readback GRAPHSHIM_PERIOD_AFTER=256 $D --no-readback
decode-async-readback - $D --readback async
decode-pos-arg - $D --pos-arg
decode-pingpong - $D --pingpong
decode-two-streams - $D --two-streams
decode-copies - $D --copies
decode-branch - $D --branch
decode-threads - $D --threads 2
fwstep - $F
fwstep-variants GRAPHSHIM_GATE=replay GRAPHSHIM_ASYNC_BUILD=0 $F
fwstep-two-streams - $F --two-streams
fwstep-kv-copy - $F --kv-copy
fwstep-static - $F --no-grow --rotate 1 --no-events --readback-every 0
hostwork - $k/hostwork --steps 40
nrepeat - $k/nrepeat --steps 40
nrepeat-one-kernel - $k/nrepeat --steps 40 --one-kernel
twodev - $k/twodev --steps 40
EOF
# fwstep's layers rotate their weights: variants (pinned: the gate could
# choose eager on a busy machine), checked above with the rest.
if [ "$(counter "$tmp/s$fw.json" variants)" -gt 0 ] && [ "$(counter "$tmp/s$fw.json" variant_replays)" -gt 0 ] &&
   grep -q '"name":"variant"' "$tmp/t$fw.json" && grep -q '"variant":true' "$tmp/t$fw.json"; then
	ok "fwstep-variants: $(counter "$tmp/s$fw.json" variants) variants, $(counter "$tmp/s$fw.json" variant_replays) replays of one, in the trace too"
else
	bad "fwstep built no variant, or the trace does not show them"
fi
# A trace not closed, or one that dropped events, cannot agree: said so.
shim GRAPHSHIM_STATS="$tmp/cap.json" GRAPHSHIM_TRACE="$tmp/cap-t.json" GRAPHSHIM_TRACE_MAX=100 -- \
	$D --out "$tmp/o.bin" >/dev/null 2>&1
if "$GS" trace summarize "$tmp/cap-t.json" --check "$tmp/cap.json" >"$tmp/sum.txt" 2>&1; then
	bad "a trace that dropped events at its cap passed --check"
else
	ok "a trace that dropped events is not checked: $(grep -o 'dropped [0-9]* events at its cap' "$tmp/sum.txt")"
fi

# --- 9. kernels by name -----------------------------------------------------
if grep -q '"name":"add_scalar","cat":"launch"' "$tmp/t1.json" 2>/dev/null ||
   grep -q '"name":"k_' "$tmp/t5.json"; then
	ok "launch events are named after their kernels ($(grep -o '"kernel":"[a-z_]*"' "$tmp/t5.json" | sort -u | head -n 3 | tr '\n' ' '))"
else
	bad "launch events are not named after their kernels"
fi
"$GS" trace summarize "$tmp/t5.json" >"$tmp/sum.txt" 2>&1
if grep -q 'built .* k_[a-z_]*$' "$tmp/sum.txt"; then
	ok "the summary names each sequence's first kernel"
else
	bad "the summary names no kernel"; sed -n '/^sequences/,/^mismatch/p' "$tmp/sum.txt"
fi

# A mismatch names the kernel that broke the sequence (decode's branch
# step swaps a kernel; pinned, so that the sequence is armed by then).
shim GRAPHSHIM_GATE=replay GRAPHSHIM_ASYNC_BUILD=0 GRAPHSHIM_TRACE="$tmp/br.json" -- $D --branch \
	--out "$tmp/o.bin" >/dev/null 2>&1
"$GS" trace summarize "$tmp/br.json" >"$tmp/sum.txt" 2>&1
if grep -q '"name":"mismatch".*"kernel":"k_[a-z_]*"' "$tmp/br.json" &&
   grep -q '^  STRUCTURE .* k_[a-z_]* ([1-9][0-9]*)$' "$tmp/sum.txt"; then
	ok "a mismatch names its kernel: $(grep '^  STRUCTURE' "$tmp/sum.txt" | tr -s ' ')"
else
	bad "mismatches name no kernel"; sed -n '/^mismatch/,/^flush/p' "$tmp/sum.txt"
fi
# A CUkernel (a library's kernel, as cuBLAS and Triton launch them) is
# named by cuKernelGetName, a CUfunction by cuFuncGetName.  Built in the
# call that completes the learning: a background build may not finish in
# 40 steps under a sanitizer on a busy machine (CI's ASan run once ended
# with the sequence learned and never built).
rm -f "$tmp/lib.json" "$tmp/libt.json"
shim GRAPHSHIM_ASYNC_BUILD=0 GRAPHSHIM_STATS="$tmp/lib.json" GRAPHSHIM_TRACE="$tmp/libt.json" -- \
	"$app" library 40 >/dev/null 2>&1
"$GS" trace summarize "$tmp/libt.json" >"$tmp/sum.txt" 2>&1
if grep -q '"name":"add_scalar","cat":"launch"' "$tmp/libt.json" &&
   grep -q '"name":"built".*"kernel":"add_scalar"' "$tmp/libt.json" &&
   grep -q 'built .* add_scalar$' "$tmp/sum.txt"; then
	ok "a CUkernel's launches are named after it, and so is its sequence"
	agree "CUkernel" "$tmp/libt.json" "$tmp/lib.json"
else
	bad "a CUkernel is not named"; grep -m 3 -e '"cat":"launch"' -e '"name":"built"' "$tmp/libt.json"
	sed -n '/^sequences/,/^mismatch/p' "$tmp/sum.txt"
fi

# The HIP backend (on the simulator's libamdhip64): the same agreement, and
# kernels named from the code object's metadata.
hipsim="$b/tests/sim/hiplib"
if [ -e "$hipsim/libamdhip64.so.5" ] && [ -x "$k/tiny-hip" ] && [ -x "$k/decode-hip" ] &&
   [ -x "$k/fwstep-hip" ] && [ -x "$k/hostwork-hip" ] && [ -x "$k/nrepeat-hip" ]; then
	for w in "tiny-hip --kernels 32 --steps 100" "decode-hip --layers 2 --dim 64 --ctx 64 --vocab 256 --steps 100" \
		"fwstep-hip --layers 4 --dim 32 --ctx 64 --tokens 60" "hostwork-hip --steps 40" "nrepeat-hip --steps 40"; do
		rm -f "$tmp/h.json" "$tmp/ht.json"
		# shellcheck disable=SC2086
		LD_LIBRARY_PATH="$hipsim" shim GRAPHSHIM_STATS="$tmp/h.json" GRAPHSHIM_TRACE="$tmp/ht.json" -- \
			$k/$w --out "$tmp/o.bin" >/dev/null 2>&1 || { bad "${w%% *}: the run failed"; continue; }
		agree "${w%% *}" "$tmp/ht.json" "$tmp/h.json"
		grep -q '"kernel":"k_' "$tmp/ht.json" && ok "${w%% *}: kernels named from the code object" ||
			bad "${w%% *}: no kernel names in the trace"
	done
else
	echo "SKIP the HIP backend: the HIP simulator or the -hip workloads are not built"
fi

# --- 3. signals --------------------------------------------------------------
for sig in TERM INT; do
	sig_run plain $sig
	case $sig in TERM) want=143 ;; INT) want=130 ;; esac
	by=$(jv "$tmp/k.json" ended_by)
	if [ "$status" -ne "$want" ] || [ "$by" != "SIG$sig" ]; then
		bad "SIG$sig, no handler: status $status (want $want), ended_by '$by'"; cat "$tmp/app.err"
	elif "$GS" trace summarize "$tmp/kt.json" >"$tmp/sum.txt" 2>&1 &&
	     ! grep -q "not closed" "$tmp/sum.txt" && [ ! -e "$tmp/kt.json.$pid.part" ]; then
		ok "SIG$sig, no handler: statistics and a closed trace written, then ended by SIG$sig ($status)"
		agree "SIG$sig" "$tmp/kt.json" "$tmp/k.json"
	else
		bad "SIG$sig: the trace was not closed"; head -n 8 "$tmp/sum.txt"
	fi
done
# A signal that comes while the program is inside a launch (slowed and
# submitted eagerly, so that it mostly is): the stream it holds is waited
# for, and its sequence is in the statistics (not "sequences_truncated").
trunc=0
for try in 1 2 3 4 5; do
	sig_run plain TERM GRAPHSHIM_GATE=eager GS_SIM_LAUNCH_US=200
	grep -q '"sequences_truncated": false' "$tmp/k.json" || trunc=$((trunc + 1))
done
if [ $trunc -eq 0 ]; then
	ok "SIGTERM inside a launch, 5 times: every stream's sequences in the statistics"
else
	bad "SIGTERM inside a launch: $trunc of 5 statistics files without the interrupted stream's sequences"
fi
for mode in before after signal; do
	sig_run $mode INT
	by=$(jv "$tmp/k.json" ended_by)
	if [ "$status" -eq 0 ] && grep -q '^handled=2$' "$tmp/app.out" && [ "$by" = exit ] &&
	   { [ $mode != after ] || grep -q '^virtual=ok$' "$tmp/app.out"; }; then
		ok "SIGINT, handler installed $mode: the program's handler ran, files written at its exit"
	else
		bad "SIGINT, handler $mode: status $status, ended_by '$by', output: $(tr '\n' ' ' <"$tmp/app.out")"
		cat "$tmp/app.err"
	fi
done
sig_run python INT
by=$(jv "$tmp/k.json" ended_by)
if [ "$status" -eq 130 ] && [ "$by" = SIGINT ] && grep -q '^handled=2$' "$tmp/app.out"; then
	ok "SIGINT handled, then SIG_DFL put back and raised again (as CPython does): files written"
else
	bad "python-style SIGINT: status $status, ended_by '$by'"; cat "$tmp/app.err"
fi
if $runs_ok; then
	# graphshim run passes the time-out's signal on (--foreground: to
	# graphshim run alone, as a CI runner that signals the command it
	# started does; -k: a run that passes nothing on is killed, not waited
	# for).  Launches are slowed (a simulated launch cost), so the trace
	# stays under its cap.
	rm -f "$tmp"/r.json "$tmp"/rt.json
	GS_SIM_LAUNCH_US=50 timeout --foreground -k 20 -s TERM 4 "$GS" run --stats "$tmp/r.json" --trace "$tmp/rt.json" -- "$app" plain \
		>/dev/null 2>"$tmp/run.err"
	status=$?
	if [ "$status" -eq 124 ] && [ "$(jv "$tmp/r.json" ended_by)" = SIGTERM ] &&
	   [ "$(counter "$tmp/r.json" launches)" -gt 0 ]; then
		ok "graphshim run under a time-out: SIGTERM passed on, files written"
		agree "time-out" "$tmp/rt.json" "$tmp/r.json"
	else
		bad "graphshim run under a time-out: status $status, ended_by '$(jv "$tmp/r.json" ended_by)'"
		cat "$tmp/run.err"
	fi
fi

# --- 1. a stale file ----------------------------------------------------------
if $runs_ok; then
	cd "$tmp" || exit 99
	shim GRAPHSHIM_STATS=stale.json -- "$app" plain 40 >/dev/null 2>&1
	cp stale.json stale.orig
	"$GS" run --stats stale.json -- sh -c "touch ran; exec '$app' plain 40" >/dev/null 2>"$tmp/run.err"
	status=$?
	if [ "$status" -eq 2 ] && [ ! -e ran ] && cmp -s stale.json stale.orig &&
	   grep -q "stale.json: exists" "$tmp/run.err"; then
		ok "stale file: refused before the program ran: $(cat "$tmp/run.err")"
	else
		bad "stale file: status $status, ran: $([ -e ran ] && echo yes || echo no)"; cat "$tmp/run.err"
	fi
	"$GS" run --overwrite --stats stale.json -- "$app" plain 60 >/dev/null 2>"$tmp/run.err"
	if [ $? -eq 0 ] && ! cmp -s stale.json stale.orig && [ "$(counter stale.json launches)" = 480 ]; then
		ok "stale file: --overwrite replaced it with this run's (480 launches)"
	else
		bad "stale file: --overwrite"; cat "$tmp/run.err"
	fi
	cd - >/dev/null || exit 99
fi
# The library alone, without leave to replace it: kept, this run's beside it.
echo precious >"$tmp/kept.json"
shim GRAPHSHIM_STATS="$tmp/kept.json" -- "$app" plain 30 >/dev/null 2>"$tmp/lib.err"
if [ "$(cat "$tmp/kept.json")" = precious ] && ls "$tmp"/kept.*.json >/dev/null 2>&1 &&
   grep -q "exists and is not from this run" "$tmp/lib.err"; then
	ok "library: a file not of this run kept, the statistics beside it: $(cat "$tmp/lib.err")"
else
	bad "library: an existing file"; cat "$tmp/lib.err"
fi

# --- 4. several processes under one name ------------------------------------
if $runs_ok; then
	for pass in 1 2; do
		ow=; [ $pass = 2 ] && ow=--overwrite
		# shellcheck disable=SC2086
		"$GS" run $ow --stats "$tmp/m.json" --trace "$tmp/mt.json" -- \
			sh -c "'$app' plain 100 & '$app' plain 150; wait" >/dev/null 2>"$tmp/run.err"
		status=$?
		n=$(ls "$tmp"/m.json "$tmp"/m.*.json 2>/dev/null | wc -l)
		nt=$(ls "$tmp"/mt.json "$tmp"/mt.*.json 2>/dev/null | wc -l)
		if [ "$status" -ne 0 ] || [ "$n" -ne 2 ] || [ "$nt" -ne 2 ] ||
		   ! grep -q '"process_files": \["m\.[0-9]*\.json"\]' "$tmp/m.json" ||
		   ! grep -q "of process [0-9]* went to .*m\.[0-9]*\.json" "$tmp/run.err" ||
		   ! grep -q "the statistics of 2 processes" "$tmp/run.err"; then
			bad "two processes (pass $pass${ow:+, $ow}): status $status, $n statistics files, $nt traces"
			cat "$tmp/run.err"; ls "$tmp"
			continue
		fi
		"$GS" compare "$tmp/m.json" "$tmp/m.json" >"$tmp/cmp.txt" 2>&1
		# Steps: the main sequences' sightings in both processes (their ids
		# differ: function handles are per process).
		if grep -q "base: 2 processes" "$tmp/cmp.txt" && grep -q "launches .* 2000 .* 2000" "$tmp/cmp.txt" &&
		   grep -q "steps: 250 and 250, estimated.*in 2 processes" "$tmp/cmp.txt" &&
		   grep -q "launches/step .* 8.0 .* 8.0" "$tmp/cmp.txt"; then
			ok "two processes (pass $pass${ow:+, $ow}): two files, noted, compared together (2000 launches, 250 steps)"
		else
			bad "two processes: compare did not read both"; cat "$tmp/cmp.txt"
		fi
		agree "two processes (pass $pass)" "$tmp/mt.json" "$tmp/m.json"
	done
fi
# With GRAPHSHIM_OVERWRITE=1 and the library alone (the NUL bytes of issue 19).
rm -f "$tmp"/o.json "$tmp"/o.*.json "$tmp"/ot.json "$tmp"/ot.*.json
shim GRAPHSHIM_OVERWRITE=1 GRAPHSHIM_STATS="$tmp/o.json" GRAPHSHIM_TRACE="$tmp/ot.json" -- \
	sh -c "'$app' plain 100 & '$app' plain 120; wait" >/dev/null 2>&1
if [ "$(ls "$tmp"/ot.json "$tmp"/ot.*.json 2>/dev/null | wc -l)" -eq 2 ] &&
   ! grep -q -a -P '\x00' "$tmp"/ot.json "$tmp"/ot.*.json &&
   "$GS" trace summarize "$tmp/ot.json" --check "$tmp/o.json" >"$tmp/sum.txt" 2>&1 &&
   ! grep -q "not closed" "$tmp/sum.txt"; then
	ok "two processes, GRAPHSHIM_OVERWRITE=1: both traces whole and strict, none replaced"
else
	bad "two processes with GRAPHSHIM_OVERWRITE=1"; ls "$tmp"; cat "$tmp/sum.txt"
fi

# --- 5, 6. a longer run; the gate; the CI example ---------------------------
export GRAPHSHIM_ASYNC_BUILD=0
for n in 100 200; do
	shim GRAPHSHIM_GATE=replay GRAPHSHIM_STATS="$tmp/n$n.json" -- \
		$k/decode --layers 2 --dim 64 --ctx 64 --vocab 256 --steps $n >/dev/null 2>&1
	shim GRAPHSHIM_GATE=replay GRAPHSHIM_STEPS=$n GRAPHSHIM_STATS="$tmp/g$n.json" -- \
		$k/decode --layers 2 --dim 64 --ctx 64 --vocab 256 --steps $n >/dev/null 2>&1
done
if "$GS" compare "$tmp/n100.json" "$tmp/n200.json" >"$tmp/cmp.txt" 2>&1 &&
   grep -q "estimated" "$tmp/cmp.txt"; then
	ok "100 vs 200 steps, estimated: $(grep 'launches/step' "$tmp/cmp.txt" | tr -s ' ')"
else
	bad "100 vs 200 steps (estimated) is not ok"; cat "$tmp/cmp.txt"
fi
if "$GS" compare "$tmp/g100.json" "$tmp/g200.json" >"$tmp/cmp.txt" 2>&1 &&
   grep -q 'steps: 100 and 200 ("steps" in the files)' "$tmp/cmp.txt"; then
	ok "100 vs 200 steps, given: $(grep 'launches/step' "$tmp/cmp.txt" | tr -s ' ')"
else
	bad "100 vs 200 steps (given) is not ok"; cat "$tmp/cmp.txt"
fi
shim GRAPHSHIM_GATE=eager GRAPHSHIM_STATS="$tmp/eager.json" -- \
	$k/decode --layers 2 --dim 64 --ctx 64 --vocab 256 --steps 200 >/dev/null 2>&1
"$GS" compare "$tmp/n200.json" "$tmp/eager.json" >"$tmp/cmp.txt" 2>&1
status=$?
if [ $status -eq 1 ] && grep -q "the gate chose eager" "$tmp/cmp.txt" &&
   grep -q "configuration differs: GRAPHSHIM_GATE replay -> eager" "$tmp/cmp.txt"; then
	ok "coverage lost to the gate is named: $(grep '^  coverage' "$tmp/cmp.txt" | tr -s ' ')"
else
	bad "compare does not name the gate (status $status)"; cat "$tmp/cmp.txt"
fi
# The default gate, as a CI run that pins nothing has it: its timed eager
# passes (and an eager choice, if it makes one) lower the coverage, and
# compare says so, with the sequence and the medians behind the choice.
for g in replay auto; do
	shim GRAPHSHIM_GATE=$g GRAPHSHIM_STATS="$tmp/hw-$g.json" -- $k/hostwork --steps 40 >/dev/null 2>&1
done
"$GS" compare "$tmp/hw-replay.json" "$tmp/hw-auto.json" >"$tmp/cmp.txt" 2>&1
status=$?
if [ $status -eq 1 ] && grep -q "coverage .*REGRESSION .*: the gate chose eager" "$tmp/cmp.txt" &&
   grep -q "sequence 0x[0-9a-f]* (8 launches): eager [1-9][0-9.]* us, replay [1-9][0-9.]* us a pass on the GPU\(, [0-9.]* and [0-9.]* us on the host\)\?; [1-9][0-9]* passes eager" "$tmp/cmp.txt" &&
   grep -q "the coverage change comes from the gate's choice" "$tmp/cmp.txt"; then
	ok "the default gate's eager passes are named: $(grep '^    sequence' "$tmp/cmp.txt" | tr -s ' ')"
else
	bad "compare does not explain the default gate's coverage (status $status)"; cat "$tmp/cmp.txt"
fi
unset GRAPHSHIM_ASYNC_BUILD
if $runs_ok; then
	# docs/tools.md, "In CI", with decode as the benchmark, three times.
	first=
	for r in 1 2 3; do
		(
			cd "$tmp" || exit 99
			export GRAPHSHIM_GATE=replay GRAPHSHIM_ASYNC_BUILD=0
			"$GS" run --overwrite --stats new.json --steps 200 -- \
				$k/decode --layers 2 --dim 64 --ctx 64 --vocab 256 --steps 200 >/dev/null 2>&1
		)
		[ -n "$first" ] || { cp "$tmp/new.json" "$tmp/ci-base.json"; first=1; }
		"$GS" compare "$tmp/ci-base.json" "$tmp/new.json" --max-coverage-drop 0.5 >"$tmp/cmp.txt" 2>&1 ||
			{ bad "the CI example, run $r: not ok"; cat "$tmp/cmp.txt"; }
		echo "$(jv "$tmp/new.json" coverage) $(counter "$tmp/new.json" launches)" >>"$tmp/ci.txt"
	done
	if [ "$(sort -u "$tmp/ci.txt" | wc -l)" -eq 1 ]; then
		ok "the CI example gives the same figures three times: $(head -n 1 "$tmp/ci.txt")"
	else
		bad "the CI example's figures vary: $(tr '\n' ' ' <"$tmp/ci.txt")"
	fi
fi

# --- 7. names, disable, no GPU call, reasons, misspelt names ----------------
if $runs_ok; then
	mkdir -p "$tmp/w/sub"
	(cd "$tmp/w" && "$GS" run --stats rel.json -- sh -c "cd sub && exec '$app' plain 30" >/dev/null 2>&1)
	if [ -f "$tmp/w/rel.json" ] && [ ! -e "$tmp/w/sub/rel.json" ]; then
		ok "a relative name is taken where graphshim run started"
	else
		bad "a relative name followed the program"; ls -R "$tmp/w"
	fi
	"$GS" run --disable --stats "$tmp/dis.json" -- "$app" plain 30 >/dev/null 2>"$tmp/run.err"
	if [ ! -e "$tmp/dis.json" ] && grep -q "writes no statistics" "$tmp/run.err"; then
		ok "--disable says it writes nothing"
	else
		bad "--disable"; cat "$tmp/run.err"
	fi
	"$GS" run --stats "$tmp/none.json" -- "$app" nogpu >/dev/null 2>"$tmp/run.err"
	if [ ! -e "$tmp/none.json" ] && grep -q "no process made a GPU call" "$tmp/run.err"; then
		ok "no GPU call: no file, and graphshim run says why"
	else
		bad "no GPU call under graphshim run"; cat "$tmp/run.err"
	fi
fi
shim GRAPHSHIM_STATS="$tmp/q.json" GRAPHSHIM_TRACE="$tmp/qt.json" GRAPHSHIM_SUMMARY=1 -- \
	"$app" nogpu >/dev/null 2>"$tmp/lib.err"
if [ ! -s "$tmp/lib.err" ] && [ -z "$(ls "$tmp"/q.json "$tmp"/q*.part "$tmp"/qt* 2>/dev/null)" ]; then
	ok "no GPU call: the library writes nothing, and says nothing"
else
	bad "no GPU call: $(cat "$tmp/lib.err") $(ls "$tmp"/q* 2>/dev/null)"
fi
shim GRAPHSHIM_STATS=/nonexistent-graphshim-dir/s.json -- "$app" plain 30 >/dev/null 2>"$tmp/lib.err"
if grep -q "cannot write the statistics to /nonexistent-graphshim-dir/s.json: No such file or directory (the directory /nonexistent-graphshim-dir does not exist)" "$tmp/lib.err"; then
	ok "a write failure says why: $(cat "$tmp/lib.err")"
else
	bad "a write failure without its reason: $(cat "$tmp/lib.err")"
fi
shim GRAPHSHIM_STATS="$tmp" -- "$app" plain 30 >/dev/null 2>"$tmp/lib.err"
if grep -q "is a directory" "$tmp/lib.err"; then
	ok "a directory at the name: $(cat "$tmp/lib.err")"
else
	bad "a directory at the name: $(cat "$tmp/lib.err")"
fi
shim GRAPHSHIM_LERN_REPS=3 GRAPHSHIM_STATS="$tmp/typo.json" -- "$app" plain 30 >/dev/null 2>"$tmp/lib.err"
if [ "$(grep -c "GRAPHSHIM_LERN_REPS is not a graphshim variable (did you mean GRAPHSHIM_LEARN_REPS?)" "$tmp/lib.err")" = 1 ]; then
	ok "a misspelt variable is named once: $(cat "$tmp/lib.err")"
else
	bad "a misspelt variable: '$(cat "$tmp/lib.err")'"
fi

[ "$fails" -eq 0 ] && echo "all output checks passed"
finish
