"""The series itself: each patch checkpatch --strict clean, the bindings
pass dt_binding_check, the vexpress and versatile DTBs carry exactly UART0's
flag."""
from __future__ import annotations

import pathlib
import subprocess

import pytest

from boards import BUILD, TOP
from kbuild import TREE, configure, kmake

# kbuild in build/out/*: one worker at a time (scripts/test.sh runs two)
pytestmark = pytest.mark.xdist_group("kbuild")

SERIES = [l.strip() for l in (TOP / "series").read_text().splitlines()
          if l.strip() and not l.startswith("#")]


def test_series_is_not_empty():
    assert SERIES and all((TOP / p).is_file() for p in SERIES)


@pytest.mark.parametrize("patch", SERIES)
def test_checkpatch_strict(patch):
    # run from the tree, as a maintainer would: checkpatch then knows the
    # tree's headers (and does not mistake the patch for a source file)
    r = subprocess.run(["perl", "scripts/checkpatch.pl", "--strict", str(TOP / patch)],
                       cwd=TREE, capture_output=True, text=True, timeout=120)
    assert "total: 0 errors, 0 warnings, 0 checks" in r.stdout, r.stdout[-3000:]


@pytest.mark.parametrize("binding", ["arm,gic", "arm,vic"])
def test_dt_binding_check(binding):
    out = BUILD / "out" / "dtcheck"
    r = subprocess.run(["make", "-s", "-C", str(TREE), f"O={out}", "ARCH=arm",
                        "dt_binding_check", "DT_SCHEMA_FILES=Documentation/devicetree/"
                        f"bindings/interrupt-controller/{binding}.yaml"],
                       capture_output=True, text=True, timeout=900)
    report = (r.stdout + r.stderr).strip()
    assert r.returncode == 0, report[-3000:]
    # dt_binding_check prints schema and example problems, and exits 0
    bad = [l for l in report.splitlines() if binding in l or "error" in l.lower()]
    assert not bad, "\n".join(bad)
    example = out / f"Documentation/devicetree/bindings/interrupt-controller/{binding}.example.dtb"
    assert example.is_file()


