"""Outputs that never destroy a user's files, and never look finished when they are not.

The rules every command follows (and the tests check):

* Files are written under a temporary name beside their target and renamed when complete, so
  a reader never sees a half-written file, and a crash leaves nothing that looks finished.
* Files get the user's umask (``mkstemp`` would make them private, 0600).
* Missing parent folders of an output are created.
* An existing output is replaced only with ``overwrite``, and an output *folder* only holds what
  the command wrote: each folder keeps a list of the files it wrote (``.pasur-outputs.json``),
  and a folder holding anything else is refused, naming one such file, with or without
  ``overwrite``. So ``--out . --overwrite`` or ``--out precious --overwrite`` never deletes a
  user's file.
* A location that cannot be written (a read-only folder, a file where a folder is expected)
  is refused with one line before any work starts (:func:`check_output_dir`,
  :func:`check_output_file`); an :class:`OSError` while writing becomes a
  :class:`~pasur.common.errors.PasurInputError` naming the path.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> with output_dir(root / "a" / "b") as tmp:
...     _ = (tmp / "x.txt").write_text("1")
>>> sorted(p.name for p in (root / "a" / "b").iterdir())
['.pasur-outputs.json', 'x.txt']
>>> _ = (root / "a" / "b" / "mine.txt").write_text("keep me")
>>> with output_dir(root / "a" / "b", overwrite=True) as tmp:
...     _ = (tmp / "x.txt").write_text("2")
Traceback (most recent call last):
...
pasur.common.errors.PasurInputError: --out ... holds files pasur did not write (mine.txt); choose another folder
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from pasur.common.errors import PasurInputError

#: the list of files a command wrote into an output folder
OWNED_LIST = ".pasur-outputs.json"


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _file_mode() -> int:
    return 0o666 & ~umask()


def _dir_mode() -> int:
    return 0o777 & ~umask()


def describe_os_error(e: OSError, path: str | Path | None = None) -> str:
    """One line for an :class:`OSError` while writing: what failed, and where."""
    where = e.filename if e.filename is not None else path
    reason = e.strerror or type(e).__name__
    return f"cannot write {where}: {reason}" if where is not None else f"cannot write: {reason}"


@contextlib.contextmanager
def os_errors_as_input_errors(path: str | Path | None = None) -> Iterator[None]:
    """Turn a failure to write (permissions, read-only disk, full disk, a file in the way)
    into a one-line :class:`PasurInputError`."""
    try:
        yield
    except PasurInputError:
        raise
    except OSError as e:
        raise PasurInputError(describe_os_error(e, path)) from None


def make_parents(path: Path, option: str) -> None:
    """Create the missing folders above ``path`` (refusing a file where a folder must be)."""
    parent = path.parent
    for p in [parent, *parent.parents]:
        if p.exists() and not p.is_dir():
            raise PasurInputError(f"{option} {path}: {p} is a file, not a folder")
    with os_errors_as_input_errors(parent):
        parent.mkdir(parents=True, exist_ok=True)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PasurInputError(f"{option} {path}: cannot write into {parent} (permission denied)")
    # permissions do not tell everything (root, /proc, a read-only or immutable place): make and
    # remove an empty folder there, so that a place that cannot be written is refused before the work
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".pasur-probe-", dir=parent))
    except OSError as e:
        raise PasurInputError(f"{option} {path}: cannot write into {parent} ({e.strerror or e})") from None


def _visible_and_hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def owned_files(folder: Path) -> set[str]:
    """The names a command wrote into ``folder`` (empty when it holds no list)."""
    try:
        names = json.loads((folder / OWNED_LIST).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return set()
    return {n for n in names if isinstance(n, str) and "/" not in n and n not in ("", ".", "..")}


def foreign_files(folder: Path) -> list[str]:
    """What ``folder`` holds that no pasur command wrote into it."""
    owned = owned_files(folder) | {OWNED_LIST}
    return [n for n in _visible_and_hidden(folder) if n not in owned]


def _entries_of_folder(path: Path, option: str) -> list[str] | None:
    """The entries of the output folder ``path`` (None when there is none yet), its parents made;
    a file in its place is refused."""
    if path.exists() and not path.is_dir():
        raise PasurInputError(f"{option} {path} is a file, not a folder")
    make_parents(path.absolute(), option)
    return _visible_and_hidden(path) if path.is_dir() else None


def check_output_dir(path: str | Path, *, overwrite: bool = False, option: str = "--out") -> Path:
    """Refuse, before any work, an output folder that cannot be written or would be destroyed:
    a file in its place, an unwritable parent, an existing folder without ``overwrite``, or a
    folder holding files pasur did not write. Creates the missing parents."""
    path = Path(path)
    names = _entries_of_folder(path, option)
    if names is not None:
        if names:
            foreign = foreign_files(path)
            if foreign:
                shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
                raise PasurInputError(
                    f"{option} {path} holds files pasur did not write ({shown}); choose another folder"
                )
            if not overwrite:
                raise PasurInputError(f"{option} {path} exists already (choose another folder, or --overwrite)")
        if not os.access(path, os.W_OK | os.X_OK):
            raise PasurInputError(f"{option} {path}: cannot write into it (permission denied)")
    return path


@contextlib.contextmanager
def output_dir(path: str | Path, *, overwrite: bool = False, option: str = "--out") -> Iterator[Path]:
    """Yield an empty temporary folder; on success its files become ``path``'s.

    A new folder appears whole (one rename). An existing one (allowed by
    :func:`check_output_dir`) gets each new file by a rename, then loses the files an earlier
    run wrote that this one did not; files that are not pasur's are never touched (they are
    refused up front). Files and folders get the user's umask."""
    path = Path(path)
    check_output_dir(path, overwrite=overwrite, option=option)
    parent = path.absolute().parent
    with os_errors_as_input_errors(path):
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.absolute().name}.tmp-", dir=parent))
    try:
        yield tmp
        with os_errors_as_input_errors(path):
            names = sorted(p.name for p in tmp.iterdir() if p.name != OWNED_LIST)
            (tmp / OWNED_LIST).write_text(json.dumps({"files": names}, indent=1) + "\n", encoding="utf-8")
            _apply_modes(tmp)
            if not path.exists():
                os.replace(tmp, path)
                return
            before = owned_files(path)
            for name in [*names, OWNED_LIST]:
                os.replace(tmp / name, path / name)
            for stale in sorted(before - set(names)):
                p = path / stale
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p)
                elif p.exists() or p.is_symlink():
                    p.unlink()
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _apply_modes(folder: Path) -> None:
    os.chmod(folder, _dir_mode())
    for root, dirs, files in os.walk(folder):
        for d in dirs:
            os.chmod(os.path.join(root, d), _dir_mode())
        for f in files:
            os.chmod(os.path.join(root, f), _file_mode())


