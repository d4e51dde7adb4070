#!/bin/sh
# /init of the test initramfs
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
for m in /lib/modules/*.ko; do [ -f "$m" ] && insmod "$m"; done
echo "init: $(uname -r) $(nproc) cpu(s), cmdline: $(cat /proc/cmdline)"
export PS1='fiqsh# '
echo "init: shell ready"
exec setsid cttyhack sh -l
