"""Overhead: what the series costs the normal IRQ path, and what entering
the debugger costs compared with mainline.

1. A deterministic benchmark.  QEMU -icount shift=0,sleep=off: guest time
   advances by 1 ns per instruction (single-threaded TCG), so guest time
   measured by the guest counts instructions, not host time.  fiq_test.ko's
   ipi_bench queues N irq_work items one after the other on the running
   CPU; each raises IPI_IRQ_WORK, an SGI through the GIC, taken as a normal
   IRQ (exception entry, gic_handle_irq, the IPI handler, irq_work_run,
   exit).  Guest ns per interrupt for three kernels/command lines on
   vexpress-a15 -smp 2 with maxcpus=1: ARM sends irq_work IPIs only when
   the CPU reports itself part of a multiprocessor (QEMU's -smp 1 A15 does
   not), and a second online CPU makes QEMU 7.2's icount hang at boot
   (after the KUnit run); with maxcpus=1 CPU1 stays parked in the boot
   loader:
     pristine  Debian's 6.1 without the series, same config
               (scripts/pristine.sh: build/out/pristine-armv7)
     off       the series without irqchip.fiq_nmi=1 (the tests' FIQ off)
     on        the series, irqchip.fiq_nmi=1 (FIQ on, qemu.CMDLINE_FIQ)
   The same boots also measure a device interrupt: fiq_test.ko's
   spi_bench makes an SPI pending (GICD_ISPENDR) N times and waits for
   each (gic_handle_irq, handle_fasteoi_irq, the handler, EOI).
   Goal (test_irq_path_ratios): off/pristine = 1.00 (within 1 %),
   on/pristine <= 1.02, for both.  All three kernels have
   CONFIG_JUMP_LABEL=y (scripts/configs/debug.config), as distribution
   kernels do: the series keeps its FIQ-only paths behind static keys.
2. Entry latency, host-measured, normal TCG: knock -> kdb> with the CPU in
   HARDLOCKUP (FIQ on) vs mainline's healthy entry from the serial line,
   BREAK + g -> kdb>, on the pristine kernel; median of 5 each.
3. The receive path's cost per byte, FIQ on vs off, in guest instructions
   (QEMU's PMU under -icount) and UART interrupts: see there.
"""
from __future__ import annotations

import statistics
import time

import pytest

from fiq_helpers import pristine_board
from scenarios import FIQ_TEST, LKDTM
from test_rx_nmi import paste_text, uart_interrupts

# timings and instruction counts that a second guest on the host would
# disturb: run alone, in scripts/test.sh's second pass
pytestmark = pytest.mark.serial

ICOUNT = ("-icount", "shift=0,sleep=off")
N = 20000
RUNS = 5

BENCHES = ("ipi", "spi")


def bench_ns(g, bench: str) -> list[float]:
    """RUNS measurements of guest ns per interrupt round trip."""
    out = []
    g.sh(f"echo {N} > {FIQ_TEST}/{bench}_bench", timeout=120)     # warm-up
    for _ in range(RUNS):
        g.sh(f"echo {N} > {FIQ_TEST}/{bench}_bench", timeout=120)
        n, ns = map(int, g.sh(f"cat {FIQ_TEST}/{bench}_bench").split())
        assert n == N, f"{bench}_bench did not complete"
        out.append(ns / n)
    return out


RESULTS: dict[tuple[str, str], float] = {}


@pytest.mark.parametrize("kernel", ["pristine", "off", "on"])
def test_irq_path_cost(guest, figure, kernel):
    if kernel == "pristine":
        g = guest(pristine_board("vexpress-a15"), smp=2, append="maxcpus=1", qemu_args=ICOUNT)
        assert g.sh("dmesg | grep -c 'GIC: interrupt groups' || true") == "0"
    else:
        g = guest("vexpress-a15", smp=2, fiq=kernel == "on", append="maxcpus=1",
                  qemu_args=ICOUNT)
    for bench in BENCHES:
        runs = bench_ns(g, bench)
        best = min(runs)
        spread = (max(runs) - best) / best
        RESULTS[bench, kernel] = best
        figure(f"icount: guest ns per {bench.upper()} round trip ({kernel})",
               f"{best:.0f} (min of {RUNS} x {N}; spread {spread * 100:.2f} %)")
        # deterministic: repeated runs agree within 1 %
        assert spread < 0.01, (bench, runs)


