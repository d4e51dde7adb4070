"""vexpress (GIC): a kernel stuck with IRQs masked enters kdb by FIQ.

Every entry test runs the same kernel twice in one session: FIQ debugger
on (console=ttyAMA0 kgdboc=ttyAMA0 irqchip.fiq_nmi=1) and off (mainline
command line: the same without irqchip.fiq_nmi=1), and records both
figures.
"""
from __future__ import annotations

import re
import time

import pytest

from dtb_tweak import set_map_flags, set_timer_flags
from boards import BOARDS
from fiq_helpers import (DEADLOCK, LKDTM, clean_boot_log, console_roundtrip,
                         kunit_suite, lock_up_and_knock, lock_up_beyond_reach)
from qemu import CMDLINE_FIQ


GIC_FIQ_CAPABLE = 0x10000
LEVEL_HIGH = 4


@pytest.mark.parametrize("board,machine_opts", [
    ("vexpress-a15", ""),
    ("vexpress-a15", "secure=off,virtualization=off"),
    ("vexpress-a9", ""),
])
def test_hardlockup_entered_by_fiq(guest, figure, board, machine_opts):
    g = guest(board, fiq=True, machine_opts=machine_opts)
    assert "GIC: interrupt groups available" in g.sh("dmesg | grep -o 'GIC: interrupt groups available'")
    t = lock_up_and_knock(g, f"echo HARDLOCKUP > {LKDTM}",
                          "Performing direct entry HARDLOCKUP", timeout=2)
    where = f"{board}{',' + machine_opts if machine_opts else ''}"
    figure(f"{where} HARDLOCKUP knock->kdb> FIQ on", f"{t:.3f} s")
    assert "due to NonMaskable Interrupt" in g.kdb_entry_text
    g.kdb_setup()
    bt = g.kdb("bt")
    assert "lkdtm_HARDLOCKUP" in bt and "__fiq_svc" in bt, bt


def test_hardlockup_not_entered_with_fiq_off(guest, figure):
    """Same kernel, mainline command line: mainline's BREAK + g enters kdb
    while the kernel is healthy, and neither it nor the knock reaches a UP
    CPU stuck with IRQs masked."""
    g = guest("vexpress-a15", mux=True)
    lock_up_beyond_reach(g, f"echo HARDLOCKUP > {LKDTM}", "Performing direct entry HARDLOCKUP")
    figure("vexpress-a15 HARDLOCKUP BREAK g, knock->kdb> FIQ off", "no entry in 10 s")


def test_spin_lock_irq_deadlock_entered(guest, figure):
    g = guest("vexpress-a15", fiq=True)
    t = lock_up_and_knock(g, f"echo 1 > {DEADLOCK}",
                          "fiq_test: taking fiq_test_lock twice", timeout=2)
    figure("vexpress-a15 spin_lock_irq deadlock knock->kdb>", f"{t:.3f} s")
    g.kdb_setup()
    bt = g.kdb("bt")
    assert "fiq_test_self_deadlock" in bt, bt
    assert "[fiq_test]" in bt, bt


def test_declined_oops_keeps_the_knock(guest):
    """With panic=N kgdb declines to debug an oops (the machine is meant to
    reboot on panic, not wait at kdb>): the oops must not take the FIQ
    debugger with it.  A non-fatal oops in a child shell, then the shell
    (its input comes through the same NMI) and the knock must still work:
    kgdb declines before kgdboc's pre_exception hook masks the NMI.  (The
    series' old arch_kgdb_ops.enable_nmi was called before that decision
    and left the NMI masked for good.)"""
    g = guest("vexpress-a15", fiq=True, append="panic=30")
    g.sh_nowait(f"sh -c 'echo EXCEPTION > {LKDTM}'")
    g.expect("Internal error:", 10)
    time.sleep(1)
    assert "Entering kdb" not in g.drain(), "kgdb took the oops despite panic=30"
    assert g.sh("echo after-oops", timeout=5).splitlines()[-1] == "after-oops"
    t = lock_up_and_knock(g, f"echo HARDLOCKUP > {LKDTM}",
                          "Performing direct entry HARDLOCKUP", timeout=2)
    assert t < 2
    g.kdb_setup()
    assert "lkdtm_HARDLOCKUP" in g.kdb("bt")


def test_sysrq_and_go_with_fiq_on(guest):
    """Entering kdb from process context (sysrq-trigger) masks the port's
    NMI while kdb polls the port, and go unmasks it: the shell gets its
    input back each time."""
    g = guest("vexpress-a15", fiq=True)
    for i in range(3):
        g.sh_nowait("echo g > /proc/sysrq-trigger")
        g.wait_kdb(timeout=5)
        g.kdb_go()
        assert g.sh(f"echo back-{i}") == f"back-{i}"


def test_console_carries_1000_lines_intact(guest, figure):
    """1000 random lines (25 KiB) typed into the console, ttyAMA0, whose
    receive interrupt is kgdboc's NMI, arrive intact and are echoed back by
    cat.  Before the entry fix ("ARM: entry: Make current valid in FIQ
    handlers ...") a FIQ landing in a return-to-user window corrupted
    memory within about 20 KB.  Paced at 64 B every 6 ms (10 KB/s, about
    the line rate); test_rx_nmi.py pastes 1 MiB."""
    g = guest("vexpress-a15", fiq=True)
    console_roundtrip(g, figure, 1000, chunk=64, delay=0.006)


