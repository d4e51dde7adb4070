#!/bin/bash
# make dtbs_check on the DTBs the series touches, on the pristine tree and on
# the patched one: fail if the series adds a warning.  Both kernel flavours:
# armv7 (vexpress, STi, orangepi-pc, ast2600-evb, sabrelite) and armv5 (versatile).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dtbs_armv7=(vexpress-v2p-ca15-tc1.dtb vexpress-v2p-ca15_a7.dtb vexpress-v2p-ca5s.dtb
            vexpress-v2p-ca9.dtb stih407-b2120.dtb stih410-b2120.dtb stih410-b2260.dtb
            stih418-b2199.dtb stih418-b2264.dtb
            sun8i-h3-orangepi-pc.dtb sun8i-h3-orangepi-pc-plus.dtb
            aspeed-ast2600-evb.dtb aspeed-ast2600-evb-a1.dtb
            imx6q-sabrelite.dtb imx6dl-sabrelite.dtb)
dtbs_armv5=(versatile-ab.dtb versatile-ab-ib2.dtb versatile-pb.dtb)
wt=$top/build/dtbs-pristine
. "$top/scripts/kbuild-env.sh"

if [ ! -d "$wt" ]; then
	git -C "$top/build/linux" worktree prune
	git -C "$top/build/linux" worktree add -q --detach "$wt" pristine
fi

check() {	# tree out flavour dtbs... -> normalised warnings on stdout
	local tree=$1 out=$2 flavour=$3 frags
	shift 3
	# configured again when the fragments change (boards join the flavour)
	frags=$(cat $(fragments_for "$flavour") | sha256sum | cut -d' ' -f1)
	if [ ! -f "$out/.config" ] || [ "$(cat "$out.frags" 2>/dev/null)" != "$frags" ]; then
		configure_kernel "$tree" "$out" "$flavour"
		echo "$frags" > "$out.frags"
	fi
	rm -f "$out"/arch/arm/boot/dts/*.dtb
	# What dtbs_check does, for the touched DTBs only (the flavour builds
	# hundreds): the processed schemas, then each DTB validated as it is
	# built.  DT_SCHEMA_FILES: of the binding examples only the GIC's are
	# checked (all of them take half an hour; test_series.py checks the
	# series' bindings), the processed schemas are all of them still.
	# -j1: parallel dt-validate runs interleave their lines
	# A warning about a whole node quotes its content: the same warning
	# with other properties inside it (a VIC specifier grown a cell) is
	# not a new one, so the quoted node is left out.
	kmake "$tree" "$out" -j1 CHECK_DTBS=y dt_binding_check \
		DT_SCHEMA_FILES=interrupt-controller/arm,gic.yaml "$@" 2>&1 |
		sed -e "s|$tree/||g" -e "s|$out/||g" \
		    -e "s/: {'.*} should not be valid under /: {node} should not be valid under /" |
		sort -u
	ls "$out"/arch/arm/boot/dts/*.dtb | xargs -n1 basename > "$out.dtbs"
}

failed=0
for flavour in ${FLAVOURS:-armv7 armv5}; do
	# armv7 keeps the output names it always had
	sfx=$([ "$flavour" = armv7 ] || echo "-$flavour")
	pristine=$top/build/out/dtbs-pristine$sfx patched=$top/build/out/dtbs-patched$sfx
	declare -n dtbs=dtbs_$flavour
	check "$wt" "$pristine" "$flavour" "${dtbs[@]}" > "$pristine.txt"
	check "$top/build/linux" "$patched" "$flavour" "${dtbs[@]}" > "$patched.txt"
	cmp -s "$pristine.dtbs" "$patched.dtbs" ||
		{ echo "dtbs_check $flavour: the two sides built different DTBs" >&2; exit 1; }
	for d in "${dtbs[@]}"; do
		grep -qx "$d" "$patched.dtbs" || { echo "dtbs_check $flavour: $d not built" >&2; exit 1; }
	done
	new=$(comm -13 "$pristine.txt" "$patched.txt")
	echo "dtbs_check $flavour: ${#dtbs[@]} DTBs, $(wc -l < "$pristine.txt") warnings on pristine, $(wc -l < "$patched.txt") with the series"
	if [ -n "$new" ]; then
		echo "dtbs_check $flavour: new with the series:"; echo "$new"; failed=1
	fi
	unset -n dtbs
done
exit $failed
