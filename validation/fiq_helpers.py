"""Steps shared by the FIQ debugger tests of every interrupt controller
(tests/test_gic_fiq.py, tests/test_vic_fiq.py)."""
from __future__ import annotations

import hashlib
import random
import re
import time

import pytest

from qemu import GuestError

LKDTM = "/sys/kernel/debug/provoke-crash/DIRECT"
DEADLOCK = "/sys/kernel/debug/fiq_test/deadlock"
BAD_WORDS = ("Oops", "BUG:", "WARNING:", "Internal error")


def clean_boot_log(g) -> str:
    """The kernel log without timestamps, asserted free of oopses, BUGs
    and WARNINGs (a bad device tree must cost one warning, never those)."""
    log = g.sh("dmesg | sed 's/^\\[[ 0-9.]*\\] //'")
    for bad_word in BAD_WORDS:
        assert bad_word not in log, log[-3000:]
    return log


def lock_up_and_knock(g, trigger: str, marker: str, timeout: float) -> float:
    """Lock the CPU with trigger, check the shell is dead, knock; return
    the time from knock to kdb> (raises GuestError if kdb never comes)."""
    g.sh_nowait(trigger)
    g.expect(marker, 10)
    with pytest.raises(GuestError):
        g.sh("echo alive", timeout=1.5)
    t0 = g.knock()
    g.wait_kdb(timeout=timeout)
    return time.monotonic() - t0


def ttynmi0_roundtrip(g, figure, nlines: int, chunk: int, delay: float,
                      where: str = "") -> None:
    """Type nlines random lines into `cat > /tmp/in` on ttyNMI0, paced at
    chunk bytes every delay s, and check they arrived and come back intact
    (line count, md5, line by line)."""
    assert g.sh("cat /sys/class/tty/console/active") == "ttyNMI0"
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
    figure(f"{where + ' ' if where else ''}ttyNMI0 {nlines} lines in, {chunk} B every "
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
