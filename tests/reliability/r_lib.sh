# Sourced by the tests/reliability scripts: paths, the preload line (with
# the sanitizer runtime in front in sanitizer builds) and result counting.
b=${top_builddir:-.}
lib="$b/.libs/libgraphshim.so"
sim="$b/tests/sim/lib"
r="$b/tests/reliability"
for f in "$lib" "$sim/libcuda.so.1"; do
	[ -e "$f" ] || { echo "SKIP: $f not built"; exit 77; }
done
# What LD_PRELOAD must be to load graphshim into a test program.
PRELOAD="${GS_TEST_PRELOAD_PREFIX:+$GS_TEST_PRELOAD_PREFIX }$lib"
# ASan: report leaks; the runtime is first in LD_PRELOAD already.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
sanitized=false
[ -n "${GS_TEST_SANITIZERS:-}" ] && sanitized=true
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gs-rel.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
finish() {
	[ "$fails" -eq 0 ] && exit 0
	echo "$fails failed"
	exit 1
}
# shim PROG ARGS...: run PROG with graphshim preloaded (graphs built in
# place unless GRAPHSHIM_ASYNC_BUILD says otherwise), killed after
# $R_TIMEOUT_S seconds.  Only PROG gets the preload, not `timeout`.
shim() {
	timeout "${R_TIMEOUT_S:-300}" env GRAPHSHIM_ASYNC_BUILD=${GRAPHSHIM_ASYNC_BUILD:-0} \
		LD_PRELOAD="$PRELOAD" "$@"
}
