"""The command line: outputs, JSON summaries, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from helpers import tally_points
from pasur.cli import app
from pasur.game.cards import Deck, format_cards, mask_of, parse_card

runner = CliRunner()


def run(*args: str, input: str | None = None):
    return runner.invoke(app, list(args), input=input)


def test_help_everywhere():
    for cmd in ([], ["deal"], ["show"], ["play"], ["solve"]):
        r = run(*cmd, "--help")
        assert r.exit_code == 0, cmd
        assert "Usage" in r.output


def test_the_cli_offers_every_cfr_method_of_the_solver():
    """The CLI names the solver's methods from the torch-free common.cfr_methods; they must agree."""
    from pasur.cli.common import CFR_METHODS
    from pasur.solve.cfr import METHODS

    assert CFR_METHODS == METHODS


def test_deal_is_seeded_and_valid():
    a, b = run("deal", "--seed", "5"), run("deal", "--seed", "5")
    assert a.exit_code == 0 and a.stdout == b.stdout
    assert Deck.parse(a.stdout) == Deck.from_seed(5)
    many = run("deal", "--seed", "5", "--decks", "3", "--json")
    decks = json.loads(many.stdout)
    assert [d["id"] for d in decks] == ["seed-5", "seed-6", "seed-7"]


def test_show_renders_the_deal():
    r = run("show", "--seed", "3", "--ascii")
    assert r.exit_code == 0
    d = Deck.from_seed(3)
    assert f"pool     {format_cards(d.pool)}" in r.stdout
    assert f"round 5  Alex: {format_cards(d.hand(0, 5))}" in r.stdout


def test_solve_json_of_a_reference_deck(reference_decks, tmp_path):
    nd = reference_decks[2]
    r = run("solve", "--deck", str(nd.deck), "--method", "reference", "--json", "--quiet")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["value"] == nd.value and out["method"] == "reference"
    assert len(out["optimal_line"]) == 48 and out["points"][0] - out["points"][1] == nd.value


def test_solve_deck_file_checks_known_values(tmp_path, reference_decks):
    nd = reference_decks[2]
    f = tmp_path / "decks.json"
    f.write_text(json.dumps([{"id": "mine", "deck": str(nd.deck), "value": nd.value}]))
    r = run("solve", "--deck-file", str(f), "--quiet", "--ascii")
    assert r.exit_code == 0, r.output
    assert f"exact value (Alex - Bob): {nd.value:+d} (known: {nd.value:+d})" in r.stdout
    f.write_text(json.dumps([{"id": "mine", "deck": str(nd.deck), "value": nd.value + 1}]))
    r = run("solve", "--deck-file", str(f), "--quiet")
    assert r.exit_code == 1 and "differs from the known value" in r.stderr


def test_play_prints_log_and_score():
    r = run("play", "--seed", "8", "--alex", "greedy", "--bob", "random", "--sample-seed", "1", "--ascii")
    assert r.exit_code == 0, r.output
    assert "Stage" in r.stdout and "Final score" in r.stdout and "Lay: the card played" in r.stdout
    j = json.loads(run("play", "--seed", "8", "--sample-seed", "1", "--json").stdout)
    assert len(j["actions"]) == 48
    # the score, recomputed from the actions alone by an independent tally of the rules
    moves = [(parse_card(a["card"]), mask_of(parse_card(c) for c in a["captured"])) for a in j["actions"]]
    assert j["points"] == tally_points(Deck.from_seed(8), moves)


def test_play_human_from_stdin():
    r = run("play", "--seed", "8", "--alex", "human", "--bob", "greedy", "--json", input="1\n" * 24)
    assert r.exit_code == 0, r.output
    r = run("play", "--seed", "8", "--alex", "human", "--bob", "greedy", input="1\nq\n")
    assert r.exit_code == 1 and "aborted" in r.stderr


BAD = [
    (["solve", "--deck", "5S 9H XX"], "unknown card 'XX'"),
    (["solve", "--deck", " ".join(["AC"] * 52)], "duplicate card AC at positions 0 and 1"),
    (
        ["solve", "--deck", "JC " + " ".join(str(Deck.from_seed(1)).replace("JC ", "").split())],
        "Jack JC in the initial pool",
    ),
    (["solve", "--deck", " ".join(str(Deck.from_seed(1)).split()[:51])], "a deck has 52 cards, got 51; missing"),
    (["solve", "--deck-file", "/nonexistent/decks.txt"], "deck file not found"),
    (["solve", "--seed", "1", "--deck", "AC"], "give only one of --deck, --seed"),
    (["solve", "--seed", "1", "--method", "magic"], "unknown method 'magic'"),
    (["play", "--seed", "1", "--alex", "oracle"], "unknown agent 'oracle'"),
    (["show", "--seed", "1", "--deck-id", "x"], "--deck-id goes with --deck-file"),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[m for _, m in BAD])
def test_user_errors_are_one_line_with_exit_code_2(args, message):
    r = run(*args)
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert "Traceback" not in r.output


