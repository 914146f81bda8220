"""The layers of agents (``play``, ``hidden``) talk to no terminal: no ``print``, no ``input``, no
``sys.stdin`` / ``sys.stdout``. A person at a terminal is an agent of the front end
(``pasur.web.prompt``, ``pasur.web.terminal``). Parsed, not run, like tests/test_layers.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "pasur"
QUIET = ("play", "hidden")


def terminal_io(source: str) -> list[tuple[int, str]]:
    """Each call of ``print`` or ``input`` and each use of ``sys.stdin``/``stdout``/``stderr``, with its line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "input"):
            found.append((node.lineno, f"{node.func.id}()"))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
            and node.attr in ("stdin", "stdout", "stderr")
        ):
            found.append((node.lineno, f"sys.{node.attr}"))
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            found += [(node.lineno, f"sys.{a.name}") for a in node.names if a.name in ("stdin", "stdout", "stderr")]
    return sorted(found)


def test_the_check_sees_what_it_looks_for():
    code = "import sys\nfrom sys import stdout\nprint(1)\nx = input()\nsys.stdin.readline()\nlog.print('ok')\n"
    assert terminal_io(code) == [(2, "sys.stdout"), (3, "print()"), (4, "input()"), (5, "sys.stdin")]


@pytest.mark.parametrize("layer", QUIET)
def test_agent_layers_do_no_terminal_io(layer):
    bad = [
        f"{path.relative_to(SRC.parent)}:{line}: {what}"
        for path in sorted((SRC / layer).rglob("*.py"))
        for line, what in terminal_io(path.read_text(encoding="utf-8"))
    ]
    assert not bad, "\n".join(bad)
