"""``pasur poker``: games, info, solve (outputs, JSON keys), eval; one-line errors."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pyspiel
import pytest
from poker_cli import root
from typer.testing import CliRunner

runner = CliRunner()


def run(*args: str):
    return runner.invoke(root, ["poker", *args])


def test_games_lists_every_preset():
    r = run("games", "--json")
    assert r.exit_code == 0, r.output
    rows = {g["game"]: g for g in json.loads(r.stdout)}
    assert rows["numeral211"]["hands_per_round"] == [780, 29_640, 1_096_680]
    assert rows["leduc"]["infosets_total"] == 936
    assert rows["kuhn"]["infosets_total"] == 12
    assert "numeral211" in run("games").stdout


def test_info_of_a_game():
    r = run("info", "leduc", "--json")
    assert r.exit_code == 0, r.output
    i = json.loads(r.stdout)
    assert i["infosets"] == [468, 468] and i["openspiel"] == "leduc_poker"
    r = run("info", "numeral211-tiny", "--abstraction", "iso,ehs:4,ehs:5")
    assert r.exit_code == 0, r.output
    assert "[16, 4, 5] keys" in r.stdout  # 4 pairs, 6 suited, 6 offsuit rank pairs


def test_solve_writes_outputs_and_json(tmp_path):
    out = tmp_path / "run"
    r = run("solve", "--game", "kuhn", "--method", "cfr+", "--iterations", "200", "--check-every", "50")
    assert r.exit_code == 0, r.output
    r = run("solve", "--game", "kuhn", "--iterations", "100", "--check-every", "50", "--out", str(out), "--json", "-q")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert {"game", "method", "iterations", "value", "exploitability", "nash_conv", "seconds"} <= set(s)
    assert s["game"] == "kuhn" and s["method"] == "cfr+" and s["iterations"] == 100
    names = {p.name for p in out.iterdir()}
    assert {"strategy.parquet", "summary.json", "trace.parquet", "convergence.png", "policy.openspiel.json"} <= names
    # the numbers against OpenSpiel's, on the written policy read back: its exploitability (NashConv / 2)
    # and NashConv, and the policy's value against Kuhn's known game value, -1/18 for player 0
    # (the value of any policy is within its NashConv of the game value)
    theirs = _openspiel_numbers(out / "policy.openspiel.json", "kuhn_poker")
    assert s["exploitability"] == pytest.approx(theirs["exploitability"], abs=1e-12)
    assert s["nash_conv"] == pytest.approx(theirs["nash_conv"], abs=1e-12)
    assert s["value"] == pytest.approx(theirs["value"], abs=1e-12)
    assert 0 < s["nash_conv"] < 0.01 and abs(s["value"] + 1 / 18) <= s["nash_conv"]
    for f in ("strategy.parquet", "policy.openspiel.json"):
        e = run("eval", str(out / f), "--game", "kuhn", "--json", "-q")
        assert e.exit_code == 0, e.output
        assert json.loads(e.stdout)["exploitability"] == pytest.approx(theirs["exploitability"], abs=1e-12)


def _openspiel_numbers(path, game: str) -> dict:
    """OpenSpiel's exploitability, NashConv and player 0's value of a policy file written by
    ``--out`` (read as plain JSON here, evaluated by OpenSpiel's C++ best responses)."""
    data = json.loads(path.read_text())
    assert data["game"] == game
    table = {k: [(int(a), float(p)) for a, p in pairs] for k, pairs in data["policy"].items()}
    g = pyspiel.load_game(game)
    policy = pyspiel.TabularPolicy(table)

    def value(state) -> float:
        if state.is_terminal():
            return state.returns()[0]
        if state.is_chance_node():
            return sum(p * value(state.child(a)) for a, p in state.chance_outcomes())
        probs = dict(table[state.information_state_string()])
        return sum(probs[a] * value(state.child(a)) for a in state.legal_actions() if probs[a] > 0)

    return {
        "exploitability": pyspiel.exploitability(g, policy),
        "nash_conv": pyspiel.nash_conv(g, policy),
        "value": value(g.new_initial_state()),
    }


def _trace(path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def test_solve_to_a_target_stops_at_the_first_check_that_meets_it(tmp_path):
    """Leduc to exploitability 0.05, measured every 10 iterations: OpenSpiel's exploitability of
    the written policy is at most 0.05 (and is the summary's), the run took more than one check,
    and a rerun stopped one check earlier, measured by OpenSpiel too, is above 0.05; so the run
    stopped because the target was met, at the first check that met it."""
    out, before = tmp_path / "target", tmp_path / "before"
    r = run("solve", "--game", "leduc", "--target-exploitability", "0.05", "--check-every", "10", "--out", str(out),
            "--json", "-q")  # fmt: skip
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    n = s["iterations"]
    theirs = _openspiel_numbers(out / "policy.openspiel.json", "leduc_poker")
    assert theirs["exploitability"] <= 0.05 and s["exploitability"] == pytest.approx(theirs["exploitability"])
    assert n > 10 and n % 10 == 0, n
    assert [p["iteration"] for p in _trace(out / "trace.parquet")] == list(range(10, n + 1, 10))
    r = run("solve", "--game", "leduc", "--iterations", str(n - 10), "--check-every", "10", "--out", str(before), "-q")
    assert r.exit_code == 0, r.output
    assert _openspiel_numbers(before / "policy.openspiel.json", "leduc_poker")["exploitability"] > 0.05


def test_solve_to_a_target_with_an_abstraction(tmp_path):
    """A target on an abstraction: the written strategy, read back and measured in the real game
    without suit isomorphism (another tree than the solve's), is at the summary's exploitability,
    at most the target, after more than one check; a rerun one check shorter is above the target."""
    out, before = tmp_path / "target", tmp_path / "before"
    common = ["--game", "numeral211-tiny", "--method", "dcfr", "--abstraction", "iso,ehs:4,ehs:5"]
    r = run("solve", *common, "--target-exploitability", "5", "--check-every", "5", "--out", str(out), "--json", "-q")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["abstraction"] == "iso,ehs:4,ehs:5" and s["suit_isomorphism"] is True

    def measured(folder) -> dict:
        e = run("eval", str(folder / "strategy.parquet"), "--game", "numeral211-tiny", "--no-iso",
                "--abstraction", "iso,ehs:4,ehs:5", "--json", "-q")  # fmt: skip
        assert e.exit_code == 0, e.output
        return json.loads(e.stdout)

    again = measured(out)
    assert again["exploitability"] <= 5 and again["exploitability"] == pytest.approx(s["exploitability"], rel=1e-9)
    assert again["nash_conv"] == pytest.approx(s["nash_conv"], rel=1e-9)
    br = again["best_response_values"]  # NashConv is the two best-response gains, from their values
    assert br[0] + br[1] == pytest.approx(s["nash_conv"], rel=1e-9)
    n = s["iterations"]
    assert n > 5 and [p["iteration"] for p in _trace(out / "trace.parquet")] == list(range(5, n + 1, 5))
    r = run("solve", *common, "--iterations", str(n - 5), "--check-every", "5", "--out", str(before), "-q")
    assert r.exit_code == 0, r.output
    assert measured(before)["exploitability"] > 5
    # mb/g with the game's big blind, its 5-chip ante (docs/conventions.md)
    assert s["big_blind"] == 5 and s["exploitability_mbg"] == pytest.approx(200 * again["exploitability"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "--game", "holdem", "--iterations", "1"], "unknown game"),
        (["solve", "--game", "kuhn", "--method", "cfr2", "--iterations", "1"], "unknown method"),
        (["solve", "--game", "kuhn"], "give --iterations"),
        (["solve", "--game", "kuhn", "--iterations", "1", "--alpha", "2"], "--alpha applies only to --method dcfr"),
        (["solve", "--game", "kuhn", "--iterations", "1", "--target-exploitability", "-1"], "positive"),
        (["solve", "--game", "kuhn", "--iterations", "1", "--abstraction", "ehs:2,ehs:3"], "one item per round"),
        (["solve", "--game", "kuhn", "--iterations", "1", "--device", "tpu"], "device"),
        (["solve", "--game", "kuhn", "--iterations", "1", "--updates", "both"], "updates"),
        (["eval", "missing.parquet", "--game", "kuhn"], "not found"),
        (["info", "nope"], "unknown game"),
    ],
)
def test_bad_input_is_refused_in_one_line(args, message):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert r.output.count("\n") == 1 and r.output.startswith("error: ")


