"""The documentation the series adds builds cleanly.

The series' one change to Documentation/ outside the DT bindings is the
FIQ section of Documentation/dev-tools/kgdb.rst.  It must pass a plain
docutils check (scripts/rst-lint.py, Sphinx roles stubbed) as the pristine
file does, and `make htmldocs SPHINXDIRS=dev-tools` must report no warning
in it (Sphinx names the source file of every warning, so a warning the
series adds would name kgdb.rst: the pristine file has none).
"""
from __future__ import annotations

import pytest

import os
import subprocess

from boards import BUILD, TOP

# kbuild (htmldocs): one worker at a time (scripts/test.sh runs two)
pytestmark = pytest.mark.xdist_group("kbuild")

TREE = BUILD / "linux"
KGDB_RST = "Documentation/dev-tools/kgdb.rst"
LINT = ["/usr/bin/python3", str(TOP / "scripts/rst-lint.py")]


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(TREE), *args], check=True,
                          capture_output=True, text=True).stdout


KPARAMS = "Documentation/admin-guide/kernel-parameters.txt"


def test_series_touches_only_kgdb_rst_and_kernel_parameters_in_the_guides():
    changed = git("diff", "--name-only", "pristine", "HEAD", "--", "Documentation/",
                  ":!Documentation/devicetree/").split()
    assert sorted(changed) == sorted([KGDB_RST, KPARAMS]), changed
    assert "Entering kdb by FIQ on 32-bit ARM" in (TREE / KGDB_RST).read_text()
    # the one new boot parameter is documented, and nothing else changed there
    diff = git("diff", "pristine", "HEAD", "--", KPARAMS)
    added = [l[1:] for l in diff.splitlines() if l.startswith("+") and not l.startswith("+++")]
    removed = [l for l in diff.splitlines() if l.startswith("-") and not l.startswith("---")]
    assert not removed and added[0].strip() == "irqchip.fiq_nmi=", diff
    assert "irqchip.fiq_nmi=1" in (TREE / KGDB_RST).read_text()


def test_rst_lint_kgdb_rst(tmp_path):
    pristine = tmp_path / "kgdb-pristine.rst"
    pristine.write_text(git("show", f"pristine:{KGDB_RST}"))
    for f in (pristine, TREE / KGDB_RST):
        r = subprocess.run(LINT + [str(f)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and not r.stdout, r.stdout + r.stderr
    # the lint does catch a broken table in the new section
    broken = tmp_path / "kgdb-broken.rst"
    broken.write_text((TREE / KGDB_RST).read_text().replace(
        "``$3#33``                  the knock", "``$3#33``the knock", 1))
    r = subprocess.run(LINT + [str(broken)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "kgdb-broken.rst" in r.stdout, r.stdout + r.stderr


def test_htmldocs_dev_tools_no_warning_in_kgdb_rst():
    out = BUILD / "out" / "htmldocs"
    # Debian's sphinx-build runs on /usr/bin/python3, not on a PATH python
    env = dict(os.environ, PATH="/usr/bin:/bin:/usr/sbin:/sbin")
    r = subprocess.run(["make", "-C", str(TREE), f"O={out}", "htmldocs",
                        "SPHINXDIRS=dev-tools"], env=env,
                       capture_output=True, text=True, timeout=900)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log[-3000:]
    html = out / "Documentation/output/dev-tools/kgdb.html"
    assert "Entering kdb by FIQ on 32-bit ARM" in html.read_text()
    bad = [l for l in log.splitlines()
           if "kgdb.rst" in l and ("WARNING" in l or "ERROR" in l)]
    assert not bad, "\n".join(bad)
