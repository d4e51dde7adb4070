"""kexec out of a kernel that ran the GIC with interrupt groups.

With the FIQ debugger on, the GIC runs every interrupt in Group 1 and
enables both groups.  A kernel started by kexec that does not use groups
(mainline, or the series' kernel without irqchip.fiq_nmi=1) enables Group 0
only and expects everything there: left as it is, its timer interrupt (a
banked PPI) and every SPI would never arrive.  The series puts the GIC back
in Group 0 on the way out (the reboot notifier, or hotplug on SMP).

vexpress-a15, one CPU: vexpress cannot kexec with more (its smp_ops have no
cpu_kill), and its DT lists two, so the test's copy keeps cpu@0 only
(dtb_tweak.one_cpu; nr_cpus=1 would warn).  First kernel: the series' with the FIQ debugger on; it must run
groups (the contrast: IGROUPR non-zero).  It kexecs (Debian's
kexec-tools:armel, scripts/kexec-initramfs.sh) into

- the kernel without the series (scripts/pristine.sh), which never writes
  GICD_IGROUPR: only the first kernel's clean-up can leave it at zero;
- the series' kernel with the FIQ debugger off.

The second kernel must be the one asked for (a symbol only the series has,
in kallsyms), its shell must answer, its timer interrupts count up, and its
GIC hold every interrupt in Group 0 with Group 1 disabled, as mainline
leaves it.
"""
from __future__ import annotations

import dataclasses
import re
import time

import pytest

from boards import BOARDS, BUILD, Board
from dtb_tweak import one_cpu
from fiq_helpers import clean_boot_log
from qemu import CMDLINE_FIQ, CMDLINE_IRQ
from test_harm import gic_regs

INITRD = BUILD / "initramfs-kexec.cpio.gz"
# a function of the series' GIC driver, absent from the kernel without it
SERIES_SYMBOL = "gic_drop_groups"


@dataclasses.dataclass(frozen=True)
class KexecBoard(Board):
    """The board with the initramfs that carries kexec and both kernels."""

    def initrd(self):
        return INITRD


def groups(regs: dict[str, int]) -> dict[str, int]:
    return {n: v for n, v in regs.items() if n.startswith("GICD_IGROUPR")}


def timer_count(g) -> int:
    line = g.sh("grep arch_timer /proc/interrupts")
    m = re.match(r"\s*\d+:\s+(\d+)", line)
    assert m, line
    return int(m.group(1))


@pytest.mark.parametrize("target", ["pristine", "series"])
def test_kexec_into_a_kernel_without_groups(guest, figure, target):
    if not INITRD.exists():
        pytest.fail(f"{INITRD} missing: run 'make kexec-initramfs'")
    board = KexecBoard(**dataclasses.asdict(BOARDS["vexpress-a15"]))
    dtb = BUILD / "dtbs" / "vexpress-a15-one-cpu.dtb"
    dtb.parent.mkdir(parents=True, exist_ok=True)
    one_cpu(board.dtb_path(), dtb)
    g = guest(board, cmdline=CMDLINE_FIQ, dtb=dtb)
    assert "GIC: interrupt groups available" in clean_boot_log(g)
    before = groups(gic_regs(g))
    assert before and any(before.values()), f"the first kernel runs no groups: {before}"

    cmdline = CMDLINE_IRQ
    out = g.sh(f"/usr/sbin/kexec -l /kexec/{target}.zImage --dtb=/sys/firmware/fdt "
               f"--initrd=/kexec/{target}.cpio.gz --command-line='{cmdline}'; echo rc=$?")
    assert out.strip().endswith("rc=0"), out
    g.sh_nowait("/usr/sbin/kexec -e")
    t0 = time.monotonic()
    g.wait_shell(timeout=90)
    figure(f"kexec into {target}: kexec -e to the second kernel's shell",
           f"{time.monotonic() - t0:.1f} s")

    assert g.sh("cat /proc/cmdline").strip() == cmdline
    has_series = int(g.sh(f"grep -c -w {SERIES_SYMBOL} /proc/kallsyms || true").strip())
    assert has_series == (target == "series"), f"{SERIES_SYMBOL} in kallsyms: {has_series}"
    assert "GIC: interrupt groups available" not in clean_boot_log(g)

    first = timer_count(g)
    time.sleep(1)
    second = timer_count(g)
    figure(f"kexec into {target}: arch_timer interrupts in 1 s", str(second - first))
    assert second > first, (first, second)

    regs = gic_regs(g)
    assert not any(groups(regs).values()), groups(regs)
    assert regs["GICD_CTLR"] == 1, f"GICD_CTLR {regs['GICD_CTLR']:#x}"
