#!/bin/bash
# Run HERE (the development machine) before sending tools/gpu/all.sh to the
# GPU machine.  That machine has nvcc, gcc and PyTorch but may lack the
# autotools and uthash, and can fetch nothing; this packs what it needs into
# .gpucarry/ (ignored by git): the generated configure/Makefile.in files and
# the uthash headers.  Then call the device tool with carry [".gpucarry"];
# all.sh uses them only where the machine lacks its own.
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
EXCL=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCL")"
grep -qx "/$C/" "$EXCL" 2>/dev/null || echo "/$C/" >>"$EXCL"
echo "prepare-carry: $C ready ($(du -sh "$C" | cut -f1)); run the device with carry [\"$C\"]"
echo "prepare-carry: command: bash tools/gpu/all.sh"
