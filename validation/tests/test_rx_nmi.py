"""Issue 13: the debug port stays the console; only its receive interrupt
becomes an NMI, owned by kgdboc, and the shell's bytes reach the PL011
driver's own receive path through a ring and an irq_work.

Every figure is taken FIQ on and FIQ off (mainline: the same kernel
without irqchip.fiq_nmi=1) in the same run.
"""
from __future__ import annotations

import hashlib
import random
import re
import time

import pexpect
import pytest

from fiq_helpers import LKDTM, break_g_enters_while_healthy, clean_boot_log, lock_up
from qemu import GuestError
from scenarios import lock_cpus, stuck_cpus_in_btc
from test_trustzone import uart_fiq_capable_dtb

NMI_LINE = re.compile(r"kgdboc: ttyAMA0: IRQ(\d+) is an NMI: BREAK then g, "
                      r"or the knock \(dollar 3 hash 33\), enters the debugger")
# a gdb packet: $<data>#<two hex digits> whose checksum matches
PACKET = re.compile(rb"\$([^#$]*)#([0-9a-fA-F]{2})")


def valid_gdb_packets(data: bytes) -> list[bytes]:
    return [m.group(0) for m in PACKET.finditer(data)
            if sum(m.group(1)) % 256 == int(m.group(2), 16)]


@pytest.mark.parametrize("board", ["vexpress-a15", "vexpress-a9", "virt", "versatilepb"])
def test_port_stays_the_console(guest, tmp_path, board):
    """FIQ on: console and shell on ttyAMA0, its interrupt is kgdboc's NMI
    (no uart-pl011 handler), one line says so without spelling the knock,
    and nothing the port printed during the boot is a valid gdb packet.
    virt boots QEMU's own DTB, which marks no UART FIQ-capable: the test
    adds the flag (secure=off: the kernel owns the Secure side)."""
    dtb = uart_fiq_capable_dtb(tmp_path, "") if board == "virt" else None
    g = guest(board, fiq=True, dtb=dtb)
    log = clean_boot_log(g)
    m = NMI_LINE.search(log)
    assert m, log[-3000:]
    assert len(NMI_LINE.findall(log)) == 1
    assert "$3#33" not in log
    irqs = g.sh("cat /proc/interrupts")
    assert re.search(rf"^ *{m.group(1)}: .*kgdboc$", irqs, re.M), irqs
    assert "uart-pl011" not in irqs, irqs
    assert g.sh("cat /sys/class/tty/console/active") == "ttyAMA0"
    # termios is the driver's: a speed change sticks, the shell still talks
    assert g.sh("stty 115200; stty speed") == "115200"
    assert g.sh("echo after-stty") == "after-stty"
    g._log.flush()
    boot = g.log_path.read_bytes()
    assert valid_gdb_packets(boot) == [], valid_gdb_packets(boot)


def test_fiq_off_is_mainline(guest):
    """FIQ off: the PL011 keeps its IRQ handler and kgdboc says nothing."""
    g = guest("vexpress-a15")
    log = clean_boot_log(g)
    assert "kgdboc:" not in log, log[-2000:]
    irqs = g.sh("cat /proc/interrupts")
    assert "uart-pl011" in irqs and "kgdboc" not in irqs, irqs


@pytest.mark.parametrize("board", ["vexpress-a15", "vexpress-a9", "versatilepb", "b2120"])
def test_break_g_enters_a_stuck_cpu(guest, figure, board):
    """BREAK + g with the only CPU in HARDLOCKUP: kdb, and bt names the
    culprit (FIQ off, the same is test_hardlockup_not_entered_with_fiq_off:
    no entry)."""
    g = guest(board, fiq=True, mux=True)
    lock_up(g, f"echo HARDLOCKUP > {LKDTM}", "Performing direct entry HARDLOCKUP")
    t0 = g.send_break("g")
    g.wait_kdb(timeout=3)
    figure(f"{board} HARDLOCKUP BREAK g->kdb> FIQ on", f"{time.monotonic() - t0:.3f} s")
    g.kdb_setup()
    bt = g.kdb("bt")
    assert "lkdtm_HARDLOCKUP" in bt, bt
    g.kdb_go()


