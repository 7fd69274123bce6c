#!/bin/sh
# Run a command several times with a time limit; when a run hangs, print
# where each of its threads waits (gdb's backtraces when gdb is there, else
# the kernel's wait channel and system call of each thread), then kill it.
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
			gdb -p $pid -batch -ex "thread apply all bt 12" 2>/dev/null | grep -E '^(Thread|#)' | head -n 120
		else
			for d in /proc/$pid/task/*; do
				echo "  thread ${d##*/} $(cat "$d/comm" 2>/dev/null): wchan $(cat "$d/wchan" 2>/dev/null)," \
					"syscall $(cut -d' ' -f1 "$d/syscall" 2>/dev/null)"
			done
		fi
		kill -9 $pid 2>/dev/null
	fi
	wait $pid 2>/dev/null
done
echo "hang-probe: $hung of $runs runs hung"
[ $hung -eq 0 ]
