#!/usr/bin/python3
"""Interactive QEMU session on the serial console (make qemu).

Ctrl-A x quits QEMU, Ctrl-A c switches to its monitor.  In the shell,
`echo g > /proc/sysrq-trigger` enters kdb; with --fiq, typing $3#33 does,
even when the kernel is stuck with IRQs masked.
"""
from __future__ import annotations

import argparse
import os

from boards import BOARDS
from qemu import qemu_args_for


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", choices=sorted(BOARDS), default="vexpress-a15")
    ap.add_argument("--smp", type=int, default=1)
    ap.add_argument("--fiq", action="store_true", help="boot with the FIQ debugger on")
    ap.add_argument("--machine-opts", default="", help="e.g. secure=off")
    ap.add_argument("--append", default="", help="extra kernel command line")
    a = ap.parse_args()
    args = qemu_args_for(BOARDS[a.board], a.smp, a.append, a.machine_opts, a.fiq)
    args += ["-serial", "mon:stdio"]
    qemu = BOARDS[a.board].qemu_binary()
    print(f"Ctrl-A x quits.  {qemu} " + " ".join(args), flush=True)
    os.execvp(qemu, [qemu] + args)


if __name__ == "__main__":
    main()