def test_no_groups_falls_back_to_irq(guest):
    """vexpress-a9,secure=off: GICv1 without groups, FIQ unavailable.  The
    GIC says so, the irqchip offers no NMI, so kgdboc quietly leaves the
    PL011 its IRQ and still enters kdb by IRQ."""
    g = guest("vexpress-a9", machine_opts="secure=off", cmdline=CMDLINE_FIQ)
    log = clean_boot_log(g)
    assert "GIC: no interrupt groups (Non-secure or no Security Extensions): FIQ unavailable" in log, log
    assert "kgdboc:" not in log, log
    assert g.sh("cat /sys/class/tty/console/active") == "ttyAMA0"
    irqs = g.sh("cat /proc/interrupts")
    assert "uart-pl011" in irqs and "kgdboc" not in irqs, irqs
    g.sh_nowait("echo g > /proc/sysrq-trigger")
    g.wait_kdb(timeout=5)
    g.kdb_go()
    assert g.sh("echo still-here") == "still-here"


@pytest.mark.parametrize("case", ["unknown-bit", "ppi-flag"])
def test_bad_dt_warns_once_and_falls_back(guest, tmp_path, case):
    board = BOARDS["vexpress-a15"]
    bad = tmp_path / f"{case}.dtb"
    if case == "unknown-bit":
        set_map_flags(board.dtb_path(), bad, 5, LEVEL_HIGH | GIC_FIQ_CAPABLE | 0x20000)
        want = "GIC: hwirq 37: unknown flags in interrupt specifier (0x30004), using it as an IRQ"
    else:
        set_timer_flags(board.dtb_path(), bad, GIC_FIQ_CAPABLE)
        want = "GIC: hwirq 29: GIC_FIQ_CAPABLE on a PPI in interrupt specifier (0x10f08), using it as an IRQ"
    g = guest("vexpress-a15", dtb=bad, fiq=False)
    log = clean_boot_log(g, expect=(re.escape(want),))
    assert log.count(want) == 1, log[-3000:]
    irqs = g.sh("cat /proc/interrupts")
    assert "uart-pl011" in irqs and "arch_timer" in irqs, irqs
    g.sh_nowait("echo g > /proc/sysrq-trigger")
    g.wait_kdb(timeout=5)
    g.kdb_go()
    assert g.sh("echo ok") == "ok"


def test_kunit_gic_fiq(guest):
    """The irq-gic-fiq KUnit suite ran at boot and every case passed."""
    g = guest("vexpress-a15")
    _, (passed, failed, _) = kunit_suite(g, "irq-gic-fiq", cases="gic_fiq_spec_test")
    assert (passed, failed) == (3, 0)


def kunit_cases_pass(g, suite: str, cases: tuple[str, ...]) -> None:
    """The KUnit suite ran at boot with exactly these cases, each ok."""
    ktap, totals = kunit_suite(g, suite)
    for case in cases:
        assert re.search(rf"^ +ok \d+ {case}$", ktap, re.M), ktap
    assert totals == (len(cases), 0, 0), ktap


def test_kunit_st_asc_kgdb(guest):
    """The st-asc-kgdb KUnit suite (issue STiH41x: the ASC's .poll_init runs
    somewhere, on fake registers) ran at boot in the ARMv7 image and every
    case passed: RX interrupt enabled, other enables untouched, the NMI
    pieces offered to kgdboc; the NMI's rx_char() and mask_events() read
    and write the right registers."""
    kunit_cases_pass(guest("vexpress-a15"), "st-asc-kgdb", (
        "asc_poll_init_enables_rx_test", "asc_poll_init_offers_nmi_test",
        "asc_nmi_rx_char_test", "asc_nmi_mask_events_test"))


def test_kunit_dw8250_kgdb(guest):
    """The dw8250-kgdb KUnit suite ran at boot in the ARMv7 image and every
    case passed: with the receive FIFO empty, the DesignWare 8250's NMI
    hook reads IIR only while THRI is off, clears a busy detect (USR) and
    a receive timeout without data (RBR, not when LSR shows that a byte
    came after the NMI's own LSR read), and reports a THRE interrupt
    that its IIR read cleared (THRI enabled by another CPU between its two
    reads), so that kgdboc's irq_work serves the transmitter: a race two
    register reads wide, which QEMU did not show under a TX and RX
    stress."""
    kunit_cases_pass(guest("vexpress-a15"), "dw8250-kgdb", (
        "dw8250_nmi_rx_idle_thri_enabled_test", "dw8250_nmi_rx_idle_thre_taken_test",
        "dw8250_nmi_rx_idle_rx_timeout_test", "dw8250_nmi_rx_idle_byte_came_test",
        "dw8250_nmi_rx_idle_busy_test"))


def test_kunit_imx_uart_kgdb(guest):
    """The imx-uart-kgdb KUnit suite ran at boot in the ARMv7 image and
    every case passed: what QEMU's i.MX UART does not model (the aging
    timer, overrun, modem-line deltas, a break's sticky flag) is covered
    on fake registers: the NMI reads URXD0 only with data, clears BRCD on
    a BREAK, masks the other sources at the UART without touching the
    driver's copies of UCR1/3/4, and the irq_work writes those back."""
    kunit_cases_pass(guest("vexpress-a15"), "imx-uart-kgdb", (
        "imx_poll_init_offers_nmi_test", "imx_nmi_rx_char_test",
        "imx_nmi_mask_events_test", "imx_nmi_events_restore_test"))
