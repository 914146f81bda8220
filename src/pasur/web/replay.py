"""The replay of a finished hand with every card open: each move beside the open-hand optimal move
from the same position, and the points it cost.

"Optimal" is the exact solver's move when both players see everything
(:class:`pasur.hidden.optimal.OptimalAgent`: the whole deal solved once on the compact tree). A
move's value is the final margin (the mover's points minus the other's) that optimal play by both
from then on would give; its cost is the best move's value minus its own, never negative. A
hidden-hand player cannot always find the open-hand best move: the cost also measures what it did
not know.

>>> from pasur.game.cards import Deck
>>> from pasur.hidden.agents import GreedyAgent
>>> from pasur.hidden.game import play_hidden
>>> d = Deck.from_seed(1)
>>> r = replay_hand(d, play_hidden(d, (GreedyAgent(), GreedyAgent())).moves, player=0)
>>> len(r["moves"]), all(m["cost"] >= 0 for m in r["moves"]), r["moves"][0]["by"]
(48, True, 'you')
"""

from __future__ import annotations

from collections.abc import Sequence

from pasur.game.cards import N_ROUNDS, Deck
from pasur.game.state import PLAYER_NAMES
from pasur.hidden.game import HiddenGame
from pasur.hidden.infostate import Move
from pasur.web.views import action_json, card_list

#: values are exact integers; floats from the solver are rounded to this many places
PLACES = 6


def deal_json(deck: Deck, player: int) -> dict:
    """The whole deal, from ``player``'s side: the pool, then each round's two hands."""
    who = lambda p: "you" if p == player else "ai"  # noqa: E731
    return {
        "deck": str(deck),
        "pool": card_list(deck.pool_mask),
        "rounds": [{who(p): card_list(deck.hand_mask(p, r)) for p in (0, 1)} for r in range(N_ROUNDS)],
    }


def replay_hand(deck: Deck, moves: Sequence[Move], player: int, agent=None) -> dict:
    """Every move of the hand with both hands open, its value, the optimal move and the cost.
    ``player`` is the seat the replay is told from (``you``); ``agent``: an
    :class:`~pasur.hidden.optimal.OptimalAgent` to reuse (it caches solved decks)."""
    from pasur.hidden.optimal import OptimalAgent

    opt = agent or OptimalAgent()
    game = HiddenGame(deck)
    rows = []
    value = None
    for n, mv in enumerate(moves, start=1):
        s = game.state
        vals = dict(opt.action_values_open(s, game.moves))
        best = max(vals, key=lambda a: (vals[a], -a.card, -a.captured))  # first best in legal order
        if value is None:  # the open-hand value of the whole deal, for the seat told from
            value = vals[best] if s.player == player else -vals[best]
        mine = vals[mv.action]
        rows.append(
            {
                "n": n,
                "round": s.round,
                "stage": s.stage,
                "by": "you" if mv.player == player else "ai",
                "seat": PLAYER_NAMES[mv.player],
                "pool": card_list(s.pool),
                "hands": {"you": card_list(s.hands[player]), "ai": card_list(s.hands[1 - player])},
                "move": action_json(mv.action),
                "value": round(mine, PLACES),
                "best": action_json(best),
                "best_value": round(vals[best], PLACES),
                "cost": round(vals[best] - mine, PLACES),
            }
        )
        game.apply(mv.action)
    yours = [r["cost"] for r in rows if r["by"] == "you"]
    theirs = [r["cost"] for r in rows if r["by"] == "ai"]
    return {
        "seat": PLAYER_NAMES[player],
        "deal": deal_json(deck, player),
        "open_value": None if value is None else round(value, PLACES),
        "moves": rows,
        "your_cost": round(sum(yours), PLACES),
        "ai_cost": round(sum(theirs), PLACES),
        "your_mistakes": sum(1 for c in yours if c > 0),
    }
