"""Steps shared by the FIQ debugger tests of every interrupt controller
(tests/test_gic_fiq.py, tests/test_vic_fiq.py, tests/test_trustzone.py,
tests/test_harm.py)."""
from __future__ import annotations

import dataclasses
import hashlib
import random
import re
import time

import pytest

from boards import BOARDS, Board
from qemu import CMDLINE_FIQ, GuestError

LKDTM = "/sys/kernel/debug/provoke-crash/DIRECT"
DEADLOCK = "/sys/kernel/debug/fiq_test/deadlock"
BAD_WORDS = ("Oops", "BUG:", "WARNING:", "Internal error", "Unable to handle")
# Every pr_warn/pr_err the series adds (irqchip/, kgdb/; WARN*() is
# "WARNING:" above), one regex per message (test_harm.py::
# test_series_warnings_are_listed keeps the list in step with the patches)
SERIES_WARNINGS = (
    r"GIC: hwirq \d+: .+ in interrupt specifier \(0x[0-9a-f]+\), using it as an IRQ",
    r"VIC \S+: source \d+ out of range in interrupt specifier, no interrupt",
    r"VIC \S+: source \d+: .+ in interrupt specifier \(0x[0-9a-f]+\), using it as an IRQ",
    r"VIC: unexpected FIQ from source \d+, masked",
    # kgdboc's (its pr_fmt adds "kgdboc: ")
    r"\S+: its interrupt cannot be an NMI \(-?\d+\): the debugger is entered by IRQ only",
    r"\S+: open, so its interrupt stays an IRQ: the debugger is entered by IRQ only",
    r"\S+: in RS-485 mode, so its interrupt stays an IRQ: the debugger is entered by IRQ only",
    r"\S+: removed, its NMI freed: attach kgdboc again for it once the port is back",
    r"\S+: its NMI stays on CPU\d+, which goes offline \(-?\d+\): the debugger is not entered from it",
    r"\S+: \d+ received bytes lost \(\d+ in all\): NMI receive ring full",
)
# genirq's NMI core's (kernel/irq/manage.c)
GENIRQ_NMI_ERRORS = (
    r"Failed to setup NMI delivery: irq \d+",
    r"Invalid attempt to share NMI for ",
)
# kgdboc's line when it took the port's receive interrupt as an NMI
NMI_TAKEN = r"kgdboc: ttyAMA0: IRQ(\d+) is an NMI: "


def nmi_taken(console: str) -> str:
    """NMI_TAKEN for a board's console."""
    return NMI_TAKEN.replace("ttyAMA0", console)
# where the irqchip offers NMIs but refuses this line (the VIC: not
# VIC_FIQ_CAPABLE); where it offers none (the GIC without groups, the
# SIC) kgdboc stays quiet
NMI_REFUSED = r"kgdboc: ttyAMA\d: its interrupt cannot be an NMI \(-22\)"


def nmi_refused(console: str) -> str:
    """NMI_REFUSED for a board's console."""
    return NMI_REFUSED.replace(r"ttyAMA\d", re.escape(console))


def clean_boot_log(g, expect: tuple[str, ...] = ()) -> str:
    """The kernel log without timestamps, asserted free of oopses, BUGs
    and WARNINGs (a bad device tree must cost one warning, never those),
    and of the series' (and genirq's NMI) warnings and errors but those
    the test provokes on purpose: expect, regexes, each of which must
    match one of them."""
    log = g.sh("dmesg | sed 's/^\\[[ 0-9.]*\\] //'")
    for bad_word in BAD_WORDS:
        assert bad_word not in log, log[-3000:]
    warned = [line for line in log.splitlines()
              if any(re.search(w, line) for w in SERIES_WARNINGS + GENIRQ_NMI_ERRORS)]
    unasked = [line for line in warned if not any(re.search(e, line) for e in expect)]
    assert not unasked, f"warnings no test asked for: {unasked}"
    for e in expect:
        assert any(re.search(e, line) for line in warned), \
            f"expected warning {e!r} missing; the series warned: {warned}"
    return log


def pristine_board(name: str) -> Board:
    """Board name booting the ARMv7 kernel without the series, built in the
    same run with the same config (scripts/pristine.sh, make pristine),
    with its own DTBs and fiq_test.ko."""
    board = dataclasses.replace(BOARDS[name], flavour="pristine-armv7")
    for f in (board.kernel(), board.initrd()):
        if not f.exists():
            pytest.fail(f"{f} missing: run 'bash scripts/pristine.sh' (make pristine)")
    return board


