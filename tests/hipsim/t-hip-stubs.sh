#!/bin/sh
# The host-stub path (__hipRegisterFatBinary, __hipRegisterFunction,
# hipLaunchKernel and hipLaunchKernel_spt, __hipUnregisterFatBinary) on the
# CPU simulator's HIP runtime, without and with graphshim (t_hip_stubs.c
# says what each step does).  Every output byte must match, and graphshim's
# statistics must show that it did the work rather than stood aside: the
# four kernels the fat binary's code object declares are sequence elements
# (their layouts come from its AMDGPU metadata), almost all of them are
# replayed from graphs, the drifting arguments are patched, the held
# launches are flushed when the fat binary goes away and a new graph is
# learned for the second one.  Without the code object nothing is an
# element and the outputs still match.
set -u
b=${top_builddir:-.}
lib="$b/.libs/libgraphshim.so"
sim="$b/tests/sim/hiplib"
prog="$b/tests/hipsim/t_hip_stubs"
for f in "$lib" "$sim/libamdhip64.so.5" "$prog"; do
	[ -e "$f" ] || { echo "SKIP: $f not built"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH="$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Deterministic: graphs are built in the call that completes the learning.
export GRAPHSHIM_ASYNC_BUILD=0 GRAPHSHIM_OVERWRITE=1
# Armed sequences replay: the gate follows the simulator's timing (t-gate.sh).
export GRAPHSHIM_GATE=replay
steps=200
fails=0
stat() { # stat KEY -> the first value of KEY in the statistics
	sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" "$tmp/s.json" | head -n 1
}
fail() {
	echo "FAIL $name: $*"
	fails=$((fails + 1))
}
# run NAME EXPECT ARGS...: EXPECT "replay" or "none" (nothing an element)
run() {
	name=$1 expect=$2
	shift 2
	"$prog" --steps $steps "$@" --out "$tmp/e.bin" >"$tmp/e.log" 2>&1 || { fail "eager run failed"; cat "$tmp/e.log"; return; }
	GRAPHSHIM_STATS="$tmp/s.json" LD_PRELOAD="${GS_TEST_PRELOAD_PREFIX:+$GS_TEST_PRELOAD_PREFIX }$lib" \
		"$prog" --steps $steps "$@" --out "$tmp/g.bin" >"$tmp/g.log" 2>&1 ||
		{ fail "run under graphshim failed"; cat "$tmp/g.log"; return; }
	cmp -s "$tmp/e.bin" "$tmp/g.bin" || { fail "outputs differ"; return; }
	calls=$(sed -n 's/^launches //p' "$tmp/g.log")
	launches=$(stat launches) replayed=$(stat replayed) patches=$(stat patches) graphs=$(stat graphs)
	module=$(stat MODULE)
	if [ "$expect" = none ]; then
		[ "$launches" -eq 0 ] && [ "$replayed" -eq 0 ] ||
			{ fail "no code object, yet $launches elements, $replayed replayed"; return; }
	else
		# axpy, mixed, noargs and bigarg each step; scale (not in the
		# code object) and the unregistered stub are not elements.
		[ "$launches" -eq $((4 * steps)) ] ||
			{ fail "$launches hipLaunchKernel elements, want $((4 * steps)) of $calls calls"; return; }
		[ "$replayed" -gt 0 ] && [ $((replayed * 100 / launches)) -ge 90 ] ||
			{ fail "replayed $replayed of $launches hipLaunchKernel launches"; return; }
		[ "$patches" -gt 0 ] || { fail "drifting arguments were never patched"; return; }
		[ "$graphs" -ge 2 ] || { fail "$graphs graphs: none learned for the second fat binary"; return; }
		[ "${module:-0}" -ge 1 ] || { fail "no flush when the fat binary was unregistered"; return; }
	fi
	echo "ok   $name: identical, $calls hipLaunchKernel calls, $launches elements, replayed $replayed, patches $patches, graphs $graphs"
}
run stubs replay
run stubs-spt replay --spt
run stubs-no-metadata none --no-metadata
[ "$fails" -eq 0 ] && echo "the host-stub path is identical and replayed" && exit 0
echo "$fails failed"
exit 1
