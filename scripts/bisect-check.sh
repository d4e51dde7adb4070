#!/bin/bash
# Build every prefix of the series (pristine + patch 1..n) for one flavour,
# out of tree in build/out/bisect-<flavour>, to prove the series bisectable.
#   scripts/bisect-check.sh armv7|armv5
# Uses a throwaway worktree of build/linux; the tree itself is not touched.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:-armv7}
. "$top/scripts/kbuild-env.sh"
defconfig_for "$flavour" >/dev/null
wt=$top/build/bisect-tree
out=$top/build/out/bisect-$flavour
git -C "$top/build/linux" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
git -C "$top/build/linux" worktree prune
git -C "$top/build/linux" worktree add -q --detach "$wt" HEAD
trap 'git -C "$top/build/linux" worktree remove --force "$wt"' EXIT
commits=$(git -C "$wt" rev-list --reverse pristine..HEAD)
mkdir -p "$out"
n=0
for c in $commits; do
	n=$((n + 1))
	git -C "$wt" checkout -q "$c"
	# configure again where a patch adds Kconfig options, so that what the
	# fragments enable (KUnit tests...) is built from the patch that adds it
	if [ $n -eq 1 ] || git -C "$wt" diff --name-only HEAD~1 HEAD | grep -q 'Kconfig'; then
		configure_kernel "$wt" "$out" "$flavour"
	fi
	start=$(date +%s)
	if kmake "$wt" "$out" zImage dtbs >"$out/build-$n.log" 2>&1 && ! grep -q "warning:" "$out/build-$n.log"; then
		echo "bisect $flavour: [$n] ok   ($(( $(date +%s) - start )) s) $(git -C "$wt" log -1 --format=%s)"
	else
		echo "bisect $flavour: [$n] FAIL $(git -C "$wt" log -1 --format=%s)"
		grep -E "error|warning" "$out/build-$n.log" | head -20
		exit 1
	fi
done
