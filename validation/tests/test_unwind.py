"""A FIQ can sample a stuck CPU on any instruction, including the first one
of a function, before its prologue has built a frame.  unwind_frame() knows
that case (return address still in LR) only if an unwind index entry starts
at that address; by default ld merges a function's entry into the previous
one when their unwind instructions are the same, and then the backtrace
stops ("ktime_get from 0x0") instead of reaching the caller.  That is how
test_fault_cell[versatilepb-on-softlockup] once lost its culprit: the FIQ
came in on ktime_get+0x0 in the timer interrupt.

The series links vmlinux with --no-merge-exidx-entries.  These tests check
the ARMv7 index against the pristine (mainline) kernel built in the same
run, and make the FIQ land on ktime_get+0x0 on purpose (fiq_test.ko
fiq_at_entry) on both interrupt controllers, ARMv7 and ARMv5.

The other place a stuck CPU is sampled in is a delay: a driver polling
with udelay()/mdelay() and IRQs masked.  Without a delay timer that is
arch/arm/lib/delay-loop.S, which had no unwind annotations (the series'
second patch adds them): fiq_test.ko busy_wait on versatilepb and
vexpress-a9.
"""
from __future__ import annotations

import re
import struct
import subprocess
import time

import pytest

from boards import BOARDS, BUILD
from qemu import CMDLINE_FIQ

OBJCOPY = "arm-linux-gnueabi-objcopy"
READELF = "arm-linux-gnueabi-readelf"
NM = "arm-linux-gnueabi-nm"


def index_starts(vmlinux) -> set[int]:
    """The function addresses .ARM.unwind_idx has an entry for (each entry:
    a prel31 offset to the function, then its unwind instructions)."""
    sections = subprocess.run([READELF, "-SW", str(vmlinux)], check=True,
                              capture_output=True, text=True).stdout
    m = re.search(r"\.ARM\.unwind_idx\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", sections)
    assert m, f"{vmlinux}: no .ARM.unwind_idx (CONFIG_ARM_UNWIND off?)"
    base = int(m.group(1), 16)
    raw = subprocess.run([OBJCOPY, "-O", "binary", "--only-section=.ARM.unwind_idx",
                          str(vmlinux), "/dev/stdout"], check=True, capture_output=True).stdout
    starts = set()
    for off in range(0, len(raw), 8):
        prel31 = struct.unpack_from("<I", raw, off)[0] & 0x7fffffff
        if prel31 & 0x40000000:
            prel31 -= 0x80000000
        starts.add((base + off + prel31) & 0xffffffff)
    return starts


def functions(vmlinux) -> dict[str, int]:
    out = subprocess.run([NM, str(vmlinux)], check=True, capture_output=True, text=True).stdout
    funcs = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT" and not parts[2].startswith("$"):
            funcs[parts[2]] = int(parts[0], 16)
    return funcs


def without_entry(vmlinux) -> tuple[int, list[str]]:
    starts = index_starts(vmlinux)
    funcs = functions(vmlinux)
    return len(funcs), sorted(n for n, a in funcs.items() if a not in starts)


def bt_below_the_fiq(g) -> tuple[str, str]:
    """kdb's bt, and the frames it shows from __fiq_svc down as a figure:
    "<count>, the last from <caller>"."""
    g.kdb_setup()
    bt = g.kdb("bt")
    below = bt[bt.find("__fiq_svc from"):]
    callers = re.findall(r"^ \S+ (?:\[\w+\] )?from (\S+)", below, re.M)
    return bt, f"{len(callers)}, the last from {callers[-1] if callers else '-'}"


def go_back_to_the_shell(g, settle: float = 1.0) -> None:
    """go, then the shell answers; the knock's first four bytes reach it as
    typed input and its complaint about them may come late (the stuck CPU
    runs the irq_work that hands them to the tty once it unmasks IRQs)."""
    g.kdb_go()
    g.resume_shell(settle=settle)
    assert g.sh("echo alive").splitlines()[-1] == "alive"


