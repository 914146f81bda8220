"""``pasur play --hidden``: the hidden-hand game at a terminal, driven through stdin."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from pasur.cli import app
from pasur.game.cards import Deck, format_cards, mask_of, parse_card
from pasur.game.rules import Action
from pasur.hidden.game import HiddenGame

runner = CliRunner()
CARD = re.compile(r"(?<![A-Za-z0-9])(10|[A2-9TJQK])([CDHS])(?![A-Za-z0-9])")


def run(*args: str, input: str | None = None):
    return runner.invoke(app, list(args), input=input)


def cards_in(text: str) -> int:
    return mask_of(parse_card(r + s) for r, s in CARD.findall(text))


def test_a_human_sees_only_their_own_cards_gets_hints_and_the_replay():
    r = run("play", "--hidden", "--bob", "greedy", "--seed", "3", "--ascii", "--json", input="?\n" + "1\n" * 24)
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)  # stdout is the JSON alone; the play went to stderr
    deck = Deck.from_seed(3)
    assert out["deck"] == str(deck) and len(out["actions"]) == 48
    # replay the game and, at each of the human's (Alex's) decisions, what Alex had seen
    game, allowed = HiddenGame(deck), []
    actions = [Action(parse_card(a["card"]), mask_of(map(parse_card, a["captured"]))) for a in out["actions"]]
    for a in actions:
        if game.mover == 0:
            allowed.append(game.observation(0).seen)
        else:  # the AI's card is shown once played
            allowed[-1] |= 1 << a.card
        game.apply(a)
    assert out["points"] == list(game.state.points)
    # the text of the play, block by block: one block per decision of the human
    play_text = r.stderr
    blocks = re.split(r"\n(?=\[\d\.\d\.\d\] round)", play_text)[1:]
    assert len(blocks) == 24
    for i, (block, seen) in enumerate(zip(blocks, allowed, strict=True)):
        leaked = cards_in(block) & ~seen
        assert not leaked, f"decision {i}: shows {format_cards(leaked)}\n{block}"
        assert "your hand:" in block and "the AI holds" in block
    # one hint was asked, at the first decision: a value for each legal move, the best marked
    assert "hint (" in blocks[0] and "<- best" in blocks[0]
    assert sum(1 for line in blocks[0].splitlines() if re.match(r"\s+\d+\. .*[+-]\d+\.\d\d", line)) >= 1
    # the replay: every move, 24 of them the human's, each beside the open-hand best move
    rep = out["replay"]
    assert rep["seat"] == "Alex" and len(rep["moves"]) == 48
    assert sum(m["by"] == "you" for m in rep["moves"]) == 24 and all(m["cost"] >= 0 for m in rep["moves"])


def test_the_text_output_ends_with_the_log_and_the_replay():
    r = run("play", "--hidden", "--alex", "random", "--seed", "4", "--ascii", input="1\n" * 24)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("You are Bob, against the random AI.")
    assert "Final score" in r.stdout and "Replay with every card open" in r.stdout
    assert "your moves cost" in r.stdout
    assert r.stdout.count("  -> you (Bob)") == 24 and r.stdout.count("  -> random (Alex)") == 24


def test_with_json_a_human_game_keeps_stdout_for_the_json_alone():
    r = run("play", "--hidden", "--alex", "random", "--seed", "4", "--json", input="1\n" * 24)
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)  # the whole of stdout: the prompts and moves went to stderr
    assert len(out["actions"]) == 48 and "replay" in out
    assert "You are Bob" in r.stderr and r.stderr.count("  -> you (Bob)") == 24


def test_quitting_and_refused_options():
    r = run("play", "--hidden", "--bob", "greedy", "--seed", "3", input="1\nq\n")
    assert r.exit_code == 1 and "game aborted: player quit" in r.stderr
    for args, msg in [
        (["--alex", "exact"], "--alex 'exact': with --hidden, choose a level or human"),
        (["--bob", "oracle"], "--bob 'oracle'"),
        (["--alex", "human", "--bob", "human"], "at most one human"),
    ]:
        r = run("play", "--hidden", "--seed", "1", *args)
        assert r.exit_code == 2 and r.stderr.startswith("error: ") and msg in r.stderr, r.stderr
    # naming only the human's seat gives the other seat the default level
    r = run("play", "--hidden", "--alex", "human", "--seed", "3", input="q\n")
    assert r.exit_code == 1 and "against the best AI" in r.stdout + r.stderr, r.output
    # without --hidden, the hidden-only levels are not agents of the open game
    r = run("play", "--alex", "heuristic", "--seed", "1")
    assert r.exit_code == 2 and "unknown agent 'heuristic'" in r.stderr


def test_two_levels_play_each_other_hidden():
    r = run("play", "--hidden", "--alex", "greedy", "--bob", "heuristic", "--seed", "6", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert len(out["actions"]) == 48 and "replay" not in out


def test_a_random_deal_is_not_announced():
    """Without a deck option the deal is secret: no seed is printed that would give it away."""
    r = run("play", "--hidden", "--bob", "greedy", input="q\n")
    assert r.exit_code == 1 and "seed" not in r.stderr and "seed" not in r.stdout
