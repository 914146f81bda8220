"""Atomic outputs: write into a temporary sibling, rename when complete, so that a reader
never sees a half-written file or folder (and a crash leaves nothing that looks finished)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pasur.common.errors import PasurInputError


@contextlib.contextmanager
def atomic_dir(target: str | Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary folder beside ``target``; on success it becomes ``target``."""
    target = Path(target)
    if target.exists() and not overwrite:
        raise PasurInputError(f"output folder {target} exists already (choose another --out, or --overwrite)")
    if target.exists() and not target.is_dir():
        raise PasurInputError(f"output {target} exists and is not a folder")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise PasurInputError(f"the folder {parent} for --out does not exist")
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; the result is an ordinary folder
    try:
        yield tmp
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=parent))
            os.replace(target, old / "x")
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def write_text_atomic(path: str | Path, text: str) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
