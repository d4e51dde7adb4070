"""Mainline behaviour, recorded honestly (issue: harness).

These run on whatever the series builds, with the mainline command line
(FIQ debugger off, irqchip.gicv2_fiq=0).  The UP lock-up is in
test_gic_fiq.py (entered with FIQ on, never entered with it off).  The
strict xfail records what mainline cannot do; its FIQ-on twin passes since
the SMP roundup by FIQ landed.
"""
from __future__ import annotations

import time

import pytest


LKDTM = "/sys/kernel/debug/provoke-crash/DIRECT"


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
        # ttyNMI0 may take no input once CPU1 is stuck (its receive timer
        # may sit there): queue the sysrq-g on CPU0 before the lock-up
        g.sh("taskset -c 0 sh -c 'sleep 2; echo g > /proc/sysrq-trigger' &")
        g.sh("taskset -p 1 $$ >/dev/null; echo 1 > /sys/devices/virtual/workqueue/cpumask")
        g.sh_background(f"taskset -c 1 sh -c 'echo HARDLOCKUP > {LKDTM}'")
        g.wait_kdb(timeout=15)
    else:
        _smp2_lockup_then_sysrq(g)
    assert "Timed out waiting for secondary CPUs" not in g.kdb_entry_text
    g.kdb_setup()
    assert "lkdtm_HARDLOCKUP" in g.kdb("btc")
