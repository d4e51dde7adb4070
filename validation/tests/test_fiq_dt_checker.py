"""scripts/check-fiq-dt.py on small DTS fixtures (validation/dt-fixtures/),
on the built armv7 dtbs, and the GIC_FIQ_CAPABLE schema constraint of
arm,gic.yaml.  No QEMU."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import pytest

# kbuild in build/out/*: one worker at a time (scripts/test.sh runs two)
pytestmark = pytest.mark.xdist_group("kbuild")

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECKER = ROOT / "scripts" / "check-fiq-dt.py"
FIXTURES = ROOT / "validation" / "dt-fixtures"
ARMV7_DTBS = ROOT / "build" / "out" / "armv7" / "arch" / "arm" / "boot" / "dts"
PYTHON = "/usr/bin/python3"  # the checker's interpreter (python3-libfdt)
SUMMARY = re.compile(r"^(?P<dtb>\S+): (?P<fiq>\d+) FIQ-capable specifier\(s\), "
                     r"(?P<checked>\d+) checked, (?P<unresolved>\d+) unresolved$")


def compile_fixture(name: str, tmp_path: pathlib.Path) -> pathlib.Path:
    dtb = tmp_path / (name + ".dtb")
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-i", str(FIXTURES),
                    "-o", str(dtb), str(FIXTURES / (name + ".dts"))], check=True)
    return dtb


def run_checker(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, str(CHECKER), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def errors_of(res: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in res.stdout.splitlines() if not SUMMARY.match(line)]


def summary_of(res: subprocess.CompletedProcess[str], dtb: pathlib.Path) -> dict[str, int]:
    for line in res.stdout.splitlines():
        m = SUMMARY.match(line)
        if m and m["dtb"] == str(dtb):
            return {k: int(v) for k, v in m.groupdict().items() if k != "dtb"}
    raise AssertionError(f"no summary line for {dtb} in:\n{res.stdout}")


def check_fixture(name: str, tmp_path: pathlib.Path) -> tuple[pathlib.Path, subprocess.CompletedProcess[str]]:
    dtb = compile_fixture(name, tmp_path)
    return dtb, run_checker(dtb)


def test_good_spi_through_interrupt_map_is_counted(tmp_path: pathlib.Path) -> None:
    dtb, res = check_fixture("good-spi-map", tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert errors_of(res) == []
    # direct SPI, interrupts-extended and serial@3,90000 through the map
    assert summary_of(res, dtb) == {"fiq": 3, "checked": 11, "unresolved": 0}


def test_plain_dt_without_flags_passes(tmp_path: pathlib.Path) -> None:
    dtb, res = check_fixture("plain", tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert errors_of(res) == []
    assert summary_of(res, dtb) == {"fiq": 0, "checked": 10, "unresolved": 0}


def test_quiet_prints_nothing_for_a_good_dt(tmp_path: pathlib.Path) -> None:
    dtb = compile_fixture("good-spi-map", tmp_path)
    res = run_checker("--quiet", dtb)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")


def test_flag_on_ppi_rejected(tmp_path: pathlib.Path) -> None:
    dtb, res = check_fixture("bad-ppi-flag", tmp_path)
    assert res.returncode == 1
    assert errors_of(res) == [
        f"{dtb}: /watchdog: interrupts[1]: GIC_FIQ_CAPABLE on a PPI, per-CPU FIQ is "
        "not supported (GIC /interrupt-controller@2c001000: <1 12 0x10f04>)"]
    assert summary_of(res, dtb)["fiq"] == 0


def test_unknown_bit_and_bad_type_rejected(tmp_path: pathlib.Path) -> None:
    dtb, res = check_fixture("bad-unknown-bit", tmp_path)
    assert res.returncode == 1
    errors = errors_of(res)
    assert len(errors) == 2, errors
    assert errors[0].startswith(f"{dtb}: /serial@1c0a0000: interrupts[0]: unknown bits 0x20000")
    assert errors[1].startswith(f"{dtb}: /serial@1c0b0000: interrupts[0]: type cell 2 "
                                "is neither SPI (0) nor PPI (1)")


def test_flag_on_non_gic_controller_rejected(tmp_path: pathlib.Path) -> None:
    dtb, res = check_fixture("bad-non-gic", tmp_path)
    assert res.returncode == 1
    errors = errors_of(res)
    assert len(errors) == 2, errors
    assert errors[0].startswith(f"{dtb}: /button: interrupts[0]: controller has no FIQ")
    assert errors[1].startswith(f"{dtb}: /connector: interrupt-map[0]: controller has no FIQ")
    assert all("/gpio@1c100000 (test,gpio)" in e for e in errors)


def test_flag_on_cascaded_gic_rejected(tmp_path: pathlib.Path) -> None:
    dtb, res = check_fixture("bad-cascaded", tmp_path)
    assert res.returncode == 1
    errors = errors_of(res)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{dtb}: /serial@1c0a0000: interrupts[0]: "
                                "GIC_FIQ_CAPABLE on a cascaded GIC")
    assert "cascaded into /interrupt-controller@2c001000" in errors[0]


def test_flag_through_gpc_hierarchy_is_counted(tmp_path: pathlib.Path) -> None:
    """The i.MX6 GPC hands the GIC's specifier on: the flag is the GIC's."""
    dtb, res = check_fixture("good-gpc", tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert errors_of(res) == []
    # the GPC's own SPI, the timer's four PPIs, the GIC's PPI, two UARTs
    assert summary_of(res, dtb) == {"fiq": 1, "checked": 8, "unresolved": 0}


def test_flag_on_ppi_through_gpc_rejected(tmp_path: pathlib.Path) -> None:
    dtb, res = check_fixture("bad-gpc-ppi", tmp_path)
    assert res.returncode == 1
    errors = errors_of(res)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{dtb}: /serial@21e8000: interrupts[0]: GIC_FIQ_CAPABLE on a PPI")
    assert errors[0].endswith("via hierarchy of /gpc@20dc000"), errors[0]


def test_one_bad_dtb_fails_the_run(tmp_path: pathlib.Path) -> None:
    good = compile_fixture("good-spi-map", tmp_path)
    bad = compile_fixture("bad-ppi-flag", tmp_path)
    res = run_checker("-q", good, bad)
    assert res.returncode == 1
    assert [e.split(":")[0] for e in errors_of(res)] == [str(bad)]


def test_built_armv7_dtbs_pass() -> None:
    dtbs = sorted(ARMV7_DTBS.glob("*.dtb")) if ARMV7_DTBS.is_dir() else []
    if not dtbs:
        pytest.skip(f"no dtbs in {ARMV7_DTBS}")
    res = run_checker(*dtbs)
    assert res.returncode == 0, res.stdout + res.stderr
    for dtb in dtbs:
        assert summary_of(res, dtb)["checked"] > 0


# --- arm,gic.yaml: the GIC's own interrupt must not carry GIC_FIQ_CAPABLE ---

GOOD_OWN_IRQ = "interrupts = <GIC_PPI 9 (GIC_CPU_MASK_SIMPLE(4) | IRQ_TYPE_LEVEL_HIGH)>;"
BAD_OWN_IRQ = ("interrupts = <GIC_PPI 9 (GIC_CPU_MASK_SIMPLE(4) | IRQ_TYPE_LEVEL_HIGH"
               " | GIC_FIQ_CAPABLE)>;")
SCHEMA_ERROR = "interrupt-controller@2c001000: interrupts:0:2: 69380 is greater than the maximum of 65535"


def patched_kernel_tree() -> pathlib.Path | None:
    """A kernel tree with the GIC_FIQ_CAPABLE binding patch applied."""
    candidates = [os.environ.get("FIQ_DT_KERNEL_TREE", ""),
                  str(ROOT / "build" / "linux"), str(ROOT / "build" / "wt-bindings")]
    for cand in filter(None, candidates):
        tree = pathlib.Path(cand)
        header = tree / "include/dt-bindings/interrupt-controller/arm-gic.h"
        if header.is_file() and "GIC_FIQ_CAPABLE" in header.read_text():
            return tree
    return None


def binding_check(tree: pathlib.Path, yaml: pathlib.Path, work: pathlib.Path) -> str:
    """What `make dt_binding_check DT_SCHEMA_FILES=<yaml>` does for one file,
    without touching the kernel tree: meta-schema check, processed schema,
    examples compiled (cpp + dtc) and validated.  Returns all messages."""
    bindings = tree / "Documentation/devicetree/bindings"
    out: list[str] = []

    def run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)  # type: ignore[call-overload]
        out.append(res.stderr)
        return res

    run(["dt-doc-validate", "-u", str(work / "schemas"), str(yaml)])
    schema = work / "processed-schema.json"
    # a directory: a single file would be taken for an already processed schema
    schema.write_text(run(["dt-mk-schema", "-j", str(work / "schemas")]).stdout)
    example = work / "example.dts"
    example.write_text(run(["dt-extract-example", str(yaml)]).stdout)
    pre = work / "example.dts.pre"
    run(["cpp", "-nostdinc", "-I", str(tree / "scripts/dtc/include-prefixes"), "-undef",
         "-D__DTS__", "-x", "assembler-with-cpp", "-o", str(pre), str(example)])
    dtb = work / "example.dtb"
    run(["dtc", "-q", "-O", "dtb", "-b", "0", "-o", str(dtb), str(pre)])
    assert dtb.is_file(), "".join(out)
    res = run(["dt-validate", "-u", str(bindings), "-s", str(schema), str(dtb)])
    out.append(res.stdout)
    return "".join(out)


@pytest.mark.skipif(not all(shutil.which(t) for t in
                            ("dt-doc-validate", "dt-mk-schema", "dt-extract-example",
                             "dt-validate", "dtc", "cpp")),
                    reason="dt-schema tools, dtc or cpp missing")
def test_schema_rejects_fiq_flag_on_gic_own_interrupt(tmp_path: pathlib.Path) -> None:
    tree = patched_kernel_tree()
    if tree is None:
        pytest.skip("no kernel tree with the GIC_FIQ_CAPABLE binding patch")
    source = (tree / "Documentation/devicetree/bindings/interrupt-controller/arm,gic.yaml").read_text()
    assert source.count(GOOD_OWN_IRQ) == 1
    for name, text, bad in (("good", source, False),
                            ("bad", source.replace(GOOD_OWN_IRQ, BAD_OWN_IRQ), True)):
        work = tmp_path / name
        work.mkdir()
        yaml = work / "schemas" / "interrupt-controller" / "arm,gic.yaml"  # as its $id
        yaml.parent.mkdir(parents=True)
        yaml.write_text(text)
        messages = binding_check(tree, yaml, work)
        if bad:
            assert SCHEMA_ERROR in messages, messages
        else:
            assert messages.strip() == "", messages


# --- PL190/PL192 VIC (arm,vic.yaml): VIC_FIQ_CAPABLE in the flags cell ---

def test_good_vic_specifiers_are_counted(tmp_path: pathlib.Path) -> None:
    """One and two cells, interrupts and interrupts-extended, a one-cell VIC
    beside a two-cell one, a SIC line: valid, two FIQ-capable."""
    dtb, res = check_fixture("good-vic", tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert errors_of(res) == []
    assert summary_of(res, dtb) == {"fiq": 2, "checked": 6, "unresolved": 0}


def test_bad_vic_specifiers_rejected(tmp_path: pathlib.Path) -> None:
    dtb, res = check_fixture("bad-vic", tmp_path)
    assert res.returncode == 1
    vic = "VIC /interrupt-controller@10140000"
    assert errors_of(res) == [
        f"{dtb}: /serial@101f1000: interrupts[0]: unknown bits 0x20000 in flags cell "
        f"({vic}: <12 0x30000>)",
        f"{dtb}: /serial@101f2000: interrupts[0]: source 44 out of range, a VIC has 32 "
        f"({vic}: <44 0x10000>)",
        f"{dtb}: /serial@101f3000: interrupts[0]: VIC_FIQ_CAPABLE on a cascaded VIC, no FIQ "
        "path to a CPU (VIC /interrupt-controller@10160000: <5 0x10000>, cascaded into "
        "/interrupt-controller@10140000)",
        f"{dtb}: /cascade: interrupt-map[0]: VIC_FIQ_CAPABLE on a cascade input, an interrupt "
        f"controller is not a FIQ ({vic}: <31 0x10000>)",
    ]
    assert summary_of(res, dtb)["fiq"] == 0


def test_vic_flag_on_sic_cascade_line_rejected(tmp_path: pathlib.Path) -> None:
    """The SIC's own interrupt (VIC source 31) carrying the flag."""
    src = (FIXTURES / "vic-base.dtsi").read_text().replace(
        "interrupts = <31 0>;", "interrupts = <31 0x10000>;")
    assert "<31 0x10000>" in src
    (tmp_path / "vic-base.dtsi").write_text(src)
    (tmp_path / "t.dts").write_text('/dts-v1/;\n/include/ "vic-base.dtsi"\n')
    dtb = tmp_path / "t.dtb"
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-i", str(tmp_path), "-o", str(dtb),
                    str(tmp_path / "t.dts")], check=True)
    res = run_checker(dtb)
    assert res.returncode == 1
    assert errors_of(res) == [
        f"{dtb}: /interrupt-controller@10003000: interrupts[0]: VIC_FIQ_CAPABLE on a cascade "
        "input, an interrupt controller is not a FIQ (VIC /interrupt-controller@10140000: "
        "<31 0x10000>)"]


