#!/bin/sh
# Secure-execution mode and the diagnostics files.
#  - r_secure run normally honours GRAPHSHIM_ENABLE=0 (no graphs) and
#    writes GRAPHSHIM_STATS; a setgid copy of it (AT_SECURE set by the
#    kernel, checked by the program with getauxval) must ignore every
#    GRAPHSHIM_* variable: graphs are made despite GRAPHSHIM_ENABLE=0, and
#    neither the statistics nor the trace file is written.  Needs root (to
#    make the setgid copy); skipped otherwise.
#  - GRAPHSHIM_HIP_LIBRARY is a library to dlopen: obeyed normally (a
#    stand-in runtime, libr_marker.so, leaves a file when loaded), never
#    read by the setgid copy (the HIP backend starts on r_secure's one HIP
#    call; skipped where the library has no HIP backend).
#  - A preloaded run never writes statistics or a trace through a symlink,
#    never over an existing file unless GRAPHSHIM_OVERWRITE=1 (the unit
#    tests of tests/tools cover the writers; this is the whole path).
set -u
. "${top_srcdir:-.}/tests/reliability/r_lib.sh"
prog="$r/r_secure"
val() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" "$2"; }

# Not secure: the environment is obeyed.
GRAPHSHIM_ENABLE=0 timeout 60 "$prog" >"$tmp/o" 2>&1 || { bad "r_secure, GRAPHSHIM_ENABLE=0"; cat "$tmp/o"; }
if [ "$(val secure "$tmp/o")" = 0 ] && [ "$(val execs "$tmp/o")" = 0 ] && [ "$(val shim "$tmp/o")" = 1 ]; then
	ok "not secure: GRAPHSHIM_ENABLE=0 obeyed ($(cat "$tmp/o"))"
else
	bad "not secure: GRAPHSHIM_ENABLE=0 not obeyed: $(cat "$tmp/o")"
fi
GRAPHSHIM_STATS="$tmp/plain.json" timeout 60 "$prog" >"$tmp/o" 2>&1 || { bad "r_secure"; cat "$tmp/o"; }
if [ "$(val execs "$tmp/o")" -gt 0 ] 2>/dev/null && [ -s "$tmp/plain.json" ]; then
	ok "not secure: graphs made, statistics written"
else
	bad "not secure: no graphs or no statistics: $(cat "$tmp/o")"
fi

# Secure: a setgid copy (setgid to a group other than ours: AT_SECURE).
if [ "$(id -u)" != 0 ]; then
	echo "SKIP secure mode: needs root to make a setgid copy"
else
	mkdir "$tmp/sec" && chmod 755 "$tmp/sec"
	cp "$prog" "$tmp/sec/r_secure"
	chgrp 65534 "$tmp/sec/r_secure" && chmod 2755 "$tmp/sec/r_secure"
	GRAPHSHIM_ENABLE=0 GRAPHSHIM_STATS="$tmp/sec.json" GRAPHSHIM_TRACE="$tmp/sec-trace.json" \
		GRAPHSHIM_LOG=debug timeout 60 "$tmp/sec/r_secure" >"$tmp/o" 2>"$tmp/e" ||
		{ bad "setgid r_secure failed"; cat "$tmp/o" "$tmp/e"; }
	if [ "$(val secure "$tmp/o")" != 1 ]; then
		bad "setgid copy did not run with AT_SECURE (nosuid mount?): $(cat "$tmp/o")"
	elif [ "$(val execs "$tmp/o")" -gt 0 ] 2>/dev/null; then
		ok "secure: GRAPHSHIM_ENABLE=0 ignored ($(cat "$tmp/o"))"
	else
		bad "secure: GRAPHSHIM_ENABLE=0 was obeyed: $(cat "$tmp/o")"
	fi
	if [ "$(val secure "$tmp/o")" = 1 ]; then
		for f in sec.json sec-trace.json; do
			[ -e "$tmp/$f" ] && bad "secure: $f was written"
		done
		[ -e "$tmp/sec.json" ] || [ -e "$tmp/sec-trace.json" ] ||
			ok "secure: no statistics or trace written"
	fi
fi

