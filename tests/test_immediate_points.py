"""``rules.immediate_points``: the points an action wins at once (card points of what it takes,
the played card included, and 5 for a Sur), on hand-computed cases from docs/rules.md, and against
the game state's own bookkeeping of piles and Surs over random games."""

from __future__ import annotations

import random

import pytest

from pasur.game.cards import Deck, mask_of, parse_card, points_in
from pasur.game.rules import Action, immediate_points
from pasur.game.state import GameState


def cards(text: str) -> int:
    return mask_of(parse_card(t) for t in text.split())


# (played card, cards taken, pool, round, points): each worked out by hand from the points table
# (Ace 1, Jack 1, 2♣ 2, 10♦ 3, a Sur 5; clubs are worth nothing one by one)
CASES = [
    ("6S", "AC AD AH 2C", "AC AD AH 2C", 0, 1 + 1 + 1 + 2 + 5),  # docs/rules.md's Sur: 10 points
    ("6S", "AC AD AH 2C", "AC AD AH 2C", 4, 10),  # round 4 is still a Sur
    ("6S", "AC AD AH 2C", "AC AD AH 2C", 5, 5),  # no Sur in the final round
    ("JD", "AS 3D 7H JC", "AS 3D 7H JC QC KH", 1, 1 + 1 + 1),  # the Ace, the Jack taken, the Jack played
    ("JC", "3C 8D 9D TS", "3C 8D 9D TS", 2, 1),  # a Jack empties the pool: no Sur, its own point
    ("5D", "6C", "6C 6H", 0, 0),  # a club: the bonus is decided at the end, not now
    ("AC", "TD", "TD KS", 3, 1 + 3),  # the 10 of diamonds, and the Ace that takes it
    ("9D", "2C", "AS 2C 5D", 1, 2),  # the 2 of clubs
    ("2C", "9H", "9H", 2, 2 + 5),  # the 2 of clubs played, a Sur
    ("QD", "QC", "QC", 3, 5),  # a Queen's Sur: no card points
    ("KD", "KH", "KH QS", 0, 0),  # a King leaving a Queen: nothing
    ("TH", "AS", "AS 9C", 0, 1),  # the 10 of hearts is worth nothing, the Ace 1
    ("7H", "", "4D", 0, 0),  # a lay wins nothing (here 7 + 4 = 11 would take, but laid is laid)
]


@pytest.mark.parametrize(("card", "taken", "pool", "round_", "points"), CASES)
def test_hand_computed_cases(card, taken, pool, round_, points):
    assert immediate_points(Action(parse_card(card), cards(taken)), cards(pool), round_) == points


@pytest.mark.parametrize("seed", range(6))
def test_every_move_of_random_games_banks_what_the_state_records(seed):
    """Card points of the mover's pile plus 5 per Sur go up by exactly the action's immediate
    points, move by move (the state decides Surs on its own); the final sweep is not an action's."""
    rng = random.Random(seed)
    s = GameState.initial(Deck.from_seed(seed))
    while not s.is_terminal:
        p, a = s.player, rng.choice(s.legal_actions())
        after = s.play(a)
        banked = points_in(after.piles[p]) + 5 * after.surs[p] - points_in(s.piles[p]) - 5 * s.surs[p]
        assert banked == immediate_points(a, s.pool, s.round)
        s = s.apply(a)
