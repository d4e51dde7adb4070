#!/bin/bash
# Build build/initramfs-<flavour>.cpio.gz: Debian's busybox-static:armel (runs
# on ARMv5 and ARMv7), an init that mounts proc/sys/dev/debugfs and gives a
# shell on the console, and the test modules of validation/modules built
# against that flavour's kernel (a second cpio member, /lib/modules).
#   scripts/initramfs.sh armv7|armv5|pristine-armv7
# (pristine-armv7: the kernel without the series, scripts/pristine.sh)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dl=$top/build/dl
root=$top/build/initramfs
flavour=${1:?usage: initramfs.sh armv7|armv5|pristine-armv7}
src=$top/build/linux
case $flavour in pristine-*) src=$top/build/linux-pristine ;; esac
out=$top/build/initramfs-base.cpio.gz
mkdir -p "$dl"

deb=$(ls "$dl"/busybox-static_*_armel.deb 2>/dev/null | head -1 || true)
if [ -z "$deb" ]; then
	(cd "$dl" && apt-get download -q -o APT::Sandbox::User=root busybox-static:armel >/dev/null)
	deb=$(ls "$dl"/busybox-static_*_armel.deb | head -1)
fi

gen=$top/build/gen_init_cpio
if [ ! -x "$gen" ]; then
	cc -O2 -o "$gen" "$top/build/linux/usr/gen_init_cpio.c"
fi

inputs=$(cat "$deb" "$0" "$top/scripts/init.sh" | sha256sum | cut -d' ' -f1)
if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$inputs" ]; then
	:
else

rm -rf "$root"
mkdir -p "$root/x"
dpkg-deb -x "$deb" "$root/x"
cat > "$root/list" <<LIST
dir /bin 0755 0 0
dir /dev 0755 0 0
dir /proc 0755 0 0
dir /sys 0755 0 0
dir /tmp 1777 0 0
dir /root 0700 0 0
dir /lib 0755 0 0
dir /lib/modules 0755 0 0
nod /dev/console 0600 0 0 c 5 1
file /bin/busybox $root/x/bin/busybox 0755 0 0
slink /bin/sh busybox 0777 0 0
file /init $top/scripts/init.sh 0755 0 0
LIST
"$gen" "$root/list" | gzip -9n > "$out.tmp"
mv "$out.tmp" "$out"
echo "$inputs" > "$out.stamp"
echo "initramfs: base $(du -h "$out" | cut -f1) from $(basename "$deb")"
fi

# test modules, built out of the repo in build/modules-<flavour>
kout=$top/build/out/$flavour
mdir=$top/build/modules-$flavour
mkdir -p "$mdir"
rsync -a --checksum "$top/validation/modules/" "$mdir/"
make -s -C "$src" O="$kout" ARCH=arm CROSS_COMPILE=arm-linux-gnueabi- \
	CC="ccache arm-linux-gnueabi-gcc" M="$mdir" modules
{
	echo "dir /lib 0755 0 0"
	echo "dir /lib/modules 0755 0 0"
	for ko in "$mdir"/*.ko; do
		echo "file /lib/modules/$(basename "$ko") $ko 0644 0 0"
	done
} > "$mdir/cpio.list"
final=$top/build/initramfs-$flavour.cpio.gz
{ cat "$out"; "$gen" "$mdir/cpio.list" | gzip -9n; } > "$final.tmp"
mv "$final.tmp" "$final"
echo "initramfs $flavour: $(du -h "$final" | cut -f1) with $(ls "$mdir"/*.ko | xargs -n1 basename | tr '\n' ' ')"
