"""QEMU boards the series is tested on, and the kernel flavour each boots."""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import subprocess

TOP = pathlib.Path(__file__).resolve().parent.parent
BUILD = TOP / "build"
# The one switch: the interrupt controller may deliver NMIs as FIQ.
FIQ_SWITCH = "irqchip.fiq_nmi=1"
OWN_QEMU = BUILD / "qemu" / "qemu-system-arm"


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
    # the SoC models have a fixed number of CPUs: fewer are booted with
    # maxcpus= (kernel_cmdline())
    min_smp: int = 1
    console: str = "ttyAMA0"  # console and kgdboc port
    serial_nulls: int = 0     # QEMU serial ports before the console's
    qemu_extra: tuple[str, ...] = ()
    cmdline_extra: str = ""   # e.g. fiq_test's storm_spi= where SPI 47 is taken
    # whose qemu-system-arm: Debian's, or the project's own
    # (scripts/qemu.sh: the STiH407 model, a PL011 that honours RXE)
    own_qemu: bool = False

    def cmdline(self, fiq: bool) -> str:
        """The base command line: console and kgdboc on the board's UART,
        and the one switch when fiq."""
        return f"console={self.console} kgdboc={self.console}" + (f" {FIQ_SWITCH}" if fiq else "")

    def kernel_cmdline(self, smp: int) -> str:
        """What the board adds to any command line."""
        extra = [self.cmdline_extra] if self.cmdline_extra else []
        if smp < self.min_smp:
            extra.append(f"maxcpus={smp}")
        return " ".join(extra)

    def qemu_binary(self, own: bool | None = None) -> str:
        """The qemu-system-arm that runs this board (own: the project's,
        whatever the board says)."""
        if self.own_qemu if own is None else own:
            return str(OWN_QEMU)
        return "qemu-system-arm"

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
        return (["-M", machine, "-m", self.memory, "-smp", str(max(smp, self.min_smp)),
                 "-display", "none", "-nic", "none"]
                + (["-cpu", self.cpu] if self.cpu else []) + list(self.qemu_extra)
                + ["-serial", "null"] * self.serial_nulls)

    def qemu_dtb_path(self, smp: int = 1, machine_opts: str = "") -> pathlib.Path:
        """The DTB QEMU generates for this machine (-machine dumpdtb=),
        packed: QEMU pads it to 1 MiB, and a 1 MiB -dtb stops the ARM
        kernel before its first message.  Regenerated on every call (it
        depends on the machine options, -m and -smp; a tenth of a second)."""
        tag = re.sub(r"[^A-Za-z0-9]+", "-", f"{machine_opts}-smp{smp}").strip("-")
        out = BUILD / "dtbs" / f"{self.name}-{tag}.dtb"
        out.parent.mkdir(parents=True, exist_ok=True)
        # per process, then renamed: test.sh runs two pytest workers
        raw = out.with_suffix(f".{os.getpid()}.raw.dtb")
        packed = out.with_suffix(f".{os.getpid()}.dtb")
        dump = ",".join(o for o in (machine_opts, f"dumpdtb={raw}") if o)
        subprocess.run([self.qemu_binary()] + self.qemu_machine(smp, dump),
                       check=True, capture_output=True)
        subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dtb", "-o", str(packed), str(raw)],
                       check=True)
        raw.unlink()
        packed.replace(out)
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
        # Allwinner H3: GIC-400 without Security Extensions, open to the
        # kernel (booted Non-secure Hyp, PSCI by SMC); UART0 is a DesignWare
        # 8250; four CPUs, always.  SPI 47 is the EHCI's: the storm takes 98.
        Board("orangepi-pc", "armv7", "orangepi-pc", None, "sun8i-h3-orangepi-pc.dtb",
              memory="1024", max_smp=4, min_smp=4, console="ttyS0",
              cmdline_extra="fiq_test.storm_spi=98"),
        # Aspeed AST2600: Cortex-A7 GICv2; without Security Extensions
        # (has_el3=off) the GIC is the kernel's, with them QEMU boots it
        # Non-secure and keeps FIQ (test_trustzone.py); UART5, QEMU's first
        # serial port, is ttyS4 (DesignWare 8250 in the EVB's DTS); two CPUs.
        Board("ast2600-evb", "armv7", "ast2600-evb", None, "aspeed-ast2600-evb.dtb",
              memory="1024", max_smp=2, min_smp=2, console="ttyS4",
              qemu_extra=("-global", "cortex-a7-arm-cpu.has_el3=off"),
              cmdline_extra="fiq_test.storm_spi=98"),
        # NXP i.MX6Q SABRE Lite: Cortex-A9 MPCore GIC with Security
        # Extensions, booted Secure like vexpress-a9; the console is UART2
        # (ttymxc1), QEMU's second serial port, behind the GPC; four CPUs
        # (with one, QEMU's GIC has no CPU mask: "GIC CPU mask not found");
        # SPI 47 is the SoC's, the storm takes 98.
        Board("sabrelite", "armv7", "sabrelite", None, "imx6q-sabrelite.dtb",
              memory="1024", max_smp=4, min_smp=4, console="ttymxc1", serial_nulls=1,
              cmdline_extra="fiq_test.storm_spi=98"),
        # STMicroelectronics STiH407 and STiH410 B2120: two Cortex-A9s
        # (GICv1 with Security Extensions, booted Secure), the console on
        # the SBC's ASC0 (st-asc, ttyAS0).  QEMU has no STi machine: the
        # project builds one (validation/qemu/, scripts/qemu.sh).
        # st-pinctrl's probe alone prints some 150 lines: a larger log
        # buffer keeps the boot's first lines (test_harm.py compares logs)
        Board("b2120", "armv7", "stih407", None, "stih407-b2120.dtb",
              memory="512", max_smp=2, min_smp=2, console="ttyAS0", own_qemu=True,
              cmdline_extra="log_buf_len=256K"),
        Board("b2120-stih410", "armv7", "stih407", None, "stih410-b2120.dtb",
              memory="512", max_smp=2, min_smp=2, console="ttyAS0", own_qemu=True,
              cmdline_extra="log_buf_len=256K"),
    )
}
