#!/bin/bash
# The ARMv7 kernel WITHOUT the series, for the overhead comparison
# (validation/tests/test_overhead.py): the tree's tag "pristine" checked out
# as a worktree (build/linux-pristine), configured exactly like the armv7
# flavour (vexpress_defconfig + the same fragments; options only the series
# adds, e.g. CONFIG_ARM_GIC_KUNIT_TEST, simply do not exist there), built
# into build/out/pristine-armv7, plus an initramfs whose fiq_test.ko is
# built against it (build/initramfs-pristine-armv7.cpio.gz).
# Skips the build when the pristine commit and the fragments are unchanged.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/kbuild-env.sh"
wt=$top/build/linux-pristine
out=$top/build/out/pristine-armv7
stamp=$out/.fiq-build-stamp

if [ ! -d "$wt" ]; then
	git -C "$top/build/linux" worktree prune
	git -C "$top/build/linux" worktree add -q --detach "$wt" pristine
fi
git -C "$wt" checkout -q --detach pristine
read -r -a frags <<< "$(fragments_for armv7)"
want=$({ git -C "$wt" rev-parse HEAD; cat "${frags[@]}"; } | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$out/arch/arm/boot/zImage" ]; then
	echo "kernel pristine-armv7: up to date"
else
	rm -f "$stamp"
	configure_kernel "$wt" "$out" armv7
	start=$(date +%s)
	kmake "$wt" "$out" zImage modules dtbs
	echo "kernel pristine-armv7: built in $(( $(date +%s) - start )) s"
	echo "$want" > "$stamp"
fi
bash "$top/scripts/initramfs.sh" pristine-armv7
