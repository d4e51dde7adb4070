#!/bin/bash
# make dtbs_check on the DTBs the series touches, on the pristine tree and on
# the patched one: fail if the series adds a warning.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dtbs=(vexpress-v2p-ca15-tc1.dtb vexpress-v2p-ca15_a7.dtb vexpress-v2p-ca5s.dtb
      vexpress-v2p-ca9.dtb stih407-b2120.dtb stih410-b2120.dtb stih410-b2260.dtb
      stih418-b2199.dtb stih418-b2264.dtb)
wt=$top/build/dtbs-pristine
. "$top/scripts/kbuild-env.sh"

if [ ! -d "$wt" ]; then
	git -C "$top/build/linux" worktree prune
	git -C "$top/build/linux" worktree add -q --detach "$wt" pristine
fi

check() {	# tree out -> normalised warnings on stdout
	local tree=$1 out=$2
	[ -f "$out/.config" ] || configure_kernel "$tree" "$out" armv7
	rm -f "$out"/arch/arm/boot/dts/*.dtb
	# -j1: parallel dt-validate runs interleave their lines
	kmake "$tree" "$out" -j1 dtbs_check 2>&1 |
		sed -e "s|$tree/||g" -e "s|$out/||g" | sort -u
	ls "$out"/arch/arm/boot/dts/*.dtb | xargs -n1 basename > "$out.dtbs"
}
check "$wt" "$top/build/out/dtbs-pristine" > "$top/build/out/dtbs-pristine.txt"
check "$top/build/linux" "$top/build/out/dtbs-patched" > "$top/build/out/dtbs-patched.txt"
cmp -s "$top/build/out/dtbs-pristine.dtbs" "$top/build/out/dtbs-patched.dtbs" ||
	{ echo "dtbs_check: the two sides built different DTBs" >&2; exit 1; }
for d in "${dtbs[@]}"; do
	grep -qx "$d" "$top/build/out/dtbs-patched.dtbs" || { echo "dtbs_check: $d not built" >&2; exit 1; }
done
new=$(comm -13 "$top/build/out/dtbs-pristine.txt" "$top/build/out/dtbs-patched.txt")
echo "dtbs_check: ${#dtbs[@]} DTBs, $(wc -l < "$top/build/out/dtbs-pristine.txt") warnings on pristine, $(wc -l < "$top/build/out/dtbs-patched.txt") with the series"
if [ -n "$new" ]; then
	echo "dtbs_check: new with the series:"; echo "$new"; exit 1
fi
