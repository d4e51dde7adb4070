"""Real SoC models (issue 14): Allwinner H3 (orangepi-pc, four CPUs) and
Aspeed AST2600 (ast2600-evb, two CPUs), each with a DesignWare 8250 as
console and kgdb port (ttyS0, ttyS4), and NXP i.MX6Q (sabrelite, four
CPUs) with its own UART (ttymxc1), whose interrupt reaches the GIC through
the GPC's hierarchical domain; and the STiH407 B2120 (two CPUs, the
SBC's ASC0 as ttyAS0, st-asc), on the STiH407 model the project builds
(validation/qemu/), whose ASC receives only while the driver lets it
and asserts THE whenever its transmitter is half empty (the STiH410
B2120's DTB boots on the same model: test_port_stays_the_console).  The
ARMv7 kernel every other GIC board boots.  QEMU fixes their CPU count: "the only loaded CPU" is the kernel
booted with maxcpus=1 (boards.Board.kernel_cmdline()).

Every case runs FIQ on and FIQ off (mainline: the same kernel without
irqchip.fiq_nmi=1) in the same run.  The fault matrix (test_matrix.py),
the harm test (test_harm.py) and the TrustZone case of the AST2600
(test_trustzone.py) have these boards too.
"""
from __future__ import annotations

import re
import time

import pytest

from boards import BOARDS
from fiq_helpers import (clean_boot_log, lock_up_and_knock, lock_up_beyond_reach, nmi_refused,
                         nmi_taken)
from scenarios import DYNDBG, ROUNDUP, TIMEOUT, lock_cpus, roundup_us, stuck_cpus_in_btc
from test_matrix import FAULTS
from test_rx_nmi import paste, paste_text
from test_series import SOC_DTBS

SOCS = ["orangepi-pc", "ast2600-evb", "sabrelite", "b2120"]

# b2120 pastes a quarter, for the suite's time (1 MiB arrived whole, FIQ on
# and off, when measured once)
PASTE_SIZE = {"b2120": 1 << 18}
# the name of the UART driver's own handler in /proc/interrupts: the 8250
# gives the port's, imx the device's
HANDLER = {"orangepi-pc": "ttyS0", "ast2600-evb": "ttyS4", "sabrelite": "21e8000.serial",
           "b2120": "9530000.serial", "b2120-stih410": "9530000.serial"}

# kgdboc attached to an open port (fiq_helpers.SERIES_WARNINGS)
OPEN_STAYS_IRQ = r"kgdboc: CONSOLE: open, so its interrupt stays an IRQ"

# the matrix's two lock-ups with IRQs masked: (trigger, marker, culprit)
LOCKUPS = {name: FAULTS[name][:3] for name in ("hardlockup", "deadlock")}


@pytest.mark.parametrize("board", SOCS + ["b2120-stih410"])
@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_port_stays_the_console(guest, board, fiq):
    """FIQ on: the UART stays the console, its interrupt is kgdboc's NMI (no
    handler of the driver's own), and one line says so.  FIQ off: the
    driver's own handler, and kgdboc says nothing."""
    g = guest(board, fiq=fiq)
    console = BOARDS[board].console
    handler = re.escape(HANDLER[board])
    log = clean_boot_log(g)
    taken = re.findall(nmi_taken(console), log)
    irqs = g.sh("cat /proc/interrupts")
    assert g.sh("cat /sys/class/tty/console/active") == console
    if not fiq:
        assert taken == [] and "kgdboc:" not in log, log[-2000:]
        assert re.search(rf" {handler}$", irqs, re.M) and "kgdboc" not in irqs, irqs
        return
    assert len(taken) == 1, log[-3000:]
    assert re.search(rf"^ *{taken[0]}: .*kgdboc$", irqs, re.M), irqs
    assert not re.search(rf" {handler}$", irqs, re.M), irqs
    # termios is the driver's: a speed change sticks, the shell still talks
    assert g.sh("stty 115200; stty speed") == "115200"
    assert g.sh("echo after-stty") == "after-stty"


@pytest.mark.parametrize("board", SOCS)
@pytest.mark.parametrize("lockup", LOCKUPS)
def test_only_cpu_stuck_entered_by_fiq(guest, figure, board, lockup):
    """maxcpus=1, the only CPU stuck with IRQs masked: the knock enters kdb
    from the FIQ, and bt names the culprit."""
    trigger, marker, culprit = LOCKUPS[lockup]
    g = guest(board, fiq=True)
    assert g.sh("nproc") == "1"
    t = lock_up_and_knock(g, trigger, marker, timeout=2)
    figure(f"{board} UP {lockup} knock->kdb> FIQ on", f"{t:.3f} s")
    assert "due to NonMaskable Interrupt" in g.kdb_entry_text
    g.kdb_setup()
    bt = g.kdb("bt")
    assert culprit in bt and "__fiq_svc" in bt, bt


@pytest.mark.parametrize("board", SOCS)
@pytest.mark.parametrize("lockup", LOCKUPS)
def test_only_cpu_stuck_beyond_mainline(guest, figure, board, lockup):
    """The control, FIQ off: mainline's BREAK + g enters kdb while the
    kernel is healthy, and neither it nor the knock once the only CPU is
    stuck."""
    trigger, marker, _ = LOCKUPS[lockup]
    g = guest(board, mux=True)
    assert g.sh("nproc") == "1"
    lock_up_beyond_reach(g, trigger, marker)
    figure(f"{board} UP {lockup} BREAK g, knock->kdb> FIQ off", "no entry in 10 s")


