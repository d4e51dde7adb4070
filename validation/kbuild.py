"""Kernel builds beside the flavours of scripts/kernel.sh, for the tests
that need another configuration (modules, another architecture, another
tick): the same tree, toolchain settings and ccache as
scripts/kbuild-env.sh."""
from __future__ import annotations

import os
import pathlib
import subprocess

from boards import BUILD, TOP

TREE = BUILD / "linux"
CONFIGS = TOP / "scripts/configs"


def kmake(out: pathlib.Path, *targets: str, arch: str = "arm",
          cross: str = "arm-linux-gnueabi-", timeout: float = 2400,
          check: bool = True) -> subprocess.CompletedProcess:
    """make targets in build/linux with O=out; check=False returns the
    result (text) for the caller to judge."""
    env = dict(os.environ, KBUILD_BUILD_TIMESTAMP="2024-01-01", KBUILD_BUILD_USER="fiq",
               KBUILD_BUILD_HOST="qemu",
               CCACHE_DIR=os.environ.get("CCACHE_DIR", str(pathlib.Path.home() / ".cache/ccache")),
               CCACHE_BASEDIR=str(TOP), CCACHE_NOHASHDIR="1")
    cmd = ["make", "-s", "-C", str(TREE), f"O={out}", f"ARCH={arch}", f"CROSS_COMPILE={cross}",
           f"CC=ccache {cross}gcc", f"-j{os.cpu_count()}", *targets]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if check:
        assert r.returncode == 0, f"{' '.join(targets)}: {r.stderr[-3000:]}"
    return r


def configure(out: pathlib.Path, base: str, fragments: list[str] = (), arch: str = "arm",
              cross: str = "arm-linux-gnueabi-") -> str:
    """base (a defconfig target) + scripts/configs fragments, as
    scripts/kbuild-env.sh's configure_kernel; every CONFIG_ line of the
    last fragment must have stuck.  Returns the .config."""
    out.mkdir(parents=True, exist_ok=True)
    kmake(out, base, arch=arch, cross=cross, timeout=600)
    if fragments:
        subprocess.run([str(TREE / "scripts/kconfig/merge_config.sh"), "-m", "-O", str(out),
                        str(out / ".config"), *(str(CONFIGS / f) for f in fragments)],
                       check=True, capture_output=True, timeout=600)
        kmake(out, "olddefconfig", arch=arch, cross=cross, timeout=600)
    config = (out / ".config").read_text().splitlines()
    for frag in fragments[-1:]:
        for line in (CONFIGS / frag).read_text().splitlines():
            if line.startswith("CONFIG_") or line.startswith("# CONFIG_"):
                assert line in config, f"{frag}: {line} did not stick"
    return "\n".join(config)
