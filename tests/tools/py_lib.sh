# Shared by the tests of tools/gpu's Python tools (test_timeline.sh,
# test_gate_trials.sh): skip (77) without python3; a temporary folder $tmp,
# removed at exit; fail=0; check WHAT PATTERN: ok when a line of $tmp/out
# matches, else FAIL with the output shown and fail=1; refuses (below).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gs-py.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

check() { # what pattern
	if grep -q -e "$2" "$tmp/out"; then
		echo "ok: $1"
	else
		echo "FAIL: $1: no line matches: $2"
		sed 's/^/  out: /' "$tmp/out"
		fail=1
	fi
}

# refuses WHAT PATTERN COMMAND...: the command must fail, saying PATTERN.
refuses() {
	what=$1 pat=$2
	shift 2
	if "$@" >"$tmp/out" 2>&1; then
		echo "FAIL: $what: accepted"
		fail=1
	else
		check "$what" "$pat"
	fi
}
