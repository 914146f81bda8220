"""``pasur serve``: the web page to play Pasur against the AI (FastAPI under uvicorn)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Annotated

import typer

from pasur.cli import app
from pasur.cli.common import command, note
from pasur.common.errors import PasurInputError

DB_NAME = "games.sqlite3"


def default_db() -> Path:
    """Under the user's data folder (``$XDG_DATA_HOME/pasur``, else ``~/.local/share/pasur``), or
    the working folder when there is no home to write to."""
    base = os.environ.get("XDG_DATA_HOME") or (Path.home() / ".local" / "share" if Path.home().exists() else None)
    if base is None:
        return Path.cwd() / f"pasur-{DB_NAME}"
    return Path(base) / "pasur" / DB_NAME


def _check_port(host: str, port: int) -> None:
    """Refuse, before anything starts, an address that cannot be listened on."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise PasurInputError(f"--host {host!r}: {e.strerror}") from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            raise PasurInputError(f"cannot listen on {host}:{port}: {e.strerror}") from None


@command(app)
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on (127.0.0.1: this machine only).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
    db: Annotated[
        Path | None,
        typer.Option("--db", help="SQLite file of the games (default: ~/.local/share/pasur/games.sqlite3)."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No log of each request.")] = False,
    allow_seeds: Annotated[
        bool,
        typer.Option(
            "--allow-seeds", help="Let a new game name its deal's seed (?seed=S on the page): for practice and tests."
        ),
    ] = False,
) -> None:
    """Serve the page to play Pasur against the AI: hands or matches, hints, replays. Games are
    kept in SQLite and resume after a restart."""
    import sqlite3

    import uvicorn

    from pasur.web.app import create_app

    path = db or default_db()
    if path.is_dir():
        raise PasurInputError(f"--db {path}: is a folder; give a file")
    _check_port(host, port)
    try:
        web = create_app(path, allow_seeds=allow_seeds)
    except sqlite3.Error as e:
        raise PasurInputError(f"--db {path}: {e}") from None
    note(f"pasur: serving on http://{host}:{port}/ (games in {path}); Ctrl-C stops")
    uvicorn.run(web, host=host, port=port, log_level="warning" if quiet else "info", access_log=not quiet)