def console_for(g, seconds: float) -> str:
    """Everything the console prints in the next seconds."""
    out, end = [], time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        try:
            out.append(g.p.read_nonblocking(65536, timeout=min(left, 0.5)))
        except pexpect.TIMEOUT:
            pass
    return b"".join(out).decode(errors="replace").replace("\r", "")


@pytest.mark.parametrize("board", ["vexpress-a15", "b2120"])
@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_break_l_backtraces_a_stuck_cpu(guest, figure, board, fiq):
    """SMP2 (vexpress-a15, and b2120 on the STiH407 model), CPU1 in
    HARDLOCKUP: BREAK + l prints CPU1's backtrace (FIQ on:
    from the NMI, and the backtrace IPI is a FIQ).  FIQ off: mainline's
    sysrq-l by IRQ asks the stuck CPU with an IRQ, which never comes (it
    gives up after 10 s).  Read on the console: with a CPU stuck and no
    NMI, a fork (dmesg) may wait for it."""
    g = guest(board, smp=2, fiq=fiq, mux=True)
    lock_cpus(g, [1], 0)
    assert g.sh("echo alive") == "alive"
    g.drain()
    g.send_break("l")
    out = console_for(g, 14)
    assert "Show backtrace of all active CPUs" in out or "NMI backtrace for cpu 0" in out, out
    hit = bool(re.search(r"NMI backtrace for cpu 1\n(.*\n){0,30}.*lkdtm_HARDLOCKUP", out))
    figure(f"{board} SMP2 CPU1 stuck, BREAK l: CPU1 backtrace FIQ {'on' if fiq else 'off'}",
           "shown" if hit else "none")
    assert hit == fiq, out[-4000:]
    if fiq:
        assert g.sh("echo still-alive") == "still-alive"


def paste_text(size: int, seed: int = 13) -> str:
    """size bytes of printable lines (no control characters, no knock)."""
    rnd = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;-_=+/"
    out, n = [], 0
    while n < size:
        line = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 100))) + "\n"
        out.append(line)
        n += len(line)
    text = "".join(out)[:size - 1] + "\n"
    assert "$3#33" not in text and len(text) == size
    return text


def paste(g, figure, label: str, text: str, rate: float) -> None:
    """Paste text into cat > /tmp/p at about rate bytes/s (no echo), a
    chunk every 10 ms; check the bytes delivered and the md5; record both
    and the rate achieved (QEMU's pty is not rate-limited: the guest's
    pace shows)."""
    chunk = max(16, int(rate / 100))
    g.sh("stty -echo")
    g.sh_nowait("cat > /tmp/p")
    time.sleep(0.3)
    t0 = time.monotonic()
    g.send_paced(text, chunk=chunk, delay=chunk / rate, stall=10)
    took = time.monotonic() - t0
    time.sleep(1)
    g.send("\x04")
    got = int(g.sh("wc -c < /tmp/p", timeout=30))
    md5 = g.sh("md5sum < /tmp/p", timeout=30).split()[0]
    want = hashlib.md5(text.encode()).hexdigest()
    figure(label, f"{got}/{len(text)} B delivered ({100 * got / len(text):.2f} %), "
                  f"{len(text) / took / 1000:.1f} KB/s, md5 {'equal' if md5 == want else 'DIFFERS'}")
    assert (got, md5) == (len(text), want)


# As fast as the host can send: QEMU's PL011 takes the host's bytes only
# while its FIFO has room, so with the driver's own interrupt the guest's
# pace holds the sender off.  The NMI would empty the FIFO into kgdboc's
# ring whatever the tty's pace, and without back-pressure it overflowed
# (1020311 of 1048576 bytes delivered before the throttle): at three
# quarters full the NMI leaves the FIFO alone and masks its line until the
# consumer has caught up.
FLOOD = 2_000_000


