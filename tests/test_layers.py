"""The package's layers import one way, down: the library never imports the CLI, a lower layer
never imports a higher one, and the poker core imports nothing of Pasur's game.

Every ``import`` in every module counts, including those inside functions (parsed, not run)."""

from __future__ import annotations

import ast
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
    "hidden": {"common", "game", "solve", "play", "learn", "study"},
    "web": {"common", "game", "solve", "play", "learn", "hidden"},
    "cli": {"common", "game", "poker", "solve", "play", "learn", "study", "hidden", "web"},
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


def _imports(path: Path, root: Path = SRC) -> list[tuple[int, str]]:
    """Every module ``path`` imports, absolute, with its line."""
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
            # ``from pasur import x`` imports the module pasur.x (or a name of the root)
            if mod == "pasur":
                found += [(node.lineno, f"pasur.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, mod))
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
        if other is None or other == me or mod == "pasur.__version__":
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
