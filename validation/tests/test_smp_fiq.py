"""SMP: the other CPUs are stopped by FIQ, so CPUs with IRQs masked are
captured (issue: SMP roundup).

kgdb rounds the other CPUs up with IPI_CPU_BACKTRACE, which the series
turns into a Group 0 SGI (FIQ).  Every case runs the same kernel with the
FIQ debugger on and off (no irqchip.fiq_nmi=1: mainline, IRQ IPI) in the
same session.  The guest reports the roundup time itself: kgdb's pr_debug
"All N CPUs in after U us" (dyndbg), read back with kdb's dmesg.
"""
from __future__ import annotations

import re
import time

import pytest

from qemu import GuestError
from scenarios import (DYNDBG, ROUNDUP, TIMEOUT, lock_cpus, roundup_us,
                       stuck_cpus_in_btc, ticks_seen)

# vexpress-a9 SMP4's roundup alone, as test_matrix.py's FIQ-on cells
# there (scripts/test.sh's serial pass)
ALONE = [pytest.mark.serial]


CASES = [
    # board, smp, stuck CPUs, shell CPU; UART FIQ goes to CPU0
    pytest.param("vexpress-a15", 2, [1], 0, id="smp2-cpu1-stuck"),
    pytest.param("vexpress-a15", 2, [0], 1, id="smp2-cpu0-stuck-takes-the-uart-fiq"),
    pytest.param("vexpress-a9", 4, [1, 2, 3], 0, id="smp4-all-but-cpu0-stuck", marks=ALONE),
    pytest.param("vexpress-a9", 4, [0, 1, 2], 3, id="smp4-cpu0-among-the-stuck", marks=ALONE),
]


@pytest.mark.parametrize("board,smp,stuck,shell_cpu", CASES)
def test_knock_captures_every_cpu(guest, figure, board, smp, stuck, shell_cpu):
    g = guest(board, smp=smp, fiq=True, append=DYNDBG)
    assert "SMP: backtrace and kgdb roundup IPI is an NMI" in g.sh("dmesg | grep -o 'SMP: backtrace.*'")
    # a ticker on the shell's CPU: proof that the healthy CPUs run before
    # the knock and again after go (its input reaches the tty by an
    # irq_work on the CPU that takes the UART's FIQ, which may be stuck)
    g.sh(f"taskset -c {shell_cpu} sh -c 'i=0; while :; do echo tick-$i; i=$((i+1)); sleep 1; done' "
         ">/dev/console &")
    lock_cpus(g, stuck, shell_cpu)
    before = ticks_seen(g, 3)
    t0 = g.knock()
    g.wait_kdb(timeout=5)
    entry = time.monotonic() - t0
    assert TIMEOUT not in g.kdb_entry_text
    g.kdb_setup()
    cpu = g.kdb("cpu")
    assert f"Available cpus: 0-{smp - 1}" in cpu or "D" not in cpu.split("Available cpus:")[1], cpu
    assert stuck_cpus_in_btc(g.kdb("btc")) == set(stuck)
    n, us = roundup_us(g)
    assert n == smp
    figure(f"{board} smp{smp} CPUs {stuck} stuck: knock->kdb> (FIQ roundup)", f"{entry:.3f} s")
    figure(f"{board} smp{smp} CPUs {stuck} stuck: roundup in guest (1 ms poll)", f"{us / 1000:.1f} ms")
    # kgdb gives up at 1 s; below that, the time is mostly how soon QEMU's
    # host threads for the target vCPUs run (4 vCPUs on 2 host cores)
    assert us < 1_000_000, f"roundup took {us} us"
    g.kdb_go()
    after = ticks_seen(g, 3)
    assert min(after) > max(before), (before, after)


@pytest.mark.parametrize("board,smp", [("vexpress-a15", 2), ("vexpress-a9", 4)])
def test_mainline_irq_roundup_times_out(guest, figure, board, smp):
    """Same kernel, FIQ off: kgdb waits its second and loses the stuck CPUs."""
    g = guest(board, smp=smp, append=DYNDBG)
    # the IRQ fallback is silent, as on arm64
    assert g.sh("dmesg | grep -c 'SMP: backtrace' || true") == "0"
    stuck = list(range(1, smp))
    lock_cpus(g, stuck, 0)
    g.sh_nowait("echo g > /proc/sysrq-trigger")
    t = g.wait_kdb(timeout=15)
    figure(f"{board} smp{smp} CPUs {stuck} stuck: sysrq-g->kdb> (IRQ roundup, FIQ off)",
           f"{t:.3f} s")
    assert TIMEOUT in g.kdb_entry_text
    g.kdb_setup()
    assert stuck_cpus_in_btc(g.kdb("btc")) == set()
    assert not ROUNDUP.search(g.kdb("dmesg 20"))


@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_sysrq_l_shows_the_stuck_cpu(guest, figure, fiq):
    """sysrq-l asks every CPU for a backtrace by IPI_CPU_BACKTRACE: as an NMI
    the stuck CPU answers; as an IRQ (FIQ off) it never does, and the
    request gives up after 10 s.  The stuck CPU's lines are logged from NMI
    context and reach the console only when another CPU prints, so they are
    read with dmesg.  All of it runs in one job on CPU0 started before the
    lock-up: with no NMI, fork/exec may wait for the stuck CPU."""
    g = guest("vexpress-a15", smp=2, fiq=fiq)
    # only shell builtins after the lock-up: with a CPU stuck and no NMI,
    # fork/exec may wait for it; the write to /dev/kmsg flushes what CPU1
    # logged from NMI context to the console
    g.sh("taskset -c 0 sh -c 'sleep 3; read t0 x < /proc/uptime; "
         "echo l > /proc/sysrq-trigger; read t1 x < /proc/uptime; "
         "echo sysrq-l returned > /dev/kmsg; echo SYSRQ-L $t0 $t1 END' > /dev/console &")
    lock_cpus(g, [1], 0)
    if not fiq:
        # CPU1 never takes the IRQ IPI: no backtrace while sysrq-l waits its
        # 10 s for it (what CPU0 does after that, with CPU1 stuck and no
        # NMI, is not this test's business: it has been seen to stall)
        g.expect("Sending NMI from CPU 0 to CPUs 1:", 20)
        with pytest.raises(GuestError):
            g.expect("NMI backtrace for cpu 1", 12)
        figure("vexpress-a15 smp2 CPU1 stuck: sysrq-l backtrace of CPU1 (FIQ off)", "none in 12 s")
        return
    g.p.expect(re.compile(rb"SYSRQ-L ([\d.]+) ([\d.]+) END"), timeout=40)
    t0, t1 = (float(x) for x in g.p.match.groups())
    t = t1 - t0
    out = g.p.before.decode(errors="replace")
    answered = out.count("NMI backtrace for cpu 1")
    pc = out.count("PC is at lkdtm_HARDLOCKUP")
    figure("vexpress-a15 smp2 CPU1 stuck: sysrq-l returns (FIQ on, guest time)", f"{t:.2f} s")
    assert (answered, pc) == (1, 1)
    assert t < 5
