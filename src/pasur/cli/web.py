"""``pasur serve``: the web page to play Pasur against the AI (FastAPI under uvicorn)."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from typing import Annotated

import typer

from pasur.cli import app
from pasur.cli.common import command, need_extra, note
from pasur.common.errors import PasurInputError
from pasur.common.outputs import make_parents

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


def served_hosts(host: str, more: list[str]) -> list[str]:
    """The ``Host`` names the server answers to: the address it listens on, this machine's
    loopback names when it listens on loopback (or on every address), and ``more``."""
    from pasur.web.guard import LOOPBACK_HOSTS

    hosts = [host]
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
        loopback = ip.is_loopback or ip.is_unspecified
    except ValueError:
        loopback = host.lower().rstrip(".") == "localhost"
    if loopback:
        hosts += LOOPBACK_HOSTS
    for h in more:
        if not h.strip() or any(c in h for c in "/ @?#"):
            raise PasurInputError(f"--allow-host {h!r}: give a host name or address")
        hosts.append(h)
    return list(dict.fromkeys(hosts))


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
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="Also answer requests whose Host header names this (the name the page is opened by, behind "
            "a proxy or on another machine); repeatable. Others get 400.",
        ),
    ] = None,
) -> None:
    """Serve the page to play Pasur against the AI: hands or matches, hints, replays. Games are
    kept in SQLite and resume after a restart."""
    import sqlite3

    from pasur.common.malloc import fix_mmap_threshold

    need_extra("web", "pasur serve")

    fix_mmap_threshold()  # a server runs for weeks: set before anything large is loaded and freed
    import uvicorn

    from pasur.web.app import create_app

    path = db or default_db()
    if path.is_dir():
        raise PasurInputError(f"--db {path}: is a folder; give a file")
    make_parents(path, "--db")  # a file where a folder must be: one line, naming it
    hosts = served_hosts(host, allow_host or [])
    _check_port(host, port)
    try:
        web = create_app(path, allow_seeds=allow_seeds, allowed_hosts=hosts)
    except sqlite3.Error as e:
        raise PasurInputError(f"--db {path}: {e}") from None
    except OSError as e:
        raise PasurInputError(f"--db {path}: {e.strerror or e}") from None
    note(f"pasur: serving on http://{host}:{port}/ (games in {path}; answers to Host {', '.join(hosts)}); Ctrl-C stops")
    uvicorn.run(web, host=host, port=port, log_level="warning" if quiet else "info", access_log=not quiet)
    web.state.service.store.close_all()  # uvicorn's shutdown did it too: the file alone holds every game


@command(app, name="web-load")
def web_load(
    tables: Annotated[int, typer.Option("--tables", min=1, max=1000, help="Tables played at once.")] = 100,
    target: Annotated[
        int, typer.Option("--target", min=1, max=1000, help="Each table plays a match to this many points.")
    ] = 62,
    timeout: Annotated[float, typer.Option("--timeout", min=1, max=3600, help="Seconds any one wait may take.")] = 120,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the figures to this JSON file.")] = None,
) -> None:
    """Load test of the tables for two people on 127.0.0.1: a real server on a temporary database,
    N tables of two simulated players over WebSockets, each playing a whole match at once; prints
    tables, moves, errors, lost and duplicated moves (0 when all is well), move latency and wall
    time. Exits 1 if any move was lost, duplicated or refused."""
    import json
    import tempfile

    need_extra("web", "pasur web-load")
    from pasur.web.loadtest import server
    from pasur.web.tableload import run_table_load

    if json_out is not None:
        make_parents(json_out, "--json")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "tables.sqlite3"
        with server(db, levels={"greedy": "greedy"}) as base:
            report = run_table_load(base, db, tables, target, timeout=timeout)
    summary = report.summary()
    text = json.dumps(summary, indent=1)
    print(text)
    if json_out is not None:
        json_out.write_text(text + "\n")
    bad = summary["errors"] or summary["lost_moves"] or summary["duplicated_moves"] or summary["mismatched_moves"]
    if bad:
        note(f"problems: {(report.errors + report.problems)[:5]}")
        raise typer.Exit(1)


def _check_arena_folders(folders, root: Path, *, given: bool) -> None:
    """Refuse, before any work, arena folders without their files: by default the committed ones
    of a checkout of the repository, which an installed package does not have."""
    from pasur.web.level_card import arena_path

    missing = [str(f) for f in folders if not all((arena_path(f, root) / n).is_file() for n in ARENA_FILES)]
    if not missing or given:  # (a folder given with --arena is refused by build_card, naming it)
        return
    raise PasurInputError(
        f"web-levels reads the arena results committed in a checkout of the repository ({', '.join(ARENA_FILES)} "
        f"in {', '.join(missing)}), not found under {root}: run it in a checkout, or give --arena FOLDER"
    )


#: what an arena output folder holds that the levels' card is fitted from
ARENA_FILES = ("results.json", "deals.csv")


@command(app, name="web-levels")
def web_levels(
    arena: Annotated[
        list[str] | None,
        typer.Option(
            "--arena",
            help="An arena output folder (results.json, deals.csv), relative to the repository; repeat "
            "for more (default: the committed ones the shipped card names).",
        ),
    ] = None,
    write: Annotated[
        bool, typer.Option("--write", help="Rewrite the card shipped with the package (src/pasur/web/level-card.json).")
    ] = False,
    out: Annotated[Path | None, typer.Option("--out", help="Write the card to this file instead.")] = None,
) -> None:
    """The AI levels' card: fixed ratings fitted from the arena results, and each level's margin
    over the next weaker one. Prints it; with --write or --out, writes it (the server, the ladder
    and `pasur play --help` read the shipped card)."""
    import json

    from pasur.web import level_card
    from pasur.web.level_card import ARENA_FOLDERS, CARD, build_card, write_card

    if write and out is not None:
        raise PasurInputError("give --write or --out, not both")
    _check_arena_folders(arena or ARENA_FOLDERS, level_card.REPO, given=bool(arena))
    if out is not None:
        make_parents(out, "--out")
    try:
        card = build_card(arena or ARENA_FOLDERS, root=level_card.REPO)
    except (ValueError, KeyError) as e:
        raise PasurInputError(str(e)) from None
    typer.echo(json.dumps(card, indent=1, ensure_ascii=False))
    if write or out is not None:
        write_card(card, CARD if out is None else out)
