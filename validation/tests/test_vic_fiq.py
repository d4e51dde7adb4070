"""versatile-pb (PL190 VIC, ARMv5): a kernel stuck with IRQs masked enters
kdb by FIQ.

The same kernel runs with the FIQ debugger on (qemu.CMDLINE_FIQ) and off
(mainline command line, without irqchip.fiq_nmi=1) in the same test, and both figures
are recorded.  UART0 is VIC source 12, marked VIC_FIQ_CAPABLE in
versatile-ab.dts.  QEMU's PL190 does not gate FIQ by VICIntEnable (the real
one does): test_sysrq_and_go_with_fiq_on is the one that notices if masking
the NMI does not also keep it off the FIQ in QEMU.
"""
from __future__ import annotations

import re
import subprocess
import time

import pytest

from dtb_tweak import set_vic_specifier
from boards import BOARDS, BUILD
from fiq_helpers import (DEADLOCK, LKDTM, NMI_REFUSED, clean_boot_log, console_roundtrip,
                         kunit_suite, lock_up_and_knock, lock_up_beyond_reach)
from qemu import CMDLINE_FIQ

BOARD = "versatilepb"
VIC = "/amba/interrupt-controller@10140000"
UART0 = "/amba/uart@101f1000"
UART1 = "/amba/uart@101f2000"
SIC = "/amba/interrupt-controller@10003000"
VIC_FIQ_CAPABLE = 0x10000
NMI_LINE = re.compile(r"kgdboc: ttyAMA0: IRQ(\d+) is an NMI: ")
# the VIC's reason for refusing an NMI is a pr_debug
VIC_DYNDBG = 'dyndbg="file irq-vic.c +p"'


def dmesg(g, pattern: str) -> str:
    return g.sh(f"dmesg | sed 's/^\\[[ 0-9.]*\\] //' | grep -E '{pattern}' || true")


def test_hardlockup_entered_by_fiq_and_not_without(guest, figure):
    """FIQ on: HARDLOCKUP, $3#33, kdb> within 2 s, bt shows the lock-up
    under the FIQ entry.  Then the same kernel with the mainline command
    line: mainline's BREAK + g enters kdb while the kernel is healthy, and
    neither it nor the knock reaches the CPU stuck with IRQs masked (10 s)."""
    g = guest(BOARD, fiq=True)
    log = dmesg(g, "kgdboc|VIC")
    m = NMI_LINE.search(log)
    assert m, log
    irqs = g.sh("cat /proc/interrupts")
    assert re.search(rf"^ *{m.group(1)}: +\d+ +VIC +12 .*kgdboc$", irqs, re.M), irqs
    t = lock_up_and_knock(g, f"echo HARDLOCKUP > {LKDTM}",
                          "Performing direct entry HARDLOCKUP", timeout=2)
    figure("versatilepb HARDLOCKUP knock->kdb> FIQ on", f"{t:.3f} s")
    assert "due to NonMaskable Interrupt" in g.kdb_entry_text
    g.kdb_setup()
    bt = g.kdb("bt")
    assert "lkdtm_HARDLOCKUP" in bt and "__fiq_svc" in bt, bt
    assert "vic_handle_fiq" in bt, bt
    g.close()

    off = guest(BOARD, mux=True)
    assert not NMI_LINE.search(dmesg(off, "kgdboc"))
    irqs = off.sh("cat /proc/interrupts")
    assert re.search(r"VIC +12 .*uart-pl011$", irqs, re.M), irqs
    lock_up_beyond_reach(off, f"echo HARDLOCKUP > {LKDTM}", "Performing direct entry HARDLOCKUP")
    figure("versatilepb HARDLOCKUP BREAK g, knock->kdb> FIQ off", "no entry in 10 s")


def test_fiq_from_user_mode(guest, figure):
    """ARMv5 has no current in TPIDRURO (UP: patch 1's reload is compiled
    out, current is a plain variable), so a FIQ taken in user mode, or in
    the kuser helpers, needs nothing more.  With a user-space busy loop
    running, knock until kdb was entered from user mode at least twice;
    after each go the shell still works (the knock's first four bytes reach
    the shell as typed input: flushed with an empty command), and the
    kernel logged no oops."""
    g = guest(BOARD, fiq=True)
    g.sh_background("while :; do :; done")
    user, times = [], []
    for _ in range(12):
        time.sleep(0.3)
        t0 = g.knock()
        g.wait_kdb(timeout=5)
        times.append(time.monotonic() - t0)
        m = re.search(r"due to NonMaskable Interrupt @ (0x[0-9a-f]+)", g.kdb_entry_text)
        assert m, g.kdb_entry_text
        pc = int(m.group(1), 16)
        if pc < 0xbf000000 or pc >= 0xffff0000:
            user.append(pc)
        g.kdb_go()
        g.sh("")
        assert g.sh("echo back") == "back"
        if len(user) >= 2:
            break
    figure("versatilepb busy user space knock->kdb> (max)", f"{max(times):.3f} s")
    assert len(user) >= 2, f"{len(times)} entries, none from user mode"
    clean_boot_log(g)


