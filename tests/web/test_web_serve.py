"""``pasur serve``: its options, and the real server started from the command line."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
from typer.testing import CliRunner

import pasur.cli.web  # noqa: F401  (registers ``serve`` wherever the CLI's module list stands)
from pasur.cli import app
from pasur.cli.web import default_db
from pasur.web.loadtest import free_port
from pasur.web.store import Store

runner = CliRunner()


def test_serve_refuses_bad_options(tmp_path):
    for args, msg in [
        (["--port", "0"], "--port"),
        (["--port", "70000"], "--port"),
        (["--db", str(tmp_path)], "is a folder"),
        (["--host", "no.such.host.invalid"], "--host"),
    ]:
        r = runner.invoke(app, ["serve", *args])
        assert r.exit_code == 2 and r.stderr.startswith("error: ") and msg in r.stderr, r.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = runner.invoke(app, ["serve", "--port", str(port), "--db", str(tmp_path / "g.db")])
        assert r.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in r.stderr


def test_serve_refuses_a_database_of_another_schema(tmp_path):
    import sqlite3

    db = tmp_path / "old.sqlite3"
    Store(db)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE meta SET value = '999' WHERE key = 'schema'")
    r = runner.invoke(app, ["serve", "--db", str(db), "--port", str(free_port())])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: ") and "schema 999" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_default_db_is_under_the_user_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db() == tmp_path / "pasur" / "games.sqlite3"


def test_serve_serves_the_page_and_keeps_its_games_in_the_database(tmp_path):
    db = tmp_path / "games.sqlite3"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    code = "import sys, pasur.cli.web; from pasur.cli import main; sys.argv[0] = 'pasur'; main()"
    cmd = [sys.executable, "-c", code, "serve", "--port", str(port), "--db", str(db), "--quiet", "--allow-seeds"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(300):
            assert proc.poll() is None, proc.stderr.read().decode()
            try:
                if httpx.get(base + "/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        assert "Pasur" in httpx.get(base + "/").text
        g = httpx.post(base + "/api/games", json={"level": "greedy", "seed": 3}).json()
        a = g["hand"]["legal"][0]
        move = {"card": a["card"], "captured": a["captured"]}
        after = httpx.post(f"{base}/api/games/{g['id']}/moves", json=move, headers={"X-Pasur-Token": g["token"]})
        assert after.status_code == 200, after.text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "serving on http://127.0.0.1" in proc.stderr.read().decode()
    # stopped: the game is in the file, as it was after the last answer
    row = Store(db).get(g["id"])
    assert row is not None and len(row.hands[0]["moves"]) == after.json()["hand"]["moves_played"] == 2
