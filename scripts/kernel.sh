#!/bin/bash
# Build one kernel flavour out of tree: scripts/kernel.sh armv7|armv5
# (flavours in scripts/kbuild-env.sh).  Output in build/out/<flavour>.  Skips make entirely when neither the tree
# (HEAD, clean) nor the config fragments changed since the last good build.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:?usage: kernel.sh armv7|armv5}
. "$top/scripts/kbuild-env.sh"
defconfig=$(defconfig_for "$flavour")

src=$top/build/linux
out=$top/build/out/$flavour
read -r -a frags <<< "$(fragments_for "$flavour")"
stamp=$out/.fiq-build-stamp
mkdir -p "$out"

ccache -M 8G >/dev/null 2>&1 || true

want=$({ git -C "$src" rev-parse HEAD; cat "${frags[@]}"; echo "$defconfig"; } | sha256sum | cut -d' ' -f1)
if git -C "$src" diff --quiet HEAD && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ -f "$out/arch/arm/boot/zImage" ]; then
	echo "kernel $flavour: up to date"
	exit 0
fi
rm -f "$stamp"

configure_kernel "$src" "$out" "$flavour"
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
kmake "$src" "$out" zImage modules dtbs
echo "kernel $flavour: built in $(( $(date +%s) - start )) s"
echo "$want" > "$stamp"