def test_merged_unwind_entries_are_gone(figure):
    """The ARMv7 kernel against the pristine one (same config, mainline
    link): functions without an index entry of their own.  What remains
    with the series is code without unwind tables (assembly without
    UNWIND() annotations, __exit code discarded with its entries); ld's
    merging accounts for the rest, at least nine tenths in mainline."""
    total, missing = without_entry(BUILD / "out" / "armv7" / "vmlinux")
    p_total, p_missing = without_entry(BUILD / "out" / "pristine-armv7" / "vmlinux")
    ratio = len(missing) / len(p_missing)
    figure("unwind index armv7: functions without their own entry",
           f"{len(missing)} of {total} vs pristine {len(p_missing)} of {p_total} "
           f"(ratio {ratio:.3f})")
    assert "ktime_get" in p_missing, "ktime_get has its own entry in mainline: pick another target"
    assert "ktime_get" not in missing
    assert ratio < 0.1, f"{len(missing)} functions still share an entry, e.g. {missing[:5]}"


@pytest.mark.parametrize("board", ["vexpress-a15", "versatilepb"])
def test_fiq_on_a_first_instruction_unwinds_to_the_caller(guest, figure, board):
    """FIQ on: IRQs and FIQs masked for 3 s, the knock sent after 0.5 s
    (room to spare: ARMv5's mdelay() is a loop calibrated at boot), then
    ktime_get() entered with FIQ unmasked by the branch: kdb is entered at
    ktime_get's address and bt goes on through the caller to the write()
    that started it.

    The console on ttyAMA0 sets the PL011 up (FIFO on), so the 5-byte
    knock arrives in the first FIQ after FIQs are unmasked."""
    funcs = functions(BUILD / "out" / BOARDS[board].flavour / "vmlinux")
    g = guest(board, fiq=True, cmdline=CMDLINE_FIQ)
    g.sh_nowait("echo 3000 > /sys/kernel/debug/fiq_test/fiq_at_entry")
    g.expect("FIQ masked for 3000 ms", 10)
    time.sleep(0.5)
    g.knock()
    g.wait_kdb(timeout=10)
    m = re.search(r"due to NonMaskable Interrupt @ (0x[0-9a-f]+)", g.kdb_entry_text)
    assert m, g.kdb_entry_text
    assert int(m.group(1), 16) == funcs["ktime_get"], \
        f"entered at {m.group(1)}, ktime_get is at {funcs['ktime_get']:#x}"
    bt, frames = bt_below_the_fiq(g)
    figure(f"{board} FIQ taken at ktime_get+0x0: bt frames from __fiq_svc down", frames)
    assert re.search(r"__fiq_svc from ktime_get\+0x0/", bt), bt
    assert re.search(r"ktime_get from fiq_test_call_at_entry[.\w]*\+", bt), bt
    assert re.search(r"fiq_at_entry_write \[fiq_test\] from ", bt), bt
    go_back_to_the_shell(g)


@pytest.mark.parametrize("board", ["versatilepb", "vexpress-a9"])
def test_fiq_in_the_delay_loop_unwinds_to_the_caller(guest, figure, board):
    """FIQ on: a driver busy-waiting 3 s in mdelay() with IRQs masked
    (fiq_test.ko busy_wait), the knock sent after 0.5 s.  Neither board
    has a delay timer, so the FIQ samples the CPU in delay-loop.S, whose
    functions had no unwind entries: bt must still go on to the caller,
    fiq_test_busy_wait(), and the write() that started it."""
    g = guest(board, fiq=True)
    g.sh_nowait("echo 3000 > /sys/kernel/debug/fiq_test/busy_wait")
    g.expect("busy-waiting 3000 ms with IRQs masked", 10)
    time.sleep(0.5)
    t0 = g.knock()
    g.wait_kdb(timeout=2)
    t = time.monotonic() - t0
    bt, frames = bt_below_the_fiq(g)
    figure(f"{board} FIQ in mdelay() with IRQs masked: knock->kdb>, bt frames from __fiq_svc down",
           f"{t:.3f} s, {frames}")
    assert re.search(r"__fiq_svc from __loop_\w*delay\+", bt), bt
    assert re.search(r"__loop_\w*delay from fiq_test_busy_wait\+", bt), bt
    assert re.search(r"fiq_test_busy_wait \[fiq_test\] from busy_wait_write\+", bt), bt
    go_back_to_the_shell(g, settle=3)   # the rest of the 3 s wait first
