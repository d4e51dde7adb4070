#!/usr/bin/python3
"""Check GIC_FIQ_CAPABLE interrupt specifiers in flattened device trees.

Every `interrupts` / `interrupts-extended` specifier and every
`interrupt-map` entry is followed (interrupt-parent inheritance and
interrupt-map nexus nodes, as of_irq_parse_raw() in Linux 6.1 does) down to
the interrupt controller that finally receives it.  That controller's
validator, looked up by compatible in VALIDATORS, then checks the specifier.

GIC_FIQ_CAPABLE (bit 16 of the GIC flags cell, see
Documentation/devicetree/bindings/interrupt-controller/arm,gic.yaml) is only
valid on SPIs of a GIC that is not cascaded.  VIC_FIQ_CAPABLE (bit 16 of the
optional second cell of a PL190/PL192 VIC specifier, see arm,vic.yaml) is
only valid on a VIC that is not cascaded, for a source below 32 that does
not feed another interrupt controller.  A controller without a validator
has no FIQ: the flag in its flags cell is an error.  A hierarchical
controller in PASS_THROUGH (the i.MX6 GPC) takes its parent's specifiers and
hands them on unchanged, as its Linux driver does: the walk goes on to the
parent.

Errors:  <dtb>: <node path>: <property>[<index>]: <reason>
Summary: <dtb>: <n> FIQ-capable specifier(s), <m> checked, <u> unresolved
Exit status: 1 if any error was found (or a file cannot be read), else 0.
"""
from __future__ import annotations

import argparse
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import libfdt

GIC_SPI = 0
GIC_PPI = 1
IRQ_TYPE_SENSE_MASK = 0xf
GIC_CPU_MASK = 0xff00
GIC_FIQ_CAPABLE = 1 << 16
GIC_FLAGS_KNOWN = IRQ_TYPE_SENSE_MASK | GIC_CPU_MASK | GIC_FIQ_CAPABLE

# The compatibles of arm,gic.yaml (GICv1/v2).
GIC_COMPATIBLES = (
    "arm,arm11mp-gic", "arm,arm1176jzf-devchip-gic", "arm,cortex-a15-gic",
    "arm,cortex-a5-gic", "arm,cortex-a7-gic", "arm,cortex-a9-gic",
    "arm,eb11mp-gic", "arm,gic-400", "arm,pl390", "arm,tc11mp-gic",
    "brcm,brahma-b15-gic", "nvidia,tegra186-agic", "nvidia,tegra194-agic",
    "nvidia,tegra210-agic", "nvidia,tegra234-agic", "qcom,msm-8660-qgic",
    "qcom,msm-qgic2",
)

# arm,vic.yaml: <source> or <source flags>, VIC_FIQ_CAPABLE the only flag.
VIC_FIQ_CAPABLE = 1 << 16
VIC_FLAGS_KNOWN = VIC_FIQ_CAPABLE
VIC_SOURCES = 32
VIC_COMPATIBLES = ("arm,pl190-vic", "arm,pl192-vic", "arm,versatile-vic")

MAX_HOPS = 16  # interrupt-parent / interrupt-map hops before giving up

# Hierarchical interrupt controllers whose specifiers are their parent's,
# passed on unchanged (flags cell included) by their Linux 6.1 driver:
# arch/arm/mach-imx/gpc.c, imx_gpc_domain_alloc().
PASS_THROUGH = ("fsl,imx6q-gpc",)

# Interrupt controllers whose drivers parse their own interrupt-map, which
# of_irq_parse_raw() ignores (of_irq_imap_abusers in drivers/of/irq.c).
IMAP_ABUSERS = (
    "CBEA,platform-spider-pic", "sti,platform-spider-pic", "realtek,rtl-intc",
    "fsl,ls1021a-extirq", "fsl,ls1043a-extirq", "fsl,ls1088a-extirq",
    "renesas,rza1-irqc", "pasemi,rootbus",
)


