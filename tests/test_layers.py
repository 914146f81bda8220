"""The package's layers import one way, down: the library never imports the CLI, a lower layer
never imports a higher one, and the poker core imports nothing of Pasur's game; and no module
imports itself through others (no import cycle, even inside a layer).

Every ``import`` in every module counts, including those inside functions (parsed, not run)."""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "pasur"

#: what each layer may import (besides itself and the package root's ``__version__``)
ALLOWED: dict[str, set[str]] = {
    "common": set(),
    "game": {"common"},
    "poker": {"common"},
    "solve": {"common", "game"},
    "play": {"common", "game", "solve"},
    "learn": {"common", "game", "solve", "play"},
    "study": {"common", "game", "solve", "play", "learn"},
    "hidden": {"common", "game", "solve", "play", "learn"},
    "rl": {"common", "game", "solve", "play", "learn", "hidden"},
    "web": {"common", "game", "solve", "play", "learn", "hidden"},
    "cli": {"common", "game", "poker", "solve", "play", "learn", "study", "hidden", "rl", "web"},
}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "pasur" else None


def _module_name(path: Path, root: Path = SRC) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _source(module: str, root: Path) -> Path | None:
    """The file of ``module`` under ``root`` (the package folder): ``x.py`` or ``x/__init__.py``."""
    path = root.parent.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path, root: Path = SRC) -> list[tuple[int, str]]:
    """Every module ``path`` imports, absolute, with its line. ``from p import name`` imports the
    module ``p.name`` where that is a module, else ``p``; and where ``p`` is a package, its
    ``__init__`` too (the names are read off it, submodules included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    me = _module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if _source(f"{mod}.{a.name}", root) else mod for a in node.names]
            source = _source(mod, root)
            if source is not None and source.name == "__init__.py":
                targets.append(mod)
            found += [(node.lineno, t) for t in dict.fromkeys(targets)]
    return found


MODULES = sorted(SRC.rglob("*.py"))


def test_every_module_is_in_a_layer():
    stray = [p.relative_to(SRC).as_posix() for p in MODULES if p.parent == SRC and p.name != "__init__.py"]
    assert not stray, f"modules outside any layer: {stray}"
    assert {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()} <= set(ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(SRC).as_posix())
def test_imports_go_down(path: Path):
    me = _layer(_module_name(path))
    bad = []
    for line, mod in _imports(path):
        other = _layer(mod)
        if other is None or other == me:
            continue
        if (
            me is None or other not in ALLOWED[me]
        ):  # the package root imports no layer (pasur.cli imports it, not the reverse)
            bad.append((line, mod))
    assert not bad, f"{path.relative_to(SRC)} imports upward or sideways: {bad}"


def test_the_checker_catches_upward_and_relative_imports(tmp_path):
    """The rule itself: a library module importing the CLI inside a function, and a relative
    sideways import, are both found and both refused."""
    probe = tmp_path / "pasur" / "solve" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("def f():\n    from pasur.cli.common import err\n    from ..poker import games\n")
    layers = [_layer(m) for _, m in _imports(probe, tmp_path / "pasur")]
    assert layers == ["cli", "poker"]
    assert not any(layer in ALLOWED["solve"] for layer in layers)


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Each module of the package under ``root`` and the package's modules it imports (anywhere
    in it: at the top or inside functions)."""
    modules = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    return {m: {t for _, t in _imports(p, root) if t in modules and t != m} for m, p in modules.items()}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle, ``[a, b, ..., a]``, per group of modules that import each other (a strongly
    connected component of ``graph`` with more than one module): the shortest through its first
    module by name."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                group.add(w)
                if w == v:
                    break
            groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for group in groups:
        if len(group) < 2:
            continue
        start = min(group)
        came_from = {start: None}
        todo = deque([start])
        while todo:
            v = todo.popleft()
            if start in graph[v]:
                path = [v]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])
                cycles.append([*reversed(path), start])
                break
            for w in sorted(graph[v] & group):
                if w not in came_from:
                    came_from[w] = v
                    todo.append(w)
    return sorted(cycles)


def test_no_import_cycles():
    cycles = import_cycles(import_graph())
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_checker_catches_planted_cycles(tmp_path):
    """The rule itself, on a planted package: a cycle through an import inside a function,
    ``from package import module`` and ``import a.b``; and one through a package's ``__init__``
    (``from package import submodule`` reads the package being initialized), which taking the
    submodule off its own module ends. Imports that go one way are not cycles."""
    root = tmp_path / "pasur"
    files = {
        "__init__.py": "",
        "solve/__init__.py": "",
        "solve/a.py": "from pasur.solve.b import f\n",
        "solve/b.py": "def f():\n    from pasur.solve import c\n",
        "solve/c.py": "import pasur.solve.a\nfrom pasur.solve.d import x\n",
        "solve/d.py": "x = 1\n",
        "cli/__init__.py": "from pasur.cli.common import G\n",
        "cli/clicklib.py": "X = 1\n",
        "cli/common.py": "from pasur.cli import clicklib\nfrom pasur.solve.a import f\n",
        "cli/game.py": "from pasur.cli import G\nfrom pasur.cli.clicklib import X\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert import_cycles(import_graph(root)) == [
        ["pasur.cli", "pasur.cli.common", "pasur.cli"],
        ["pasur.solve.a", "pasur.solve.b", "pasur.solve.c", "pasur.solve.a"],
    ]
    (root / "cli/common.py").write_text("from pasur.cli.clicklib import X\nfrom pasur.solve.a import f\n")
    (root / "solve/b.py").write_text("def f():\n    from pasur.solve import d\n")
    assert import_cycles(import_graph(root)) == []
