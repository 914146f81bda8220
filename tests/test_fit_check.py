"""``pasur fit``'s play check (issue 47): the model against its table where play goes, and the
one-line warning when the model cannot keep the table's strength."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pasur.cli import app
from pasur.learn.check import MIN_PLAY_AGREEMENT, TOLERANCE_POINTS, check_verdict


def _check(alex_gap_ci: tuple, bob_gap_ci: tuple, agreement: float) -> dict:
    seat = lambda lo, hi: {"table": 10.0, "model": 10.0 - (lo + hi) / 2, "gap": (lo + hi) / 2, "ci95": [lo, hi]}  # noqa: E731
    return {
        "games": 1000,
        "seats": {"alex": seat(*alex_gap_ci), "bob": seat(*bob_gap_ci)},
        "play_decisions": 5000,
        "play_agreement": agreement,
    }


def test_the_verdict_warns_only_where_the_model_is_measurably_weaker_or_disagrees():
    ok = MIN_PLAY_AGREEMENT + 0.05
    assert check_verdict(_check((-0.3, 0.5), (0.2, 1.4), ok)) is None  # within the tolerance's reach
    weaker = check_verdict(_check((-0.3, 0.5), (TOLERANCE_POINTS + 0.1, 3.0), ok))
    assert weaker.startswith("warning: the model plays weaker than its table") and "as bob +2.05" in weaker
    assert "\n" not in weaker
    disagrees = check_verdict(_check((-0.3, 0.5), (-0.3, 0.5), MIN_PLAY_AGREEMENT - 0.01))
    assert disagrees is not None and f"{MIN_PLAY_AGREEMENT - 0.01:.1%}" in disagrees


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """Seed 36's DCFR solve, one for the module (the tests only read it): its folder."""
    out = tmp_path_factory.mktemp("solved") / "s"
    r = CliRunner().invoke(app, ["solve", "--seed", "36", "--method", "dcfr", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_fit_checks_the_model_in_play_and_warns_in_one_line_when_it_is_weak(tmp_path, solved):
    """A one-split model of a whole deal's table plays nothing like it: the fit says so on one
    line of stderr with the measured gaps, and the card keeps the check; a model of the default
    settings (trained on every row at once) on the same table is within the tolerance and gets
    no warning."""
    runner = CliRunner()
    table = str(solved / "strategy.parquet")
    args = ["fit", table, "--check-games", "400", "--json"]
    weak = runner.invoke(app, [*args, "--out", str(tmp_path / "weak.ubj"), "--rounds", "1", "--max-depth", "1"])
    assert weak.exit_code == 0, weak.output
    lines = [line for line in weak.stderr.splitlines() if "warning" in line]
    assert len(lines) == 1 and lines[0].startswith(f"{table}: warning: the model plays weaker than its table")
    card = json.loads((tmp_path / "weak.card.json").read_text())
    (check,) = card["play_check"]
    assert check["games"] == 400 and check["table"] == table
    assert max(s["ci95"][0] for s in check["seats"].values()) > TOLERANCE_POINTS
    strong = runner.invoke(app, [*args, "--out", str(tmp_path / "strong.ubj"), "--validation-fraction", "0"])
    assert strong.exit_code == 0, strong.output
    assert "warning" not in strong.stderr
    (check,) = json.loads((tmp_path / "strong.card.json").read_text())["play_check"]
    assert all(s["ci95"][0] <= TOLERANCE_POINTS for s in check["seats"].values())
    assert check["play_agreement"] >= MIN_PLAY_AGREEMENT


def test_a_per_deck_model_is_refused_on_another_deck_as_its_table_is(tmp_path, solved):
    """A model fitted on one deck's table, asked to play another deck, is refused by name (its
    table would be); on its own deck it plays."""
    runner = CliRunner()
    model = tmp_path / "m.ubj"
    fit = ["fit", str(solved / "strategy.parquet"), "--out", str(model), "--rounds", "2", "--check-games", "0"]
    assert runner.invoke(app, fit).exit_code == 0
    play = ["selfplay", "--alex", f"model:{model}", "--bob", "random", "--games", "10"]
    assert runner.invoke(app, [*play, "--seed", "36"]).exit_code == 0
    other = runner.invoke(app, [*play, "--seed", "37"])
    assert other.exit_code == 2
    assert other.stderr.strip() == (
        f"error: {model}: a model of another deck's table (per-deck, seed-36); a model across decks "
        "(pasur fit A B ... --validate-on C) plays decks it never saw"
    )
    table = runner.invoke(app, [*play[:2], f"table:{solved}", *play[3:], "--seed", "37"])
    assert table.exit_code == 2 and "another deck" in table.stderr


def test_fit_refuses_what_it_would_refuse_late_before_any_work(tmp_path):
    """A table of a game's middle (play weights and the play check need a whole game), tables of two
    tree modes, and a validation deck among the training decks: one line, exit 2, nothing written."""
    from helpers import position, uniform_strategy
    from pasur.solve.strategy_io import write_strategy_table
    from pasur.solve.tree import build_tree

    start = position(3, 5, 0)
    paths = {}
    for mode in ("compact", "paper"):
        tree = build_tree(start, mode, infosets=True)
        paths[mode] = tmp_path / f"{mode}.parquet"
        write_strategy_table(paths[mode], tree, uniform_strategy(tree), "d")
    runner = CliRunner()
    out = tmp_path / "m.ubj"
    mid = runner.invoke(app, ["fit", str(paths["compact"]), "--out", str(out)])
    assert mid.exit_code == 2 and "need the table of a whole game" in mid.stderr
    assert "--check-games 0" in mid.stderr and not out.exists()
    uniform = ["--row-weights", "uniform", "--check-games", "0"]
    modes = runner.invoke(app, ["fit", str(paths["compact"]), str(paths["paper"]), "--out", str(out), *uniform])
    assert modes.exit_code == 2 and "different tree modes" in modes.stderr and not out.exists()
    same = ["fit", str(paths["compact"]), "--validate-on", str(paths["compact"]), "--out", str(out), *uniform]
    shared = runner.invoke(app, same)
    assert shared.exit_code == 2 and "validation deck is also a training deck" in shared.stderr
    ok = runner.invoke(app, ["fit", str(paths["compact"]), "--out", str(out), *uniform, "--rounds", "2"])
    assert ok.exit_code == 0 and out.exists()
