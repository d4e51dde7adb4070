# Sourced by the scripts that build kernels: one place for the cross
# toolchain, ccache and the configuration of a kernel flavour.
#   armv7: vexpress_defconfig (+ STi) for vexpress-a9/a15
#   armv5: versatile_defconfig for versatilepb
# Expects $top (the repository root).

export ARCH=arm CROSS_COMPILE=arm-linux-gnueabi-
export KBUILD_BUILD_TIMESTAMP="2024-01-01" KBUILD_BUILD_USER=fiq KBUILD_BUILD_HOST=qemu
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache} CCACHE_BASEDIR=$top CCACHE_NOHASHDIR=1

defconfig_for() {	# flavour
	case $1 in
	armv7) echo vexpress_defconfig ;;
	armv5) echo versatile_defconfig ;;
	*) echo "unknown kernel flavour $1" >&2; return 1 ;;
	esac
}

fragments_for() {	# flavour
	echo "$top/scripts/configs/trim.config" "$top/scripts/configs/debug.config" \
	     "$top/scripts/configs/$1.config"
}

kmake() {	# src out make-args...
	local src=$1 out=$2
	shift 2
	make -s -C "$src" O="$out" CC="ccache ${CROSS_COMPILE}gcc" -j"$(nproc)" "$@"
}

configure_kernel() {	# src out flavour: defconfig + the fragments
	local src=$1 out=$2 defconfig
	defconfig=$(defconfig_for "$3") || return 1
	mkdir -p "$out"
	kmake "$src" "$out" "$defconfig" >/dev/null
	# shellcheck disable=SC2046
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
		$(fragments_for "$3") >/dev/null 2>&1
	kmake "$src" "$out" olddefconfig >/dev/null
}
