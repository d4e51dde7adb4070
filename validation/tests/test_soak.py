"""Soak: 200 debugger entries and exits in a row with a workload running,
then every byte typed into the shell still arrives.

Same kernel, FIQ debugger on and off.  A background workload prints a
counter to the console every 0.1 s; the shell's foreground is
`cat > /dev/null` (what the knock leaves in the tty goes there).  Each
cycle: ask for kdb from the serial line (FIQ on: the knock $3#33; off:
mainline's BREAK + g), wait for kdb> (5 s), `go`, and wait for the next
counter value, which must be larger than the last one seen (the
workload runs between entries, nothing hangs).  200/200 cycles, then 300
random lines typed into `cat > /tmp/in` at 1.6 KB/s arrive intact (md5,
line count, echoed back): entering and leaving 200 times lost no byte of
the console, ttyAMA0, in either mode.  Figure: cycles per second.
"""
from __future__ import annotations

import hashlib
import time

import pytest

from boards import BOARDS
from scenarios import enter_kdb, random_lines, start_ticker, stop_ticker, ticks_in

# entries per second, compared FIQ on and off: run alone (scripts/test.sh)
pytestmark = pytest.mark.serial

CYCLES = 200


def tick_after(g, last: int, timeout: float = 5) -> int:
    """Wait for a counter value above last; return it."""
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        g.expect(r"soak-\d+", deadline - time.monotonic())
        seen = g.p.after.decode()
        n = ticks_in(seen, "soak")[0]
        if n > last:
            return n
    raise AssertionError(f"counter stuck at {last} (last seen {seen!r})")


@pytest.mark.parametrize("board", ["vexpress-a15", "b2120"])
@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_soak_200_entries(guest, figure, board, fiq):
    mode = "FIQ on" if fiq else "FIQ off"
    g = guest(board, fiq=fiq, mux=not fiq)
    tty = g.sh("cat /sys/class/tty/console/active")
    assert tty == BOARDS[board].console
    start_ticker(g, period="0.1", tag="soak")
    g.sh_nowait("cat > /dev/null")
    last = tick_after(g, -1)
    done = 0
    t0 = time.monotonic()
    for i in range(CYCLES):
        enter_kdb(g, fiq)
        g.kdb_go()
        last = tick_after(g, last)
        done += 1
    took = time.monotonic() - t0
    figure(f"soak {CYCLES} x (entry->kdb>->go) on {tty} ({mode})",
           f"{done}/{CYCLES}, {done / took:.2f} cycles/s, counter at {last}")
    assert done == CYCLES
    # back to the shell, then a checked round trip through the same tty
    time.sleep(0.5)
    g.send("\n\x04")
    time.sleep(0.5)
    assert "soak-done" in g.sh("echo soak-done").splitlines()   # ticks may interleave
    stop_ticker(g, "soak")
    time.sleep(0.5)
    lines = random_lines(300, seed=99)
    text = "\n".join(lines) + "\n"
    g.sh_nowait("cat > /tmp/in")
    time.sleep(0.3)
    g.send_paced(text, chunk=32, delay=0.020)
    time.sleep(0.5)
    g.send("\x04")
    assert g.sh("wc -l < /tmp/in", timeout=20) == str(len(lines))
    assert g.sh("md5sum < /tmp/in").split()[0] == hashlib.md5(text.encode()).hexdigest()
    assert g.sh("cat /tmp/in", timeout=60).split("\n") == lines
