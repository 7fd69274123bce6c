#!/bin/sh
# `make check`'s differential fuzzing sample on the simulator's HIP flavour:
# fuzz_run_hip (the same generator without what HIP lacks, see fuzz_api.h)
# over FUZZ_CI_COUNT programs (default 6000, batches of 500 under the six
# rotating settings), plainly and under graphshim's HIP backend, digests
# compared; fails on any divergence or when under 20% of the launches of
# batches that may replay were replayed.  See tests/fuzz/README.
FUZZ_RUNNER=fuzz_run_hip
export FUZZ_RUNNER
exec "$(dirname "$0")/fuzz.sh" --count "${FUZZ_CI_COUNT:-6000}" --batch 500 "$@"
