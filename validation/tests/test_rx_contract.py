"""Issue 24: the receive NMI keeps its contract with the driver and with the
user.  Each case failed on the series before its fix (say so in the patch
that fixed it), and runs FIQ on and FIQ off (mainline: the same kernel
without irqchip.fiq_nmi=1) in the same run where mainline has an answer.

- termios under traffic: the 8250's divisor latch (DLAB) makes RBR read DLL
  and leaves DR set.  An NMI that landed in that window spun in FIQ for
  ever (the only CPU dead); the driver now keeps the NMI out of the window
  (uart_nmi_block()), and the NMI's drain is bounded anyway.
- kernel.sysrq: the knock and BREAK + g enter only where sysrq-g would.
- a BREAK's sysrq window: a key that comes 5 s or more after a BREAK is a
  key, as in mainline, not a sysrq command.
- the ipi_raise tracepoint from the NMI; kgdboc attached to an open port;
  the port's driver unbound while kgdboc holds its NMI.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pathlib
import random
import re
import shutil
import time

import pytest

from boards import BOARDS, BUILD, FIQ_SWITCH, Board
from dtb_tweak import set_interrupt_flags, set_map_flags, set_props
from fiq_helpers import clean_boot_log
from kbuild import configure, kmake
from qemu import GuestError, qmp
from test_gic_fiq import GIC_FIQ_CAPABLE, LEVEL_HIGH
from test_rx_nmi import STOP_REPLY, gdb_attaches_and_continues, paste_text

SYSRQ = "/proc/sys/kernel/sysrq"
# i.MX6Q UART1 (ttymxc0), beside the console's UART2
IMX_UART1 = "/soc/bus@2000000/spba-bus@2000000/serial@2020000"


@pytest.mark.parametrize("board", ["orangepi-pc", "ast2600-evb"])
@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_termios_changes_under_traffic(guest, figure, board, fiq):
    """The only CPU changes the console's speed in a loop (38400, 115200:
    each a divisor latch window) while 64 KiB are pasted into cat at 4x
    line rate: every byte arrives (md5), none is DLL read as data, the
    shell answers, and the log has no warning.  The loop runs beside cat
    in one subshell (the foreground job: a background job's tcsetattr()
    is job control's), which waits for it before the shell's next prompt."""
    g = guest(board, fiq=fiq)
    assert g.sh("nproc") == "1"
    tty = f"/dev/{g.board.console}"
    text = paste_text(64 << 10)
    rate = 46080
    g.sh("stty -echo; rm -f /tmp/stop /tmp/n")
    g.sh_nowait(f"(n=0; while [ ! -e /tmp/stop ]; do stty -F {tty} 38400 && "
                f"stty -F {tty} 115200 && n=$((n+1)) && echo $n > /tmp/n; done & "
                f"cat > /tmp/p; touch /tmp/stop; wait)")
    time.sleep(1)
    t0 = time.monotonic()
    g.send_paced(text, chunk=int(rate / 100), delay=0.01, stall=10)
    took = time.monotonic() - t0
    time.sleep(1)
    g.send("\x04")
    got = int(g.sh("wc -c < /tmp/p", timeout=30))
    md5 = g.sh("md5sum < /tmp/p", timeout=30).split()[0]
    loops = int(g.sh("cat /tmp/n"))
    label = f"{board} 64 KiB paste at 46 KB/s with speed changes in a loop FIQ {'on' if fiq else 'off'}"
    figure(label, f"{got}/{len(text)} B, md5 "
                  f"{'equal' if md5 == hashlib.md5(text.encode()).hexdigest() else 'DIFFERS'}, "
                  f"{2 * loops} speed changes in {took:.1f} s")
    assert (got, md5) == (len(text), hashlib.md5(text.encode()).hexdigest())
    assert loops >= 20
    assert g.sh(f"stty -F {tty} speed") == "115200"
    clean_boot_log(g)


def enters(g, keys, seconds: float = 3) -> bool:
    """keys(): the knock or BREAK + g; True if kdb came (then go and the
    shell is back)."""
    g.drain()
    keys()
    try:
        g.wait_kdb(timeout=seconds)
    except GuestError:
        g.resume_shell()
        return False
    g.kdb_go()
    g.resume_shell()
    return True


def knock_enters(g, seconds: float = 3) -> bool:
    return enters(g, g.knock, seconds)


def break_g_enters(g, seconds: float = 3) -> bool:
    return enters(g, lambda: g.send_break("g"), seconds)


def test_knock_and_break_g_honour_kernel_sysrq(guest):
    """FIQ on: with kernel.sysrq=0 neither the knock nor BREAK + g enters
    (as mainline's sysrq-g, which needs kernel.sysrq=1), and the knock's
    bytes reach the shell as data; with kernel.sysrq=1 both enter, in the
    same boot."""
    g = guest("vexpress-a15", fiq=True, mux=True)
    g.sh(f"echo 0 > {SYSRQ}")
    assert not knock_enters(g)
    assert not break_g_enters(g)
    assert g.sh("echo alive-after-refusal") == "alive-after-refusal"
    g.sh(f"echo 1 > {SYSRQ}")
    assert knock_enters(g)
    assert break_g_enters(g)
    assert g.sh("echo alive") == "alive"


def test_break_g_fiq_off_honours_kernel_sysrq(guest):
    """Mainline's control: BREAK + g does not enter with kernel.sysrq=0,
    and does with 1."""
    g = guest("vexpress-a15", mux=True)
    g.sh(f"echo 0 > {SYSRQ}")
    assert not break_g_enters(g)
    g.sh(f"echo 1 > {SYSRQ}")
    assert break_g_enters(g)


@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_late_key_after_break_is_no_sysrq(guest, fiq):
    """A key typed 6 s after a BREAK (mainline's sysrq window is 5 s) is a
    key: sysrq-h does not run.  The control in the same boot: BREAK then h
    at once runs sysrq-h (its HELP line)."""
    g = guest("vexpress-a15", fiq=fiq, mux=True)
    helps = "dmesg | grep -c 'sysrq: HELP'"
    assert g.sh(helps) == "0"
    g.send_break()
    time.sleep(6)
    g.send("h\n")
    time.sleep(0.5)
    g.resume_shell()
    assert g.sh(helps) == "0"
    g.send_break("h")
    time.sleep(0.5)
    g.resume_shell()
    assert g.sh(helps) == "1"


VARIANT_FRAGMENTS = ["trim.config", "debug.config", "armv7.config", "variant.config"]


def variant_board() -> Board:
    """vexpress-a15 with the armv7 test kernel built with variant.config
    (build/out/armv7-variant: the tick stopped when idle, the big.LITTLE
    switcher; ccache has what the two do not change) and the armv7
    initramfs."""
    out = BUILD / "out/armv7-variant"
    configure(out, "vexpress_defconfig", VARIANT_FRAGMENTS)
    kmake(out, "zImage", "dtbs")
    board = dataclasses.replace(BOARDS["vexpress-a15"], flavour="armv7-variant")
    shutil.copy(BOARDS["vexpress-a15"].initrd(), board.initrd())
    return board


@pytest.mark.timeout(2400)
@pytest.mark.xdist_group("kbuild")
def test_ipi_raise_traced_from_the_nmi(guest):
    """NO_HZ_IDLE (distribution kernels stop the tick of an idle CPU),
    SMP2, FIQ on, the ipi_raise event enabled: typing at an idle shell, the
    receive NMI queues its irq_work on a CPU whose tick is stopped, which
    raises the IRQ work IPI from the FIQ: traced without SRCU (the _rcuidle
    tracepoint warned from NMI), and the trace shows them."""
    g = guest(variant_board(), smp=2, fiq=True)
    events = "/sys/kernel/debug/tracing/events/ipi/ipi_raise/enable"
    g.sh(f"echo 1 > {events}")
    for i in range(10):
        time.sleep(0.3)     # idle: the tick stops
        assert g.sh(f"echo typed-{i}") == f"typed-{i}"
    g.sh(f"echo 0 > {events}")
    trace = g.sh("grep -c 'IRQ work' /sys/kernel/debug/tracing/trace")
    assert int(trace) > 0, trace
    clean_boot_log(g)


@pytest.mark.timeout(2400)
@pytest.mark.xdist_group("kbuild")
def test_nmi_self_ipi_beside_ipi_senders(guest):
    """The big.LITTLE switcher built in (idle without a TC2, but its
    cpu_map_lock is in the GIC's IPI path), SMP2, FIQ on: both CPUs send
    each other function call IPIs back to back (fiq_test's call_ipis) while
    16 KiB are pasted at line rate, so the receive NMI often comes inside
    an IPI send that holds the lock, and raises its irq_work's self-IPI
    there.  It takes no lock from NMI: every byte arrives, the shell
    answers, nothing is reported."""
    g = guest(variant_board(), smp=2, fiq=True)
    assert "CONFIG_BL_SWITCHER=y" in (BUILD / "out/armv7-variant/.config").read_text()
    text = paste_text(1 << 14, seed=29)
    calls = "/sys/kernel/debug/fiq_test/call_ipis"
    g.sh("stty -echo; rm -f /tmp/p /tmp/stop")
    g.sh_nowait(f"( for c in 0 1; do ( while [ ! -e /tmp/stop ]; do echo 2000 > {calls}; "
                f"done ) & done; cat > /tmp/p; touch /tmp/stop; wait )")
    time.sleep(1)
    g.send_paced(text.encode(), chunk=115, delay=0.01, stall=10)
    g.send("\x04")
    g.sync_shell(timeout=60)
    got = g.sh("md5sum < /tmp/p").split()[0]
    assert got == hashlib.md5(text.encode()).hexdigest(), g.sh("wc -c < /tmp/p")
    clean_boot_log(g)


def test_attach_to_open_port_says_irq(guest):
    """FIQ on, kgdboc detached and attached again at run time while the
    shell has the console open: the NMI is freed, the PL011's handler is
    back, the attach says in one line that the interrupt stays an IRQ
    (it was silent), and BREAK + g enters by IRQ.  SMP2: QEMU's one-CPU
    vexpress-a15 loses every IPI (its DT names two CPUs, and its GIC's
    CPU mask reads zero), so kgdboc's irq_work never runs there and the
    detach would wait for it for ever."""
    g = guest("vexpress-a15", smp=2, fiq=True, mux=True)
    param = "/sys/module/kgdboc/parameters/kgdboc"
    g.sh(f"echo > {param}")
    g.sh(f"echo ttyAMA0 > {param}")
    irqs = g.sh("cat /proc/interrupts")
    assert "uart-pl011" in irqs and "kgdboc" not in irqs, irqs
    said = r"kgdboc: ttyAMA0: open, so its interrupt stays an IRQ"
    log = clean_boot_log(g, expect=(said,))
    assert len(re.findall(said, log)) == 1, log[-2000:]
    assert break_g_enters(g, seconds=5)


def uart1_flagged_dtb(tmp_path) -> pathlib.Path:
    """A copy of sabrelite's DTB with UART1 (ttymxc0) flagged FIQ-capable."""
    dtb = tmp_path / "imx6q-sabrelite-uart1-fiq.dtb"
    set_interrupt_flags(BOARDS["sabrelite"].dtb_path(), dtb, IMX_UART1,
                        LEVEL_HIGH | GIC_FIQ_CAPABLE)
    return dtb


def fifo_pair(tmp_path) -> pathlib.Path:
    """A FIFO pair for a QEMU pipe chardev (path.in is what QEMU reads,
    path.out what it writes): their path without suffix."""
    fifo = tmp_path / "uart1"
    os.mkfifo(f"{fifo}.in")
    os.mkfifo(f"{fifo}.out")
    return fifo


def fifo_serial(fifo: pathlib.Path) -> tuple[str, ...]:
    """QEMU's arguments for the next serial port on the FIFO pair."""
    return ("-chardev", f"pipe,id=uart1,path={fifo}", "-serial", "chardev:uart1")


@contextlib.contextmanager
def opened_fifo(fifo: pathlib.Path):
    """The FIFO pair opened without blocking: (what to write, what to read)."""
    uart1 = os.open(f"{fifo}.in", os.O_WRONLY | os.O_NONBLOCK)
    try:
        out = os.open(f"{fifo}.out", os.O_RDONLY | os.O_NONBLOCK)
        try:
            yield uart1, out
        finally:
            os.close(out)
    finally:
        os.close(uart1)


def sabrelite_uart1_on_a_fifo(tmp_path) -> tuple[Board, pathlib.Path, pathlib.Path]:
    """sabrelite with UART1 flagged and fed from a FIFO pair (fifo.in is
    what QEMU reads, fifo.out what it writes): the board, its DTB, the
    FIFOs' path without suffix."""
    fifo = fifo_pair(tmp_path)
    board = dataclasses.replace(BOARDS["sabrelite"], serial_nulls=0,
                                qemu_extra=fifo_serial(fifo))
    return board, uart1_flagged_dtb(tmp_path), fifo


def test_unbind_with_the_nmi_live(guest, tmp_path):
    """sabrelite, kgdboc on UART1 (ttymxc0: flagged FIQ-capable in a copy
    of the DTB, fed from a FIFO; the console stays UART2), FIQ on, nothing
    has ttymxc0 open: unbinding the imx driver from UART1 frees the NMI
    first and says so, and bytes sent to UART1 then reach no handler (the
    NMI would read a freed port).  The driver bound again and kgdboc
    configured again, the NMI is back.  (The PL011 boards cannot unbind:
    a built-in amba-pl011 suppresses its bind attributes.)"""
    board, dtb, fifo = sabrelite_uart1_on_a_fifo(tmp_path)
    g = guest(board, dtb=dtb, cmdline=f"console=ttymxc1 kgdboc=ttymxc0 {FIQ_SWITCH}")
    taken = r"kgdboc: ttymxc0: IRQ\d+ is an NMI"
    removed = r"kgdboc: ttymxc0: removed, its NMI freed"
    assert len(re.findall(taken, clean_boot_log(g))) == 1
    uart1 = os.open(f"{fifo}.in", os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(uart1, b"before unbind\n")
        drv = "/sys/bus/platform/drivers/imx-uart"
        g.sh(f"echo 2020000.serial > {drv}/unbind")
        os.write(uart1, b"x" * 64 + b"$3#33\n")
        time.sleep(1)
        assert g.sh("echo alive-after-unbind") == "alive-after-unbind"
        assert len(re.findall(removed, clean_boot_log(g, expect=(removed,)))) == 1
        assert "kgdboc" not in g.sh("cat /proc/interrupts")
        g.sh(f"echo 2020000.serial > {drv}/bind")
        g.sh("echo ttymxc0 > /sys/module/kgdboc/parameters/kgdboc")
        log = clean_boot_log(g, expect=(removed,))
        assert len(re.findall(taken, log)) == 2, log[-2000:]
        assert "kgdboc" in g.sh("cat /proc/interrupts")
        os.write(uart1, b"after bind\n")
        assert g.sh("echo alive-after-bind") == "alive-after-bind"
    finally:
        os.close(uart1)


@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_crtscts_throttle_holds_the_sender(guest, figure, fiq):
    """CRTSCTS on the console (the PL011 then moves RTS by its FIFO's
    level: UPSTAT_AUTORTS) and a reader that starts 8 s late while 256 KiB
    is sent as fast as QEMU takes it: the tty throttles, the driver stops
    taking bytes from the FIFO, and QEMU holds the sender off (its PL011
    has no RTS line; its FIFO's room is the flow control, as RTS is on a
    board).  FIQ on, kgdboc's ring holds the data back instead and the
    NMI masks the line once it is three quarters full, so the same holds:
    the sending takes until the reader comes, every byte arrives, none is
    counted lost (before, FIQ on: the NMI kept emptying the FIFO into the
    tty's buffers, and 1 MiB was taken in 11 s with nobody
    reading: on a board, RTS would never have dropped)."""
    g = guest("vexpress-a15", fiq=fiq)
    text = paste_text(1 << 18, seed=31)
    g.sh("stty -echo crtscts; rm -f /tmp/p")
    reader = time.monotonic() + 8
    g.sh_nowait("sleep 8; cat > /tmp/p")
    t0 = time.monotonic()
    g.send_paced(text, chunk=4096, delay=0.01, stall=20)
    took = time.monotonic() - t0
    time.sleep(1)
    g.send("\x04")
    got = int(g.sh("wc -c < /tmp/p", timeout=60))
    md5 = g.sh("md5sum < /tmp/p", timeout=60).split()[0]
    info = g.sh("grep '^0:' /proc/tty/driver/ttyAMA")
    lost = re.search(r" bo:(\d+)", info)
    g.sh("stty -crtscts")
    figure(f"vexpress-a15 256 KiB, CRTSCTS, reader 8 s late, FIQ {'on' if fiq else 'off'}",
           f"{got}/{len(text)} B in {took:.1f} s, {lost.group(1) if lost else 0} counted lost")
    assert not lost, info
    assert (got, md5) == (len(text), hashlib.md5(text.encode()).hexdigest())
    # held off until the reader came: the guest took at most what its
    # buffers hold before that (a few KiB), QEMU's pace after it
    assert t0 + took > reader, (took, reader - t0)


@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_console_byte_wakes_from_s2idle(guest, fiq):
    """The console's wakeup enabled, the system suspended to idle (s2idle):
    it stays suspended until a byte comes on the console, which wakes it,
    FIQ on as off (before, FIQ on: genirq refused enable_irq_wake() on the
    NMI, so suspend masked the line, and nothing, not even the knock,
    reached the machine again).  vexpress-a15; sabrelite behaves the same
    by hand, but its way into suspend once stalled for over 30 s before
    freezing the tasks (FIQ on; it waits 2 s there on every run, FIQ on
    and off), so it is not in the suite."""
    g = guest("vexpress-a15", fiq=fiq)
    wakeup = f"/sys/class/tty/{g.board.console}/power/wakeup"
    g.sh(f"echo enabled > {wakeup}")
    tag = f"RESUMED-{random.randrange(1 << 30):08x}"
    g.sh_nowait(f"echo freeze > /sys/power/state; echo {tag[:8]}''{tag[8:]}")
    # the last line before the devices suspend (user space is frozen by
    # then: nothing else prints), then time for the rest of the way down
    slept, end = "", time.monotonic() + 30
    while "Suspending console(s)" not in slept and time.monotonic() < end:
        slept += g.drain(wait=0.2)
    time.sleep(2)
    slept += g.drain(wait=0.5)
    assert "Suspending console(s)" in slept and tag not in slept, slept
    g.send("\n")
    g.expect(tag, 10)
    g.sh(f"echo disabled > {wakeup}")
    assert g.sh("echo awake") == "awake"
    clean_boot_log(g)


def read_fifo_until(fd: int, pattern: bytes, timeout: float) -> bytes:
    """What QEMU wrote to a pipe chardev's .out until pattern (or timeout)."""
    got, end = b"", time.monotonic() + timeout
    while pattern not in got and time.monotonic() < end:
        try:
            got += os.read(fd, 4096)
        except BlockingIOError:
            time.sleep(0.05)
    return got


def knock_and_go_on_fifo(g, uart1: int, out: int, why: object = "") -> None:
    """The knock on a FIFO-fed kgdboc port (uart1 written, out read)
    enters kdb there: kdb answers a fresh tag typed as a command, and go
    gives the shell on the console back."""
    read_fifo_until(out, b"\0", 0.5)
    os.write(uart1, b"$3#33")
    kdb = read_fifo_until(out, b"kdb>", 10)
    assert b"kdb>" in kdb, (why, kdb[-2000:])
    tag = f"SYNC_{random.randrange(1 << 32):08X}"
    os.write(uart1, f"{tag}\r".encode())
    assert f"Unknown kdb command: '{tag}'".encode() in read_fifo_until(out, tag.encode() + b"'", 10)
    os.write(uart1, b"go\r")
    time.sleep(1)
    assert g.sh("echo alive-after-go") == "alive-after-go"


def test_nmi_leaves_a_cpu_going_offline(guest, tmp_path):
    """sabrelite SMP4, FIQ on, kgdboc attached at run time to UART1
    (ttymxc0, flagged in a copy of the DTB, fed from a FIFO) after its
    interrupt was pointed at CPU1: the NMI targets CPU1.  An NMI is
    IRQF_PERCPU, which CPU hotplug does not migrate; offlining CPU1 moves
    it, the knock sent to UART1 then enters kdb there, and go lets the
    machine run on (before: the line stayed on the offline CPU and the
    knock was never heard).  Detached, the line can be moved again (the
    NMI's IRQF_PERCPU stayed on it)."""
    board, dtb, fifo = sabrelite_uart1_on_a_fifo(tmp_path)
    g = guest(board, smp=4, dtb=dtb, cmdline=f"console=ttymxc1 {FIQ_SWITCH}")
    # UART1 is SPI 26, behind the GPC
    irq = g.sh('for d in /sys/kernel/irq/*; do [ "$(cat $d/chip_name)" = GPC ] && '
               '[ "$(cat $d/hwirq)" = 26 ] && basename $d; done')
    assert irq.isdigit(), irq
    g.sh(f"echo 1 > /proc/irq/{irq}/smp_affinity_list")
    g.sh("echo ttymxc0 > /sys/module/kgdboc/parameters/kgdboc")
    assert re.search(r"kgdboc: ttymxc0: IRQ\d+ is an NMI", clean_boot_log(g))
    assert g.sh(f"cat /proc/irq/{irq}/effective_affinity_list") == "1"
    g.sh("echo 0 > /sys/devices/system/cpu/cpu1/online")
    assert g.sh("cat /sys/devices/system/cpu/online") == "0,2-3"
    moved = g.sh(f"cat /proc/irq/{irq}/effective_affinity_list")
    with opened_fifo(fifo) as (uart1, out):
        knock_and_go_on_fifo(g, uart1, out, moved)
    assert moved != "1", moved
    # detached, the line is an ordinary one again: request_nmi()'s
    # IRQF_PERCPU left it unmovable (the write failed with EIO)
    g.sh("echo > /sys/module/kgdboc/parameters/kgdboc")
    assert g.sh(f"echo 2 > /proc/irq/{irq}/smp_affinity_list && echo moved") == "moved"
    clean_boot_log(g)


def test_rs485_port_stays_an_irq(guest, tmp_path):
    """sabrelite, kgdboc on UART1 (ttymxc0, flagged in a copy of the DTB)
    which the DT puts in RS-485 mode at boot: half duplex stops the
    receiver while the port sends, to drop the echo, and the NMI would
    keep it on, so kgdboc leaves the port its IRQ and says why in one
    line (before: the NMI was taken, and the echo reached the tty and the
    knock's matcher)."""
    imx = BOARDS["sabrelite"]
    flagged = uart1_flagged_dtb(tmp_path)
    dtb = tmp_path / "imx6q-sabrelite-uart1-fiq-rs485.dtb"
    set_props(flagged, dtb, {IMX_UART1: {"uart-has-rtscts": b"",
                                         "linux,rs485-enabled-at-boot-time": b""}})
    g = guest(imx, dtb=dtb, cmdline=f"console=ttymxc1 kgdboc=ttymxc0 {FIQ_SWITCH}")
    said = r"kgdboc: ttymxc0: in RS-485 mode, so its interrupt stays an IRQ"
    log = clean_boot_log(g, expect=(said,))
    assert len(re.findall(said, log)) == 1, log[-2000:]
    assert not re.search(r"kgdboc: ttymxc0: IRQ\d+ is an NMI", log)
    assert "kgdboc" not in g.sh("cat /proc/interrupts")


def test_knock_consumed_whole(guest):
    """FIQ on, the shell echoing what it reads: the knock enters kdb and
    none of its bytes reach the tty (its "$3#3" reached the shell after
    go, which echoed it: half a gdb packet on a line gdb reads, and ran it
    as a command); the start of a knock that turns out to be data reaches
    the shell whole, in order."""
    g = guest("vexpress-a15", fiq=True)
    assert g.sh("echo '$3#3x$$3'") == "$3#3x$$3"
    g.sh("stty echo")
    g.drain()
    g.knock()
    g.wait_kdb(timeout=3)
    g.kdb_go()
    time.sleep(1)
    g.send("\n")
    # the shell's line: empty, not "$3#3" (echoed, then not found)
    after = g.drain(wait=0.5, limit=2)
    assert "$3#3" not in after and "not found" not in after, after
    g.sh("stty -echo")
    assert g.sh("echo back") == "back"


def test_gdb_interrupt_stops_the_target(guest):
    """FIQ on: gdb attached (its first packet at kdb>) and the target
    continued; gdb's own interrupt, the byte 0x03 it sends on Ctrl-C,
    stops the target from the NMI with one stop reply (before, it went to
    the tty, and gdb waited); gdb detaches and the shell is back."""
    g = guest("vexpress-a15", fiq=True)
    gdb_attaches_and_continues(g)
    g.send("\x03")
    g.expect(STOP_REPLY, 5)
    g.send("+")
    extra = g.drain(wait=1, limit=2)
    assert not re.search(STOP_REPLY.decode(), extra), extra
    g.send("$D#44")                 # detach: kgdb answers OK and lets go
    g.expect(rb"\$OK#9a", 5)
    g.send("+")
    g.resume_shell()
    assert g.sh("echo back") == "back"


def test_gdb_gone_0x03_is_data(guest):
    """FIQ on: gdb attached, continued and went away without detaching
    (kgdb_connected stays set); a byte that is not 0x03 says so, and a
    0x03 after it (a Ctrl-C at the shell) stops nothing (it stopped the
    machine in the gdb stub, waiting for a gdb that was gone)."""
    g = guest("vexpress-a15", fiq=True)
    gdb_attaches_and_continues(g)
    g.send("x")                     # gdb is gone: the shell's input
    time.sleep(0.5)
    g.send("\x03")
    out = g.drain(wait=2, limit=3)
    assert not re.search(STOP_REPLY.decode(), out), out
    assert g.sh("echo alive") == "alive"


def test_break_then_knock_arms_no_sysrq(guest):
    """FIQ on: BREAK, then the knock: kdb.  After go, a key typed at once
    is a key: the BREAK whose key the NMI took does not open the driver's
    sysrq window (sysrq-h ran before)."""
    g = guest("vexpress-a15", fiq=True, mux=True)
    helps = "dmesg | grep -c 'sysrq: HELP'"
    g.send_break()
    time.sleep(0.2)
    g.knock()
    g.wait_kdb(timeout=3)
    g.kdb_go()
    time.sleep(0.3)
    g.send("h\n")
    time.sleep(0.5)
    g.resume_shell()
    assert g.sh(helps) == "0"


# the console and the second port of each board whose UART model stops
# receiving as the hardware does (the project's QEMU)
LAST_CLOSE = {"vexpress-a15": ("ttyAMA0", "ttyAMA1"), "b2120": ("ttyAS0", "ttyAS1")}
B2120_ASC1 = "/soc/serial@9531000"


def second_port_dtb(board: str, tmp_path) -> pathlib.Path:
    """A copy of the board's DTB with its second UART flagged FIQ-capable
    (vexpress: UART1, motherboard interrupt 6; b2120: the SBC's ASC1,
    enabled and given the alias serial1, which st-asc numbers it by)."""
    dtb = tmp_path / f"{board}-second-port.dtb"
    if board == "vexpress-a15":
        set_map_flags(BOARDS[board].dtb_path(), dtb, 6, LEVEL_HIGH | GIC_FIQ_CAPABLE)
        return dtb
    set_interrupt_flags(BOARDS[board].dtb_path(), dtb, B2120_ASC1, LEVEL_HIGH | GIC_FIQ_CAPABLE)
    set_props(dtb, dtb, {B2120_ASC1: {"status": "okay"}, "/aliases": {"serial1": B2120_ASC1}})
    return dtb


@pytest.mark.parametrize("board", LAST_CLOSE)
def test_last_close_keeps_the_debugger(guest, tmp_path, board):
    """kgdboc on the board's second UART (flagged FIQ-capable in a copy of
    the DTB, fed from a FIFO; the console stays the first), FIQ on, on the
    project's QEMU, whose PL011 receives only with UARTEN and RXE set and
    whose ASC only with RUN and RXENABLE, as the hardware does.  The port
    opened and closed by stty: the knock sent to it then enters kdb there,
    and go lets the machine run on.  Before, the last close turned the
    receiver off (amba-pl011 cleared RXE and FEN; the serial core powered
    st-asc down, which stops RUN) and the knock was never heard."""
    console, port = LAST_CLOSE[board]
    fifo = fifo_pair(tmp_path)
    g = guest(board, own_qemu=True, dtb=second_port_dtb(board, tmp_path),
              cmdline=f"console={console} kgdboc={port} {FIQ_SWITCH}",
              qemu_args=fifo_serial(fifo))
    assert re.search(rf"kgdboc: {port}: IRQ\d+ is an NMI", clean_boot_log(g))
    with opened_fifo(fifo) as (uart1, out):
        assert g.sh(f"stty -F /dev/{port} 115200 -echo && stty -F /dev/{port} speed") == "115200"
        knock_and_go_on_fifo(g, uart1, out)
    clean_boot_log(g)


# a character's time at 115200 8N1, for the ASC model's char-ns
CHAR_NS_115200 = 86806


@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_console_writes_leave_the_nmi_its_interrupt(guest, figure, tmp_path, fiq):
    """b2120 with its console ASC put at line rate once the shell runs
    (the model's char-ns, set over QMP: a byte every 86.8 us whether or
    not the FIFO has room, a full FIFO loses it, and the transmitter takes
    as long; the harness's handshake, typed while the kernel prints, would
    lose bytes too), the kernel printing 60-character
    lines to the console back to back (a shell loop writing /dev/kmsg)
    while 16 KiB are pasted at line rate into cat.  st-asc's console
    write turns the ASC's interrupts off while a line goes out (5 ms),
    longer than the 16-byte FIFO lasts (1.4 ms).  FIQ off (mainline):
    bytes are lost, which shows the model loses them.  FIQ on, kgdboc's
    NMI keeps its receive interrupt through the write and every byte
    arrives (before: lost as with FIQ off)."""
    sock = tmp_path / "qmp"
    g = guest("b2120", fiq=fiq, qemu_args=("-qmp", f"unix:{sock},server=on,wait=off",
                                           "-icount", "shift=2"))
    qmp(sock, "qom-set", path="/machine/asc0", property="char-ns", value=CHAR_NS_115200)
    text = paste_text(1 << 14, seed=37)
    tag = f"{random.randrange(1 << 32):08X}"
    # the kernel prints line, the shell's echo of the command shows it split
    line, typed = f"console-write-{tag} " + "x" * 36, f"console-write-{tag[:4]}''{tag[4:]} " + "x" * 36
    g.sh("stty -echo; rm -f /tmp/p /tmp/r")
    # the lines for 6 s (guest time), then the reader (its own process, not
    # the shell's cat applet; the tty raw, so that no partial line is left
    # for the shell) is stopped and an end tag printed: what is typed while the lines print is lost as well (a ^D
    # among it), so only the paste is
    g.sh_nowait(f"( sleep 1; end=$(($(date +%s) + 6)); while [ $(date +%s) -lt $end ]; "
                f"do echo '{typed}' > /dev/kmsg; done; sleep 1; kill $(cat /tmp/r); "
                f"stty sane -echo; echo END-{tag[:4]}''{tag[4:]} > /dev/kmsg ) & "
                f"sh -c 'echo $$ > /tmp/r; stty raw; exec cat > /tmp/p'")
    g.expect(line, 30)
    g.send_paced(text, chunk=115, delay=0.01, stall=20)
    g.expect(f"END-{tag}", 60)
    g.sync_shell(timeout=60)
    # the console may still be printing the lines' backlog: whole kernel
    # lines can come amid a command's output
    got = int(re.findall(r"^(\d+)$", g.sh("wc -c < /tmp/p", timeout=30), re.M)[-1])
    md5 = re.findall(r"^([0-9a-f]{32}) ", g.sh("md5sum < /tmp/p", timeout=30), re.M)[-1]
    lines = int(re.findall(r"^(\d+)$", g.sh(f"dmesg | grep -c {tag[:4]}''{tag[4:]}"), re.M)[-1])
    mode = "on" if fiq else "off"
    figure(f"b2120 16 KiB at line rate beside console writes, FIQ {mode}",
           f"{got}/{len(text)} B, {lines} console lines meanwhile")
    assert lines > 100, lines
    if fiq:
        assert (got, md5) == (len(text), hashlib.md5(text.encode()).hexdigest())
    else:
        assert got < len(text), got
