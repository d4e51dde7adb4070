#!/bin/bash
# Install what the project needs from Debian, idempotently: nothing is
# downloaded when everything is already there.
set -euo pipefail

# Installed without recommends: list what is used even where a listed
# package only recommends it (gcc, the host compiler for kbuild's host
# programs, gen_init_cpio and cpp: linux-source-6.1 recommends
# build-essential).  Nothing the tests run needs a recommended package: QEMU
# boots every board with -nic none, so virt wants no ipxe-qemu ROM.
pkgs=(linux-source-6.1 gcc gcc-arm-linux-gnueabi ccache make bc bison flex
      libssl-dev libelf-dev cpio kmod xz-utils rsync git perl
      qemu-system-arm device-tree-compiler dt-schema yamllint
      gcc-aarch64-linux-gnu
      python3 python3-pytest python3-pytest-timeout python3-pytest-xdist python3-pexpect python3-libfdt
      python3-yaml python3-docutils python3-sphinx
      dpkg-dev patch meson ninja-build pkg-config libglib2.0-dev libpixman-1-dev libfdt-dev
      zlib1g-dev)
# ...the last two lines build the project's own QEMU (scripts/qemu.sh) from
# Debian's qemu source, which needs a deb-src line for bookworm
srclist=/etc/apt/sources.list.d/fiq-debugger-src.sources

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if ! dpkg --print-foreign-architectures | grep -qx armel; then
	dpkg --add-architecture armel
	need_update=1
fi

if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	cat >"$srclist" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	need_update=1
fi

if [ ${#missing[@]} -gt 0 ] || [ -n "${need_update:-}" ]; then
	echo "deps: installing ${missing[*]:-(armel index)}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	[ ${#missing[@]} -eq 0 ] || apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
git config --global user.email >/dev/null 2>&1 ||
	git config --global user.email "fiq-debugger@localhost"
git config --global user.name >/dev/null 2>&1 ||
	git config --global user.name "FIQ debugger build"
exit 0
