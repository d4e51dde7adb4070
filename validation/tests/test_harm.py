"""Do no harm: with the FIQ debugger compiled in but not switched on, the
kernel must leave the GIC and the kernel log exactly as mainline does.

Per GIC setup (vexpress-a15 UP and SMP2, vexpress-a9 SMP4, virt with
QEMU's DTB, orangepi-pc SMP4 and ast2600-evb SMP2 with their 8250s,
sabrelite SMP4 with its imx UART behind the GPC, b2120 SMP2 with its
st-asc on the project's STiH407 model) two boots with the
mainline command line (qemu.CMDLINE_IRQ):
the kernel without the series (scripts/pristine.sh: same tag, same
config, built in the same run, its own DTBs and fiq_test.ko) and the
series' ARMv7 kernel.  Compared, read from the running guest:

- what the GIC holds, fiq_test's gic_regs: GICD_CTLR, for every interrupt
  GICD_IGROUPR, ISENABLER, IPRIORITYR, ITARGETSR, ICFGR, and on each CPU
  the banked copies (INTIDs 0-31) and GICC_CTLR, PMR, BPR: identical;
- the kernel log, as a multiset of lines (SMP interleaves them): no line
  added or missing, once the few that legitimately differ between two
  builds or two runs are normalised (LOG_NORMALISE) and KUnit's KTAP
  output dropped (the series' suites, which come from the test
  configuration, not from the series' code paths), and so are the driver
  core's "deferred probe pending" lines, which come 10 s after boot
  (ast2600-evb's SD regulators) in one boot and not yet in another.

The contrast: the series' kernel with the FIQ debugger on
(qemu.CMDLINE_FIQ) against the same pristine boot must differ, in
GICD_CTLR and GICD_IGROUPR and in the log, or the comparison could not
fail.
"""
from __future__ import annotations

import collections
import re
import time

import pytest

from boards import TOP
from fiq_helpers import (NMI_REFUSED, SERIES_WARNINGS, clean_boot_log, nmi_taken,
                         pristine_board)
from scenarios import FIQ_TEST

# one worker boots each pristine setup once (PRISTINE) for all the tests
pytestmark = pytest.mark.xdist_group("harm")

SETUPS = {
    "a15-up": ("vexpress-a15", 1),
    "a15-smp2": ("vexpress-a15", 2),
    "a9-smp4": ("vexpress-a9", 4),
    "virt": ("virt", 1),
    "opi-smp4": ("orangepi-pc", 4),
    "ast-smp2": ("ast2600-evb", 2),
    "sabre-smp4": ("sabrelite", 4),
    "sti-smp2": ("b2120", 2),
}

# (pattern, replacement): what two builds of one tree, or two boots, print
# differently.  Nothing else is touched.
LOG_NORMALISE = (
    # the build: number and date
    (r"^(Linux version \S+ .*\)) #\d+ .*$", r"\1 #<build>"),
    # ... whose banner, in the early log buffer, is as long as they are
    (r"^(printk: early log buf free: )\d+\(\d+%\)$", r"\1<n>"),
    # image, initramfs and module sizes
    (r"^(Memory: )\d+K/(\d+K available \()\d+K kernel code, \d+K rwdata, \d+K rodata, "
     r"\d+K init, \d+K bss, \d+K reserved", r"\1<n>K/\2<sizes>"),
    (r"^(Freeing (unused kernel image \(initmem\)|initrd) memory: )\d+K$", r"\1<n>K"),
    # the delay loop's calibration, the wall clock: host timing
    (r"\d+\.\d+ BogoMIPS( \(lpj=\d+\))?", "<bogomips>"),
    (r"(: setting system clock to ).*", r"\1<now>"),
    (r"^(Calibrating local timer\.\.\. )\d+\.\d+MHz\.$", r"\1<n>MHz."),
    # the PS/2 keyboard and mouse probe in parallel: either may be input0
    (r"^(input: .*/input/input)\d+$", r"\1<n>"),
)
# KUnit's KTAP lines (and their indented subtests)
KTAP = re.compile(r"^\s*(KTAP version \d+|1\.\.\d+|(not )?ok \d+ .*|# .*)$")
LATE = re.compile(r": deferred probe pending$")


def normalised_log(g, expect: tuple[str, ...] = ()) -> list[str]:
    """The kernel log once the boot has settled (late probes: the PS/2
    mouse comes after the shell) and clean_boot_log() (no oops, no series
    warning but expect), KTAP dropped, LOG_NORMALISE applied."""
    count, deadline = "", time.monotonic() + 15
    while time.monotonic() < deadline:
        was, count = count, g.sh("dmesg | wc -l")
        if count == was:
            break
        time.sleep(1)
    out = []
    for line in clean_boot_log(g, expect).splitlines():
        if KTAP.match(line) or LATE.search(line):
            continue
        for pattern, repl in LOG_NORMALISE:
            line = re.sub(pattern, repl, line)
        out.append(line)
    return out


def gic_regs(g) -> dict[str, int]:
    """fiq_test's gic_regs: {name: value}."""
    text = g.sh(f"cat {FIQ_TEST}/gic_regs")
    regs = {name: int(value, 16) for name, value in (line.split() for line in text.splitlines())}
    assert "GICD_CTLR" in regs and "GICC_CTLR.cpu0" in regs, text
    return regs