def test_eval_refuses_a_file_of_another_game(tmp_path):
    out = tmp_path / "run"
    assert (
        run("solve", "--game", "leduc", "--iterations", "2", "--check-every", "2", "--out", str(out), "-q").exit_code
        == 0
    )
    r = run("eval", str(out / "strategy.parquet"), "--game", "leduc5")
    assert r.exit_code == 2 and "another game" in r.output
    r = run("eval", str(out / "policy.openspiel.json"), "--game", "numeral211-tiny")
    assert r.exit_code == 2 and "no OpenSpiel counterpart" in r.output
    again = run("solve", "--game", "leduc", "--iterations", "2", "--out", str(out), "-q")
    assert again.exit_code == 2 and "exists already" in again.output


def test_info_and_solve_on_the_strength_classes():
    r = run("info", "numeral211", "--abstraction", "strength")
    assert r.exit_code == 0, r.output
    assert "classes per round (strength): 100 / 2,250 / 3,957" in r.stdout  # the paper's counts
    r = run("solve", "--game", "numeral211-tiny", "--iterations", "4", "--abstraction", "strength", "--json", "-q")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["abstraction"] == "strength" and s["exploitability"] > 0
    r = run("solve", "--game", "numeral211-tiny", "--iterations", "1", "--abstraction", "strength", "--no-iso")
    assert r.exit_code == 2 and "iso=True" in r.stderr, r.output


