#!/bin/sh
# `make check`'s differential fuzzing sample: FUZZ_CI_COUNT programs
# (default 6000, fixed seeds from FUZZ_SEED or 1) in batches of
# FUZZ_CI_BATCH (default 500) under six rotating graphshim settings, plain
# and under graphshim, digests compared; fails on any divergence or when
# under 20% of the launches of batches that may replay were replayed.
# See tests/fuzz/README.
exec "$(dirname "$0")/fuzz.sh" --count "${FUZZ_CI_COUNT:-6000}" --batch "${FUZZ_CI_BATCH:-500}" "$@"
