"""``--variant NAME`` on the deck options (issue 41): ``solve`` (exact, reference, CFR), ``tree-stats``,
``deal`` and ``show`` play a small rule variant's decks; the commands whose agents, models or
experiments know only the standard game refuse one in one line, before any work."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from helpers import position
from pasur.cli import app
from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck, format_cards, select_decks
from pasur.game.gamelog import GameLog
from pasur.game.state import GameState
from pasur.game.variants import get_variant
from pasur.solve.reference import ReferenceSolver
from pasur.solve.strategy_io import read_strategy_table
from pasur.solve.tree import build_tree

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def one_line_error(r, *needles: str) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def reference_value(deck: Deck) -> int:
    return ReferenceSolver(deck).value(GameState.initial(deck))


@pytest.mark.parametrize(
    ("name", "seed", "tree"), [("tiny", 3, "compact"), ("tiny", 5, "paper"), ("micro", 2, "compact")]
)
def test_exact_solve_of_a_variant_deck_is_the_reference_solvers_value(name, seed, tree):
    deck = Deck.from_seed(seed, get_variant(name))
    r = run("solve", "--variant", name, "--seed", str(seed), "--tree", tree, "--json", "--quiet")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert (out["variant"], out["deck"], out["value"]) == (name, str(deck), reference_value(deck))
    assert out["points"][0] - out["points"][1] == out["value"]  # the optimal line, replayed on the variant
    text = run("solve", "--variant", name, "--seed", str(seed), "--quiet")
    assert f"deck seed-{seed} (variant {name}): {deck}" in text.stdout
    assert f"exact value (Alex - Bob): {reference_value(deck):+d}" in text.stdout


def test_several_variant_decks_by_the_reference_method_and_by_deck_text():
    tiny = get_variant("tiny")
    r = run("solve", "--variant", "tiny", "--seed", "10", "--decks", "3", "--method", "reference", "--json", "-q")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert [row["value"] for row in rows] == [reference_value(Deck.from_seed(s, tiny)) for s in (10, 11, 12)]
    deck = Deck.from_seed(4, tiny)
    r = run("solve", "--variant", "tiny", "--deck", deck.format(unicode=True), "--json", "-q")
    assert r.exit_code == 0, r.output
    assert (json.loads(r.stdout)["deck"], json.loads(r.stdout)["value"]) == (str(deck), reference_value(deck))


def test_a_variant_deck_file_is_read_as_that_variants_decks(tmp_path):
    micro = get_variant("micro")
    decks = [Deck.from_seed(s, micro) for s in (1, 2)]
    path = tmp_path / "micro.txt"
    path.write_text("".join(f"{d}\n" for d in decks))
    r = run("solve", "--variant", "micro", "--deck-file", str(path), "--json", "-q")
    assert r.exit_code == 0, r.output
    assert [row["value"] for row in json.loads(r.stdout)] == [reference_value(d) for d in decks]
    one_line_error(run("solve", "--deck-file", str(path), "-q"), "micro.txt:1", "a deck has 52 cards, got 6")
    pt = tmp_path / "decks.pt"
    pt.write_bytes(b"")
    one_line_error(run("solve", "--variant", "micro", "--deck-file", str(pt)), "standard decks, not micro decks")


def test_cfr_solve_writes_a_table_of_the_variant_refused_on_the_standard_game(tmp_path):
    out = tmp_path / "mini"
    args = ("--variant", "mini", "--seed", "1", "--method", "dcfr", "--iterations", "200")
    r = run("solve", *args, "--out", str(out), "--json", "--quiet")
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    deck = Deck.from_seed(1, get_variant("mini"))
    assert info["variant"] == "mini" and info["deck"] == str(deck)
    assert json.loads((out / "summary.json").read_text())["variant"] == "mini"
    assert info["exact_value"] == reference_value(deck)
    assert abs(info["value"] - info["exact_value"]) <= info["nash_conv"] + 1e-4
    assert pq.read_schema(out / "strategy.parquet").metadata[b"pasur.variant"] == b"mini"
    tree = build_tree(GameState.initial(deck), "compact")
    strategy = read_strategy_table(out / "strategy.parquet", tree)  # reads back on its variant
    assert len(strategy) > 0
    with pytest.raises(PasurInputError, match="another variant than standard"):
        read_strategy_table(out / "strategy.parquet", build_tree(position(8, 4, 0), "compact"))


def test_the_standard_game_is_named_in_the_json_and_unchanged_elsewhere():
    r = run("solve", "--seed", "36", "--json", "--quiet")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["variant"] == "standard" and out["deck"] == str(Deck.from_seed(36))
    again = json.loads(run("solve", "--seed", "36", "--json", "--quiet", "--variant", "standard").stdout)
    assert {k: again[k] for k in ("deck", "value", "optimal_line")} == {
        k: out[k] for k in ("deck", "value", "optimal_line")
    }


@pytest.mark.parametrize(("name", "seed"), [("tiny", 2), ("mini", 0)])
def test_tree_stats_of_a_variant_deck_are_build_trees_counts(name, seed):
    start = GameState.initial(Deck.from_seed(seed, get_variant(name)))
    r = run("tree-stats", "--variant", name, "--seed", str(seed), "--json", "--quiet")
    assert r.exit_code == 0, r.output
    reports = json.loads(r.stdout)
    assert [rep["tree"] for rep in reports] == ["compact", "paper"]
    for rep in reports:
        tree = build_tree(start, rep["tree"])
        assert (rep["variant"], rep["nodes"], rep["layers"]) == (name, tree.n_nodes, tree.node_counts())
        assert {row["round"] for row in rep["layers"]} == {0, 1}  # the variant's two deals
    text = run("tree-stats", "--variant", name, "--seed", str(seed), "--quiet")
    assert text.exit_code == 0 and f"deck seed-{seed} (variant {name}):" in text.stdout
    headers = [line.split() for line in text.stdout.splitlines() if line.startswith("round ")]
    assert len(headers) == 2 and all(h[-3:] == ["turn", "4", "total"] for h in headers)  # turns 0..4: 2 cards a hand


def test_deal_and_show_deal_the_variants_deck():
    tiny = get_variant("tiny")
    r = run("deal", "--variant", "tiny", "--seed", "3")
    assert r.exit_code == 0 and Deck.parse(r.stdout, tiny) == Deck.from_seed(3, tiny)
    r = run("show", "--variant", "tiny", "--seed", "3", "--ascii")
    assert r.exit_code == 0, r.output
    deck = Deck.from_seed(3, tiny)
    rounds = [line for line in r.stdout.splitlines() if line.startswith("round ")]
    assert rounds == [
        f"round {k}  Alex: {format_cards(deck.hand(0, k)):<16} Bob: {format_cards(deck.hand(1, k))}" for k in (0, 1)
    ]
    assert "pool     -" in r.stdout  # tiny deals no initial pool


@pytest.mark.parametrize("command", ["solve", "tree-stats", "show", "deal"])
def test_an_unknown_variant_is_one_line_naming_the_known_ones(command):
    one_line_error(run(command, "--variant", "huge", "--seed", "1"), "unknown variant 'huge'", "standard, mini, tiny")


@pytest.mark.parametrize(
    "args",
    [
        ("sweep", "--decks", "1", "--method", "exact", "--engine", "inline"),
        ("experiment", "figure12", "--decks", "1"),
        ("selfplay", "--seed", "1", "--games", "10"),
        ("play", "--seed", "1"),
        ("play", "--hidden", "--alex", "random"),
    ],
)
def test_a_standard_only_command_refuses_a_variant_before_any_work(args, tmp_path):
    out = tmp_path / "out"
    extra = ("--out", str(out)) if args[0] in ("sweep", "experiment") else ()
    line = one_line_error(run(*args, *extra, "--variant", "tiny"), "--variant tiny", "only the standard game")
    assert f"pasur {args[0]} plays" in line
    assert not out.exists()
    assert run(args[0], "--variant", "standard", "--help").exit_code == 0


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("tiny", str(Deck.from_seed(1)), "a tiny deck has 8 cards (AC AD TC TD JC JD KC KD), got 52"),
        ("tiny", "AC AD TC", "a tiny deck has 8 cards, got 3; missing TD JC JD KC KD"),
        ("micro", "AC AD TC TD JC JD KC KD", "a micro deck has 6 cards (AC AD TC TD JC JD), got 8"),
        ("tiny", "AC AD TC TD JC JD KC 2C", "card 2C at position 7 is not in the tiny deck"),
    ],
)
def test_deck_text_of_another_size_or_cards_is_refused_naming_the_variants_deck(name, text, needle):
    one_line_error(run("solve", "--variant", name, "--deck", text), needle)


def test_select_decks_takes_the_variant_by_keyword_only():
    tiny = get_variant("tiny")
    assert [nd.deck for nd in select_decks(seed=3, count=2, variant="tiny")] == [
        Deck.from_seed(3, tiny),
        Deck.from_seed(4, tiny),
    ]
    assert select_decks(seed=3)[0].deck == Deck.from_seed(3)  # the standard game by default
    with pytest.raises(TypeError):
        select_decks(None, None, None, 3, None, tiny)  # type: ignore[misc]


def test_the_optimal_games_log_scores_by_the_variant():
    """The log printed with a variant's solve: a capture that clears the pool in the variant's last
    deal is no Sur, the final sweep is its own row, and the clubs bonus is the variant's."""
    tiny = get_variant("tiny")
    last_deal_clears = 0
    for seed in range(12):
        deck = Deck.from_seed(seed, tiny)
        log = GameLog(deck, tuple(ReferenceSolver(deck).optimal_line(GameState.initial(deck))))
        rows = log.rows()
        assert sum(row.sur for row in rows) == sum(log.final.surs), seed
        last_deal_clears += sum(row.stage.startswith("1.") and row.captured == row.pool != 0 for row in rows)
        assert any(row.stage == "sweep" for row in rows) == (log.states()[-2].play(log.actions[-1]).pool != 0)
    assert last_deal_clears > 0  # (the decks where the standard game's last deal would have counted a Sur)
    r = run("solve", "--variant", "tiny", "--seed", "3", "--quiet")
    assert "Clubs bonus to Bob: 3 of the 4 clubs (clinched at 1.1.1 with 3) (+5)" in r.stdout
