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
    cmd += ["--allow-host", "pasur.example"]
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
        # only the names it is served as (issue 24: DNS rebinding)
        for host, status in [
            ("localhost", 200),
            (f"127.0.0.1:{port}", 200),
            ("pasur.example", 200),
            ("evil.example", 400),
        ]:
            assert httpx.get(base + "/api/health", headers={"Host": host}).status_code == status, host
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "serving on http://127.0.0.1" in proc.stderr.read().decode()
    # stopped: the game is in the file, as it was after the last answer; the file alone holds it
    # (issue 24: after a clean shutdown the games sat in the -wal file, lost to a copy of the file)
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    copy = tmp_path / "copy" / db.name
    copy.parent.mkdir()
    copy.write_bytes(db.read_bytes())
    row = Store(copy).get(g["id"])
    assert row is not None and len(row.hands[0]["moves"]) == after.json()["hand"]["moves_played"] == 2


def test_serve_refuses_a_database_of_another_program_in_one_line(tmp_path, monkeypatch):
    """Issue 24: ``--db`` on another program's SQLite file added the app's tables to it."""
    import sqlite3

    import uvicorn

    def served(*args, **kwargs):  # were it accepted, the test ends here instead of serving forever
        raise AssertionError("the database was accepted")

    monkeypatch.setattr(uvicorn, "run", served)

    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE people (name TEXT)")
    before = other.read_bytes()
    r = runner.invoke(app, ["serve", "--db", str(other), "--port", str(free_port())])
    assert r.exit_code == 2 and r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1
    assert "not a pasur games database" in r.stderr
    assert other.read_bytes() == before
    text = tmp_path / "notes.txt"  # not SQLite at all
    text.write_text("my notes\n" * 200)
    r = runner.invoke(app, ["serve", "--db", str(text), "--port", str(free_port())])
    assert r.exit_code == 2 and r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1
    assert text.read_text() == "my notes\n" * 200


def test_serve_says_when_a_parent_of_the_database_is_a_file(tmp_path):
    """Issue 24: ``--db /etc/passwd/games.sqlite3`` said "File exists"."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    for db in (afile / "games.sqlite3", afile / "sub" / "games.sqlite3"):
        r = runner.invoke(app, ["serve", "--db", str(db), "--port", str(free_port())])
        assert r.exit_code == 2 and r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1
        assert f"{afile} is a file, not a folder" in r.stderr and "File exists" not in r.stderr, r.stderr


def test_the_hosts_served_as():
    from pasur.cli.web import served_hosts

    assert set(served_hosts("127.0.0.1", [])) == {"127.0.0.1", "localhost", "::1"}
    assert set(served_hosts("localhost", [])) == {"127.0.0.1", "localhost", "::1"}
    assert served_hosts("192.168.1.5", []) == ["192.168.1.5"]
    assert served_hosts("192.168.1.5", ["pasur.home"]) == ["192.168.1.5", "pasur.home"]
    r = runner.invoke(app, ["serve", "--allow-host", "a/b", "--port", str(free_port())])
    assert r.exit_code == 2 and "--allow-host" in r.stderr
