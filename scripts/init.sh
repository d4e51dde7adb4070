#!/bin/sh
# /init of the test initramfs
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
# the test modules, with what the command line gives them (name.param=value) as modprobe would
for m in /lib/modules/*.ko; do
	[ -f "$m" ] || continue
	n=$(basename "$m" .ko)
	# shellcheck disable=SC2046 # one word per parameter
	insmod "$m" $(tr ' ' '\n' < /proc/cmdline | sed -n "s/^$n\.//p")
done
echo "init: $(uname -r) $(nproc) cpu(s), cmdline: $(cat /proc/cmdline)"
export PS1='fiqsh# '
echo "init: shell ready"
exec setsid cttyhack sh -l
