#!/bin/sh
# The documentation follows the headers: every GRAPHSHIM_* variable of
# GS_CONFIG_VARS is in docs/configuration.md and docs/graphshim.7.in, with
# its default (a choice by its name), every flush and mismatch reason in
# docs/troubleshooting.md and graphshim.7, and every counter of GS_COUNTERS
# and every sequence state in docs/tools.md.  The library reads no
# GRAPHSHIM_* variable outside GS_CONFIG_VARS (where secure-execution mode
# is honoured), and the built manual pages name real paths.
set -u
: "${top_srcdir:=.}"
S=$top_srcdir
fail=0

# names HEADER MACRO: the first argument of each X(...) entry of MACRO.
names() {
	sed -n "/#define $2(X)/,/^\$/p" "$1" | grep -o 'X([A-Za-z_]*' | sed 's/^X(//'
}

check() { # check NAME FILE...
	n=$1
	shift
	for f in "$@"; do
		grep -q -w -e "$n" "$f" || { echo "FAIL: $n is not documented in $f"; fail=1; }
	done
}

vars=$(grep -o '"GRAPHSHIM_[A-Z_]*"' "$S/shim/core/gs_config.h" | tr -d '"')
[ -n "$vars" ] || { echo "FAIL: no GRAPHSHIM_ variables found in gs_config.h"; exit 1; }
for v in $vars; do
	check "$v" "$S/docs/configuration.md" "$S/docs/graphshim.7.in"
done
# And nothing documented that the header does not have (graphshim(1)'s own
# GRAPHSHIM_LIB excepted).
for v in $(grep -o 'GRAPHSHIM_[A-Z_]*[A-Z]' "$S/docs/configuration.md" "$S/docs/graphshim.7.in" |
	   sed 's/.*://' | sort -u); do
	[ "$v" = GRAPHSHIM_LIB ] && continue
	echo "$vars" | grep -q -x "$v" || { echo "FAIL: $v is documented but not in gs_config.h"; fail=1; }
done

# Defaults and ranges: the table row of configuration.md and the entry of
# graphshim(7) give the header's numbers (compared as numbers: 2 == 2.0).
sed -n 's/^[[:space:]]*X([a-z_]*, *"\(GRAPHSHIM_[A-Z_]*\)", *\([A-Z]*\), *\([-0-9.]*\), *\([-0-9.]*\), *\([-0-9.]*\),.*/\1 \2 \3 \4 \5/p' \
	"$S/shim/core/gs_config.h" >"${TMPDIR:-/tmp}/gs-vars.$$"
# str_names HEADER MACRO: the "name" of each X(NAME, "name") entry of MACRO.
str_names() {
	sed -n "/#define $2(X)/,/^\$/p" "$1" | grep -o 'X([A-Z_]*, "[a-z]*"' | sed 's/.*"\([a-z]*\)"/\1/'
}
while read -r name type def lo hi; do
	[ "$type" = PATH ] && continue
	row=$(grep "^| \`$name\`" "$S/docs/configuration.md")
	man=$(sed -n "/^\.B $name\$/{n;p;}" "$S/docs/graphshim.7.in")
	# A choice is documented by its name, as it is given ("default batch").
	list=
	case $type in
	SCHED) list=$(str_names "$S/shim/core/gs_config.h" GS_BUILD_SCHEDS) ;;
	GATE) list=$(str_names "$S/shim/core/gs_config.h" GS_GATE_MODES) ;;
	LEVEL) list=$(str_names "$S/shim/core/gs_log.h" GS_LOG_LEVELS) ;;
	esac
	if [ -n "$list" ]; then
		dn=$(echo $list | cut -d' ' -f$((def + 1)))
		echo "$row" | awk -F'|' -v d="$dn" '{ exit !($4 ~ ("^ *`" d "` *$")) }' ||
			{ echo "FAIL: configuration.md: $name should say default \`$dn\`: $row"; fail=1; }
		echo "$man" | grep -q "default $dn)" ||
			{ echo "FAIL: graphshim.7: $name should say default $dn: $man"; fail=1; }
		continue
	fi
	echo "$row" | awk -F'|' -v d="$def" -v lo="$lo" -v hi="$hi" -v t="$type" '
		{ c = $4; gsub(/[`( ]/, "", c); sub(/[a-z]+\)?$/, "", c)
		  if (t == "BOOL") { ok = (c + 0 == d + 0); }
		  else { r = $5; gsub(/ /, "", r); split(r, a, "-")
			 ok = (c + 0 == d + 0 && a[1] + 0 == lo + 0 && a[2] + 0 == hi + 0) }
		  exit !ok }' ||
		{ echo "FAIL: configuration.md: $name should say default $def, range $lo - $hi: $row"; fail=1; }
	echo "$man" | grep -q "default $def[,)]" ||
		{ echo "FAIL: graphshim.7: $name should say default $def: $man"; fail=1; }
done <"${TMPDIR:-/tmp}/gs-vars.$$"
[ -s "${TMPDIR:-/tmp}/gs-vars.$$" ] || { echo "FAIL: could not read GS_CONFIG_VARS"; fail=1; }
rm -f "${TMPDIR:-/tmp}/gs-vars.$$"

flush=$(names "$S/shim/core/gs_flush.h" GS_FLUSH_REASONS)
mism=$(names "$S/shim/core/gs_stats.h" GS_MISMATCH_REASONS)
counters=$(names "$S/shim/core/gs_stats.h" GS_COUNTERS)
[ -n "$flush" ] && [ -n "$mism" ] && [ -n "$counters" ] || { echo "FAIL: header lists not found"; exit 1; }
for r in $flush $mism; do
	check "$r" "$S/docs/troubleshooting.md" "$S/docs/graphshim.7.in"
done
for c in $counters; do
	check "$c" "$S/docs/tools.md"
done
# The sequence states by the names the statistics give them.
states=$(sed -n '/#define GS_SEQ_STATES(X)/,/^$/p' "$S/shim/core/gs_stats.h" | grep -o 'X([A-Z_]*, "[a-z]*"' | sed 's/.*"\([a-z]*\)"/\1/')
[ -n "$states" ] || { echo "FAIL: GS_SEQ_STATES not found"; exit 1; }
for st in $states; do
	check "\`$st\`" "$S/docs/tools.md"
done
# Every variable is read through gs_config (which reads none in secure mode).
if grep -rn --include='*.c' 'getenv("GRAPHSHIM_' "$S/shim" | grep -v 'shim/core/gs_config.c:'; then
	echo "FAIL: a GRAPHSHIM_* variable is read outside gs_config.c (and GS_CONFIG_VARS)"
	fail=1
fi
# The built manual pages name the installation's paths, not make's variables.
B=${top_builddir:-.}
for m in "$B/tools/graphshim.1" "$B/docs/graphshim.7"; do
	if [ ! -f "$m" ]; then
		echo "FAIL: $m was not made"
		fail=1
	elif grep -n -e '\$(' -e '@[a-zA-Z_]*@' "$m"; then
		echo "FAIL: $m has unsubstituted names (above)"
		fail=1
	fi
done
grep -q "^\.I /.*/libgraphshim\.so\$" "$B/tools/graphshim.1" 2>/dev/null ||
	{ echo "FAIL: graphshim.1 does not name the installed library's path"; fail=1; }
[ $fail -eq 0 ] && echo "ok: $(echo $vars | wc -w) variables, $(echo $flush $mism | wc -w) reasons, $(echo $counters | wc -w) counters documented"
exit $fail
