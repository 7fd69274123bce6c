#!/usr/bin/env bash
# Set up, build and run every CPU test (make check).  GPU tests are separate:
# make check-gpu, on a machine with an NVIDIA GPU.
#
#   tools/test.sh                the build in place and make check
#   tools/test.sh --sanitizers   also, out of tree: the suite built with
#                                AddressSanitizer+UndefinedBehaviorSanitizer
#                                (make check, leaks included) and with
#                                ThreadSanitizer (the threaded tests)
#   tools/test.sh --sanitizers-only   the sanitizer builds alone
# See docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
san=false plain=true
case "${1:-}" in
--sanitizers) san=true ;;
--sanitizers-only) san=true plain=false ;;
"") ;;
*) echo "usage: $0 [--sanitizers | --sanitizers-only]" >&2; exit 2 ;;
esac

# check DIR [make check arguments]: make check there; show the failures' logs.
check() {
	local dir=$1
	shift
	make -C "$dir" -j"$(nproc)" check "$@" || {
		grep -l -E '^(FAIL|ERROR)' $(find "$dir" -name '*.log' -newer "$dir/config.status") 2>/dev/null |
			while read -r l; do echo "=== $l"; tail -60 "$l"; done
		return 1
	}
}

# A sanitizer build out of tree.  automake refuses a build directory beside
# a source tree configured in place, so then the tree (tracked and
# untracked-but-not-ignored files) is copied first.
sanitized() { # sanitized NAME SANITIZERS [make check arguments]
	local name=$1 list=$2 top
	shift 2
	top=$src
	if [ -f "$src/config.status" ]; then
		top=$src/build-san/src
		rm -rf "$top" && mkdir -p "$top"
		# The generated build system too (ignored by git), so the copy
		# needs no autoreconf; tar keeps the times, so make keeps it.
		{ git ls-files -z -c -o --exclude-standard
		  for f in configure Makefile.in aclocal.m4 config.h.in build-aux m4; do
			[ -e "$f" ] && printf '%s\0' "$f"
		  done; } | tar --null -T - -cf - | tar -xf - -C "$top"
	fi
	[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi)
	local dir=$src/build-san/$name
	mkdir -p "$dir"
	[ -f "$dir/Makefile" ] ||
		(cd "$dir" && "$top/configure" --enable-sanitizers="$list" ${GS_CONFIGURE_FLAGS:-} >/dev/null)
	echo "test: $name build (-fsanitize=$list) in $dir"
	make -C "$dir" -j"$(nproc)" >/dev/null
	check "$dir" "$@"
}

tools/setup.sh
if $plain; then
	make -j"$(nproc)" check || { cat test-suite.log 2>/dev/null | tail -100; exit 1; }
fi
if $san; then
	sanitized asan address,undefined
	# ThreadSanitizer: the tests where threads meet (the rest would only
	# take time).  The integration test runs its threaded workloads only.
	# Not the Criterion unit tests: Criterion cannot start under TSan (its
	# inheritable arena fails to map); the engine's threads are exercised
	# through the preloaded programs instead.
	# The fuzzer's sample too, smaller (a race ThreadSanitizer reports in
	# either run changes its exit status: a divergence): 1,500 programs, all
	# six settings, about a minute on two cores.
	export GS_INTEG_ONLY="decode-threads decode-everything decode-everything-adopt"
	export FUZZ_CI_COUNT=1500 FUZZ_CI_BATCH=250
	sanitized tsan thread TESTS="tests/sim/t_threads tests/integ/t-workloads.sh \
		tests/reliability/t-threads.sh tests/reliability/t-lifecycle.sh tests/fuzz/fuzz-ci.sh"
fi
