#!/usr/bin/python3
"""rst-lint.py FILE...: docutils check of kernel .rst files without Sphinx.

The kernel's Sphinx roles and directives (:kbd:, :menuselection:,
flat-table, kernel-doc, ...) are registered as no-ops so that only genuine
reStructuredText problems are reported: bad tables, title underlines,
unknown targets, inconsistent indentation.  Prints one line per problem;
exit status 1 if there is any.
"""
from __future__ import annotations

import io
import sys

import docutils.core
from docutils import nodes
from docutils.parsers.rst import Directive, directives, roles

SPHINX_ROLES = ("kbd", "menuselection", "ref", "doc", "c:func", "c:type", "c:macro",
                "c:struct", "c:member", "c:expr", "file", "command", "envvar", "option")
SPHINX_DIRECTIVES = ("tabularcolumns", "flat-table", "kernel-doc", "toctree",
                     "only", "code-block", "highlight", "c:function", "c:type")


def literal_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    return [nodes.literal(rawtext, text)], []


class Ignored(Directive):
    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = None

    def run(self):
        return []


Ignored.option_spec = type("AnyOptions", (dict,), {"__missing__": lambda s, k: directives.unchanged,
                                                    "__contains__": lambda s, k: True})()


def lint(path: str) -> list[str]:
    for r in SPHINX_ROLES:
        roles.register_local_role(r, literal_role)
    for d in SPHINX_DIRECTIVES:
        directives.register_directive(d, Ignored)
    err = io.StringIO()
    with open(path, encoding="utf-8") as f:
        docutils.core.publish_doctree(
            f.read(), source_path=path,
            settings_overrides={"warning_stream": err, "report_level": 2,
                                "halt_level": 5, "file_insertion_enabled": False})
    return [l for l in err.getvalue().splitlines() if l.startswith(path)]


def main() -> int:
    problems = [p for path in sys.argv[1:] for p in lint(path)]
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
