"""Mainline behaviour, recorded honestly (issue: harness).

These run on whatever the series builds, with the mainline command line
(FIQ debugger off, irqchip.gicv2_fiq=0).  The UP lock-up is in
test_gic_fiq.py (entered with FIQ on, never entered with it off).  The
strict xfail records what mainline cannot do; its FIQ-on twin passes since
the SMP roundup by FIQ landed.  Last, the harness's own console handshakes
under a flood of kernel messages.
"""
from __future__ import annotations

import re
import time

import pytest

from scenarios import enter_kdb


LKDTM = "/sys/kernel/debug/provoke-crash/DIRECT"
FLOOD = re.compile(r"printk_flood: \d+")


@pytest.mark.parametrize("board,smp", [("vexpress-a15", 1), ("vexpress-a15", 2),
                                       ("versatilepb", 1)])
def test_sysrq_g_enters_kdb_and_go_resumes(guest, figure, board, smp):
    g = guest(board, smp=smp)
    figure(f"{board} smp{smp} boot to shell", f"{g.boot_time:.2f} s")
    assert g.sh("echo hello-$((6*7))") == "hello-42"
    g.sh_nowait("echo g > /proc/sysrq-trigger")
    t = g.wait_kdb(timeout=15)
    assert "Entering kdb" in g.kdb_entry_text
    figure(f"{board} smp{smp} sysrq-g to kdb>", f"{t:.3f} s")
    g.kdb_setup()
    bt = g.kdb("bt")
    assert "sysrq" in bt, bt
    g.kdb_go()
    assert g.sh("echo still-$((6*7))") == "still-42"


def _smp2_lockup_then_sysrq(g):
    # keep the shell and the unbound workqueues (tty flip buffers) on CPU0,
    # so that the CPU which locks up cannot take them down with it
    g.sh("taskset -p 1 $$ >/dev/null; echo 1 > /sys/devices/virtual/workqueue/cpumask")
    g.sh_background(f"taskset -c 1 sh -c 'echo HARDLOCKUP > {LKDTM}'")
    g.expect("lkdtm: Performing direct entry HARDLOCKUP", 10)
    time.sleep(0.5)
    g.sh_nowait("echo g > /proc/sysrq-trigger")
    return g.wait_kdb(timeout=15)


def test_smp2_mainline_roundup_times_out(guest, figure):
    """With the FIQ debugger off, CPU1 spinning with IRQs masked is lost."""
    g = guest("vexpress-a15", smp=2)
    t = _smp2_lockup_then_sysrq(g)
    figure("vexpress-a15 smp2 CPU1 stuck, sysrq-g to kdb> (IRQ roundup)", f"{t:.3f} s")
    assert "KGDB: Timed out waiting for secondary CPUs." in g.kdb_entry_text
    g.kdb_setup()
    assert "lkdtm_HARDLOCKUP" not in g.kdb("btc")


@pytest.mark.parametrize("fiq", [
    pytest.param(False, id="fiq-off", marks=pytest.mark.xfail(
        strict=True, reason="mainline: the IRQ IPI roundup cannot capture CPU1")),
    pytest.param(True, id="fiq-on"),
])
def test_smp2_all_cpus_captured(guest, fiq):
    """Flipped by the SMP part of the series (test_smp_fiq.py has the rest):
    with the FIQ debugger on, the roundup IPI is an NMI."""
    g = guest("vexpress-a15", smp=2, fiq=fiq)
    if fiq:
        # queue the sysrq-g on CPU0 before the lock-up (a fork may wait
        # for the stuck CPU)
        g.sh("taskset -c 0 sh -c 'sleep 2; echo g > /proc/sysrq-trigger' &")
        g.sh("taskset -p 1 $$ >/dev/null; echo 1 > /sys/devices/virtual/workqueue/cpumask")
        g.sh_background(f"taskset -c 1 sh -c 'echo HARDLOCKUP > {LKDTM}'")
        g.wait_kdb(timeout=15)
    else:
        _smp2_lockup_then_sysrq(g)
    assert "Timed out waiting for secondary CPUs" not in g.kdb_entry_text
    g.kdb_setup()
    assert "lkdtm_HARDLOCKUP" in g.kdb("btc")


@pytest.mark.parametrize("board,smp,fiq", [
    ("vexpress-a9", 4, True),     # FIQ on, SMP: kernel lines amid user output
    ("vexpress-a15", 1, True),    # FIQ on, UP: whole kernel lines inside user output
    ("versatilepb", 1, False),    # ttyAMA0: the same, by the PL011's port lock
])
def test_handshakes_survive_a_printk_flood(guest, figure, board, smp, fiq):
    """The harness itself: printk_flood.ko prints 8 kernel lines every 1 to
    10 ms from before init starts the shell until well after (on SMP init's
    marker comes split about one boot in three).  The boot handshake must
    sync with kernel lines arriving meanwhile, kdb entered in the middle of
    the flood must sync too, and on UP the shell's commands come back whole
    during it."""
    g = guest(board, smp=smp, fiq=fiq, append="printk_flood.ms=8000")
    during = len(FLOOD.findall(g.handshake_text))
    whole = "init: shell ready" in g.console_tail(10**6)
    figure(f"{board} smp{smp} printk flood: kernel lines during the shell handshake",
           f"{during}, init's marker {'whole' if whole else 'split'}")
    assert during > 0, "the flood did not reach the handshake: it proves nothing"
    if smp == 1:
        for i in range(3):
            assert g.sh(f"echo flood-{i}-$((6*7))") == f"flood-{i}-42"
    enter_kdb(g, fiq)
    assert "Entering kdb" in g.kdb_entry_text
    g.kdb_setup()
    assert "Stack traceback for pid" in g.kdb("bt")
    g.kdb_go()
    # more of the flood after go: kdb was entered in the middle of it
    after = g.expect("printk_flood: done", 20).decode(errors="replace")
    assert FLOOD.search(after), "the flood had ended before kdb was entered"
    g.resume_shell()
    assert g.sh("echo after-$((6*7))") == "after-42"