@pytest.mark.parametrize("bench", BENCHES)
def test_irq_path_ratios(figure, bench):
    """Issue #7's goal: the series costs the normal IRQ path nothing with
    the FIQ debugger off (1.00 within 1 %) and at most 2 % with it on."""
    if {k for b, k in RESULTS if b == bench} != {"pristine", "off", "on"}:
        pytest.skip("needs the three test_irq_path_cost runs of this session")
    off = RESULTS[bench, "off"] / RESULTS[bench, "pristine"]
    on = RESULTS[bench, "on"] / RESULTS[bench, "pristine"]
    figure(f"icount: {bench.upper()} cost ratio FIQ off / pristine", f"{off:.3f}")
    figure(f"icount: {bench.upper()} cost ratio FIQ on / pristine", f"{on:.3f}")
    assert 0.99 <= off <= 1.01, f"{bench}: FIQ off costs {off:.3f}x mainline"
    assert on <= 1.02, f"{bench}: FIQ on costs {on:.3f}x mainline"


LATENCY: dict[str, float] = {}


def test_latency_knock_stuck(guest, figure):
    """FIQ on, CPU in HARDLOCKUP: knock -> kdb>, 5 times (go returns to
    the stuck CPU, the next knock enters again)."""
    g = guest("vexpress-a15", fiq=True)
    g.sh_nowait(f"echo HARDLOCKUP > {LKDTM}")
    g.expect("Performing direct entry HARDLOCKUP", 10)
    time.sleep(1)
    times = []
    for _ in range(RUNS):
        t0 = g.knock()
        g.wait_kdb(timeout=5)
        times.append(time.monotonic() - t0)
        g.kdb_go()
        time.sleep(0.5)
    LATENCY["fiq"] = statistics.median(times)
    figure("latency: knock->kdb>, HARDLOCKUP, FIQ on (median of 5)",
           f"{LATENCY['fiq'] * 1000:.0f} ms")


def test_latency_mainline_sysrq(guest, figure):
    """The kernel without the series, healthy: BREAK g -> kdb>, 5 times."""
    g = guest(pristine_board("vexpress-a15"), mux=True)
    times = []
    for _ in range(RUNS):
        t0 = g.send_break("g")
        g.wait_kdb(timeout=5)
        times.append(time.monotonic() - t0)
        g.kdb_go()
        g.resume_shell(settle=0.5)
    LATENCY["mainline"] = statistics.median(times)
    figure("latency: BREAK g->kdb>, healthy, pristine mainline (median of 5)",
           f"{LATENCY['mainline'] * 1000:.0f} ms")


def test_latency_ratio(figure):
    if set(LATENCY) != {"fiq", "mainline"}:
        pytest.skip("needs both latency runs of this session")
    r = LATENCY["fiq"] / LATENCY["mainline"]
    figure("latency ratio: stuck knock (FIQ) / healthy sysrq-g (mainline)", f"{r:.2f}")
    # host-measured milliseconds jitter with the host's load: the ratio is
    # reported, the assertion is only that the stuck-state entry stays in
    # the same league as the healthy mainline one
    assert r < 10, r
    assert LATENCY["fiq"] < 0.5


# 3. The receive path's cost per byte (issue 13): the same kernel, FIQ on
#    (kgdboc's NMI, ring, irq_work into the driver's receive path) and off
#    (the PL011's own IRQ), vexpress-a15 as above under -icount, where
#    QEMU's PMU counts guest instructions (fiq_test insn_count), booted
#    secure=off,virtualization=off: QEMU's A15 does not count in Secure
#    state (ARMv7 has no SDCR.SPME to allow it); the GICv2 has groups and
#    signals FIQ there too (test_gic_fiq boots it).  sleep stays on: when the
#    guest idles its clock follows the host's, as the paste does, so the
#    idle work (ticks) per host second is the same in both runs.  Each of
#    RX_ROUNDS rounds in one boot measures `cat > /tmp/p` twice with the
#    counter running: once fed RX_BYTES at line rate, once fed nothing for
#    as long (the baseline: the command itself, the ticks); instructions
#    per received byte are the difference over the bytes.  Bytes arrive in host time, so how
#    many an interrupt finds depends on the host: on a quiet host (make
#    check runs one guest at a time) the ratio was 1.04-1.09 in ten runs;
#    with a kernel build on both cores beside it, 1.005-1.15.
ICOUNT_RT = ("-icount", "shift=0")
RX_BYTES = 1 << 17
RX_ROUNDS = 3
RX: dict[str, list[tuple[float, float]]] = {}


