"""Building blocks of the SMP, matrix, noise, soak and overhead tests:
lock-ups on chosen CPUs, the ticker workload, kdb's reports (btc per CPU,
kgdb's roundup time), paged kdb entries.  The steps every interrupt
controller's tests share (lock up and knock, the console round trip) are
in fiq_helpers.py.

Each takes a booted Guest (qemu.py) and drives its console."""
from __future__ import annotations

import random
import re
import time

from fiq_helpers import LKDTM
from qemu import KDB_PROMPT, GuestError

MORE = re.compile(rb"more> ")

FIQ_TEST = "/sys/kernel/debug/fiq_test"
DYNDBG = 'dyndbg="file debug_core.c +p"'
ROUNDUP = re.compile(r"KGDB: All (\d+) CPUs in after (\d+) us")
TIMEOUT = "KGDB: Timed out waiting for secondary CPUs."


def lock_cpus(g, stuck: list[int], shell_cpu: int,
              fault: str = f"echo HARDLOCKUP > {LKDTM}",
              marker: str = "lkdtm: Performing direct entry HARDLOCKUP") -> None:
    """Pin the shell and unbound work to shell_cpu, then run fault on every
    CPU in stuck (default HARDLOCKUP: IRQs masked, spinning).  The faults
    are forked together and start a second later: once one CPU spins with
    IRQs masked anything that waits for it (an RCU grace period...) may
    hang.  Waits for marker once per stuck CPU."""
    pin_shell(g, shell_cpu)
    cpus = " ".join(str(c) for c in stuck)
    g.sh(f"for c in {cpus}; do taskset -c $c sh -c 'sleep 1; {fault}' & done")
    for _ in stuck:
        g.expect(marker, 15)
    time.sleep(0.5)


def pin_shell(g, cpu: int) -> None:
    """The shell, its children and unbound workqueues on cpu only."""
    g.sh(f"taskset -p {1 << cpu:x} $$ >/dev/null; "
         f"echo {1 << cpu:x} > /sys/devices/virtual/workqueue/cpumask")


def start_ticker(g, cpu: int | None = None, period: str = "1",
                 tag: str = "tick") -> None:
    """A workload that prints tag-<n> to the console every period seconds
    (on cpu if given), in the background; stop_ticker() ends it."""
    loop = (f"i=0; while [ ! -e /tmp/{tag}.stop ]; do echo {tag}-$i; i=$((i+1)); "
            f"sleep {period}; done")
    pin = f"taskset -c {cpu} " if cpu is not None else ""
    g.sh(f"{pin}sh -c '{loop}' >/dev/console &")


def stop_ticker(g, tag: str = "tick") -> None:
    """Ask the ticker to stop (a file it checks: killing a job of this
    initramfs shell, PID 1, makes the shell exit) and wait until it has."""
    g.sh(f"touch /tmp/{tag}.stop; while pidof sh >/dev/null && "
         f"ps | grep -q '[{tag[0]}]{tag[1:]}.stop'; do sleep 0.1; done")


def ticks_in(text: str, tag: str = "tick") -> list[int]:
    return [int(n) for n in re.findall(rf"{tag}-(\d+)", text)]


def ticks_seen(g, seconds: float, tag: str = "tick") -> list[int]:
    """The ticker's counts printed in the next few seconds (at least two)."""
    g.drain()
    time.sleep(seconds)
    ticks = ticks_in(g.drain(), tag)
    assert len(ticks) >= 2, ticks
    return ticks


def roundup_us(g) -> tuple[int, int]:
    """(CPUs, microseconds) from kgdb's own report, via kdb's dmesg."""
    m = ROUNDUP.findall(g.kdb("dmesg 20"))
    assert m, "no roundup report in dmesg"
    return int(m[-1][0]), int(m[-1][1])


def btc_blocks(btc: str) -> dict[int, str]:
    """kdb's btc output split per CPU: {cpu: its stack}."""
    out: dict[int, str] = {}
    for block in btc.split("Stack traceback for pid")[1:]:
        m = re.search(r"\nCPU: (\d+) ", block)
        if m:
            out[int(m.group(1))] = out.get(int(m.group(1)), "") + block
    return out


def cpus_in_btc(btc: str, symbol: str) -> set[int]:
    """CPUs whose stack in btc shows symbol."""
    return {cpu for cpu, block in btc_blocks(btc).items() if symbol in block}


def stuck_cpus_in_btc(btc: str) -> set[int]:
    """CPUs whose stack in btc shows lkdtm_HARDLOCKUP."""
    return cpus_in_btc(btc, "lkdtm_HARDLOCKUP")


def random_lines(nlines: int, seed: int = 1234) -> list[str]:
    rnd = random.Random(seed)
    return [f"{n:04d} " + "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789")
                                  for _ in range(rnd.randint(0, 40)))
            for n in range(nlines)]


def wait_kdb_paged(g, timeout: float) -> float:
    """Like g.wait_kdb(), for entries that print a report first (an oops):
    kdb pages it (more>) before the first prompt; page through with Space.
    Returns the time to the first more> or kdb>; g.kdb_entry_text holds
    the whole entry text, up to g.sync_kdb()."""
    t0 = time.monotonic()
    text = ""
    try:
        i = g.p.expect([KDB_PROMPT, MORE], timeout=timeout)
    except Exception as e:          # pexpect.TIMEOUT / EOF
        raise GuestError(f"{g.name}: no kdb> within {timeout} s ({type(e).__name__})")
    t = time.monotonic() - t0
    text += g.p.before.decode(errors="replace")
    while i == 1:
        g.send(" ")
        i = g.p.expect([KDB_PROMPT, MORE], timeout=30)
        text += g.p.before.decode(errors="replace")
    g.kdb_entry_text = text + g.sync_kdb()
    return t


def enter_kdb(g, fiq: bool, timeout: float = 5) -> None:
    """Enter kdb the way a user would: the knock on the console (FIQ on); with
    FIQ off, mainline's sysrq-g, as BREAK + g where QEMU's mux is on the
    line (g.mux), else written to /proc/sysrq-trigger from the shell (a
    test that types raw bytes cannot have the mux: Ctrl-A is its escape)."""
    if fiq:
        g.knock()
    elif g.mux:
        g.send_break("g")
    else:
        g.sh_nowait("echo g > /proc/sysrq-trigger")
    g.wait_kdb(timeout=timeout)
