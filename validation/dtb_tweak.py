"""Make deliberately broken copies of a built DTB (python3-libfdt)."""
from __future__ import annotations

import pathlib
import struct

import libfdt


def _cells(b: bytes) -> list[int]:
    return list(struct.unpack(f">{len(b) // 4}I", b))


def _pack(cells: list[int]) -> bytes:
    return struct.pack(f">{len(cells)}I", *cells)


def _nodes(fdt: libfdt.Fdt):
    off, depth = 0, 0
    while True:
        yield off
        ret = fdt.next_node(off, depth, libfdt.QUIET_NOTFOUND)
        if isinstance(ret, int):
            return
        off, depth = ret
        if off < 0:
            return


def set_map_flags(dtb: pathlib.Path, out: pathlib.Path, child_irq: int,
                  flags: int) -> None:
    """Set the GIC flags cell of the interrupt-map entry for child_irq."""
    fdt = libfdt.Fdt(bytearray(dtb.read_bytes()))
    done = False
    for off in _nodes(fdt):
        raw = fdt.getprop(off, "interrupt-map", libfdt.QUIET_NOTFOUND)
        if isinstance(raw, int):
            continue
        cells = _cells(bytes(raw))
        # vexpress motherboard: <addr irq &gic SPI n flags>, 6 cells an entry
        for i in range(0, len(cells) - 5, 6):
            if cells[i + 1] == child_irq and cells[i + 3] == 0:
                cells[i + 5] = flags
                fdt.setprop(off, "interrupt-map", _pack(cells))
                done = True
                break
        if done:
            break
    if not done:
        raise ValueError(f"{dtb}: no interrupt-map entry for {child_irq}")
    out.write_bytes(bytes(fdt.as_bytearray()))


def set_timer_flags(dtb: pathlib.Path, out: pathlib.Path, flags_or: int) -> None:
    """OR flags into the arch timer's first PPI specifier."""
    fdt = libfdt.Fdt(bytearray(dtb.read_bytes()))
    off = fdt.path_offset("/timer")
    cells = _cells(bytes(fdt.getprop(off, "interrupts")))
    cells[2] |= flags_or
    fdt.setprop(off, "interrupts", _pack(cells))
    out.write_bytes(bytes(fdt.as_bytearray()))


def set_interrupt_flags(dtb: pathlib.Path, out: pathlib.Path, path: str,
                        flags: int, type_cell: int | None = None) -> None:
    """Rewrite the first GIC specifier of the node at path."""
    fdt = libfdt.Fdt(bytearray(dtb.read_bytes()))
    off = fdt.path_offset(path)
    cells = _cells(bytes(fdt.getprop(off, "interrupts")))
    cells[2] = flags
    if type_cell is not None:
        cells[0] = type_cell
    fdt.setprop(off, "interrupts", _pack(cells))
    out.write_bytes(bytes(fdt.as_bytearray()))


def set_vic_specifier(dtb: pathlib.Path, out: pathlib.Path, path: str,
                      source: int, flags: int) -> None:
    """Rewrite the (two-cell) VIC specifier of the node at path."""
    fdt = libfdt.Fdt(bytearray(dtb.read_bytes()))
    off = fdt.path_offset(path)
    cells = _cells(bytes(fdt.getprop(off, "interrupts")))
    if len(cells) != 2:
        raise ValueError(f"{dtb}: {path}: interrupts is not one VIC specifier of 2 cells")
    fdt.setprop(off, "interrupts", _pack([source, flags]))
    out.write_bytes(bytes(fdt.as_bytearray()))


def add_ppi_pmu(dtb: pathlib.Path, out: pathlib.Path, ppi: int = 7) -> None:
    """Describe QEMU virt's Cortex-A15 PMU, whose overflow interrupt QEMU
    wires to PPI 7 but leaves out of its DTB (an empty /pmu node)."""
    fdt = libfdt.Fdt(bytearray(dtb.read_bytes()))
    fdt.resize(fdt.totalsize() + 256)
    off = fdt.path_offset("/pmu")
    fdt.setprop_str(off, "compatible", "arm,cortex-a15-pmu")
    # GIC_PPI ppi (GIC_CPU_MASK_SIMPLE(4) | IRQ_TYPE_LEVEL_HIGH)
    fdt.setprop(off, "interrupts", _pack([1, ppi, 0xf04]))
    fdt.pack()
    out.write_bytes(bytes(fdt.as_bytearray()))


def one_cpu(dtb: pathlib.Path, out: pathlib.Path) -> None:
    """Keep only /cpus/cpu@0: a board that QEMU runs with one CPU but whose
    DT lists more (vexpress-a15) then has one possible CPU, as kexec on a
    platform without cpu_kill wants, and no capping warning (nr_cpus=1)."""
    fdt = libfdt.Fdt(bytearray(dtb.read_bytes()))
    cpus = fdt.path_offset("/cpus")
    while True:
        off = fdt.first_subnode(cpus)
        while off >= 0 and fdt.get_name(off) in ("cpu@0", "cpu-map"):
            off = fdt.next_subnode(off, libfdt.QUIET_NOTFOUND)
        if off < 0:
            break
        fdt.del_node(off)
    fdt.pack()
    out.write_bytes(bytes(fdt.as_bytearray()))


def set_props(dtb: pathlib.Path, out: pathlib.Path,
              props: dict[str, dict[str, str | bytes]]) -> None:
    """Set properties, {node path: {name: value}}: a str value is a string
    property, b"" a boolean (empty) one."""
    fdt = libfdt.Fdt(bytearray(dtb.read_bytes()))
    size = sum(64 + len(n) + len(v) for p in props.values() for n, v in p.items())
    fdt.resize(fdt.totalsize() + size + 256)
    for path, named in props.items():
        for name, value in named.items():
            off = fdt.path_offset(path)
            if isinstance(value, str):
                fdt.setprop_str(off, name, value)
            else:
                fdt.setprop(off, name, value)
    fdt.pack()
    out.write_bytes(bytes(fdt.as_bytearray()))