State = tuple[dict[str, int], list[str]]
PRISTINE: dict[str, State] = {}


def pristine_state(guest, setup: str) -> State:
    """The pristine kernel's GIC registers and log on setup, booted once a
    session with the mainline command line."""
    if setup not in PRISTINE:
        board, smp = SETUPS[setup]
        g = guest(pristine_board(board), smp=smp)
        PRISTINE[setup] = gic_regs(g), normalised_log(g)
    return PRISTINE[setup]


def reg_diff(base: dict[str, int], other: dict[str, int]) -> list[str]:
    """'name: base -> other' for each register that differs."""
    def show(v: int | None) -> str:
        return "absent" if v is None else f"{v:#010x}"
    return [f"{n}: {show(base.get(n))} -> {show(other.get(n))}"
            for n in sorted(base.keys() | other.keys()) if base.get(n) != other.get(n)]


def log_diff(base: list[str], other: list[str]) -> list[str]:
    """Lines only in other (+) and only in base (-), as multisets."""
    a, b = collections.Counter(base), collections.Counter(other)
    return ([f"+ {line}" for line in sorted((b - a).elements())]
            + [f"- {line}" for line in sorted((a - b).elements())])


@pytest.mark.parametrize("setup", SETUPS)
def test_fiq_off_leaves_the_gic_and_log_as_mainline(guest, figure, setup):
    base_regs, base_log = pristine_state(guest, setup)
    board, smp = SETUPS[setup]
    g = guest(board, smp=smp)
    regs_differ = reg_diff(base_regs, gic_regs(g))
    lines_differ = log_diff(base_log, normalised_log(g))
    figure(f"harm {setup}: GIC registers compared with mainline",
           f"{len(base_regs)}, " + (f"{len(regs_differ)} differ" if regs_differ else "equal"))
    figure(f"harm {setup}: kernel log lines compared with mainline",
           f"{len(base_log)}, " + (f"{len(lines_differ)} differ" if lines_differ else "equal"))
    assert not regs_differ + lines_differ, "\n".join(
        ["GIC registers that differ from mainline:", *(regs_differ or ["none"]),
         "kernel log lines that differ (+ added, - missing):", *(lines_differ or ["none"])])


@pytest.mark.parametrize("setup", SETUPS)
def test_fiq_on_differs_from_mainline(guest, figure, setup):
    """The contrast: with the FIQ debugger on the GIC runs groups (GICD_CTLR
    enables Group 1, IGROUPR puts interrupts in it) and says so.  virt's
    own DTB marks no UART FIQ-capable: there kgdboc's request for the
    UART's NMI is refused (one warning) and the PL011 keeps its IRQ."""
    base_regs, base_log = pristine_state(guest, setup)
    board, smp = SETUPS[setup]
    virt = board == "virt"
    g = guest(board, smp=smp, fiq=True)
    differ = reg_diff(base_regs, gic_regs(g))
    lines = log_diff(base_log, normalised_log(g, expect=(NMI_REFUSED,) if virt else ()))
    figure(f"harm {setup}: GIC registers differing with FIQ on", str(len(differ)))
    assert any(d.startswith("GICD_CTLR:") for d in differ), differ
    assert any(d.startswith("GICD_IGROUPR") for d in differ), differ
    assert "+ GIC: interrupt groups available: Group 1 as IRQ, Group 0 as FIQ" in lines, lines
    assert any(re.match(rf"\+ {nmi_taken(g.board.console)}", line) for line in lines) != virt, lines


# the printk format of a pr_warn/pr_err, its first string literal
PRINTK = re.compile(r'\bpr_(?:warn|err|crit|alert|emerg)(?:_once|_ratelimited)?\(\s*'
                    r'"((?:[^"\\]|\\.)*)"')
# conversions -> a sample value
CONVERSIONS = ((r"%#l*x", "0x10"), (r"%p\w+", "/node@0"), (r"%l*[diux]", "7"), (r"%s", "why"))


def series_messages() -> list[str]:
    """A sample of every pr_warn/pr_err message the patches of the series add."""
    found = []
    for name in (TOP / "series").read_text().splitlines():
        if not name.strip() or name.startswith("#"):
            continue
        added = "\n".join(line[1:] for line in (TOP / name.strip()).read_text().splitlines()
                          if line.startswith("+") and not line.startswith("+++"))
        for fmt in PRINTK.findall(added):
            for conv, sample in CONVERSIONS:
                fmt = re.sub(conv, sample, fmt)
            found.append(fmt.replace("\\n", ""))
    return found


def test_series_warnings_are_listed(figure):
    """fiq_helpers.SERIES_WARNINGS, which clean_boot_log() fails on unless
    a test expects them, is the series' pr_warn/pr_err messages: each one
    matches a pattern, each pattern a message."""
    messages = series_messages()
    figure("series pr_warn/pr_err messages clean_boot_log() knows", str(len(messages)))
    assert [m for m in messages if not any(re.search(w, m) for w in SERIES_WARNINGS)] == []
    assert [w for w in SERIES_WARNINGS if not any(re.search(w, m) for m in messages)] == []
