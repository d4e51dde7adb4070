#!/usr/bin/python3
"""make demo: a kernel stuck with IRQs masked, entered by FIQ.

Boots the board with the FIQ debugger on, makes a driver deadlock in
spin_lock_irq() (validation/modules/fiq_test.c), shows that the shell is
dead, then types kgdb's knock ($3#33) on the serial line: the UART's FIQ
enters kdb, which prints the stuck CPU's backtrace.
"""
from __future__ import annotations

import argparse
import sys
import time

from boards import BOARDS
from qemu import Guest, GuestError


def say(msg: str) -> None:
    print(f"\n=== {msg}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--board", choices=sorted(BOARDS), default="vexpress-a15")
    a = ap.parse_args()
    say(f"booting {a.board} with the FIQ debugger on ({BOARDS[a.board].cmdline(fiq=True)})")
    g = Guest(a.board, name=f"demo-{a.board}", fiq=True)
    try:
        g.wait_shell()
        print(g.sh("dmesg | grep -E 'GIC: |VIC|kgdb|NMI' | sed 's/^\\[[ 0-9.]*\\] //'"))
        say("a driver takes its spin_lock_irq() twice: the CPU spins with IRQs masked")
        g.sh_nowait("echo 1 > /sys/kernel/debug/fiq_test/deadlock")
        g.expect("fiq_test: taking fiq_test_lock twice", 10)
        time.sleep(1)
        try:
            g.sh("echo alive", timeout=3)
            say("the shell still answers: the lock-up did not happen")
            return 1
        except GuestError:
            say("the shell is dead (no answer in 3 s)")
        say("typing $3#33 on the serial line")
        t0 = g.knock()
        g.wait_kdb(timeout=10)
        print(g.kdb_entry_text.strip()[-400:])
        say(f"kdb> reached {time.monotonic() - t0:.3f} s after the knock; bt:")
        g.kdb_setup()
        print(g.kdb("bt"))
        return 0
    except GuestError as e:
        say(f"demo failed: {e}")
        print(g.console_tail())
        return 1
    finally:
        g.close()
        print(f"(console log: {g.log_path})")


if __name__ == "__main__":
    sys.exit(main())
