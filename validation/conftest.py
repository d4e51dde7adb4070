"""pytest glue: a `guest` factory that always kills QEMU, console tails on
failure, and a figures table printed at the end of the run.

Figures and matrix cells travel in each test's user_properties, so that
they reach the controller when pytest-xdist runs the tests in workers
(scripts/test.sh).  With FIQ_FIGURES_APPEND=1 (test.sh's second pass) the
run adds its figures to build/figures.json instead of replacing them."""
from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from boards import BUILD  # noqa: E402
from qemu import Guest  # noqa: E402
from report import matrix_table  # noqa: E402

FIGURES: list[tuple[str, str, str]] = []
# fault matrix cells (tests/test_matrix.py): one dict per (setup, FIQ mode, fault)
MATRIX: list[dict] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)
    guests = getattr(item, "_guests", [])
    if rep.when == "call" and rep.failed:
        for g in guests:
            rep.sections.append((f"console tail of {g.name} ({g.log_path})",
                                 g.console_tail()))


@pytest.fixture
def guest(request):
    """guest(board, **kw) -> booted Guest at its shell prompt."""
    made: list[Guest] = []
    request.node._guests = made

    def boot(board: str, wait: bool = True, **kw) -> Guest:
        name = request.node.name.replace("/", "_") + (f"-{len(made)}" if made else "")
        g = Guest(board, name=name, **kw)
        made.append(g)
        if wait:
            g.wait_shell()
        return g

    yield boot
    for g in made:
        g.close()


@pytest.fixture
def figure(request):
    """figure(label, value): a measured number, printed in the final table."""
    def record(label: str, value: str) -> None:
        request.node.user_properties.append(("figure", (request.node.name, label, value)))
    return record


@pytest.fixture
def matrix_cell(request):
    """matrix_cell(setup=, mode=, fault=, entered=, order=, ...): one cell
    of the fault matrix, printed as a table at the end (in order) and saved
    in build/matrix.json."""
    def record(**cell) -> None:
        cell.setdefault("test", request.node.name)
        request.node.user_properties.append(("matrix", cell))
    return record


def pytest_runtest_logreport(report):
    """Collect what a test recorded, once (its teardown report carries all
    of it), in the process that prints the summary."""
    if report.when != "teardown":
        return
    for kind, value in report.user_properties:
        if kind == "figure":
            FIGURES.append(tuple(value))
        elif kind == "matrix":
            MATRIX.append(value)


def pytest_terminal_summary(terminalreporter, config):
    if hasattr(config, "workerinput"):
        return                      # an xdist worker: the controller reports
    tr = terminalreporter
    if MATRIX:
        MATRIX.sort(key=lambda c: c.get("order", 0))
        tr.section("fault matrix")
        for line in matrix_table(MATRIX):
            tr.write_line(line)
        BUILD.mkdir(exist_ok=True)
        (BUILD / "matrix.json").write_text(json.dumps(MATRIX, indent=1))
    FIGURES.sort()
    path = BUILD / "figures.json"
    if os.environ.get("FIQ_FIGURES_APPEND") == "1" and path.exists():
        FIGURES[:0] = [tuple(f) for f in json.loads(path.read_text())]
    BUILD.mkdir(exist_ok=True)
    path.write_text(json.dumps(FIGURES, indent=1))
    if not FIGURES:
        return
    tr.section("figures")
    w = max(len(t) for t, _, _ in FIGURES)
    l = max(len(x) for _, x, _ in FIGURES)
    for test, label, value in FIGURES:
        tr.write_line(f"{test:<{w}}  {label:<{l}}  {value}")