def test_bad_line_in_deck_file_names_file_and_line(tmp_path):
    f = tmp_path / "decks.txt"
    f.write_text(f"# two decks\n{Deck.from_seed(1)}\n{str(Deck.from_seed(2)).replace('KS', 'KX')}\n")
    r = run("solve", "--deck-file", str(f))
    assert r.exit_code == 2 and f"{f}:3: " in r.stderr and "KX" in r.stderr


@pytest.mark.parametrize("tree", ["compact", "paper"])
def test_solve_exact_on_the_tensor_tree(reference_decks, tree):
    nd = reference_decks[2]
    r = run("solve", "--deck", str(nd.deck), "--method", "exact", "--tree", tree, "--json", "--quiet")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["value"] == nd.value and out["tree"] == tree and out["device"] == "cpu"
    assert out["points"][0] - out["points"][1] == nd.value  # the optimal line replays to the value
    assert out["nodes"] > 0 and out["tree_bytes"] > 0


def test_exact_and_reference_lines_agree(reference_decks):
    nd = reference_decks[2]  # the quickest of the three to solve by plain minimax
    a = json.loads(run("solve", "--deck", str(nd.deck), "--method", "exact", "--json", "-q").stdout)
    b = json.loads(run("solve", "--deck", str(nd.deck), "--method", "reference", "--json", "-q").stdout)
    assert a["optimal_line"] == b["optimal_line"] and a["value"] == b["value"] == nd.value


def test_tree_stats_reports_both_modes():
    r = run("tree-stats", "--seed", "4", "--json", "--quiet")
    assert r.exit_code == 0, r.output
    compact, paper = json.loads(r.stdout)
    assert (compact["tree"], paper["tree"]) == ("compact", "paper")
    assert compact["nodes"] == sum(x["nodes"] for x in compact["layers"]) < paper["nodes"]
    assert [x["turn"] for x in paper["layers"][:9]] == list(range(9))
    text = run("tree-stats", "--seed", "4", "--tree", "compact", "--quiet").stdout
    assert "compact tree on cpu" in text and "round 5" not in text and text.count("\n5 ") == 1


TENSOR_BAD = [
    (["solve", "--seed", "1", "--device", "cuda:99"], "cuda:99"),
    (["solve", "--seed", "1", "--device", "tpu"], "unknown device 'tpu'"),
    (["solve", "--seed", "1", "--tree", "huge"], "unknown tree mode 'huge'"),
    (["solve", "--seed", "1", "--memory-limit", "-1"], "--memory-limit must be a positive number"),
    (["solve", "--seed", "1", "--tree", "paper", "--memory-limit", "0.001"], "over the limit of 0.00 GiB"),
    (["tree-stats", "--seed", "1", "--tree", "flat"], "unknown tree mode 'flat'"),
]


@pytest.mark.parametrize(("args", "message"), TENSOR_BAD, ids=[m for _, m in TENSOR_BAD])
def test_tensor_options_errors(args, message):
    r = run(*args)
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_selfplay_reports_measures_and_refuses_bad_tables(tmp_path, reference_decks):
    nd = reference_decks[2]
    r = run("selfplay", "--deck", str(nd.deck), "--alex", "exact", "--bob", "exact", "--games", "4", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["mean"] == nd.value and out["ci95"] == [nd.value, nd.value] and out["games"] == 4
    text = run("selfplay", "--seed", "3", "--alex", "greedy", "--bob", "random", "--games", "50").stdout
    assert "95% interval" in text and "ties counted for Alex" in text
    solve = run(
        "solve", "--deck", str(nd.deck), "--method", "dcfr", "--iterations", "20", "--out", str(tmp_path / "s"), "-q"
    )
    assert solve.exit_code == 0, solve.output
    table = f"table:{tmp_path / 's' / 'strategy.parquet'}"
    ok = run("selfplay", "--deck", str(nd.deck), "--alex", table, "--bob", "random", "--games", "200", "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["mean"] >= nd.value - 1
    # the folder pasur solve wrote names its table too (the same games, seeded alike)
    folder = f"table:{tmp_path / 's'}"
    again = run("selfplay", "--deck", str(nd.deck), "--alex", folder, "--bob", "random", "--games", "200", "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["mean"] == json.loads(ok.stdout)["mean"]
    for args, message in [
        (["--seed", "3", "--alex", table], "a strategy of another deck"),
        (["--seed", "3", "--alex", "table:/nonexistent.parquet"], "strategy table not found"),
        (["--seed", "3", "--bob", "oracle"], "unknown agent 'oracle'"),
    ]:
        r = run("selfplay", *args)
        assert r.exit_code == 2 and message in r.stderr, r.stderr
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    r = run("selfplay", "--deck", str(nd.deck), "--alex", f"table:{broken}")
    assert r.exit_code == 2 and "not a readable Parquet" in r.stderr


@pytest.mark.parametrize(
    "args", [["--help"], ["deal", "--seed", "3"], ["show", "--seed", "3"], ["solve", "--seed", "x"]]
)
def test_the_cli_starts_without_torch(args):
    """``pasur --help``, ``deal``, ``show`` and an argument error never import torch (3 to 4 s
    of a 2-core machine's time): checked in a fresh interpreter."""
    code = (
        "import sys\nfrom pasur.cli import app\n"
        "try:\n    app(sys.argv[1:], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
