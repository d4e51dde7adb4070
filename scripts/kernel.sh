#!/bin/bash
# Build one kernel flavour out of tree: scripts/kernel.sh armv7|armv5
#   armv7: vexpress_defconfig (+ STi) for vexpress-a9/a15
#   armv5: versatile_defconfig for versatilepb
# Output in build/out/<flavour>.  Skips make entirely when neither the tree
# (HEAD, clean) nor the config fragments changed since the last good build.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:?usage: kernel.sh armv7|armv5}
case $flavour in
armv7) defconfig=vexpress_defconfig ;;
armv5) defconfig=versatile_defconfig ;;
*) echo "kernel: unknown flavour $flavour" >&2; exit 1 ;;
esac

src=$top/build/linux
out=$top/build/out/$flavour
frags=("$top/scripts/configs/trim.config" "$top/scripts/configs/debug.config"
       "$top/scripts/configs/$flavour.config")
stamp=$out/.fiq-build-stamp
mkdir -p "$out"

export ARCH=arm CROSS_COMPILE=arm-linux-gnueabi-
export KBUILD_BUILD_TIMESTAMP="2024-01-01" KBUILD_BUILD_USER=fiq KBUILD_BUILD_HOST=qemu
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache} CCACHE_BASEDIR=$top CCACHE_NOHASHDIR=1
ccache -M 8G >/dev/null 2>&1 || true

want=$({ git -C "$src" rev-parse HEAD; cat "${frags[@]}"; echo "$defconfig"; } | sha256sum | cut -d' ' -f1)
if git -C "$src" diff --quiet HEAD && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ -f "$out/arch/arm/boot/zImage" ]; then
	echo "kernel $flavour: up to date"
	exit 0
fi
rm -f "$stamp"

kmake() {
	make -s -C "$src" O="$out" CC="ccache ${CROSS_COMPILE}gcc" -j"$(nproc)" "$@"
}

kmake "$defconfig"
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" >/dev/null
kmake olddefconfig
# every option a fragment asks for must have survived olddefconfig
bad=0
while read -r line; do
	case $line in
	CONFIG_*=*) grep -qx "$line" "$out/.config" || { echo "kernel $flavour: $line did not stick" >&2; bad=1; } ;;
	"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}
		grep -q "^$opt=" "$out/.config" && { echo "kernel $flavour: $opt still set" >&2; bad=1; } ;;
	esac
done < <(cat "${frags[@]}")
[ $bad -eq 0 ] || exit 1

start=$(date +%s)
kmake zImage modules dtbs
echo "kernel $flavour: built in $(( $(date +%s) - start )) s"
echo "$want" > "$stamp"
