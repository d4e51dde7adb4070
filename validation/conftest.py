"""pytest glue: a `guest` factory that always kills QEMU, console tails on
failure, and a figures table printed at the end of the run."""
from __future__ import annotations

import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from boards import BUILD  # noqa: E402
from qemu import Guest  # noqa: E402

FIGURES: list[tuple[str, str, str]] = []


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
        FIGURES.append((request.node.name, label, value))
    return record


def pytest_terminal_summary(terminalreporter):
    if not FIGURES:
        return
    tr = terminalreporter
    tr.section("figures")
    w = max(len(t) for t, _, _ in FIGURES)
    l = max(len(x) for _, x, _ in FIGURES)
    for test, label, value in FIGURES:
        tr.write_line(f"{test:<{w}}  {label:<{l}}  {value}")
    BUILD.mkdir(exist_ok=True)
    (BUILD / "figures.json").write_text(json.dumps(FIGURES, indent=1))