def test_one_cell_vic_flag_is_not_possible(tmp_path: pathlib.Path) -> None:
    """A VIC with one cell has no flags: its specifiers are never FIQ and
    never an error, and a source out of range is still caught."""
    src = (FIXTURES / "vic-base.dtsi").read_text()
    src = src.replace("#interrupt-cells = <2>;", "#interrupt-cells = <1>;")
    src = src.replace("<31 0>", "<31>").replace("<4 0>", "<40>")
    (tmp_path / "vic-base.dtsi").write_text(src)
    (tmp_path / "t.dts").write_text('/dts-v1/;\n/include/ "vic-base.dtsi"\n')
    dtb = tmp_path / "t.dtb"
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-i", str(tmp_path), "-o", str(dtb),
                    str(tmp_path / "t.dts")], check=True)
    res = run_checker(dtb)
    assert res.returncode == 1
    assert errors_of(res) == [
        f"{dtb}: /timer@101e2000: interrupts[0]: source 40 out of range, a VIC has 32 "
        "(VIC /interrupt-controller@10140000: <40>)"]
    assert summary_of(res, dtb) == {"fiq": 0, "checked": 2, "unresolved": 0}


ARMV5_DTBS = ROOT / "build" / "out" / "armv5" / "arch" / "arm" / "boot" / "dts"


