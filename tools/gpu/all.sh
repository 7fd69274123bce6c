#!/bin/bash
# Everything the GPU machine is asked for, in ONE call (device time is
# scarce): configure and build (-j16), check-gpu.sh, bench.sh.  Logs go to
# $OUT when set (the device tool brings that folder back: the stage logs then
# end up in one logs.tar.gz beside table.txt, real-table.txt and the runs'
# tarballs, five files of the tool's eight: a second run in the same call
# with OUT=$OUT/b would bring the count past eight and its files would be
# left out, so give it another OUT and pack that into one tarball under
# $OUT, or print its real-table.txt), else to .gpu/ in the source tree.  The combined short table is printed LAST.  Sized to
# finish in under 8 minutes on an H100; each stage has a time limit, and a
# stage cut short still prints the rows it finished.  Settings (environment):
#   GS_ALL_BUILD=0      skip autoreconf/configure/make (tree already built)
#   GS_ALL_CARRY=1      use .gpucarry even where autoreconf exists (tests)
# Where the machine has no autotools or uthash, run tools/gpu/prepare-carry.sh
# here first and carry .gpucarry (see that script).
#   GS_CONFIGURE_FLAGS  extra ./configure arguments
#   GS_T_BUILD, GS_T_CHECK, GS_T_BENCH   stage limits in seconds (180, 170, 330)
#   GS_ALL_REAL=1       also run the real-program suite (tools/gpu/real.sh) after
#                       the bench stage; GS_ALL_REAL=only: build, then that suite
#                       alone (check-gpu, bench and costs skipped: the suite with 5
#                       rounds does not fit beside them in one 10-minute call)
#   GS_T_REAL           its stage limit in seconds (default: what is left of
#                       GS_ALL_LIMIT, 590 s from the start, so that the whole call
#                       stays within the device tool's 10 minutes); real.sh's
#                       budget GS_REAL_BUDGET defaults to that limit less 90 s, for
#                       the round and counting runs under way when it runs out
#   GS_ALL_HANGS=N      runs of the hang probe after check-gpu (default 8; 0: none)
#   GS_ALL_PROBE=N      host time of a few PyTorch calls: none, hooks only, graphshim,
#                       N alternating triples (tools/gpu/host-probe.sh; default 0: none)
#   GS_ALL_COSTS=0      skip the costs stage (tools/gpu/costs.c: what a launch, a
#                       node patch and a graph launch cost this driver's host;
#                       a few seconds, its lines join the table)
# With .gpucarry/before.tar (prepare-carry.sh, GS_CARRY_BEFORE) it also
# builds that tree's library and hands it to bench.sh as GS_BENCH_BEFORE_LIB,
# and with GS_ALL_HOOK_AB=N times graphshim's own code a launch call on this
# host, that library (A) against this build's (B), N alternating pairs
# (tools/gpu/hook-ab.sh: the fake driver, no GPU; its lines join the table).
# and those of check-gpu.sh and bench.sh (GS_CHECK_STEPS, GS_BENCH_ROUNDS...).
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LOG=${OUT:-$SRC/.gpu}
mkdir -p "$LOG"
export GS_SRC=$SRC GS_BUILD=$SRC
export GS_WORK=${GS_WORK:-${TMPDIR:-/tmp}/gs-gpu-work}
export GS_TABLE=$LOG/table.txt
rm -rf "$GS_WORK"
mkdir -p "$GS_WORK"
: >"$GS_TABLE"
T0=$(date +%s)
STATUS=""

# stage NAME LIMIT CMD...: run with a time limit, log to $LOG/NAME.log.
stage() {
	local name=$1 limit=$2 t rc
	shift 2
	t=$(date +%s)
	timeout -k 20 "$limit" "$@" >"$LOG/$name.log" 2>&1
	rc=$?
	echo "all: $name: rc=$rc in $(($(date +%s) - t))s (log $LOG/$name.log)"
	STATUS="$STATUS $name=$rc"
	return $rc
}

{
	date -u
	nvidia-smi -L
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
	nvcc --version | tail -n 2
	python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())'
	uname -a
} >"$LOG/env.log" 2>&1
head -n 3 "$LOG/env.log"

# The GPU machine may lack the autotools and uthash and cannot fetch them:
# tools/gpu/prepare-carry.sh packs both into .gpucarry/ on the development
# machine; they are used only where the machine has none of its own.
CARRY=$SRC/.gpucarry
GEN="autoreconf -fi"
if [ "${GS_ALL_CARRY:-0}" = 1 ] || ! command -v autoreconf >/dev/null 2>&1; then
	if [ -f "$CARRY/autotools.tar" ]; then
		# Unpacked files must look newer than their sources, or make would
		# try to regenerate them with tools that are not there.
		GEN="tar xf '$CARRY/autotools.tar' && touch m4/* build-aux/* && touch aclocal.m4 && \
			touch configure && touch config.h.in Makefile.in"
	elif [ -f "$SRC/configure" ]; then
		GEN=true
	else
		echo "all: no autoreconf here and no .gpucarry/autotools.tar: run tools/gpu/prepare-carry.sh" \
			"on the development machine and carry .gpucarry"
		exit 1
	fi
fi
CPPF=""
if ! echo '#include <uthash.h>' | ${CC:-cc} -E - >/dev/null 2>&1 && [ -f "$CARRY/include/uthash.h" ]; then
	CPPF="CPPFLAGS=-I$CARRY/include"
fi
# jansson from the carry where the machine has none: tools/graphshim is
# built, so real.sh can summarize traces on the machine.
if ! pkg-config --exists jansson 2>/dev/null && [ -f "$CARRY/jansson/lib/libjansson.a" ]; then
	export JANSSON_CFLAGS="-I$CARRY/jansson" JANSSON_LIBS="$CARRY/jansson/lib/libjansson.a"