@dataclass(eq=False)
class Node:
    path: str
    parent: Node | None
    props: dict[str, bytes] = field(default_factory=dict)

    def cells(self, name: str) -> list[int] | None:
        raw = self.props.get(name)
        if raw is None:
            return None
        return list(struct.unpack(f">{len(raw) // 4}I", raw[:len(raw) // 4 * 4]))

    def u32(self, name: str) -> int | None:
        val = self.cells(name)
        return val[0] if val else None

    def compatible(self) -> list[str]:
        raw = self.props.get("compatible", b"")
        return [s.decode(errors="replace") for s in raw.split(b"\0") if s]

    def available(self) -> bool:
        return self.props.get("status", b"okay\0") in (b"okay\0", b"ok\0")

    def own_imap(self) -> list[int] | None:
        """interrupt-map as of_irq_parse_raw() uses it."""
        if "interrupt-controller" in self.props and \
                set(self.compatible()) & set(IMAP_ABUSERS):
            return None
        return self.cells("interrupt-map")


@dataclass
class Tree:
    nodes: list[Node]
    by_phandle: dict[int, Node]

    def phandle(self, value: int | None) -> Node | None:
        return None if value is None else self.by_phandle.get(value)


def load(path: str) -> Tree:
    with open(path, "rb") as f:
        fdt = libfdt.FdtRo(f.read())
    nodes: list[Node] = []
    stack: list[Node] = []  # stack[d] is the last node seen at depth d
    offset, depth = 0, 0
    while True:
        name = fdt.get_name(offset)
        parent = stack[depth - 1] if depth else None
        if parent is None:
            node_path = "/"
        else:
            node_path = parent.path.rstrip("/") + "/" + name
        node = Node(node_path, parent)
        prop = fdt.first_property_offset(offset, [libfdt.NOTFOUND])
        while prop >= 0:
            p = fdt.get_property_by_offset(prop)
            node.props[p.name] = bytes(p)
            prop = fdt.next_property_offset(prop, [libfdt.NOTFOUND])
        del stack[depth:]
        stack.append(node)
        nodes.append(node)
        offset, depth = fdt.next_node(offset, depth, [libfdt.NOTFOUND])
        if offset < 0 or depth <= 0:  # past the end of the root node
            break
    by_phandle: dict[int, Node] = {}
    for node in nodes:
        ph = node.u32("phandle") or node.u32("linux,phandle")
        if ph:
            by_phandle[ph] = node
    return Tree(nodes, by_phandle)


def find_parent(tree: Tree, node: Node) -> Node | None:
    """The interrupt parent of node, as of_irq_find_parent()."""
    for _ in range(MAX_HOPS):
        if "interrupt-parent" in node.props:
            nxt = tree.phandle(node.u32("interrupt-parent"))
        else:
            nxt = node.parent
        if nxt is None or "#interrupt-cells" in nxt.props:
            return nxt
        node = nxt
    return None


class Resolved(NamedTuple):
    controller: Node
    spec: list[int]
    via: list[str]  # the interrupt-map nexus nodes and PASS_THROUGH controllers passed


def map_entry(tree: Tree, imap: list[int], i: int, addrsize: int,
              intsize: int) -> tuple[int, list[int], Node, list[int], list[int]] | None:
    """Parse the interrupt-map entry at cell i: (next i, child unit address +
    specifier, parent, parent unit address, parent specifier)."""
    child_end = i + addrsize + intsize
    if child_end >= len(imap):
        return None
    par = tree.phandle(imap[child_end])
    if par is None or par.u32("#interrupt-cells") is None:
        return None
    p_addr = par.u32("#address-cells") or 0
    p_int = par.u32("#interrupt-cells") or 0
    end = child_end + 1 + p_addr + p_int
    if end > len(imap):
        return None
    body = imap[child_end + 1:end]
    return end, imap[i:child_end], par, body[:p_addr], body[p_addr:]


def resolve(tree: Tree, ipar: Node | None, spec: list[int], addr: list[int] | None,
            addrsize: int | None) -> Resolved | str:
    """Follow spec from ipar to its controller, as of_irq_parse_raw().
    addr is the unit address (None: the consumer has no reg); addrsize
    None means: use #address-cells searched upwards from ipar (default 2)."""
    via: list[str] = []
    if ipar is None:
        return "no interrupt parent"
    if ipar.u32("#interrupt-cells") != len(spec):
        return f"{ipar.path}: #interrupt-cells is not {len(spec)}"
    if addrsize is None:
        up: Node | None = ipar
        while up is not None and "#address-cells" not in up.props:
            up = up.parent
        addrsize = 2 if up is None else (up.u32("#address-cells") or 0)
    for _ in range(MAX_HOPS):
        if ipar is None:
            return "no interrupt parent"
        imap = ipar.own_imap()
        if imap is None:
            if "interrupt-controller" not in ipar.props:
                ipar = find_parent(tree, ipar)
                continue
            if not set(ipar.compatible()) & set(PASS_THROUGH):
                return Resolved(ipar, spec, via)
            via.append(f"hierarchy of {ipar.path}")
            nxt = find_parent(tree, ipar)
            if nxt is None or nxt.u32("#interrupt-cells") != len(spec):
                return f"{ipar.path}: its parent does not take its specifiers"
            ipar = nxt
            continue
        if addrsize and addr is None:
            return f"{ipar.path}: interrupt-map needs a reg property"
        match = ((addr or []) + [0] * addrsize)[:addrsize] + spec
        mask = ipar.cells("interrupt-map-mask") or [0xffffffff] * len(match)
        i = 0
        while True:
            entry = map_entry(tree, imap, i, addrsize, len(spec))
            if entry is None:
                return f"{ipar.path}: no matching or malformed interrupt-map entry"
            i, child, par, p_addr, p_spec = entry
            if par.available() and \
                    all(((m ^ c) & k) == 0 for m, c, k in zip(match, child, mask)):
                break
        via.append(f"interrupt-map of {ipar.path}")
        if par is ipar:  # an interrupt-map entry to itself ends the walk
            return Resolved(ipar, p_spec, via)
        ipar, addr, spec, addrsize = par, p_addr, p_spec, len(p_addr)
    return "interrupt-parent loop"


def own_interrupt_controller(tree: Tree, node: Node) -> Node | None:
    """Where node's own first interrupt goes (None: it has none)."""
    if "interrupts-extended" in node.props:
        ext = node.cells("interrupts-extended") or []
        par = tree.phandle(ext[0]) if ext else None
        cells = par.u32("#interrupt-cells") if par is not None else None
        if par is None or cells is None:
            return None
        res = resolve(tree, par, ext[1:1 + cells], node.cells("reg"), None)
    elif "interrupts" in node.props:
        par = find_parent(tree, node)
        cells = par.u32("#interrupt-cells") if par is not None else None
        if par is None or not cells:
            return None
        res = resolve(tree, par, (node.cells("interrupts") or [])[:cells],
                      node.cells("reg"), None)
    else:
        return None
    return res.controller if isinstance(res, Resolved) else None


class Verdict(NamedTuple):
    fiq: bool  # the specifier is (validly) FIQ-capable
    errors: list[str]


Validator = Callable[[Tree, Node, list[int]], Verdict]


def cascade_inputs(tree: Tree, ctrl: Node) -> set[int]:
    """Sources of ctrl that feed another interrupt controller (a cascade):
    the first cell of each controller's own interrupt that resolves to
    ctrl."""
    sources: set[int] = set()
    for node in tree.nodes:
        if node is ctrl or "interrupt-controller" not in node.props:
            continue
        specs: list[Resolved | str] = []
        if "interrupts-extended" in node.props:
            ext = node.cells("interrupts-extended") or []
            par = tree.phandle(ext[0]) if ext else None
            n = par.u32("#interrupt-cells") if par is not None else None
            if par is not None and n:
                specs.append(resolve(tree, par, ext[1:1 + n], node.cells("reg"), None))
        elif "interrupts" in node.props:
            par = find_parent(tree, node)
            n = par.u32("#interrupt-cells") if par is not None else None
            if par is not None and n:
                ints = node.cells("interrupts") or []
                specs += [resolve(tree, par, ints[i:i + n], node.cells("reg"), None)
                          for i in range(0, len(ints) - n + 1, n)]
        for res in specs:
            if isinstance(res, Resolved) and res.controller is ctrl and res.spec:
                sources.add(res.spec[0])
    return sources


def validate_gic(tree: Tree, gic: Node, spec: list[int]) -> Verdict:
    if len(spec) != 3:
        return Verdict(False, [f"GIC {gic.path} specifier has {len(spec)} cells, not 3"])
    kind, number, flags = spec
    text = f"GIC {gic.path}: <{kind} {number} {flags:#x}>"
    errors: list[str] = []
    if kind not in (GIC_SPI, GIC_PPI):
        errors.append(f"type cell {kind} is neither SPI (0) nor PPI (1) ({text})")
    if flags & ~GIC_FLAGS_KNOWN:
        errors.append(f"unknown bits {flags & ~GIC_FLAGS_KNOWN:#x} in flags cell ({text})")
    fiq = bool(flags & GIC_FIQ_CAPABLE)
    if fiq and kind == GIC_PPI:
        errors.append(f"GIC_FIQ_CAPABLE on a PPI, per-CPU FIQ is not supported ({text})")
    if fiq:
        upstream = own_interrupt_controller(tree, gic)
        if upstream is not None and upstream is not gic:
            errors.append(f"GIC_FIQ_CAPABLE on a cascaded GIC, no FIQ path to a CPU "
                          f"({text}, cascaded into {upstream.path})")
    return Verdict(fiq and not errors, errors)


def validate_vic(tree: Tree, vic: Node, spec: list[int]) -> Verdict:
    if len(spec) not in (1, 2):
        return Verdict(False, [f"VIC {vic.path} specifier has {len(spec)} cells, not 1 or 2"])
    source = spec[0]
    flags = spec[1] if len(spec) == 2 else 0
    text = f"VIC {vic.path}: <{' '.join([str(source)] + ([f'{flags:#x}'] if len(spec) == 2 else []))}>"
    errors: list[str] = []
    if source >= VIC_SOURCES:
        errors.append(f"source {source} out of range, a VIC has {VIC_SOURCES} ({text})")
    if flags & ~VIC_FLAGS_KNOWN:
        errors.append(f"unknown bits {flags & ~VIC_FLAGS_KNOWN:#x} in flags cell ({text})")
    fiq = bool(flags & VIC_FIQ_CAPABLE)
    if fiq:
        upstream = own_interrupt_controller(tree, vic)
        if upstream is not None and upstream is not vic:
            errors.append(f"VIC_FIQ_CAPABLE on a cascaded VIC, no FIQ path to a CPU "
                          f"({text}, cascaded into {upstream.path})")
        if source in cascade_inputs(tree, vic):
            errors.append(f"VIC_FIQ_CAPABLE on a cascade input, an interrupt controller "
                          f"is not a FIQ ({text})")
    return Verdict(fiq and not errors, errors)


def validate_no_fiq(tree: Tree, ctrl: Node, spec: list[int]) -> Verdict:
    """Default for controllers without a validator: by the irq.h convention
    the flags are in the last cell when there are two cells or more."""
    if len(spec) >= 2 and spec[-1] & GIC_FIQ_CAPABLE:
        compat = (ctrl.compatible() or ["no compatible"])[0]
        return Verdict(False, [f"controller has no FIQ: GIC_FIQ_CAPABLE in flags cell for "
                               f"{ctrl.path} ({compat}) <{' '.join(f'{c:#x}' for c in spec)}>"])
    return Verdict(False, [])


# Controller compatible -> validator.  A controller matches on its first
# compatible found here; anything else gets validate_no_fiq.
VALIDATORS: dict[str, Validator] = {c: validate_gic for c in GIC_COMPATIBLES}
VALIDATORS.update({c: validate_vic for c in VIC_COMPATIBLES})


def validator_for(ctrl: Node) -> Validator:
    for compat in ctrl.compatible():
        if compat in VALIDATORS:
            return VALIDATORS[compat]
    return validate_no_fiq


@dataclass
class Report:
    errors: list[str] = field(default_factory=list)
    fiq: int = 0
    checked: int = 0
    unresolved: int = 0
    notes: list[str] = field(default_factory=list)  # why unresolved


def check_one(tree: Tree, where: str, res: Resolved | str, report: Report,
              count: bool) -> None:
    if isinstance(res, str):
        report.unresolved += 1
        report.notes.append(f"{where}: unresolved: {res}")
        return
    report.checked += 1
    verdict = validator_for(res.controller)(tree, res.controller, res.spec)
    via = f" via {', '.join(res.via)}" if res.via else ""
    report.errors += [f"{where}: {e}{via}" for e in verdict.errors]
    if verdict.fiq and count:
        report.fiq += 1


def check_tree(dtb: str, tree: Tree) -> Report:
    report = Report()
    for node in tree.nodes:
        reg = node.cells("reg")
        ints = node.cells("interrupts")
        if ints is not None:
            par = find_parent(tree, node)
            n = par.u32("#interrupt-cells") if par is not None else None
            if not n:
                report.unresolved += 1
                report.notes.append(f"{dtb}: {node.path}: interrupts: no interrupt parent")
            else:
                for idx in range(len(ints) // n):
                    res = resolve(tree, par, ints[idx * n:(idx + 1) * n], reg, None)
                    check_one(tree, f"{dtb}: {node.path}: interrupts[{idx}]", res, report, True)
        ext = node.cells("interrupts-extended")
        i, idx = 0, 0
        while ext is not None and i < len(ext):
            par = tree.phandle(ext[i])
            n = par.u32("#interrupt-cells") if par is not None else None
            if par is None or n is None:
                report.unresolved += 1
                report.notes.append(f"{dtb}: {node.path}: interrupts-extended[{idx}]: bad phandle")
                break
            res = resolve(tree, par, ext[i + 1:i + 1 + n], reg, None)
            check_one(tree, f"{dtb}: {node.path}: interrupts-extended[{idx}]", res, report, True)
            i, idx = i + 1 + n, idx + 1
        imap = node.own_imap()
        intsize = node.u32("#interrupt-cells")
        if imap is not None and intsize is not None:
            # Entries are checked too, as no consumer may be in the tree (PCI).
            asize = node.u32("#address-cells") or 0
            i, idx = 0, 0
            while i < len(imap):
                entry = map_entry(tree, imap, i, asize, intsize)
                if entry is None:
                    report.unresolved += 1
                    report.notes.append(f"{dtb}: {node.path}: interrupt-map[{idx}]: malformed")
                    break
                i, _, par, p_addr, p_spec = entry
                res = resolve(tree, par, p_spec, p_addr, len(p_addr))
                check_one(tree, f"{dtb}: {node.path}: interrupt-map[{idx}]", res, report, False)
                idx += 1
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("dtb", nargs="+", help=".dtb files to check")
    ap.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="also say why specifiers are unresolved (on stderr)")
    args = ap.parse_args(argv)
    failed = False
    for dtb in args.dtb:
        try:
            tree = load(dtb)
        except (OSError, libfdt.FdtException) as exc:
            print(f"{dtb}: cannot read: {exc}", file=sys.stderr)
            failed = True
            continue
        report = check_tree(dtb, tree)
        for line in report.errors:
            print(line)
        if args.verbose:
            for line in report.notes:
                print(line, file=sys.stderr)
        failed |= bool(report.errors)
        if not args.quiet:
            print(f"{dtb}: {report.fiq} FIQ-capable specifier(s), {report.checked} checked, "
                  f"{report.unresolved} unresolved")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
