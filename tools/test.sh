#!/usr/bin/env bash
# Set up, build and run every CPU test (make check).  GPU tests are separate:
# make check-gpu, on a machine with an NVIDIA GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
make -j"$(nproc)" check || { cat test-suite.log 2>/dev/null | tail -100; exit 1; }