def test_built_armv5_dtbs_pass() -> None:
    dtbs = sorted(ARMV5_DTBS.glob("*.dtb")) if ARMV5_DTBS.is_dir() else []
    if not dtbs:
        pytest.skip(f"no dtbs in {ARMV5_DTBS}")
    res = run_checker(*dtbs)
    assert res.returncode == 0, res.stdout + res.stderr
    for dtb in dtbs:
        assert summary_of(res, dtb)["checked"] > 0


@pytest.mark.skipif(not all(shutil.which(t) for t in
                            ("dt-doc-validate", "dt-mk-schema", "dt-extract-example",
                             "dt-validate", "dtc", "cpp")),
                    reason="dt-schema tools, dtc or cpp missing")
def test_vic_schema_takes_one_or_two_cells(tmp_path: pathlib.Path) -> None:
    """arm,vic.yaml: its examples (one-cell, two-cell with VIC_FIQ_CAPABLE,
    cascaded) pass; three cells do not."""
    tree = ROOT / "build" / "linux"
    header = tree / "include/dt-bindings/interrupt-controller/arm-vic.h"
    if not header.is_file() or "VIC_FIQ_CAPABLE" not in header.read_text():
        pytest.skip("no kernel tree with the VIC_FIQ_CAPABLE binding patch")
    source = (tree / "Documentation/devicetree/bindings/interrupt-controller/arm,vic.yaml").read_text()
    fiq_example = "#interrupt-cells = <2>;\n      reg = <0x10140000 0x1000>;"
    assert source.count(fiq_example) == 1 and "<12 VIC_FIQ_CAPABLE>" in source
    bad_text = source.replace(fiq_example, fiq_example.replace("<2>", "<3>"))
    for name, text, bad in (("good", source, False), ("bad", bad_text, True)):
        work = tmp_path / name
        work.mkdir()
        yaml = work / "schemas" / "interrupt-controller" / "arm,vic.yaml"
        yaml.parent.mkdir(parents=True)
        yaml.write_text(text)
        messages = binding_check(tree, yaml, work)
        if bad:
            assert "interrupt-controller@10140000: #interrupt-cells:0:0: 3 is not one of [1, 2]" \
                in messages, messages
        else:
            assert messages.strip() == "", messages