# GRAPHSHIM_HIP_LIBRARY: read with the configuration, so never in secure mode.
marker_lib="$r/libr_marker.so"
GRAPHSHIM_HIP_LIBRARY="$marker_lib" R_MARKER="$tmp/hip-loaded" timeout 60 "$prog" hip >"$tmp/o" 2>&1 ||
	{ bad "r_secure hip"; cat "$tmp/o"; }
if [ "$(sed -n 's/.*hip=\([0-9-]*\).*/\1/p' "$tmp/o")" != 1 ]; then
	echo "SKIP GRAPHSHIM_HIP_LIBRARY: the library has no HIP backend"
elif [ ! -e "$tmp/hip-loaded" ]; then
	bad "not secure: GRAPHSHIM_HIP_LIBRARY was not obeyed (the test cannot tell): $(cat "$tmp/o")"
else
	ok "not secure: GRAPHSHIM_HIP_LIBRARY obeyed"
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP secure GRAPHSHIM_HIP_LIBRARY: needs root"
	else
		mkdir -p "$tmp/sec" && chmod 755 "$tmp/sec"
		cp "$prog" "$tmp/sec/r_hip" && chgrp 65534 "$tmp/sec/r_hip" && chmod 2755 "$tmp/sec/r_hip"
		GRAPHSHIM_HIP_LIBRARY="$marker_lib" R_MARKER="$tmp/hip-secure" timeout 60 \
			"$tmp/sec/r_hip" hip >"$tmp/o" 2>&1 || { bad "setgid r_secure hip"; cat "$tmp/o"; }
		if [ "$(val secure "$tmp/o")" != 1 ]; then
			bad "setgid copy did not run with AT_SECURE: $(cat "$tmp/o")"
		elif [ -e "$tmp/hip-secure" ]; then
			bad "secure: GRAPHSHIM_HIP_LIBRARY was read: a setgid program loaded the library its environment named"
		else
			ok "secure: GRAPHSHIM_HIP_LIBRARY ignored"
		fi
	fi
fi

# Diagnostics files: no symlinks followed, nothing clobbered without leave.
for var in STATS TRACE; do
	# O_EXCL alone refuses a symlink; with GRAPHSHIM_OVERWRITE=1 only
	# O_NOFOLLOW stands between the writer and the link's target.
	ln -s "$tmp/target-$var" "$tmp/link-$var"
	for ow in 0 1; do
		[ "$ow" = 1 ] && echo keep >"$tmp/target-$var"
		env GRAPHSHIM_$var="$tmp/link-$var" GRAPHSHIM_OVERWRITE=$ow timeout 60 "$prog" >"$tmp/o" 2>&1 ||
			{ bad "r_secure with GRAPHSHIM_$var"; cat "$tmp/o"; continue; }
		if { [ "$ow" = 0 ] && [ -e "$tmp/target-$var" ]; } ||
			{ [ "$ow" = 1 ] && [ "$(cat "$tmp/target-$var")" != keep ]; }; then
			bad "GRAPHSHIM_$var was written through a symlink (GRAPHSHIM_OVERWRITE=$ow)"
		else
			ok "GRAPHSHIM_$var: symlink not followed (GRAPHSHIM_OVERWRITE=$ow)"
		fi
	done
	echo keep >"$tmp/exist-$var"
	env GRAPHSHIM_$var="$tmp/exist-$var" timeout 60 "$prog" >"$tmp/o" 2>&1 ||
		{ bad "r_secure with GRAPHSHIM_$var"; cat "$tmp/o"; continue; }
	if [ "$(cat "$tmp/exist-$var")" != keep ]; then
		bad "GRAPHSHIM_$var clobbered an existing file"
	else
		ok "GRAPHSHIM_$var: existing file kept"
	fi
	env GRAPHSHIM_$var="$tmp/exist-$var" GRAPHSHIM_OVERWRITE=1 timeout 60 "$prog" >"$tmp/o" 2>&1 ||
		{ bad "r_secure with GRAPHSHIM_$var"; cat "$tmp/o"; continue; }
	if [ "$(cat "$tmp/exist-$var")" = keep ] || ! grep -q '[{[]' "$tmp/exist-$var"; then
		bad "GRAPHSHIM_$var with GRAPHSHIM_OVERWRITE=1 did not replace the file"
	else
		ok "GRAPHSHIM_$var: replaced with GRAPHSHIM_OVERWRITE=1"
	fi
done
finish