def test_the_game_and_the_strategy_take_either_form(tmp_path):
    """`info GAME` or `info --game GAME` (as `solve --game`); `eval FILE` or `eval --strategy FILE`;
    both forms at once, or neither, are one-line errors."""
    as_arg, as_opt = run("info", "leduc", "--json"), run("info", "--game", "leduc", "--json")
    assert as_arg.exit_code == as_opt.exit_code == 0, as_opt.output
    assert json.loads(as_arg.stdout) == json.loads(as_opt.stdout)
    assert json.loads(as_opt.stdout)["infosets_total"] == 936  # Leduc's 936 information sets
    out = tmp_path / "k"
    assert run("solve", "--game", "kuhn", "--iterations", "20", "--out", str(out), "-q").exit_code == 0
    table = str(out / "strategy.parquet")
    a = json.loads(run("eval", table, "--game", "kuhn", "--json", "-q").stdout)
    b = json.loads(run("eval", "--strategy", table, "--game", "kuhn", "--json", "-q").stdout)
    assert a == b and a["nash_conv"] > 0
    for args, needle in [
        (["info", "leduc", "--game", "kuhn"], "not both"),
        (["info"], "GAME or --game"),
        (["eval", table, "--strategy", table, "--game", "kuhn"], "not both"),
        (["eval", "--game", "kuhn"], "FILE or --strategy"),
        (["eval", table], "--game NAME"),
    ]:
        r = run(*args)
        lines = r.stderr.strip().splitlines()
        assert r.exit_code == 2 and len(lines) == 1 and needle in lines[0], (args, r.stderr)


def test_a_solve_that_cannot_fit_is_refused_before_the_engine_is_built(monkeypatch):
    """Numeral211 lossless needs gigabytes: under --memory-limit 4 it is refused in one line
    naming the estimate and what would fit, before the engine (whose tables alone are gigabytes)
    is built; the estimate is the tables of game_info plus the measured base; a game that fits
    solves under the same limit."""
    from pasur.poker import engine as engine_module
    from pasur.poker.games import get_game
    from pasur.poker.sizes import BASE_BYTES, game_info, solve_estimate

    def no_engine(*a, **k):
        raise AssertionError("the engine was built before the memory check")

    monkeypatch.setattr(engine_module.Engine, "__init__", no_engine)
    r = run("solve", "--game", "numeral211", "--iterations", "1", "--memory-limit", "4")
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    g = get_game("numeral211")
    need64, need32 = (game_info(g, itemsize=k)["solve_bytes"] + BASE_BYTES for k in (8, 4))
    assert need64 == solve_estimate(g) and need64 > 12 * 2**30
    assert f"needs about {need64 / 2**30:.2f} GiB, over 4.00 GiB (--memory-limit)" in r.output
    assert f"--dtype float32 needs about {need32 / 2**30:.2f} GiB (too)" in r.output and "--abstraction" in r.output
    monkeypatch.undo()
    ok = run("solve", "--game", "kuhn", "--iterations", "3", "--memory-limit", "4", "--json", "-q")
    assert ok.exit_code == 0 and json.loads(ok.output)["iterations"] == 3
    bad = run("solve", "--game", "kuhn", "--iterations", "1", "--memory-limit", "0")
    assert bad.exit_code == 2 and "--memory-limit must be a positive" in bad.output


def test_solve_reports_progress_after_every_iteration():
    from pasur.poker.engine import Engine
    from pasur.poker.games import get_game
    from pasur.poker.run import solve
    from pasur.poker.solvers import CFRConfig

    calls = []
    res = solve(
        Engine(get_game("kuhn")), CFRConfig(), iterations=5, check_every=2, progress=lambda d, e: calls.append((d, e))
    )
    assert [d for d, e in calls if e is None] == [1, 2, 3, 4, 5]
    measured = [(d, e) for d, e in calls if e is not None]
    assert [d for d, _ in measured] == [2, 4, 5] and measured[-1][1] == res.exploitability
