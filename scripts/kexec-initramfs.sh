#!/bin/bash
# build/initramfs-kexec.cpio.gz for validation/tests/test_kexec.py: the
# ARMv7 test initramfs plus what it takes to kexec from there: Debian's
# kexec-tools:armel and the libc it links, and the kernels to start with
# their own initramfs: the series' (build/out/armv7) and the one without
# the series (build/out/pristine-armv7, scripts/pristine.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dl=$top/build/dl
root=$top/build/kexec-root
mkdir -p "$dl"

debs=()
for pkg in kexec-tools libc6; do
	deb=$(ls "$dl"/"${pkg}"_*_armel.deb 2>/dev/null | head -1 || true)
	if [ -z "$deb" ]; then
		(cd "$dl" && apt-get download -q -o APT::Sandbox::User=root "$pkg:armel" >/dev/null)
		deb=$(ls "$dl"/"${pkg}"_*_armel.deb | head -1)
	fi
	debs+=("$deb")
done

zimage=$top/build/out/armv7/arch/arm/boot/zImage
pzimage=$top/build/out/pristine-armv7/arch/arm/boot/zImage
base=$top/build/initramfs-armv7.cpio.gz
pbase=$top/build/initramfs-pristine-armv7.cpio.gz
for f in "$zimage" "$pzimage" "$base" "$pbase"; do
	[ -f "$f" ] || { echo "kexec initramfs: $f missing (make kernels initramfs pristine)" >&2; exit 1; }
done

rm -rf "$root"
mkdir -p "$root"
for deb in "${debs[@]}"; do
	dpkg-deb -x "$deb" "$root"
done
lib=$root/lib/arm-linux-gnueabi
cat > "$root.list" <<LIST
dir /usr 0755 0 0
dir /usr/sbin 0755 0 0
file /usr/sbin/kexec $root/sbin/kexec 0755 0 0
dir /lib 0755 0 0
dir /lib/arm-linux-gnueabi 0755 0 0
file /lib/ld-linux.so.3 $lib/ld-linux.so.3 0755 0 0
file /lib/arm-linux-gnueabi/libc.so.6 $lib/libc.so.6 0755 0 0
dir /kexec 0755 0 0
file /kexec/series.zImage $zimage 0644 0 0
file /kexec/series.cpio.gz $base 0644 0 0
file /kexec/pristine.zImage $pzimage 0644 0 0
file /kexec/pristine.cpio.gz $pbase 0644 0 0
LIST
out=$top/build/initramfs-kexec.cpio.gz
{ cat "$base"; "$top/build/gen_init_cpio" "$root.list" | gzip -1n; } > "$out.tmp"
mv "$out.tmp" "$out"
echo "initramfs kexec: $(du -h "$out" | cut -f1) ($(basename "${debs[0]}"))"