@pytest.mark.parametrize("board", SOCS)
@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_every_other_cpu_stuck(guest, figure, board, fiq):
    """All CPUs but CPU0 (which takes the UART's interrupt) in HARDLOCKUP.
    FIQ on: the knock enters kdb, the roundup by FIQ brings every CPU in,
    btc shows each stuck one.  FIQ off: mainline's sysrq-g enters, the
    roundup by IRQ times out and the stuck CPUs are lost."""
    smp = BOARDS[board].max_smp
    stuck = list(range(1, smp))
    g = guest(board, smp=smp, fiq=fiq, append=DYNDBG)
    lock_cpus(g, stuck, 0)
    if fiq:
        t0 = g.knock()
        g.wait_kdb(timeout=5)
    else:
        t0 = time.monotonic()
        g.sh_nowait("echo g > /proc/sysrq-trigger")
        g.wait_kdb(timeout=15)
    t = time.monotonic() - t0
    g.kdb_setup()
    found = stuck_cpus_in_btc(g.kdb("btc"))
    mode = "on" if fiq else "off"
    figure(f"{board} SMP{smp} CPUs {stuck} stuck: kdb> FIQ {mode}",
           f"{t:.3f} s, btc shows {sorted(found) or 'none'} stuck")
    if fiq:
        assert TIMEOUT not in g.kdb_entry_text
        assert found == set(stuck)
        n, us = roundup_us(g)
        assert n == smp and us < 1_000_000, (n, us)
        figure(f"{board} SMP{smp} CPUs {stuck} stuck: roundup in guest", f"{us / 1000:.1f} ms")
    else:
        assert TIMEOUT in g.kdb_entry_text
        assert found == set()
        assert not ROUNDUP.search(g.kdb("dmesg 20"))


@pytest.mark.parametrize("board", SOCS)
@pytest.mark.parametrize("fiq", [True, False], ids=["fiq-on", "fiq-off"])
def test_paste_1mib_at_line_rate(guest, figure, board, fiq):
    """1 MiB (b2120: 256 KiB) pasted into cat on the console at 115200
    baud's rate (11.5 KB/s): every byte delivered, md5 equal, FIQ on and
    off."""
    g = guest(board, fiq=fiq)
    size = PASTE_SIZE.get(board, 1 << 20)
    amount = "1 MiB" if size == 1 << 20 else f"{size >> 10} KiB"
    paste(g, figure, f"{board} {amount} paste at 11.5 KB/s FIQ {'on' if fiq else 'off'}",
          paste_text(size), 11520)
    if fiq:
        assert "ring full" not in g.sh("dmesg | grep kgdboc")


# the i.MX UART holds its interrupt from probe: kgdboc's NMI frees it, and it
# must come back whenever the NMI goes or is refused (release_irq/restore_irq)
IMX = BOARDS["sabrelite"]
IMX_REFUSED = nmi_refused(IMX.console)


def imx_handler_back(g) -> None:
    """The imx driver's own handler serves ttymxc1 again: in
    /proc/interrupts, and sysrq-g from the shell enters kdb by it."""
    irqs = g.sh("cat /proc/interrupts")
    assert re.search(rf" {re.escape(HANDLER['sabrelite'])}$", irqs, re.M), irqs
    assert "kgdboc" not in irqs, irqs
    assert g.sh("echo still-talking") == "still-talking"
    g.sh_nowait("echo g > /proc/sysrq-trigger")
    g.wait_kdb(timeout=5)
    g.kdb_go()
    assert g.sh("echo after-go") == "after-go"


def test_imx_refused_nmi_gives_the_irq_back(guest, tmp_path):
    """FIQ asked for, but the DT does not mark UART2 FIQ-capable (the GIC
    refuses): one warning, and the handler imx freed for the request is
    back, with the port still closed at that point."""
    from dtb_tweak import set_interrupt_flags
    dtb = tmp_path / "imx6q-sabrelite-unflagged.dtb"
    set_interrupt_flags(IMX.dtb_path(), dtb, SOC_DTBS[IMX.dtb], 0x4)
    g = guest("sabrelite", fiq=True, dtb=dtb)
    log = clean_boot_log(g, expect=(IMX_REFUSED,))
    assert len(re.findall(IMX_REFUSED, log)) == 1, log[-3000:]
    assert not re.findall(nmi_taken(IMX.console), log), log[-3000:]
    imx_handler_back(g)


def test_imx_detach_gives_the_irq_back(guest):
    """FIQ on, then kgdboc detached at run time: the NMI is freed and the
    imx handler requested again; the console keeps working."""
    g = guest("sabrelite", fiq=True)
    assert "kgdboc" in g.sh("cat /proc/interrupts")
    g.sh("echo > /sys/module/kgdboc/parameters/kgdboc")
    assert g.sh("cat /sys/module/kgdboc/parameters/kgdboc") == ""
    g.sh(f"echo {IMX.console} > /sys/module/kgdboc/parameters/kgdboc")
    # attached again, to an open port: by IRQ, as in mainline, and it says so
    imx_handler_back(g)
    said = OPEN_STAYS_IRQ.replace("CONSOLE", IMX.console)
    assert len(re.findall(said, clean_boot_log(g, expect=(said,)))) == 1
    assert "cannot request IRQ" not in g.sh("dmesg"), g.sh("dmesg | tail -20")
