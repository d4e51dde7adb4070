#!/bin/bash
# Unpack linux-source-6.1 into build/linux (a git repo whose first commit,
# tagged "pristine", is the untouched package) and apply the series with
# git am.  Does nothing when the tree already carries exactly the series.
#
# Work in progress inside build/linux is never thrown away: if the tree has
# uncommitted changes or commits that the series does not know about, we
# stop and say so (export them with scripts/export-patches.sh first, or
# re-run with FORCE=1 to discard them).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux
tarball=/usr/src/linux-source-6.1.tar.xz
stamp=$tree/.git/fiq-series-stamp

export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"
export GIT_COMMITTER_NAME="FIQ debugger build" GIT_COMMITTER_EMAIL="fiq-debugger@localhost"

series_patches() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/series"
}

series_hash() {
	{ cat "$top/series"; series_patches | while read -r p; do cat "$top/$p"; done; } |
		sha256sum | cut -d' ' -f1
}

if [ ! -d "$tree/.git" ]; then
	[ -f "$tarball" ] || { echo "tree: $tarball missing (run scripts/deps.sh)" >&2; exit 1; }
	echo "tree: unpacking $(basename "$tarball")"
	rm -rf "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xf "$tarball" -C "$tree.tmp" --strip-components=1
	git -C "$tree.tmp" init -q
	git -C "$tree.tmp" add -A -f  # Debian's .gitignore hides the top level
	GIT_AUTHOR_NAME="Debian linux-source-6.1" GIT_AUTHOR_EMAIL="debian-kernel@lists.debian.org" \
		git -C "$tree.tmp" commit -q -m "Linux $(make -s -C "$tree.tmp" kernelversion) (Debian linux-source-6.1)"
	git -C "$tree.tmp" tag pristine
	# the series' author, for commits and Signed-off-by made in the tree
	git -C "$tree.tmp" config user.name "FIQ debugger team"
	git -C "$tree.tmp" config user.email "fiq-debugger@localhost"
	mv "$tree.tmp" "$tree"
fi

cd "$tree"
want=$(series_hash)
if [ -f "$stamp" ]; then
	read -r have_hash have_head < "$stamp"
	if [ "$have_hash" = "$want" ] && [ "$(git rev-parse HEAD)" = "$have_head" ] &&
	   git diff --quiet HEAD; then
		echo "tree: up to date ($(series_patches | wc -l) patches)"
		exit 0
	fi
else
	have_head=$(git rev-parse pristine)
fi

if [ -z "${FORCE:-}" ]; then
	if ! git diff --quiet HEAD; then
		echo "tree: build/linux has uncommitted changes; commit and export them" >&2
		echo "      (scripts/export-patches.sh) or re-run with FORCE=1 to drop them" >&2
		exit 1
	fi
	if [ "$(git rev-parse HEAD)" != "$have_head" ]; then
		echo "tree: build/linux has commits the series does not have:" >&2
		git log --oneline "$have_head..HEAD" >&2 || true
		echo "      export them (scripts/export-patches.sh) or re-run with FORCE=1" >&2
		exit 1
	fi
fi

git am --abort >/dev/null 2>&1 || true
git reset -q --hard pristine
n=0
while read -r p; do
	if ! git am -q --committer-date-is-author-date "$top/$p"; then
		echo "tree: $p does not apply" >&2
		git am --abort || true
		exit 1
	fi
	n=$((n + 1))
done < <(series_patches)
echo "$want $(git rev-parse HEAD)" > "$stamp"
echo "tree: applied $n patches"
