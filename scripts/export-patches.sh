#!/bin/bash
# Export the commits of build/linux (pristine..HEAD) into the topic folders
# as git format-patch files and rewrite the series file, so that patches are
# never edited by hand.  Topic by subject prefix:
#   dt-bindings: -> bindings/   irqchip/, genirq:, ARM FIQ entry, the i.MX GPC -> irqchip/
#   ARM: dts:    -> dts/        anything else (ARM:, kgdb:, serial:) -> kgdb/
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git -C "$tree" diff --quiet HEAD || { echo "export: build/linux has uncommitted changes" >&2; exit 1; }
git -C "$tree" format-patch -q --zero-commit --no-signature --no-numbered \
	-o "$tmp" pristine..HEAD

old=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/series")
{
	sed -n '/^#/p' "$top/series"
	for f in "$tmp"/*.patch; do
		[ -e "$f" ] || continue
		subject=$(sed -n 's/^Subject: \[PATCH\] //p' "$f" | head -1)
		case $subject in
		dt-bindings:*) dir=bindings ;;
		irqchip*|genirq*|"ARM: "*handle_fiq*|"ARM: entry:"*|"ARM: imx: gpc:"*) dir=irqchip ;;
		"ARM: dts:"*) dir=dts ;;
		*) dir=kgdb ;;
		esac
		name=$(basename "$f" | sed 's/^[0-9]*-//')
		cp "$f" "$top/$dir/$name"
		echo "$dir/$name"
	done
} > "$tmp/series"
new=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$tmp/series")
for p in $old; do
	grep -qxF "$p" <<< "$new" || { rm -f "$top/$p"; echo "export: removed $p"; }
done
cp "$tmp/series" "$top/series"

# the tree now carries exactly the series: tell scripts/tree.sh
series_hash=$({ cat "$top/series"; for p in $new; do cat "$top/$p"; done; } | sha256sum | cut -d' ' -f1)
echo "$series_hash $(git -C "$tree" rev-parse HEAD)" > "$tree/.git/fiq-series-stamp"
echo "export: $(wc -w <<< "$new") patches"
sed -e '/^#/d' "$top/series"
