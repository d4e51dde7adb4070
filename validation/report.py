"""The fault matrix as text, shared by the test run's summary
(conftest.py) and the cover letter (scripts/cover-letter.py)."""
from __future__ import annotations


def matrix_table(cells: list[dict]) -> list[str]:
    """One row per (setup, fault), FIQ on | off."""
    def show(c: dict | None) -> str:
        if c is None:
            return "-"
        if c.get("na"):
            return "n/a"
        if not c["entered"]:
            return f"no entry ({c['how']}, {c['waited']:.0f} s)"
        culprit = "culprit named" if c["culprit"] else "culprit NOT named"
        looks = c.get("attempts", 1)
        return f"{c['time']:.2f} s {c['how']}, {culprit}" + (f" ({looks} looks)" if looks > 1 else "")
    rows, seen = [], {}
    for c in cells:
        seen.setdefault((c["setup"], c["fault"]), {})[c["mode"]] = c
    hdr = ("setup", "fault", "FIQ on (irqchip.fiq_nmi=1)", "FIQ off (mainline)")
    for (setup, fault), modes in seen.items():
        rows.append((setup, fault, show(modes.get("on")), show(modes.get("off"))))
    w = [max(len(r[i]) for r in rows + [hdr]) for i in range(4)]
    fmt = "  ".join(f"{{:<{n}}}" for n in w)
    lines = [fmt.format(*hdr), fmt.format(*("-" * n for n in w))] + [fmt.format(*r) for r in rows]
    return [line.rstrip() for line in lines]