def _check(*dtbs: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(["/usr/bin/python3", str(TOP / "scripts/check-fiq-dt.py"),
                           *map(str, dtbs)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("dtb", ["vexpress-v2p-ca15-tc1.dtb", "vexpress-v2p-ca9.dtb"])
def test_vexpress_dtb_marks_uart0_only(dtb):
    r = _check(BUILD / "out/armv7/arch/arm/boot/dts" / dtb)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ": 1 FIQ-capable specifier(s)" in r.stdout, r.stdout


STI_DTBS = ["stih407-b2120.dtb", "stih410-b2120.dtb", "stih410-b2260.dtb",
            "stih418-b2199.dtb", "stih418-b2264.dtb"]


@pytest.mark.parametrize("dtb", STI_DTBS)
def test_sti_dtbs_mark_console_ascs(dtb):
    """STiH4xx: the console ASCs (sbc_serial0, uart1) carry the flag."""
    r = _check(BUILD / "out/armv7/arch/arm/boot/dts" / dtb)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ": 2 FIQ-capable specifier(s)" in r.stdout, r.stdout


def test_broken_sti_dtb_rejected(tmp_path):
    from dtb_tweak import set_interrupt_flags
    good = BUILD / "out/armv7/arch/arm/boot/dts/stih410-b2120.dtb"
    bad = tmp_path / "stih410-b2120-bad.dtb"
    # the flag on a PPI (type cell 1) instead of the ASC's SPI
    set_interrupt_flags(good, bad, "/soc/serial@9530000", 0x10004, type_cell=1)
    r = _check(bad)
    assert r.returncode == 1, r.stdout
    assert "/soc/serial@9530000: interrupts[0]:" in r.stdout and "PPI" in r.stdout, r.stdout


# the SoC boards' console UARTs: (DTB, node); the -plus and -a1 boards
# include the marked board files
SOC_DTBS = {
    "sun8i-h3-orangepi-pc.dtb": "/soc/serial@1c28000",
    "sun8i-h3-orangepi-pc-plus.dtb": "/soc/serial@1c28000",
    "aspeed-ast2600-evb.dtb": "/ahb/apb/serial@1e784000",
    "aspeed-ast2600-evb-a1.dtb": "/ahb/apb/serial@1e784000",
    # behind the GPC, whose specifiers are the GIC's
    "imx6q-sabrelite.dtb": "/soc/bus@2100000/serial@21e8000",
    "imx6dl-sabrelite.dtb": "/soc/bus@2100000/serial@21e8000",
}


@pytest.mark.parametrize("dtb", SOC_DTBS)
def test_soc_dtbs_mark_the_console_uart_only(dtb):
    """orangepi-pc's UART0, ast2600-evb's UART5 and sabrelite's UART2, the
    consoles, are the one FIQ-capable line of each board."""
    path = BUILD / "out/armv7/arch/arm/boot/dts" / dtb
    r = _check(path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ": 1 FIQ-capable specifier(s)" in r.stdout, r.stdout
    import libfdt
    fdt = libfdt.Fdt(path.read_bytes())
    spec = bytes(fdt.getprop(fdt.path_offset(SOC_DTBS[dtb]), "interrupts"))
    assert int.from_bytes(spec[8:12], "big") == 0x10004, spec.hex()


@pytest.mark.parametrize("dtb", ["sun8i-h3-orangepi-pc.dtb", "aspeed-ast2600-evb.dtb",
                                 "imx6q-sabrelite.dtb"])
def test_broken_soc_dtb_rejected(tmp_path, dtb):
    """The flag moved onto a PPI (type cell 1): the checker says where."""
    from dtb_tweak import set_interrupt_flags
    bad = tmp_path / dtb.replace(".dtb", "-bad.dtb")
    set_interrupt_flags(BUILD / "out/armv7/arch/arm/boot/dts" / dtb, bad, SOC_DTBS[dtb],
                        0x10004, type_cell=1)
    r = _check(bad)
    assert r.returncode == 1, r.stdout
    assert f"{SOC_DTBS[dtb]}: interrupts[0]:" in r.stdout and "PPI" in r.stdout, r.stdout


VERSATILE_DTBS = ["versatile-pb.dtb", "versatile-ab.dtb"]


@pytest.mark.parametrize("dtb", VERSATILE_DTBS)
def test_versatile_dtbs_mark_uart0_only(dtb):
    """Versatile AB/PB: UART0 (VIC source 12) is the one FIQ-capable line."""
    path = BUILD / "out/armv5/arch/arm/boot/dts" / dtb
    r = _check(path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ": 1 FIQ-capable specifier(s)" in r.stdout, r.stdout
    import libfdt
    fdt = libfdt.Fdt(path.read_bytes())
    spec = bytes(fdt.getprop(fdt.path_offset("/amba/uart@101f1000"), "interrupts"))
    assert spec == (12).to_bytes(4, "big") + (0x10000).to_bytes(4, "big")


@pytest.mark.parametrize("case", ["unknown-bit", "out-of-range", "sic-cascade"])
def test_broken_versatile_dtb_rejected(tmp_path, case):
    from dtb_tweak import set_vic_specifier
    good = BUILD / "out/armv5/arch/arm/boot/dts/versatile-pb.dtb"
    bad = tmp_path / f"versatile-pb-{case}.dtb"
    node, spec, reason = {
        "unknown-bit": ("/amba/uart@101f1000", (12, 0x30000), "unknown bits 0x20000"),
        "out-of-range": ("/amba/uart@101f1000", (44, 0x10000), "source 44 out of range"),
        "sic-cascade": ("/amba/interrupt-controller@10003000", (31, 0x10000),
                        "VIC_FIQ_CAPABLE on a cascade input"),
    }[case]
    set_vic_specifier(good, bad, node, *spec)
    r = _check(bad)
    assert r.returncode == 1, r.stdout
    errors = [l for l in r.stdout.splitlines() if "FIQ-capable specifier(s)" not in l]
    assert len(errors) == 1 and f"{node}: interrupts[0]: {reason}" in errors[0], r.stdout


# W=1 warnings the files have in mainline 6.1 already (kernel-doc)
MAINLINE_W1 = {
    "drivers/tty/serial/8250/8250_port.o": (
        "'termios' not described in 'serial8250_em485_config'",),
}


@pytest.mark.parametrize("obj", ["drivers/irqchip/irq-gic.o", "drivers/tty/serial/kgdboc.o",
                                 "drivers/tty/serial/serial_core.o",
                                 "drivers/tty/serial/amba-pl011.o",
                                 "drivers/tty/serial/st-asc.o",
                                 "drivers/tty/serial/8250/8250_port.o",
                                 "drivers/tty/serial/8250/8250_core.o",
                                 "drivers/tty/serial/8250/8250_dw.o",
                                 "drivers/tty/serial/imx.o", "arch/arm/mach-imx/gpc.o",
                                 "kernel/irq/chip.o", "kernel/irq/manage.o",
                                 "arch/arm/kernel/kgdb.o",
                                 "arch/arm/kernel/smp.o", "kernel/debug/debug_core.o"])
def test_touched_c_files_build_w1_clean(obj):
    """The C files the series touches (but traps.c, whose asm entry points
    have no prototypes in mainline either) build without W=1 warnings."""
    src = TREE / obj.replace(".o", ".c")
    src.touch()
    r = kmake(BUILD / "out/armv7", "W=1", obj, timeout=600)
    warnings = [line for line in r.stderr.splitlines() if "warning:" in line
                and not any(known in line for known in MAINLINE_W1.get(obj, ()))]
    assert not warnings, r.stderr[-3000:]


def test_irq_vic_builds_w1_clean():
    """irq-vic.c (with its KUnit tests) in the ARMv5 kernel, W=1."""
    obj = "drivers/irqchip/irq-vic.o"
    (TREE / obj.replace(".o", ".c")).touch()
    r = kmake(BUILD / "out/armv5", "W=1", obj, timeout=600)
    assert "warning:" not in r.stderr, r.stderr[-3000:]


def test_irq_gic_builds_for_arm64_w1_clean():
    """irq-gic.c is shared with arm64, where the FIQ support does not apply:
    it must build there (defconfig) without W=1 warnings, and without the
    flags-cell warning, so that no arm64 DT can trigger it."""
    out = BUILD / "out/arm64"
    arm64 = dict(arch="arm64", cross="aarch64-linux-gnu-")
    if not (out / ".config").exists():
        configure(out, "defconfig", **arm64)
    (TREE / "drivers/irqchip/irq-gic.c").touch()
    r = kmake(out, "W=1", "drivers/irqchip/irq-gic.o", timeout=1200, **arm64)
    assert "warning:" not in r.stderr, r.stderr[-3000:]
    # no FIQ support there (CONFIG_ARM_FIQ_NMI is arm only), so no arm64 DT
    # can start warning about its flags cell: the warning is not even built
    assert b"in interrupt specifier" not in (out / "drivers/irqchip/irq-gic.o").read_bytes()


# what only the FIQ support emits: handlers and the notifier, whose
# addresses are taken (never inlined away), and the switch's name
FIQ_ONLY = {
    "drivers/irqchip/irq-gic.o": ("gic_handle_fiq", "gic_reboot"),
    "drivers/irqchip/irq-vic.o": ("vic_handle_fiq",),
}


@pytest.mark.parametrize("flavour,defconfig,obj", [
    ("armv7", "vexpress_defconfig", "drivers/irqchip/irq-gic.o"),
    ("armv5", "versatile_defconfig", "drivers/irqchip/irq-vic.o"),
])
def test_fiq_support_compiles_out(flavour, defconfig, obj):
    """CONFIG_ARM_FIQ_NMI is off in the board's defconfig: the driver builds
    W=1 clean without its FIQ support, and none of it is left in the
    object; the test kernel's object (option on) has all of it."""
    out = BUILD / f"out/{flavour}-nofiq"
    if not (out / ".config").exists():
        configure(out, defconfig)
    config = (out / ".config").read_text()
    assert "# CONFIG_ARM_FIQ_NMI is not set" in config
    (TREE / obj.replace(".o", ".c")).touch()
    r = kmake(out, "W=1", obj, timeout=1200)
    assert "warning:" not in r.stderr, r.stderr[-3000:]

    def emitted(path: pathlib.Path) -> set[str]:
        syms = subprocess.run(["arm-linux-gnueabi-nm", str(path)], check=True,
                              capture_output=True, text=True).stdout
        names = {line.split()[-1] for line in syms.splitlines()}
        if b"irqchip.fiq_nmi" in path.read_bytes():
            names.add("irqchip.fiq_nmi")
        return names & {*FIQ_ONLY[obj], "irqchip.fiq_nmi"}

    assert emitted(out / obj) == set()
    assert emitted(BUILD / f"out/{flavour}" / obj) == {*FIQ_ONLY[obj], "irqchip.fiq_nmi"}


# (arch, cross compiler, base config, fragments beyond the base, the module
# that must come out of it)
MODULAR = {
    "armv7-kgdboc-m": ("arm", "arm-linux-gnueabi-", "vexpress_defconfig",
                       ["trim.config", "debug.config", "armv7.config", "modular-armv7.config"],
                       "drivers/tty/serial/kgdboc.ko"),
    "arm64-serial-core-m": ("arm64", "aarch64-linux-gnu-", "allnoconfig",
                            ["modular-arm64.config"], "drivers/tty/serial/serial_core.ko"),
}


@pytest.mark.timeout(2400)
@pytest.mark.parametrize("variant", sorted(MODULAR))
def test_modular_builds(variant):
    """The series builds, modpost included, where mainline lets kgdboc
    (armv7, the test kernel's config otherwise, with the big.LITTLE
    switcher too) or the serial core (arm64, where there is no FIQ) be a
    module: the NMI receive path is built in only, and nothing of it is
    left to link in a module."""
    arch, cross, base, frags, module = MODULAR[variant]
    out = BUILD / f"out/{variant}"
    config = configure(out, base, frags, arch=arch, cross=cross)
    assert "CONFIG_KGDB_SERIAL_CONSOLE_NMI=y" not in config
    kmake(out, "vmlinux", "modules", arch=arch, cross=cross)
    assert (out / module).exists()
