"""The AI levels' card shipped with the package: the fit of the committed arena results it names,
read by the server without ``results/`` (an installed wheel), and shown to players."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pasur.cli import app
from pasur.web.level_card import (
    ARENA_FOLDERS,
    CARD,
    REPO,
    build_card,
    level_margins,
    load_card,
    margin_text,
    margins_help,
)
from pasur.web.levels import LEVELS
from pasur.web.players import LevelBoard

runner = CliRunner()


def test_the_shipped_card_is_the_fit_of_the_committed_arenas():
    card = load_card()
    assert [s["folder"] for s in card["sources"]] == list(ARENA_FOLDERS)
    for source in card["sources"]:  # the files are the ones the card was fitted from
        for name, digest in source["files"].items():
            assert hashlib.sha256((REPO / source["folder"] / name).read_bytes()).hexdigest() == digest
    assert build_card() == card  # refitted here: rerun `pasur web-levels --write` after a new arena


def test_every_level_is_rated_and_every_level_has_its_margin_over_the_one_below():
    card = load_card()
    assert [r["level"] for r in card["levels"]] == list(LEVELS)
    assert all(r["agent"] == LEVELS[r["level"]] for r in card["levels"])
    anchor = next(r for r in card["levels"] if r["level"] == card["anchor"])
    assert (anchor["rating"], anchor["rd"]) == (card["anchor_rating"], 0.0)
    names = list(LEVELS)
    assert [(m["level"], m["over"]) for m in card["margins"]] == list(zip(names[1:], names[:-1], strict=True))


def test_a_margin_is_the_arena_pair_with_the_most_deals_signed_for_the_stronger_level(tmp_path):
    src = REPO / "results" / "arena-20"
    small = tmp_path / "small"
    small.mkdir()
    for f in ("results.json", "deals.csv"):
        shutil.copy(src / f, small / f)
    results = json.loads((small / "results.json").read_text())
    pair = next(p for p in results["pairs"] if {p["a"], p["b"]} == {"heuristic", "pimc:20"})
    levels = {"heuristic": "heuristic", "pimc": "pimc:20"}
    card = build_card([small], levels=levels)
    (m,) = card["margins"]
    sign = 1 if pair["a"] == "pimc:20" else -1
    assert (m["level"], m["over"], m["deals"]) == ("pimc", "heuristic", pair["deals"])
    assert m["margin"] == pytest.approx(sign * pair["margin"], abs=5e-4)
    assert m["ci95"][0] <= m["margin"] <= m["ci95"][1]
    # the stronger level first whatever the arena's order: the same pair, listed the other way round
    pair["a"], pair["b"], pair["margin"] = pair["b"], pair["a"], -pair["margin"]
    pair["ci95"] = [-pair["ci95"][1], -pair["ci95"][0]]
    flipped = tmp_path / "flipped"
    flipped.mkdir()
    (flipped / "results.json").write_text(json.dumps(results))
    shutil.copy(src / "deals.csv", flipped / "deals.csv")
    assert _margins_of(flipped, levels) == [(m["level"], m["over"], m["margin"], m["ci95"])]


def _margins_of(folder: Path, levels: dict) -> list:
    from pasur.web.level_card import _margins

    return [(r["level"], r["over"], r["margin"], r["ci95"]) for r in _margins([folder], levels, [str(folder)])]


def test_a_board_reads_the_card_without_results(tmp_path):
    card = tmp_path / "card.json"
    shutil.copy(CARD, card)
    shipped = {r["level"]: r for r in load_card()["levels"]}
    board = LevelBoard(LEVELS, card=card)
    for name, row in shipped.items():
        f = board.rating(name)
        assert (f.rating, f.se_robust, f.se, f.games) == (row["rating"], row["rd"], row["se"], row["hands"])
    assert board.json()["unrated"] == [] and board.json()["source"]["folders"] == list(ARENA_FOLDERS)
    # a level played by another agent than the one the card measured has no rating
    other = LevelBoard({**LEVELS, "pimc": "pimc:60"}, card=card)
    assert other.rating("pimc") is None and other.json()["unrated"] == ["pimc"]
    assert other.rating("best") is not None


def test_a_damaged_card_leaves_the_levels_unrated(tmp_path):
    card = tmp_path / "card.json"
    card.write_text('{"levels": [{"level": "greedy", "agent": "greedy", "rating": NaN, "rd": 0}]}')
    board = LevelBoard(LEVELS, card=card)
    assert board.fitted() == {} and "bad level row" in board.error
    assert level_margins(LEVELS, path=tmp_path / "missing.json") == {}


def test_margins_are_given_only_for_neighbouring_levels_of_the_same_agents():
    shipped = {m["level"]: m for m in load_card()["margins"]}
    assert set(level_margins(LEVELS)) == set(shipped)
    fast = {"random": "random", "greedy": "greedy", "heuristic": "heuristic"}
    assert set(level_margins(fast)) == {"greedy", "heuristic"}
    # results/arena-prereg-levels: heuristic over greedy +5.521 [+5.024, +6.018], 600 deals (docs/web.md)
    assert level_margins(fast)["heuristic"] == {"over": "greedy", "margin": 5.521, "ci95": [5.024, 6.018], "deals": 600}
    assert set(level_margins({"random": "random", "heuristic": "heuristic"})) == set()  # not neighbours there
    assert "pimc" not in level_margins({**fast, "pimc": "pimc:60"})


def test_the_levels_endpoint_and_play_help_show_the_margins(make_client):
    body = make_client().get("/api/levels").json()
    assert body["margins"] == level_margins({"random": "random", "greedy": "greedy", "heuristic": "heuristic"})
    text = margins_help()
    for m in load_card()["margins"]:
        assert f"{m['level']}: {margin_text(m)}" in text
    help_text = " ".join(runner.invoke(app, ["play", "--help"], env={"COLUMNS": "200"}).output.split())
    assert re.sub(r"[\s│]+", " ", text) in re.sub(r"[\s│]+", " ", help_text)


def test_web_levels_writes_a_card_and_refuses_bad_input(tmp_path):
    out = tmp_path / "card.json"
    r = runner.invoke(app, ["web-levels", "--arena", "results/arena-20", "--out", str(out)])
    assert r.exit_code == 0, r.output
    card = json.loads(out.read_text())
    # results/arena-20 alone: greedy, heuristic and pimc:20, 20 deals a pair, two hands a deal
    assert [(r["level"], r["agent"], r["hands"]) for r in card["levels"]] == [
        ("greedy", "greedy", 80),
        ("heuristic", "heuristic", 80),
        ("pimc", "pimc:20", 80),
    ]
    assert card["levels"][0]["rating"] == 1500.0 and card["levels"][1]["rating"] > 1500.0  # 30 won, 9 lost
    # the one margin between neighbouring levels there: results.json's heuristic v greedy pair
    assert card["margins"] == [
        {"level": "heuristic", "agent": "heuristic", "over": "greedy", "over_agent": "greedy", "margin": 8.2,
         "ci95": [5.475, 10.925], "deals": 20, "source": "results/arena-20"}
    ]  # fmt: skip
    files = card["sources"][0]["files"]
    for name in ("results.json", "deals.csv"):
        assert files[name] == hashlib.sha256((REPO / "results" / "arena-20" / name).read_bytes()).hexdigest()
    bad = runner.invoke(app, ["web-levels", "--arena", "results/no-such-arena", "--out", str(tmp_path / "x.json")])
    assert bad.exit_code == 2 and bad.output.strip().startswith("error: no arena results in results/no-such-arena")
    assert len(bad.output.strip().splitlines()) == 1 and not (tmp_path / "x.json").exists()
    both = runner.invoke(app, ["web-levels", "--write", "--out", str(out)])
    assert both.exit_code == 2 and "not both" in both.output


def test_arena_folders_are_found_from_the_package_whatever_the_working_directory(tmp_path, monkeypatch):
    """Issue 46, item 9: relative arena folders are the repository's, not the working directory's
    (a server started elsewhere fitted nothing)."""
    monkeypatch.chdir(tmp_path)
    fast = {"random": "random", "greedy": "greedy", "heuristic": "heuristic"}
    board = LevelBoard(fast, folders=["results/arena-20"])
    assert set(board.fitted()) == {"greedy", "heuristic"} and board.error is None
    assert [r["level"] for r in build_card(["results/arena-20"], levels=fast)["levels"]] == ["greedy", "heuristic"]
