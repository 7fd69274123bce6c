#!/bin/sh
# Run a command several times with a time limit; when a run hangs, print
# where each of its threads waits (gdb's backtraces; where there is no gdb,
# as on the GPU machines, whose cuda-gdb took minutes to attach, a scan of
# each thread's stack for return addresses: tools/gpu/stack-scan.py), then
# end it: SIGTERM first, so that graphshim writes its statistics, and
# SIGKILL 3 seconds later.
#
#   tools/gpu/hang-probe.sh RUNS SECONDS COMMAND [ARGS...]
#
# The command's own environment (LD_PRELOAD, GRAPHSHIM_*) is the caller's.
# Prints "hang-probe: N of RUNS runs hung" last; exit status 1 if any did.
set -u
[ $# -ge 3 ] || { echo "usage: hang-probe.sh RUNS SECONDS COMMAND [ARGS...]" >&2; exit 2; }
runs=$1 secs=$2
shift 2
hung=0 i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	"$@" >/dev/null 2>&1 &
	pid=$!
	t=0
	while kill -0 $pid 2>/dev/null && [ $t -lt $((secs * 10)) ]; do
		sleep 0.1
		t=$((t + 1))
	done
	if kill -0 $pid 2>/dev/null; then
		hung=$((hung + 1))
		echo "hang-probe: run $i hung after ${secs}s (pid $pid)"
		if command -v gdb >/dev/null 2>&1; then
			gdb -p $pid -batch -ex "thread apply all bt 16" 2>/dev/null | grep -E '^(Thread|#)' | head -n 160
		elif command -v python3 >/dev/null 2>&1; then
			python3 "$(dirname "$0")/stack-scan.py" $pid 2>&1 | head -n 400
		else
			for d in /proc/$pid/task/*; do
				echo "  thread ${d##*/} $(cat "$d/comm" 2>/dev/null): wchan $(cat "$d/wchan" 2>/dev/null)," \
					"syscall $(cut -d' ' -f1 "$d/syscall" 2>/dev/null)"
			done
		fi
		kill -TERM $pid 2>/dev/null
		t=0
		while kill -0 $pid 2>/dev/null && [ $t -lt 30 ]; do
			sleep 0.1
			t=$((t + 1))
		done
		kill -0 $pid 2>/dev/null && echo "hang-probe: run $i did not end at SIGTERM"
		kill -9 $pid 2>/dev/null
	fi
	wait $pid 2>/dev/null
done
echo "hang-probe: $hung of $runs runs hung"
[ $hung -eq 0 ]