def prepare_resumable_dir(
    path: str | Path, owned: list[str] | None = None, *, marker: str | None = None, option: str = "--out"
) -> Path:
    """Create (with its parents) or reopen a folder that a command fills over several runs
    (a sweep, an experiment), refusing one that holds anything else: with ``marker`` (a file the
    command always writes first, such as ``sweep.json``), a non-empty folder without it; with
    ``owned``, any entry not listed, and the list is recorded so that later runs recognize them."""
    path = Path(path)
    names = _entries_of_folder(path, option)
    if names is not None:
        if marker is not None and names and marker not in names:
            foreign = [n for n in names if n != ".lock"]
            if foreign:
                raise PasurInputError(
                    f"{option} {path} holds files pasur did not write ({', '.join(foreign[:3])}"
                    f"{', ...' if len(foreign) > 3 else ''}); choose another folder"
                )
        if owned is not None:
            allowed = owned_files(path) | set(owned) | {OWNED_LIST}
            foreign = [n for n in names if n not in allowed]
            if foreign:
                raise PasurInputError(
                    f"{option} {path} holds files pasur did not write ({', '.join(foreign[:3])}"
                    f"{', ...' if len(foreign) > 3 else ''}); choose another folder"
                )
        if not os.access(path, os.W_OK | os.X_OK):
            raise PasurInputError(f"{option} {path}: cannot write into it (permission denied)")
    with os_errors_as_input_errors(path):
        path.mkdir(exist_ok=True)
    if owned is not None:
        write_text_atomic(
            path / OWNED_LIST, json.dumps({"files": sorted(owned_files(path) | set(owned))}, indent=1) + "\n"
        )
    return path


def check_output_file(path: str | Path, *, overwrite: bool = False, option: str = "--out") -> Path:
    """Refuse, before any work, an output file that cannot be written: a folder in its place,
    an unwritable folder, or an existing file without ``overwrite``. Creates the missing parents."""
    path = Path(path)
    if path.is_dir():
        raise PasurInputError(f"{option} {path} is a folder, not a file")
    make_parents(path.absolute(), option)
    if path.exists() and not overwrite:
        raise PasurInputError(f"{option} {path} exists already (choose another name, or --overwrite)")
    return path


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary file name beside ``path`` (same suffix, for writers that choose a
    format by it); on success the file is renamed to ``path`` with the user's umask. For
    writers that take a file name (Parquet, XGBoost, matplotlib)."""
    path = Path(path)
    with os_errors_as_input_errors(path):
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.tmp-", suffix=path.suffix, dir=path.parent or ".")
        os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with os_errors_as_input_errors(path):
            os.chmod(tmp, _file_mode())
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary name (UTF-8, the user's umask)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_csv(path: str | Path, rows: Iterable[Mapping], columns: Sequence[str] | None = None) -> None:
    """Write ``rows`` as CSV through a temporary name, the one CSV writer of pasur's outputs: a
    header of ``columns`` (default: every key of the rows, in order of first appearance), a line
    per row, an empty cell where a row holds None or lacks the key (a trace of an older version);
    the csv module's quoting, ``\n`` line ends."""
    rows = list(rows)
    if columns is None:
        columns = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_text_atomic(path, buf.getvalue())


@contextlib.contextmanager
def replace_dir(path: str | Path) -> Iterator[Path]:
    """Yield a temporary folder that replaces ``path`` whole on success: for folders inside an
    output pasur owns (a sweep's per-deck folders), where the old content is pasur's own."""
    path = Path(path)
    parent = path.parent
    with os_errors_as_input_errors(path):
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=parent))
    try:
        yield tmp
        with os_errors_as_input_errors(path):
            _apply_modes(tmp)
            if path.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=parent))
                os.replace(path, old / "x")
                os.replace(tmp, path)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def folder_lock(out: Path, what: str) -> Iterator[None]:
    """One writer per output folder: a second ``what`` (a sweep, an arena) is refused at once; the
    OS frees the lock if the writer dies. No lock where ``fcntl`` is missing (not POSIX)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(out / ".lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise PasurInputError(
                f"another {what} is writing to {out} (wait for it, or choose another --out)"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def save_png(fig, path: str | Path, dpi: int = 120) -> None:
    """Lay a matplotlib figure out, write it to ``path`` through a temporary name, and free it
    (figures left open pile up in long runs)."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi)
    plt.close(fig)
