"""A griffe extension for the API reference (mkdocs.yml): the docstrings are written for Python's
``help`` and doctest, with Sphinx roles (``:func:`name```) and bare ``>>>`` examples; this shows
the roles as code and puts each bare example in a ``pycon`` code block, so Markdown renders it
as code instead of nested quotes. The docstrings in the source are not changed."""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|mod|data|meth|attr|exc|obj|const):`(~?)([^`]+)`")
FENCE = re.compile(r"^\s*(```|~~~)")


def _role(match: re.Match) -> str:
    """A role as code: ``:func:`a.b``` as ```a.b```, ``:mod:`~a.b``` as ```b```."""
    tilde, text = match.groups()
    return f"`{text.rsplit('.', 1)[-1] if tilde else text}`"


def fence_examples(text: str) -> str:
    """``text`` with every run of ``>>>`` lines and their output outside a code block fenced."""
    out: list[str] = []
    in_fence = in_example = False
    for line in text.splitlines():
        stripped = line.strip()
        if not in_example and FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and not in_example and stripped.startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            in_example = True
        elif in_example and not stripped:
            out.append(f"{indent}```")
            in_example = False
        out.append(line)
    if in_example:
        out.append(f"{indent}```")
    return "\n".join(out)


class DocstringsAsMarkdown(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_examples(ROLE.sub(_role, obj.docstring.value))