def test_spin_lock_irq_deadlock_entered(guest, figure):
    g = guest(BOARD, fiq=True)
    t = lock_up_and_knock(g, f"echo 1 > {DEADLOCK}",
                          "fiq_test: taking fiq_test_lock twice", timeout=2)
    figure("versatilepb spin_lock_irq deadlock knock->kdb>", f"{t:.3f} s")
    g.kdb_setup()
    bt = g.kdb("bt")
    assert "fiq_test_self_deadlock" in bt, bt
    assert "[fiq_test]" in bt, bt


def test_sysrq_and_go_with_fiq_on(guest):
    """kdb entered by IRQ (sysrq-g) polls UART0 with FIQs unmasked: the
    masked NMI must not fire (QEMU's VIC ignores VICIntEnable for FIQ, so
    the mask also deselects FIQ) and go gives the shell its input back."""
    g = guest(BOARD, fiq=True)
    for i in range(3):
        g.sh_nowait("echo g > /proc/sysrq-trigger")
        g.wait_kdb(timeout=5)
        g.kdb_setup()
        assert "kgdb_breakpoint" in g.kdb("bt")
        g.kdb_go()
        assert g.sh(f"echo back-{i}") == f"back-{i}"


def test_console_carries_1000_lines_intact(guest, figure):
    """1000 random lines (25 KiB) typed into the console, whose receive
    interrupt is the VIC's FIQ, arrive intact and are echoed back (paced
    as on vexpress: 64 B every 6 ms).  Many of these FIQs land in user
    mode and in the return-to-user path; on this UP board the irq_work
    that hands the bytes to the tty runs from the next timer tick."""
    g = guest(BOARD, fiq=True)
    console_roundtrip(g, figure, 1000, chunk=64, delay=0.006, where="versatilepb")


@pytest.mark.parametrize("case", ["unknown-bit", "out-of-range"])
def test_bad_dt_warns_once_and_falls_back(guest, tmp_path, case):
    """A bad VIC specifier boots with exactly one warning and no oops.

    Unknown flag bits on UART0: the line stays an IRQ, so with the FIQ
    debugger asked for kgdboc's request is refused (once), the PL011 keeps
    its IRQ and kgdboc enters kdb by IRQ (sysrq-g).  A source out of range on UART1:
    that port has no interrupt, everything else runs, UART0 is still the
    FIQ debugger's."""
    board = BOARDS[BOARD]
    bad = tmp_path / f"{case}.dtb"
    if case == "unknown-bit":
        set_vic_specifier(board.dtb_path(), bad, UART0, 12, VIC_FIQ_CAPABLE | 0x20000)
        want = (f"VIC {VIC}: source 12: unknown flags in interrupt specifier (0x30000), "
                "using it as an IRQ")
        expect = (re.escape(want), NMI_REFUSED)
        g = guest(BOARD, dtb=bad, cmdline=CMDLINE_FIQ, append=VIC_DYNDBG)
    else:
        set_vic_specifier(board.dtb_path(), bad, UART1, 40, 0)
        want = f"VIC {VIC}: source 40 out of range in interrupt specifier, no interrupt"
        expect = (re.escape(want),)
        g = guest(BOARD, dtb=bad, fiq=True)
    log = clean_boot_log(g, expect=expect)
    assert log.count(want) == 1, log[-3000:]
    assert len(re.findall(rf"^VIC {VIC}: ", log, re.M)) == 1, log[-3000:]
    irqs = g.sh("cat /proc/interrupts")
    if case == "unknown-bit":
        assert re.search(r"VIC: IRQ\d+ \(source 12\) cannot be an NMI: not VIC_FIQ_CAPABLE",
                         log), log
        assert g.sh("cat /sys/class/tty/console/active") == "ttyAMA0"
        assert re.search(r"VIC +12 .*uart-pl011$", irqs, re.M), irqs
        g.sh_nowait("echo g > /proc/sysrq-trigger")
        g.wait_kdb(timeout=5)
    else:
        assert "ttyAMA1 at MMIO 0x101f2000 (irq = 0," in log, log
        assert NMI_LINE.search(log), log
        assert re.search(r"VIC +12 .*kgdboc$", irqs, re.M), irqs
        g.knock()
        g.wait_kdb(timeout=5)
        assert "due to NonMaskable Interrupt" in g.kdb_entry_text
    g.kdb_go()
    g.sh("")
    assert g.sh("echo ok") == "ok"


