#!/usr/bin/python3
"""cover-letter.py [TEMPLATE]: fill the cover letter's placeholders.

Without TEMPLATE, print the figures table of the last test run
(build/figures.json).  With it, print the template with:

  {{N}}              the number of patches in `series`
  {{SHORTLOG}}       git shortlog of the series (build/linux, pristine..HEAD)
  {{DIFFSTAT}}       its diffstat
  {{FIGURES_TABLE}}  every figure of the last run, label and value
  {{FIGURE:label}}   the value of the figure with exactly that label
  {{MATRIX_TABLE}}   the fault matrix of the last run (build/matrix.json)

Placeholders it cannot fill ({{FIGURE:...}} of a test that did not run,
{{LEAD:...}} notes for a person) are left as they are and listed on
stderr.  `make cover-letter` writes build/cover-letter.txt with it.
"""
from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

TOP = pathlib.Path(__file__).resolve().parent.parent
BUILD = TOP / "build"
TREE = BUILD / "linux"
sys.path.insert(0, str(TOP / "validation"))
from report import matrix_table  # noqa: E402


def figures() -> list[tuple[str, str, str]]:
    path = BUILD / "figures.json"
    if not path.exists():
        return []
    return [tuple(f) for f in json.loads(path.read_text())]


def figures_table(figs) -> str:
    if not figs:
        return "(no figures: run the tests first, e.g. make check)"
    w = max(len(label) for _, label, _ in figs)
    return "\n".join(f"  {label:<{w}}  {value}" for _, label, value in figs)


def matrix() -> str:
    path = BUILD / "matrix.json"
    if not path.exists():
        return "(no fault matrix: run the tests first, e.g. make check)"
    return "\n".join("  " + line for line in matrix_table(json.loads(path.read_text())))


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(TREE), *args], check=True,
                          capture_output=True, text=True).stdout.rstrip()


def series_count() -> int:
    return sum(1 for l in (TOP / "series").read_text().splitlines()
               if l.strip() and not l.startswith("#"))


def fill(text: str) -> tuple[str, list[str]]:
    figs = figures()
    by_label = {label: value for _, label, value in figs}
    simple = {
        "N": lambda: f"{series_count():02d}",
        "SHORTLOG": lambda: git("shortlog", "pristine..HEAD"),
        "DIFFSTAT": lambda: git("diff", "--stat=72", "pristine", "HEAD"),
        "FIGURES_TABLE": lambda: figures_table(figs),
        "MATRIX_TABLE": matrix,
    }
    left: list[str] = []

    def one(m: re.Match) -> str:
        key = m.group(1)
        if key in simple:
            return simple[key]()
        if key.startswith("FIGURE:") and key[7:] in by_label:
            return by_label[key[7:]]
        left.append(m.group(0))
        return m.group(0)

    return re.sub(r"\{\{([^{}]+)\}\}", one, text), left


def main() -> int:
    if len(sys.argv) < 2:
        print(figures_table(figures()))
        return 0
    text, left = fill(pathlib.Path(sys.argv[1]).read_text())
    sys.stdout.write(text)
    for p in left:
        print(f"cover-letter: not filled: {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
