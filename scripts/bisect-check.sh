#!/bin/bash
# Build every prefix of the series (pristine + patch 1..n) for one flavour,
# out of tree in build/out/bisect-<flavour>, to prove the series bisectable.
#   scripts/bisect-check.sh armv7|armv5
# Uses a throwaway worktree of build/linux; the tree itself is not touched.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:-armv7}
case $flavour in armv7) defconfig=vexpress_defconfig ;; armv5) defconfig=versatile_defconfig ;; esac
wt=$top/build/bisect-tree
out=$top/build/out/bisect-$flavour
export ARCH=arm CROSS_COMPILE=arm-linux-gnueabi- CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
export CCACHE_BASEDIR=$top CCACHE_NOHASHDIR=1 KBUILD_BUILD_TIMESTAMP=2024-01-01
git -C "$top/build/linux" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
git -C "$top/build/linux" worktree prune
git -C "$top/build/linux" worktree add -q --detach "$wt" HEAD
trap 'git -C "$top/build/linux" worktree remove --force "$wt"' EXIT
commits=$(git -C "$wt" rev-list --reverse pristine..HEAD)
mkdir -p "$out"
kmake() { make -s -C "$wt" O="$out" CC="ccache ${CROSS_COMPILE}gcc" -j"$(nproc)" "$@"; }
n=0
for c in $commits; do
	n=$((n + 1))
	git -C "$wt" checkout -q "$c"
	if [ $n -eq 1 ]; then
		kmake "$defconfig"
		"$wt/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
			"$top"/scripts/configs/{trim,debug,$flavour}.config >/dev/null
		kmake olddefconfig
	fi
	start=$(date +%s)
	if kmake zImage dtbs >"$out/build-$n.log" 2>&1 && ! grep -q "warning:" "$out/build-$n.log"; then
		echo "bisect $flavour: [$n] ok   ($(( $(date +%s) - start )) s) $(git -C "$wt" log -1 --format=%s)"
	else
		echo "bisect $flavour: [$n] FAIL $(git -C "$wt" log -1 --format=%s)"
		grep -E "error|warning" "$out/build-$n.log" | head -20
		exit 1
	fi
done
