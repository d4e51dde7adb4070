"""TrustZone: QEMU virt,secure=on boots the kernel Non-secure.

On a TrustZone system the Secure firmware owns FIQ: the Non-secure kernel
cannot put an interrupt in Group 0 (GICD_IGROUPR is RAZ/WI for it), so
there is no FIQ to take.  QEMU's virt machine with secure=on and -kernel
models that boot (EL3 present, kernel entered in Non-secure SVC, every
interrupt put in Group 1 by QEMU's boot code).  The ARMv7 test kernel
boots there as is ("Generic DT based system", QEMU's own DTB), no
configuration change.

What must happen: the GIC says once that FIQ is unavailable; it then
offers no NMI at all, so kgdboc does not take the UART's interrupt (and,
as the GIC has said why, says nothing more), the port keeps its driver's
IRQ and kgdboc enters kdb by IRQ exactly as mainline does; no oops.  Checked with QEMU's DTB and with one whose UART
is marked GIC_FIQ_CAPABLE (a board whose DT says FIQ while its firmware
keeps it).  The control: the same kernel and flagged DTB on virt with
secure=off (the kernel owns the GIC) enters kdb by FIQ from a CPU stuck
with IRQs masked, so the fallback is TrustZone's doing.

A second case on a real SoC model: the AST2600 as QEMU boots it by
default (Cortex-A7 with EL3, kernel entered Non-secure), whose EVB DTS
marks the console UART FIQ-capable.  Its control is every
test_soc_boards.py case, on the same machine with has_el3=off.
"""
from __future__ import annotations

import dataclasses
import re

import pytest

from boards import BOARDS
from dtb_tweak import set_interrupt_flags
from fiq_helpers import LKDTM, NMI_TAKEN, clean_boot_log, lock_up_and_knock, lock_up_beyond_reach
from qemu import CMDLINE_FIQ

GIC_FIQ_CAPABLE = 0x10000
LEVEL_HIGH = 4
VIRT_UART = "/pl011@9000000"
NO_GROUPS = "GIC: no interrupt groups (Non-secure or no Security Extensions): FIQ unavailable"


def uart_fiq_capable_dtb(tmp_path, machine_opts: str):
    board = BOARDS["virt"]
    out = tmp_path / f"virt-{machine_opts.replace('=', '-')}-uart-fiq.dtb"
    set_interrupt_flags(board.qemu_dtb_path(machine_opts=machine_opts), out,
                        VIRT_UART, LEVEL_HIGH | GIC_FIQ_CAPABLE)
    return out


@pytest.mark.parametrize("dt", ["qemu-dtb", "uart-fiq-capable"])
def test_trustzone_fiq_unavailable_kgdboc_by_irq(guest, tmp_path, figure, dt):
    dtb = uart_fiq_capable_dtb(tmp_path, "secure=on") if dt == "uart-fiq-capable" else None
    g = guest("virt", machine_opts="secure=on", dtb=dtb, cmdline=CMDLINE_FIQ)
    log = clean_boot_log(g)
    assert log.count(NO_GROUPS) == 1, log
    assert "interrupt groups available" not in log, log
    # without groups the GIC offers no NMIs: request_nmi() fails up front
    assert "cannot signal FIQ" not in log, log
    # the backtrace/roundup IPI stays an IRQ (the fallback is silent)
    assert "SMP: backtrace and kgdb roundup IPI is an NMI" not in log, log
    assert "kgdboc:" not in log, log
    assert "GIC: hwirq" not in log, log          # the flag itself is valid
    assert g.sh("cat /sys/class/tty/console/active") == "ttyAMA0"
    irqs = g.sh("cat /proc/interrupts")
    assert "uart-pl011" in irqs and "kgdboc" not in irqs, irqs
    # kgdboc by IRQ, as mainline: sysrq-g, bt, go, shell back
    for i in range(2):
        g.sh_nowait("echo g > /proc/sysrq-trigger")
        t = g.wait_kdb(timeout=5)
        assert "due to Keyboard Entry" in g.kdb_entry_text, g.kdb_entry_text
        g.kdb_setup()
        bt = g.kdb("bt")
        assert "sysrq" in bt and "__fiq_svc" not in bt, bt
        g.kdb_go()
        assert g.sh(f"echo back-{i}") == f"back-{i}"
    figure(f"virt,secure=on ({dt}) sysrq-g->kdb> by IRQ", f"{t:.3f} s")
    clean_boot_log(g)