def lock_up(g, trigger: str, marker: str) -> None:
    """Lock the CPU with trigger; assert it happened: marker printed, the
    shell dead."""
    g.sh_nowait(trigger)
    g.expect(marker, 10)
    with pytest.raises(GuestError):
        g.sh("echo alive", timeout=1.5)


def lock_up_and_knock(g, trigger: str, marker: str, timeout: float) -> float:
    """lock_up(), then knock; return the time from knock to kdb> (raises
    GuestError if kdb never comes)."""
    lock_up(g, trigger, marker)
    t0 = g.knock()
    g.wait_kdb(timeout=timeout)
    return time.monotonic() - t0


def break_g_enters_while_healthy(g) -> None:
    """The first half of every FIQ-off control, in a Guest(..., mux=True):
    mainline's way into kdb from the serial line, BREAK + g (sysrq-g in the
    UART's IRQ handler), works while the kernel is healthy, and go gives
    the shell back."""
    g.send_break("g")
    g.wait_kdb(timeout=5)
    g.kdb_go()
    g.resume_shell()
    assert g.sh("echo healthy") == "healthy"


def lock_up_beyond_reach(g, trigger: str, marker: str, seconds: float = 10) -> None:
    """The control of a FIQ-off (or FIQ-unavailable) boot, in one boot of a
    Guest(..., mux=True): break_g_enters_while_healthy(); then lock_up(),
    and neither BREAK + g nor the knock reaches kdb within seconds."""
    break_g_enters_while_healthy(g)
    lock_up(g, trigger, marker)
    g.send_break("g")
    time.sleep(0.5)
    g.knock()
    with pytest.raises(GuestError):
        g.wait_kdb(timeout=seconds)


def console_roundtrip(g, figure, nlines: int, chunk: int, delay: float,
                      where: str = "") -> None:
    """Type nlines random lines into `cat > /tmp/in` on the console (the
    board's: ttyAMA0 on the PL011 boards), paced at chunk bytes every delay
    s, and check they arrived and come back intact (line count, md5, line
    by line)."""
    console = g.board.console
    assert g.sh("cat /sys/class/tty/console/active") == console
    rnd = random.Random(1234)
    lines = [f"{n:04d} " + "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789")
                                   for _ in range(rnd.randint(0, 40)))
             for n in range(nlines)]
    text = "\n".join(lines) + "\n"
    g.sh_nowait("cat > /tmp/in")
    time.sleep(0.3)
    t0 = time.monotonic()
    g.send_paced(text, chunk=chunk, delay=delay)
    time.sleep(0.5)
    g.send("\x04")
    figure(f"{where + ' ' if where else ''}{console} {nlines} lines in, {chunk} B every "
           f"{delay * 1000:.0f} ms", f"{time.monotonic() - t0:.2f} s, {len(text)} bytes")
    assert g.sh("wc -l < /tmp/in", timeout=20) == str(nlines)
    want = hashlib.md5(text.encode()).hexdigest()
    assert g.sh("md5sum < /tmp/in").split()[0] == want
    back = g.sh("cat /tmp/in", timeout=60)
    assert back.split("\n") == lines


STRIP_TIME = "dmesg | sed -n 's/^\\[[ 0-9.]*\\] //p'"


def kunit_suite(g, suite: str, cases: str | None = None) -> tuple[str, tuple[int, int, int]]:
    """The boot log's KTAP lines, checked for a KUnit suite that ran and
    reported ok, with no failing case anywhere in it; returns the lines and
    the suite's (pass, fail, skip) totals.  cases: a parameterised case
    whose own totals must show at least 7 passes and no failure."""
    ktap = g.sh(f"{STRIP_TIME} | grep -E '^ *(ok|not ok|# )'")
    assert f"# Subtest: {suite}" in g.sh(f"{STRIP_TIME} | grep Subtest")
    assert re.search(rf"^ok \d+ {re.escape(suite)}$", ktap, re.M), ktap
    assert "not ok" not in ktap, ktap
    totals = re.search(rf"# {re.escape(suite)}: pass:(\d+) fail:(\d+) skip:(\d+)", ktap)
    assert totals, ktap
    if cases:
        m = re.search(rf"# {cases}: pass:(\d+) fail:(\d+)", ktap)
        assert m and int(m.group(1)) >= 7 and m.group(2) == "0", ktap
    return ktap, tuple(int(n) for n in totals.groups())
