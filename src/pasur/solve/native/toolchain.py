"""Compile ``round_cfr.c`` (package data) with the system C compiler, once per source, flags and
compiler, into a per-user cache, and load it with ctypes.

The library lands in ``$XDG_CACHE_HOME/pasur/native/`` (default ``~/.cache/pasur/native/``) under
a name that hashes the source, the flags and the compiler (its command and ``--version``), so a
changed source or compiler builds a new one and an unchanged one is loaded without compiling. It is
written to a temporary name first and moved into place (``os.replace``): two processes building at
once each leave a whole library. ``$CC`` names the compiler (default ``cc``).

Flags: ``-O3 -funroll-loops -fPIC -shared -ffp-contract=off``; never ``-ffast-math`` or
``-march=native``: the kernel must round every operation as the torch path does (the iterates are
compared bit for bit). (Unrolling changes no operation, only the loops' bookkeeping: 3 % faster on
an AMD EPYC, results/cfr-native/s5.)
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("round_cfr.c")
FLAGS = ("-O3", "-funroll-loops", "-fPIC", "-shared", "-ffp-contract=off")
#: seconds a compile (or the compiler's ``--version``) may take
COMPILE_TIMEOUT = 120


class NativeUnavailable(RuntimeError):
    """The kernel cannot be built or loaded here (no compiler, a failed compile, no cache)."""


def compiler() -> list[str]:
    """The C compiler's command: ``$CC`` (split as a shell would) or ``cc``."""
    return shlex.split(os.environ.get("CC") or "cc")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pasur" / "native"


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        raise NativeUnavailable(f"the C compiler {shlex.join(cmd[:1])!r} did not run ({e})") from None


def library_path(source: Path = SOURCE, flags: tuple[str, ...] = FLAGS) -> Path:
    """Where the library for this source, these flags and this compiler is (or will be) cached."""
    cc = compiler()
    version = _run([*cc, "--version"])
    if version.returncode != 0:
        raise NativeUnavailable(f"the C compiler {shlex.join(cc)!r} failed: {version.stderr.strip()[:200]}")
    key = hashlib.sha256()
    for part in (source.read_bytes(), " ".join(flags).encode(), shlex.join(cc).encode(), version.stdout.encode()):
        key.update(hashlib.sha256(part).digest())
    return cache_dir() / f"round_cfr-{key.hexdigest()[:20]}.so"


def build(source: Path = SOURCE, flags: tuple[str, ...] = FLAGS) -> tuple[Path, bool]:
    """The cached library, compiled first if it is not there yet; and whether it was compiled now.
    ``source`` and ``flags``: another version of the kernel (benchmarks compare one with today's)."""
    target = library_path(source, flags)
    if target.is_file():
        return target, False
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
    except OSError as e:
        raise NativeUnavailable(f"cannot write the kernel cache {target.parent} ({e})") from None
    try:
        done = _run([*compiler(), *flags, "-o", tmp, str(source.resolve())])
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines() or ["(no message)"]
            raise NativeUnavailable(f"compiling {source.name} failed: {lines[0][:200]}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target, True


def load(path: Path) -> ctypes.CDLL:
    try:
        return ctypes.CDLL(str(path))
    except OSError as e:
        raise NativeUnavailable(f"cannot load {path} ({e})") from None