def test_trustzone_knock_cannot_reach_a_stuck_cpu(guest, tmp_path, figure):
    """No hidden FIQ path: with FIQ owned by the firmware, a CPU spinning
    with IRQs masked is out of reach (the mainline limitation): mainline's
    BREAK + g enters kdb while the kernel is healthy, then neither it nor
    the knock reaches the stuck CPU."""
    g = guest("virt", machine_opts="secure=on", cmdline=CMDLINE_FIQ, mux=True,
              dtb=uart_fiq_capable_dtb(tmp_path, "secure=on"))
    lock_up_beyond_reach(g, f"echo HARDLOCKUP > {LKDTM}", "Performing direct entry HARDLOCKUP")
    figure("virt,secure=on HARDLOCKUP BREAK g, knock->kdb>",
           "no entry in 10 s (FIQ owned by firmware)")


def test_virt_owning_the_gic_enters_by_fiq(guest, tmp_path, figure):
    """Control: same kernel, same flagged DTB, virt with secure=off (no
    firmware, the kernel's GIC accesses are Secure): groups, NMI, and a
    HARDLOCKUP entered by FIQ."""
    g = guest("virt", fiq=True, dtb=uart_fiq_capable_dtb(tmp_path, ""))
    log = clean_boot_log(g)
    assert log.count("GIC: interrupt groups available: Group 1 as IRQ, Group 0 as FIQ") == 1, log
    assert NO_GROUPS not in log, log
    assert re.search(NMI_TAKEN, log), log
    t = lock_up_and_knock(g, f"echo HARDLOCKUP > {LKDTM}", "Performing direct entry HARDLOCKUP",
                          timeout=2)
    figure("virt,secure=off HARDLOCKUP knock->kdb> FIQ on", f"{t:.3f} s")
    g.kdb_setup()
    bt = g.kdb("bt")
    assert "lkdtm_HARDLOCKUP" in bt and "__fiq_svc" in bt, bt


def test_ast2600_firmware_owns_fiq(guest, figure):
    """ast2600-evb without has_el3=off: the kernel runs Non-secure, FIQ is
    the firmware's.  Said once, no NMI taken, ttyS4 keeps the 8250's own
    IRQ, kgdboc by IRQ as in mainline (BREAK + g while healthy), and a CPU
    stuck with IRQs masked out of reach (maxcpus=1)."""
    board = dataclasses.replace(BOARDS["ast2600-evb"], qemu_extra=())
    g = guest(board, fiq=True, mux=True)
    log = clean_boot_log(g)
    assert log.count(NO_GROUPS) == 1, log
    assert "interrupt groups available" not in log, log
    assert "SMP: backtrace and kgdb roundup IPI is an NMI" not in log, log
    assert "kgdboc:" not in log and "GIC: hwirq" not in log, log
    assert g.sh("cat /sys/class/tty/console/active") == "ttyS4"
    irqs = g.sh("cat /proc/interrupts")
    assert re.search(r" ttyS4$", irqs, re.M) and "kgdboc" not in irqs, irqs
    lock_up_beyond_reach(g, f"echo HARDLOCKUP > {LKDTM}", "Performing direct entry HARDLOCKUP")
    figure("ast2600-evb (EL3, Non-secure kernel) HARDLOCKUP BREAK g, knock->kdb>",
           "no entry in 10 s (FIQ owned by firmware)")
