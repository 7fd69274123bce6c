#!/bin/bash
# Host time of a few PyTorch calls (tools/gpu/host-probe.py) without
# graphshim, with its hooks only (GRAPHSHIM_ENABLE=0) and with graphshim,
# alternating, PAIRS times (default 2): does graphshim cost a library's host
# path (cuBLASLt's heuristics, PyTorch's dispatch) anything besides its
# launches?  A diagnostic for one GPU call; expects a built tree (all.sh).
# Arguments after PAIRS go to host-probe.py (--calls N, --ops fp8,int8,...).
#   host-probe.sh [PAIRS] [host-probe.py arguments]
set -u
. "$(dirname "$0")/common.sh"
pairs=${1:-2}
[ $# -gt 0 ] && shift
if [ ! -f "$GS_LIB" ]; then
	echo "host-probe: no $GS_LIB (build first)" >&2
	exit 1
fi
probe=$GS_SRC/tools/gpu/host-probe.py
i=0
while [ "$i" -lt "$pairs" ]; do
	GS_PROBE_LABEL=none "$GS_PY" "$probe" "$@"
	GS_PROBE_LABEL=hooks GRAPHSHIM_ENABLE=0 LD_PRELOAD=$GS_LIB "$GS_PY" "$probe" "$@"
	GS_PROBE_LABEL=shim LD_PRELOAD=$GS_LIB "$GS_PY" "$probe" "$@"
	i=$((i + 1))
done 2>&1 | grep -v 'graphshim: info'
