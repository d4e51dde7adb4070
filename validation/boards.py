"""QEMU boards the series is tested on, and the kernel flavour each boots."""
from __future__ import annotations

import dataclasses
import pathlib
import re
import subprocess

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
    qemu_dtb: bool = False  # the DTB is QEMU's own (virt), see qemu_dtb_path()

    def kernel(self) -> pathlib.Path:
        return BUILD / "out" / self.flavour / "arch/arm/boot/zImage"

    def dtb_path(self) -> pathlib.Path:
        if self.qemu_dtb:
            return self.qemu_dtb_path()
        return BUILD / "out" / self.flavour / "arch/arm/boot/dts" / self.dtb

    def qemu_machine(self, smp: int = 1, machine_opts: str = "") -> list[str]:
        """qemu-system-arm's arguments for the machine itself: board,
        memory, CPUs, no display and no NIC.  The kernels have no network,
        and virt's default NIC (virtio-net-pci) wants a boot ROM,
        efi-virtio.rom, from ipxe-qemu, which qemu-system-arm only
        recommends: without -nic none virt does not start where it is
        missing."""
        machine = self.machine + ("," + machine_opts if machine_opts else "")
        return (["-M", machine, "-m", self.memory, "-smp", str(smp),
                 "-display", "none", "-nic", "none"]
                + (["-cpu", self.cpu] if self.cpu else []))

    def qemu_dtb_path(self, smp: int = 1, machine_opts: str = "") -> pathlib.Path:
        """The DTB QEMU generates for this machine (-machine dumpdtb=),
        packed: QEMU pads it to 1 MiB, and a 1 MiB -dtb stops the ARM
        kernel before its first message.  Regenerated on every call (it
        depends on the machine options, -m and -smp; a tenth of a second)."""
        tag = re.sub(r"[^A-Za-z0-9]+", "-", f"{machine_opts}-smp{smp}").strip("-")
        out = BUILD / "dtbs" / f"{self.name}-{tag}.dtb"
        out.parent.mkdir(parents=True, exist_ok=True)
        raw = out.with_suffix(".raw.dtb")
        dump = ",".join(o for o in (machine_opts, f"dumpdtb={raw}") if o)
        subprocess.run(["qemu-system-arm"] + self.qemu_machine(smp, dump),
                       check=True, capture_output=True)
        subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dtb", "-o", str(out), str(raw)],
                       check=True)
        raw.unlink()
        return out

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
        # QEMU virt, GICv2, its own DTB; with machine_opts="secure=on" the
        # kernel boots Non-secure and the (absent) firmware owns FIQ: the
        # TrustZone case.  highmem=off: the kernel has no LPAE.
        Board("virt", "armv7", "virt,gic-version=2,highmem=off", "cortex-a15",
              "virt.dtb", qemu_dtb=True),
    )
}