@pytest.mark.parametrize("fiq,rate", [
    (True, 11520), (True, 46080), (True, FLOOD),
    (False, 11520), (False, 46080), (False, FLOOD)],
    ids=["fiq-on-115200baud", "fiq-on-4x", "fiq-on-flood",
         "fiq-off-115200baud", "fiq-off-4x", "fiq-off-flood"])
def test_paste_1mib(guest, figure, fiq, rate):
    """1 MiB of text pasted into cat at line rate (11.5 KB/s), 4x and as
    fast as the guest takes it, FIQ on and off: every byte delivered, md5
    equal."""
    g = guest("vexpress-a15", fiq=fiq)
    paste(g, figure, f"vexpress-a15 1 MiB paste at {rate / 1000:.1f} KB/s FIQ "
                     f"{'on' if fiq else 'off'}", paste_text(1 << 20), rate)
    if fiq:
        assert "ring full" not in g.sh("dmesg | grep kgdboc")
        assert "kgdboc" in g.sh("cat /proc/interrupts")


@pytest.mark.parametrize("size,rate", [(1 << 18, 11520), (1 << 20, 46080)],
                         ids=["256k-115200baud", "1m-4x"])
def test_paste_with_cpu1_stuck(guest, figure, size, rate):
    """SMP2 with CPU1 in HARDLOCKUP, FIQ on: the shell on CPU0 keeps all
    its input (256 KiB at line rate, 1 MiB at 4x).  The shell and unbound
    work are pinned to CPU0 (scenarios.lock_cpus), as in every SMP lock-up
    test: mainline's tty work would otherwise wait for the stuck CPU too."""
    g = guest("vexpress-a15", smp=2, fiq=True)
    lock_cpus(g, [1], 0)
    paste(g, figure, f"vexpress-a15 SMP2 CPU1 stuck, {size >> 10} KiB paste at "
                     f"{rate / 1000:.1f} KB/s FIQ on", paste_text(size), rate)


@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_break_g_with_cpu0_stuck(guest, figure, fiq):
    """SMP2 with CPU0, the CPU that takes the UART's interrupt, in
    HARDLOCKUP: BREAK + g enters kdb (the NMI) and btc shows CPU0 stuck.
    FIQ off, mainline's control: BREAK + g enters while the kernel is
    healthy, and not once CPU0 is stuck (its IRQ never comes)."""
    g = guest("vexpress-a15", smp=2, fiq=fiq, mux=True)
    if not fiq:
        break_g_enters_while_healthy(g)
    lock_cpus(g, [0], 1)
    t0 = g.send_break("g")
    if not fiq:
        with pytest.raises(GuestError):
            g.wait_kdb(timeout=10)
        figure("vexpress-a15 SMP2 CPU0 stuck: BREAK g->kdb> FIQ off", "no entry in 10 s")
        return
    g.wait_kdb(timeout=5)
    figure("vexpress-a15 SMP2 CPU0 stuck: BREAK g->kdb> FIQ on", f"{time.monotonic() - t0:.3f} s")
    g.kdb_setup()
    assert stuck_cpus_in_btc(g.kdb("btc")) == {0}


