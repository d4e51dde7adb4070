#!/bin/bash
# Build the project's own qemu-system-arm: Debian's QEMU 7.2 source
# (apt-get source, the version of the installed qemu-system-arm) with the
# patches in validation/qemu/, arm-softmmu only, with only the machines in
# configs/devices/arm-softmmu/fiq.mak (the STiH407 model, and vexpress with
# a PL011 that honours UARTCR.RXE).  Output: build/qemu/qemu-system-arm.
# Cached like the kernels: skipped while the patches, this script and the
# Debian version are unchanged; ccache makes a fresh clone's build cheap.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/qemu
src=$top/build/qemu-src
bld=$out/build
stamp=$out/.fiq-build-stamp
patches=("$top"/validation/qemu/*.patch)

version=$(dpkg-query -W -f='${source:Version}' qemu-system-arm)
want=$({ echo "$version"; cat "$0" "${patches[@]}"; } | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$out/qemu-system-arm" ]; then
	echo "qemu: up to date"
	exit 0
fi
rm -f "$stamp"
start=$(date +%s)

# the source, patched afresh
rm -rf "$src" "$bld"
mkdir -p "$out"
dl=$(mktemp -d "$top/build/qemu-dl.XXXXXX")
echo "qemu: apt-get source qemu=$version"
(cd "$dl" && apt-get source -q -q "qemu=$version" >/dev/null 2>&1) ||
	{ echo "qemu: apt-get source failed (is a deb-src line there? scripts/deps.sh adds one)" >&2; exit 1; }
mv "$dl"/qemu-*/ "$src" && rm -rf "$dl"
for p in "${patches[@]}"; do
	patch -s -d "$src" -p1 < "$p"
done

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache} CCACHE_BASEDIR=$top CCACHE_NOHASHDIR=1
mkdir -p "$bld"
(cd "$bld" && "$src/configure" --target-list=arm-softmmu \
	--without-default-features --without-default-devices --with-devices-arm=fiq \
	--enable-fdt=system --disable-docs --disable-tools --disable-user --disable-werror \
	--cc=/usr/lib/ccache/gcc --host-cc=/usr/lib/ccache/gcc >configure.log 2>&1) ||
	{ tail -20 "$bld/configure.log" >&2; exit 1; }
ninja -C "$bld" -j"$(nproc)" qemu-system-arm >"$bld/build.log" 2>&1 ||
	{ grep -B2 -A8 -m3 'error' "$bld/build.log" >&2; exit 1; }
ln -sf build/qemu-system-arm "$out/qemu-system-arm"
"$out/qemu-system-arm" -M help | grep -q '^stih407 ' ||
	{ echo "qemu: the build has no stih407 machine" >&2; exit 1; }
echo "$want" >"$stamp"
echo "qemu: built in $(( $(date +%s) - start )) s"
