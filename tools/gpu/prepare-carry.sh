#!/bin/bash
# Run HERE (the development machine) before sending tools/gpu/all.sh to the
# GPU machine.  That machine has nvcc, gcc and PyTorch but may lack the
# autotools and uthash, and can fetch nothing; this packs what it needs into
# .gpucarry/ (ignored by git): the generated configure/Makefile.in files,
# the uthash headers and a static jansson (for tools/graphshim).  Then call the device tool with carry [".gpucarry"];
# all.sh uses them only where the machine lacks its own.
#   GS_CARRY_BEFORE=<commit>  also pack that commit's tree, configure
#                   included, as .gpucarry/before.tar: all.sh then builds
#                   its library too, and bench.sh runs it as the mode
#                   `before`, interleaved with this tree's (a before/after
#                   measurement in one call).
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
cd "$SRC"
C=.gpucarry
rm -rf "$C"
mkdir -p "$C/include"
if [ ! -f configure ] || [ ! -f Makefile.in ]; then
	autoreconf -fi >/dev/null
fi
tar cf "$C/autotools.tar" configure Makefile.in aclocal.m4 config.h.in build-aux m4
cp /usr/include/uthash.h /usr/include/utlist.h /usr/include/utarray.h \
	/usr/include/utstring.h "$C/include/" 2>/dev/null || true
[ -f "$C/include/uthash.h" ] || echo "prepare-carry: /usr/include/uthash.h missing (apt-get install uthash-dev)"
# jansson (static), so that the GPU machine builds tools/graphshim too and
# real.sh can summarize the traces there (they are too large to bring back).
if [ -f /usr/include/jansson.h ] && [ -f /usr/lib/x86_64-linux-gnu/libjansson.a ]; then
	mkdir -p "$C/jansson/lib"
	cp /usr/include/jansson.h /usr/include/jansson_config.h "$C/jansson/"
	cp /usr/lib/x86_64-linux-gnu/libjansson.a "$C/jansson/lib/"
else
	echo "prepare-carry: no static jansson here (apt-get install libjansson-dev): the GPU machine builds no tools/graphshim"
fi
if [ -n "${GS_CARRY_BEFORE:-}" ]; then
	b=$(mktemp -d)
	git archive "$GS_CARRY_BEFORE" | tar xf - -C "$b"
	(cd "$b" && autoreconf -fi >/dev/null 2>&1)
	tar cf "$C/before.tar" -C "$b" .
	rm -rf "$b"
	echo "prepare-carry: $C/before.tar is $(git rev-parse --short "$GS_CARRY_BEFORE")"
else
	# A before.tar left by an earlier call would silently become mode `before`.
	rm -f "$C/before.tar"
fi
EXCL=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCL")"
grep -qx "/$C/" "$EXCL" 2>/dev/null || echo "/$C/" >>"$EXCL"
echo "prepare-carry: $C ready ($(du -sh "$C" | cut -f1)); run the device with carry [\"$C\"]"
echo "prepare-carry: command: bash tools/gpu/all.sh"