def test_flood_with_the_draining_cpu_stuck(guest, figure):
    """SMP2 with CPU0, which takes the UART's NMI and so runs its irq_work,
    in HARDLOCKUP: nothing drains kgdboc's ring.  16 KiB pasted at 4x
    fill it; the NMI must not push back (it would mask its line for good)
    but keep taking bytes, dropping what has no room, so the host's
    16 KiB all go in and the knock after them enters kdb."""
    g = guest("vexpress-a15", smp=2, fiq=True)
    lock_cpus(g, [0], 1)
    text = paste_text(1 << 14, seed=14)
    t0 = time.monotonic()
    g.send_paced(text, chunk=460, delay=0.01, stall=5)
    figure("vexpress-a15 SMP2 CPU0 stuck: 16 KiB flood taken (FIQ on)",
           f"{len(text)} B in {time.monotonic() - t0:.2f} s")
    g.knock()
    g.wait_kdb(timeout=5)
    g.kdb_setup()
    assert stuck_cpus_in_btc(g.kdb("btc")) == {0}


STOP_REPLY = rb"\$[ST][0-9a-fA-F]{2}[^#$]*#[0-9a-fA-F]{2}"


def gdb_attaches_and_continues(g) -> None:
    """At the shell, FIQ on: the knock, then gdb's packets by hand: its
    first packet at kdb> (kdb hands over to kgdb, which stops in gdb
    protocol), and continue; the target runs, kgdb still connected."""
    g.knock()
    g.wait_kdb(timeout=3)
    g.send("$?#3f")
    g.expect(STOP_REPLY, 10)
    g.send("+")
    g.send("$c#63")
    g.expect(rb"\+", 5)
    time.sleep(1)
    g.drain()


def test_gdb_gone_stray_byte_then_knock(guest):
    """The hang of issue 13, with a gdb session on the line: gdb attaches
    (its first packet at kdb>), continues, and goes away without detaching;
    one stray byte must then go to the shell and make the kernel print
    nothing (kgdb_nmi answered it with its knock prompt, which became a gdb
    packet sent from FIQ whose acknowledgement never came, and the CPU hung
    with FIQs masked).  The knock still works: kgdb, still connected, stops
    in gdb protocol, and the knock, gdb's own escape to kdb, gets kdb>."""
    g = guest("vexpress-a15", fiq=True)
    gdb_attaches_and_continues(g)   # then gdb is gone
    g.send("x")                     # the stray byte
    out = g.drain(wait=2, limit=3).encode()
    assert valid_gdb_packets(out) == [] and b"$" not in out, out
    g.send("\n")                    # the shell's line "x" ends: not found
    assert g.sh("echo alive") == "alive"
    g.knock()
    g.expect(STOP_REPLY, 10)
    g.send("+")
    g.knock()                       # at the gdb stub: detach, back to kdb
    g.wait_kdb(timeout=5)
    g.kdb_go()
    g.resume_shell()
    assert g.sh("echo back") == "back"


def uart_interrupts(g) -> int:
    """The UART0 line's count in /proc/interrupts (kgdboc's NMI or the
    PL011's IRQ), summed over the CPUs."""
    irqs = g.sh("cat /proc/interrupts")
    m = re.search(r"^ *\d+:((?: +\d+)+) .*(kgdboc|uart-pl011)$", irqs, re.M)
    assert m, irqs
    return sum(int(n) for n in m.group(1).split())


@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_rx_interrupts_per_byte(guest, figure, fiq):
    """The receive path's interrupt cost: 64 KiB pasted at line rate, the
    UART line's interrupts per received byte, FIQ on (kgdboc's NMI) and off
    (the PL011's IRQ).  Both drain the FIFO per interrupt, so the two must
    be alike (on within 1.10 of off is the issue's goal for the ratio; the
    test holds each to at most one interrupt per byte, the ratio is in the
    figures)."""
    g = guest("vexpress-a15", fiq=fiq)
    text = paste_text(1 << 16, seed=5)
    before = uart_interrupts(g)
    paste(g, figure, f"vexpress-a15 64 KiB paste FIQ {'on' if fiq else 'off'}", text, 11520)
    n = uart_interrupts(g) - before
    figure(f"vexpress-a15 UART interrupts per received byte FIQ {'on' if fiq else 'off'}",
           f"{n / len(text):.3f} ({n} for {len(text)} B)")
    assert n <= len(text) + 200, n
