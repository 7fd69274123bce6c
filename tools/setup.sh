#!/usr/bin/env bash
# Set up a fresh machine and build graphshim in place: install the Debian
# packages the build needs (when run as root), generate the build system,
# configure and compile.  Safe to run again; it redoes only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# hipcc (Debian's, with clang/llvm/lld 15 and the ROCm device libraries)
# builds kernels/<w>.hsaco for the HIP metadata test; on top of the rest it
# adds about 105 MB of downloads, 750 MB on disk and 20 s of install time.
# The build skips HIP device code where hipcc is absent.
PKGS="autoconf automake libtool pkg-config make gcc g++ python3 uthash-dev libcriterion-dev libjansson-dev libamdhip64-dev libelf-dev libmsgpack-dev hipcc"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "setup: installing$missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq $missing >/dev/null
	else
		echo "setup: missing packages:$missing" >&2
		echo "setup: run: sudo apt-get install -y$missing" >&2
		exit 1
	fi
fi

[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure ${GS_CONFIGURE_FLAGS:-}
make -j"$(nproc)"
