"""A bounded load test on 127.0.0.1: 50 games at once against a real uvicorn server, played to
the end through the API with a fast AI; no error, and nothing lost in the database.

No time is asserted (issue 46: 120 s allowances failed a correct server on a busy machine): every
request waits for its answer however long the machine takes, and the loops are bounded by count.
A server that hangs is bounded by its own stop (``PASUR_LOADTEST_MAX_S``, :data:`SERVER_LIFE_S`):
it exits, every open request fails, and the test reports the errors."""

from __future__ import annotations

import pytest

from pasur.web.loadtest import GameRun, check_database, run_load, server
from pasur.web.store import Store

GAMES = 50
#: seconds the test's server lives at most (a hang ends in errors, not in a stuck suite)
SERVER_LIFE_S = "900"


@pytest.fixture(autouse=True)
def _bounded_server(monkeypatch):
    monkeypatch.setenv("PASUR_LOADTEST_MAX_S", SERVER_LIFE_S)


def test_fifty_concurrent_games_to_the_end(tmp_path):
    db = tmp_path / "load.sqlite3"
    with server(db, levels={"greedy": "greedy", "random": "random"}, timeout=None) as base:
        report = run_load(base, GAMES, level="greedy", timeout=None)
    assert report.errors == []
    summary = report.summary()
    assert summary["finished"] == GAMES and summary["moves"] == 24 * GAMES
    assert Store(db).count() == GAMES
    assert check_database(db, report.runs) == []


@pytest.mark.allow_seeds
def test_the_database_check_finds_what_is_wrong(client, db):
    """The check itself: a lost game, a tampered result and a result the client did not see."""
    runs = []
    for seed in range(3):
        view = client.post("/api/games", json={"level": "greedy", "seed": seed}).json()
        run = GameRun(view["id"], view["token"])
        while view["status"] == "playing":
            a = view["hand"]["legal"][0]
            body = {"card": a["card"], "captured": a["captured"]}
            view = client.post(f"/api/games/{run.id}/moves", json=body, headers={"X-Pasur-Token": run.token}).json()
        run.status, run.points = view["status"], view["result"]["points"]
        runs.append(run)
    assert check_database(db, runs) == []
    store = Store(db)
    a, b, c = runs
    row = store.get(b.id)
    row.hands[0]["result"]["card_points"][0] += 1
    store.update(row)
    with store.transaction() as conn:
        conn.execute("DELETE FROM games WHERE id = ?", (a.id,))
    c.points = [99, 99]
    problems = check_database(db, runs)
    assert len(problems) == 3
    assert "not in the database" in problems[0] and "stored result" in problems[1] and "client saw" in problems[2]


def test_tables_of_two_players_over_websockets_lose_no_move(tmp_path):
    """The tables' load test, small: 4 matches of two simulated players at once over real
    WebSockets; every stored move reached both players exactly once (timings are not asserted)."""
    from pasur.web.tableload import run_table_load

    db = tmp_path / "tables.sqlite3"
    with server(db, levels={"greedy": "greedy"}, timeout=None) as base:
        report = run_table_load(base, db, tables=4, target=25, timeout=None)
    s = report.summary()
    assert report.errors == [] and report.problems == []
    assert s["finished"] == 4 and s["errors"] == 0
    assert s["lost_moves"] == s["duplicated_moves"] == s["mismatched_moves"] == 0
    assert s["moves"] >= 4 * 48 and s["moves"] % 48 == 0
    # each player saw every move: two receipts of each stored move
    assert sum(len(p.seen) for r in report.runs for p in r.players) == 2 * s["moves"]


def test_the_tables_check_counts_lost_duplicated_and_mismatched_moves(tmp_path):
    from pasur.web.tableload import PlayerRun, TableLoadReport, TableRun, check_tables, run_table_load

    db = tmp_path / "tables.sqlite3"
    with server(db, levels={"greedy": "greedy"}, timeout=None) as base:
        report = run_table_load(base, db, tables=1, target=1, timeout=None)
    run = report.runs[0]
    seen = run.players[0].seen
    tampered = [seen[0], seen[0], *seen[2:-1], (seen[-1][0], seen[-1][1], "XX")]  # dup, lost, wrong card
    fake = TableLoadReport(1, 1, [TableRun(run.id, (PlayerRun(tampered), run.players[1]))], 0.0)
    check_tables(db, fake)
    assert (fake.duplicated, fake.lost, fake.mismatched) == (1, 1, 1)
    assert fake.problems == []