def counted_cat(g, text: str, seconds: float) -> tuple[int, float]:
    """Instructions all CPUs ran while `cat > /tmp/p` read text (paced at
    line rate) or, for no text, waited seconds; and the host seconds the
    counter ran."""
    g.sh("stty -echo; rm -f /tmp/p")
    g.sh_nowait(f"echo 1 > {FIQ_TEST}/insn_count; cat > /tmp/p; echo 0 > {FIQ_TEST}/insn_count")
    time.sleep(0.5)
    t0 = time.monotonic()
    if text:
        g.send_paced(text, chunk=115, delay=0.01, stall=10)
    else:
        time.sleep(seconds)
    g.send("\x04")
    took = time.monotonic() - t0
    g.sync_shell()
    assert int(g.sh("wc -c < /tmp/p")) == len(text)
    return int(g.sh(f"cat {FIQ_TEST}/insn_count")), took


def rx_cost(g, text: str) -> tuple[float, float]:
    """Instructions and UART interrupts per received byte of one paste of
    text into cat, less the count of cat fed nothing for as long."""
    irqs = uart_interrupts(g)
    busy, busy_s = counted_cat(g, text, 0)
    irqs = uart_interrupts(g) - irqs
    idle, idle_s = counted_cat(g, "", busy_s)
    assert idle > 0, "the PMU counted nothing: no -icount, or Secure state"
    return (busy - idle * busy_s / idle_s) / len(text), irqs / len(text)


@pytest.mark.parametrize("fiq", [False, True], ids=["fiq-off", "fiq-on"])
def test_rx_cost_per_byte(guest, figure, fiq):
    g = guest("vexpress-a15", smp=2, fiq=fiq, append="maxcpus=1", qemu_args=ICOUNT_RT,
              machine_opts="secure=off,virtualization=off")
    runs = [rx_cost(g, paste_text(RX_BYTES, seed=7 + i)) for i in range(RX_ROUNDS)]
    per_byte, ipb = (statistics.mean(r) for r in zip(*runs))
    mode = "on" if fiq else "off"
    RX[mode] = runs
    figure(f"icount: guest instructions per received byte, FIQ {mode}",
           f"{per_byte:.0f} (mean of {' '.join(f'{c:.0f}' for c, _ in runs)}; "
           f"{ipb:.3f} UART interrupts per byte)")
    assert per_byte > 0, runs


def mean_and_rel_error(values: list[float]) -> tuple[float, float]:
    """The mean and its standard error, relative to the mean."""
    m = statistics.mean(values)
    return m, statistics.stdev(values) / len(values) ** 0.5 / m


def test_rx_cost_ratio(figure):
    """Issue 13's goal: FIQ on costs at most 1.10 of FIQ off per byte, in
    instructions and in UART interrupts (here, where time is counted in
    instructions; test_rx_nmi's free-running count is QEMU's pace).  Each
    mode's figure is the mean of RX_ROUNDS pastes, which spread by a few
    per cent (the batches follow the host's pace); the test fails when a
    ratio is above 1.10 by more than twice its standard error (about 0.02:
    the code before the NMI loop's fixes measured 1.15-1.17)."""
    if set(RX) != {"on", "off"}:
        pytest.skip("needs both test_rx_cost_per_byte runs of this session")
    for what, i in (("instructions", 0), ("UART interrupts", 1)):
        on, on_err = mean_and_rel_error([r[i] for r in RX["on"]])
        off, off_err = mean_and_rel_error([r[i] for r in RX["off"]])
        ratio = on / off
        err = ratio * (on_err ** 2 + off_err ** 2) ** 0.5
        figure(f"icount: {what} per received byte, FIQ on / off",
               f"{ratio:.3f} (standard error {err:.3f})")
        assert ratio <= 1.10 + 2 * err, (what, ratio, err, RX)
