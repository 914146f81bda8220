"""The page's scripts share one global scope (classic scripts, loaded in order by index.html): a
top-level name declared twice is not an error for a `function`, the later one silently replaces
the earlier everywhere. That happened once (a second `gamePath(g)` for the list of games replaced
the page's `gamePath()`, and hints and replays failed in every game), so every top-level name is
declared once across the scripts the page loads."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "src" / "pasur" / "web" / "static"
SCRIPT = re.compile(r'<script src="/static/([^"]+)"')
#: a declaration at the start of a line: the scripts' top level (their bodies are indented)
DECLARATION = re.compile(r"^(?:async\s+)?(?:function\s*\*?\s*|const\s+|let\s+|var\s+|class\s+)([A-Za-z_$][\w$]*)", re.M)


def _page_scripts() -> list[Path]:
    return [STATIC / name for name in SCRIPT.findall((STATIC / "index.html").read_text(encoding="utf-8"))]


def test_the_page_loads_its_scripts_from_the_static_folder():
    scripts = _page_scripts()
    assert len(scripts) >= 3
    assert all(p.is_file() for p in scripts), [str(p) for p in scripts if not p.is_file()]


def test_every_top_level_name_is_declared_once_across_the_pages_scripts():
    declared = Counter()
    where: dict[str, list[str]] = {}
    for path in _page_scripts():
        for name in DECLARATION.findall(path.read_text(encoding="utf-8")):
            declared[name] += 1
            where.setdefault(name, []).append(path.name)
    twice = {name: where[name] for name, count in declared.items() if count > 1}
    assert not twice, f"declared more than once in the page's global scope: {twice}"