def test_sic_line_cannot_be_nmi(guest):
    """A line of the Versatile SIC (cascaded into VIC source 31) cannot be
    a FIQ: with kgdboc on UART3 (SIC source 6) the SIC offers no NMI, so
    kgdboc quietly leaves that port its IRQ and nothing becomes an NMI."""
    g = guest(BOARD, cmdline=CMDLINE_FIQ.replace("kgdboc=ttyAMA0", "kgdboc=ttyAMA3"))
    log = clean_boot_log(g)
    assert "kgdboc:" not in log, log[-3000:]
    assert not NMI_LINE.search(log), log[-3000:]
    assert g.sh("cat /sys/class/tty/console/active") == "ttyAMA0"
    irqs = g.sh("cat /proc/interrupts")
    assert "kgdboc" not in irqs, irqs
    assert re.search(r"VIC +12 .*uart-pl011$", irqs, re.M), irqs
    assert g.sh("echo ok") == "ok"


def test_flag_on_cascade_input_is_harmless(guest, tmp_path):
    """VIC_FIQ_CAPABLE on the SIC's own input, VIC source 31, which
    check-fiq-dt.py rejects ("an interrupt controller is not a FIQ").  At
    boot the flag only permits a FIQ, and nothing asks a chained handler's
    line to be an NMI, so the VIC cannot tell this input from a device's
    and has nothing to refuse: the kernel must boot clean, the SIC must
    keep delivering its devices' interrupts (the KMI's) and UART0 must stay
    the FIQ debugger's."""
    board = BOARDS[BOARD]
    bad = tmp_path / "sic-input.dtb"
    set_vic_specifier(board.dtb_path(), bad, SIC, 31, VIC_FIQ_CAPABLE)
    g = guest(BOARD, dtb=bad, fiq=True)
    log = clean_boot_log(g)
    assert NMI_LINE.search(log), log[-3000:]
    irqs = g.sh("cat /proc/interrupts")
    kmi = re.findall(r"^ *\d+: +(\d+) +interrupt-controller +\d+ .*kmi-pl050$", irqs, re.M)
    assert kmi and sum(map(int, kmi)) > 0, irqs
    g.knock()
    g.wait_kdb(timeout=5)
    assert "due to NonMaskable Interrupt" in g.kdb_entry_text
    g.kdb_go()
    g.sh("")
    assert g.sh("echo ok") == "ok"


def pristine_versatile_pb_dtb(tmp_path):
    """versatile-pb.dtb from the pristine tree: a one-cell VIC, no flag."""
    tree = BUILD / "linux"
    for name in ("versatile-ab.dts", "versatile-pb.dts"):
        src = subprocess.run(["git", "-C", str(tree), "show", f"pristine:arch/arm/boot/dts/{name}"],
                             capture_output=True, text=True, check=True).stdout
        (tmp_path / name).write_text(src)
    pre = tmp_path / "versatile-pb.dts.pre"
    subprocess.run(["cpp", "-nostdinc", "-undef", "-D__DTS__", "-x", "assembler-with-cpp",
                    "-P", "-o", str(pre), str(tmp_path / "versatile-pb.dts")], check=True)
    dtb = tmp_path / "versatile-pb-pristine.dtb"
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(dtb), str(pre)], check=True)
    return dtb


def test_one_cell_dtb_boots_unchanged(guest, tmp_path):
    """The pristine versatile-pb.dtb (VIC with one cell, no flag) boots the
    patched kernel as before: no VIC warning, UART0 an IRQ, kgdboc by
    sysrq-g.  With the FIQ debugger asked for, kgdboc's request is refused
    (once): the DT does not say UART0 may be a FIQ."""
    dtb = pristine_versatile_pb_dtb(tmp_path)
    g = guest(BOARD, dtb=dtb, cmdline=CMDLINE_FIQ, append=VIC_DYNDBG)
    log = clean_boot_log(g, expect=(NMI_REFUSED,))
    assert not re.search(r"^VIC /", log, re.M), log[-3000:]
    assert re.search(r"VIC: IRQ\d+ \(source 12\) cannot be an NMI: not VIC_FIQ_CAPABLE", log), log
    assert g.sh("cat /sys/class/tty/console/active") == "ttyAMA0"
    irqs = g.sh("cat /proc/interrupts")
    assert re.search(r"VIC +12 .*uart-pl011$", irqs, re.M), irqs
    g.sh_nowait("echo g > /proc/sysrq-trigger")
    g.wait_kdb(timeout=5)
    g.kdb_go()
    assert g.sh("echo ok") == "ok"


def test_kunit_vic_fiq(guest):
    """The irq-vic-fiq KUnit suite ran at boot and every case passed."""
    g = guest(BOARD)
    _, (passed, failed, _) = kunit_suite(g, "irq-vic-fiq", cases="vic_fiq_spec_test")
    assert (passed, failed) == (5, 0)