fi

if [ "${GS_ALL_BUILD:-1}" != 0 ]; then
	if ! stage build "${GS_T_BUILD:-180}" bash -c "cd '$SRC' && $GEN && \
		./configure $CPPF ${GS_CONFIGURE_FLAGS:-} && make -j16"; then
		tail -n 40 "$LOG/build.log"
		echo "all: build FAILED; nothing run"
		exit 1
	fi
fi
if [ -f "$CARRY/before.tar" ]; then
	B=$GS_WORK/before
	mkdir -p "$B"
	if stage build-before "${GS_T_BUILD:-180}" bash -c "cd '$B' && tar xf '$CARRY/before.tar' && \
		touch m4/* build-aux/* aclocal.m4 configure config.h.in Makefile.in && \
		./configure $CPPF ${GS_CONFIGURE_FLAGS:-} && make -j16 libgraphshim.la"; then
		export GS_BENCH_BEFORE_LIB=$B/.libs/libgraphshim.so
	else
		tail -n 20 "$LOG/build-before.log"
	fi
fi
if [ "${GS_ALL_HOOK_AB:-0}" -gt 0 ] && [ -n "${GS_BENCH_BEFORE_LIB:-}" ]; then
	if stage hook-ab 120 env top_builddir="$SRC" sh "$SRC/tools/gpu/hook-ab.sh" \
		"$GS_BENCH_BEFORE_LIB" "$SRC/.libs/libgraphshim.so" "$GS_ALL_HOOK_AB"; then
		grep '^hook-ab:' "$LOG/hook-ab.log" >>"$GS_TABLE"
	fi
fi
# What the cost rule weighs, on this machine (docs/performance.md, "Cost rule").
# Not with GS_ALL_REAL=only unless asked for (GS_ALL_COSTS=1): that call is the suite's.
costs_dflt=1
[ "${GS_ALL_REAL:-0}" != only ] || costs_dflt=0
if [ "${GS_ALL_COSTS:-$costs_dflt}" != 0 ]; then
	CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
	if stage costs 60 bash -c "${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -I'$CUDA_INC' \
		'$SRC/tools/gpu/costs.c' -o '$GS_WORK/costs' -lcuda && '$GS_WORK/costs'"; then
		grep '^costs:' "$LOG/costs.log" >>"$GS_TABLE"
	else
		tail -n 5 "$LOG/costs.log"
	fi
fi
# Host time of a few PyTorch calls without graphshim, with its hooks, with it
# (tools/gpu/host-probe.sh), GS_ALL_PROBE alternating triples.
if [ "${GS_ALL_PROBE:-0}" -gt 0 ]; then
	stage probe 150 bash "$SRC/tools/gpu/host-probe.sh" "$GS_ALL_PROBE"
	grep '^probe:' "$LOG/probe.log" >>"$GS_TABLE"
fi
if [ "${GS_ALL_REAL:-0}" != only ]; then
	stage check-gpu "${GS_T_CHECK:-170}" bash "$SRC/tools/gpu/check-gpu.sh"
	# A hang that comes one run in a few (the builder spinning in the driver,
	# twenty-seventh session) passes one check-gpu run as often as not: the
	# workload that showed it, GS_ALL_HANGS times (0: skipped) with a 5 s limit.
	if [ "${GS_ALL_HANGS:-8}" -gt 0 ]; then
		stage hangs 120 env LD_PRELOAD="$SRC/.libs/libgraphshim.so" \
			sh "$SRC/tools/gpu/hang-probe.sh" "${GS_ALL_HANGS:-8}" 5 \
			"$SRC/kernels/decode" --check --steps 200 --workspace
		echo "hangs: $(tail -n 1 "$LOG/hangs.log" | sed 's/^hang-probe: //')" \
			"(decode --check --steps 200 --workspace, 5 s limit; tools/gpu/hang-probe.sh)" >>"$GS_TABLE"
	fi
	stage bench "${GS_T_BENCH:-330}" bash "$SRC/tools/gpu/bench.sh"
fi
# The real-program suite: its table joins the others (GS_TABLE), its
# statistics and logs go to $LOG/real-runs.tar.gz.
if [ "${GS_ALL_REAL:-0}" != 0 ]; then
	lim=${GS_T_REAL:-$((${GS_ALL_LIMIT:-590} - ($(date +%s) - T0)))}
	if [ "$lim" -lt 120 ]; then
		echo "all: real: only ${lim}s left: skipped (GS_T_REAL, or GS_ALL_REAL=only)"
		STATUS="$STATUS real=skipped"
	else
		stage real "$lim" env OUT="$LOG" GS_REAL_BUDGET="${GS_REAL_BUDGET:-$((lim - 90))}" \
			bash "$SRC/tools/gpu/real.sh"
	fi
fi

# Statistics files and the logs of every run, small enough to bring back.
(cd "$GS_WORK" && tar czf "$LOG/runs.tar.gz" --exclude='*.out' --exclude=real . 2>/dev/null)
grep -h -E 'FAIL|differs|failed' "$LOG/check-gpu.log" "$LOG/bench.log" "$LOG/real.log" 2>/dev/null | head -n 20
# The device tool brings back at most 8 files of $OUT, and would leave out
# the tables (last by name) behind a dozen stage logs: those travel as one.
if [ -n "${OUT:-}" ] && ls "$LOG"/*.log >/dev/null 2>&1; then
	(cd "$LOG" && tar czf logs.tar.gz ./*.log && rm -f ./*.log)
	echo "all: the stage logs are in $LOG/logs.tar.gz"
fi
echo
echo "all: finished in $(($(date +%s) - T0))s:$STATUS (0 = pass, 77 = skipped, 124 = out of time)"
cat "$GS_TABLE"
