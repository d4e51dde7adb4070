"""QEMU boards the series is tested on, and the kernel flavour each boots."""
from __future__ import annotations

import dataclasses
import pathlib

TOP = pathlib.Path(__file__).resolve().parent.parent
BUILD = TOP / "build"


@dataclasses.dataclass(frozen=True)
class Board:
    name: str
    flavour: str          # scripts/kernel.sh flavour
    machine: str          # qemu -M
    cpu: str | None
    dtb: str
    memory: str = "256"
    max_smp: int = 1

    def kernel(self) -> pathlib.Path:
        return BUILD / "out" / self.flavour / "arch/arm/boot/zImage"

    def dtb_path(self) -> pathlib.Path:
        return BUILD / "out" / self.flavour / "arch/arm/boot/dts" / self.dtb

    def initrd(self) -> pathlib.Path:
        return BUILD / f"initramfs-{self.flavour}.cpio.gz"


BOARDS = {
    b.name: b for b in (
        Board("vexpress-a15", "armv7", "vexpress-a15", "cortex-a15",
              "vexpress-v2p-ca15-tc1.dtb", max_smp=2),
        Board("vexpress-a9", "armv7", "vexpress-a9", "cortex-a9",
              "vexpress-v2p-ca9.dtb", max_smp=4),
        Board("versatilepb", "armv5", "versatilepb", None,
              "versatile-pb.dtb", memory="128"),
    )
}
