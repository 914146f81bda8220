"""Game logs: replay checks, rows, renderers and golden playthroughs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import position
from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck, format_cards, parse_card
from pasur.game.gamelog import HEADERS, GameLog
from pasur.game.rules import Action
from pasur.game.state import GameState
from pasur.play.agents import GreedyAgent, RandomAgent, play_game

GOLDEN = Path(__file__).parent / "data" / "golden-games.jsonl"


def _game(seed: int) -> GameLog:
    return play_game(Deck.from_seed(seed), GreedyAgent(), RandomAgent(seed))


def test_rows_follow_the_game_and_end_at_the_utility():
    log = _game(7)
    rows = log.rows()
    final = log.final
    assert final.is_terminal
    assert len(log.actions) == 48
    sweep = [r for r in rows if r.stage == "sweep"]
    assert len(rows) == 48 + len(sweep)
    assert rows[-1].diff == final.utility()
    assert rows[0].stage == "0.0.0" and rows[1].stage == "0.0.1" and rows[2].stage == "0.1.0"
    # hands before the play contain the card played
    for r in rows:
        if r.card is not None:
            assert (r.hands[0] | r.hands[1]) >> r.card & 1


def test_sweep_row_shows_what_goes_to_the_last_capturer():
    for seed in range(30):
        log = _game(seed)
        rows = log.rows()
        if rows[-1].stage == "sweep":
            before = log.states()[-2].play(log.actions[-1])
            assert rows[-1].captured == before.pool != 0
            assert rows[-1].last_capturer == before.last_capturer
            return
    pytest.fail("no game with a final sweep in 30 seeds")


def test_sur_is_marked():
    # Alex's 5♣ takes 6♦ from a pool that holds only 6♦: a Sur in round 0.
    s = position(0, 0)
    deck = s.deck
    crafted = s.with_(pool=1 << parse_card("6D"), hands=(1 << parse_card("5C"), s.hands[1]))
    log = GameLog(deck, (Action(parse_card("5C"), 1 << parse_card("6D")),), start=crafted)
    row = log.rows()[0]
    assert row.sur and "SUR" in log.to_text() and row.surs == (1, 0)


def test_replay_refuses_an_illegal_action_naming_its_index():
    deck = Deck.from_seed(1)
    s = GameState.initial(deck)
    good = s.legal_actions()[0]
    bad = Action(next(iter(c for c in range(52) if not s.hands[0] >> c & 1)), 0)
    with pytest.raises(PasurInputError, match="action 1"):
        GameLog.replay(deck, [good, bad])


def test_text_and_markdown_renderings():
    log = _game(3)
    text = log.to_text(unicode=False)
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["Stage", "Alex", "Bob", "Pool"]
    assert "Final score" in lines[-1]
    first = log.rows()[0]
    assert format_cards(first.hands[0]) in lines[2]
    md = log.to_markdown()
    table = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert len(table) == 2 + len(log.rows())
    assert all(ln.count("|") == len(HEADERS) + 1 for ln in table)


def test_json_round_trip():
    log = _game(11)
    back = GameLog.from_json(log.to_json())
    assert back.actions == log.actions and back.deck == log.deck
    assert json.loads(log.to_json())["utility"] == log.final.utility()


def test_from_json_refuses_garbage():
    with pytest.raises(PasurInputError, match="not a game log"):
        GameLog.from_json('{"deck": "AC"}')


def test_golden_playthroughs():
    """Recorded games (deck, actions, final points): the engine must replay them exactly."""
    games = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]
    assert len(games) >= 20
    for g in games:
        log = GameLog.from_json(json.dumps(g))
        assert list(log.final.points) == g["points"], g["deck"]
        assert log.final.utility() == g["utility"]


def test_play_announces_surs_the_clubs_bonus_and_the_sweep():
    """The text log ends with the legend and, in words, every Sur, the clubs bonus and the final
    sweep: as many Sur lines as the final state counts Surs, the bonus to the player whose pile
    holds 7 or more clubs."""
    from typer.testing import CliRunner

    from pasur.cli import app
    from pasur.game.cards import clubs_in

    surs = 0
    for seed in range(6):
        r = CliRunner().invoke(app, ["play", "--seed", str(seed), "--alex", "greedy", "--bob", "greedy", "--ascii"])
        assert r.exit_code == 0, r.output
        log = GameLog.from_json(
            CliRunner()
            .invoke(app, ["play", "--seed", str(seed), "--alex", "greedy", "--bob", "greedy", "--json"])
            .stdout
        )
        final = log.final
        assert "Lay: the card played" in r.stdout
        for who, name in enumerate(("Alex", "Bob")):
            assert r.stdout.count(f"Sur by {name} at ") == final.surs[who]
            if clubs_in(final.piles[who]) >= 7:
                assert f"Clubs bonus to {name}: {clubs_in(final.piles[who])} of the 13 clubs" in r.stdout
        assert ("Final sweep:" in r.stdout) == (log.rows()[-1].stage == "sweep")
        surs += sum(final.surs)
    assert surs >= 3  # these games do have Surs to announce
