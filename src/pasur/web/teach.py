"""Why a move captures what it does, in reason codes the page turns into words (issue 44, item 3).

:func:`move_why` explains one legal action from what its player sees: the card played, the pool
and the round (nothing else goes in, so a reason cannot name a card the player may not see). Every
answer comes from the rules engine (:mod:`pasur.game.rules`). :func:`examples` finds, in random
positions drawn from a fixed seed, one position for each rule the page teaches; the examples are
found by the engine, not written by hand.

>>> from pasur.game.cards import parse_card as C, mask_of
>>> pool = mask_of([C("4D"), C("KS")])
>>> move_why(Action(C("7C"), mask_of([C("4D")])), pool, 0)["values"]
[7, 4]
>>> move_why(Action(C("KD"), mask_of([C("KS")])), pool, 0)["rule"]
'king'
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import TYPE_CHECKING

from pasur.game.cards import JACK, KING, N_CARDS, QUEEN, cards_of, format_card, mask_of, rank, value
from pasur.game.rules import CAPTURE_SUM, Action, captures_for, card_actions, immediate_points, is_sur
from pasur.game.variants import STANDARD, Variant

if TYPE_CHECKING:
    from fastapi import FastAPI

#: the rule a capturing card of each court rank follows (numeric cards: "sum")
_COURT_RULES = {JACK: "jack", QUEEN: "queen", KING: "king"}
#: the rules the examples show, in the order the page teaches them
EXAMPLE_RULES = (
    "sum_one",
    "sum_many",
    "sum_choice",
    "lay",
    "jack",
    "jack_no_sur",
    "queen",
    "king",
    "sur",
    "last_round",
    "points",
    "clubs",
)
EXAMPLE_SEED = 44
MAX_EXAMPLE_POOL = 5


def move_why(action: Action, pool: int, round_: int, *, variant: Variant = STANDARD) -> dict:
    """The reasons of ``action`` played against ``pool`` in round ``round_`` (0-based), JSON-ready:
    ``rule`` (sum, jack, queen, king, lay), ``values`` (a sum: the played card's value, then the
    taken cards' values), ``options`` (the ways this card can be played: more than one is a
    choice), ``taken`` (how many cards it takes), ``cleared`` (the pool is left empty), ``sur`` (and
    its ``sur_points``) and, when the pool is cleared without a Sur, ``no_sur`` (jack or last_round), ``points`` (the
    points of the cards taken, the played card included; a Sur's are apart) and ``clubs`` (the
    clubs taken, the played card included)."""
    final_round = variant.deals - 1
    options = len(captures_for(action.card, pool)) or 1
    why: dict = {"rule": "lay", "options": options, "taken": action.captured.bit_count(), "cleared": False}
    why.update(sur=False, sur_points=0, no_sur=None, points=0, clubs=0)
    if action.is_lay:
        return why
    r = rank(action.card)
    why["rule"] = _COURT_RULES.get(r, "sum")
    if r < JACK:
        why["values"] = [value(action.card)] + [value(c) for c in cards_of(action.captured)]
    sur = is_sur(action, pool, round_, final_round=final_round)
    why["cleared"] = action.captured == pool
    why["sur"] = sur
    if why["cleared"] and not sur:
        why["no_sur"] = "jack" if r == JACK else "last_round"
    why["sur_points"] = variant.sur_points if sur else 0
    why["points"] = immediate_points(action, pool, round_, final_round=final_round, variant=variant) - (
        variant.sur_points if sur else 0
    )
    why["clubs"] = ((action.captured | (1 << action.card)) & variant.club_mask).bit_count()
    return why


def action_with_why(action: Action, pool: int, round_: int, *, variant: Variant = STANDARD) -> dict:
    """An action as the page's JSON (``card``, ``captured``) with its ``why``."""
    return {
        "card": format_card(action.card),
        "captured": [format_card(c) for c in cards_of(action.captured)],
        "why": move_why(action, pool, round_, variant=variant),
    }


def shows(rule: str, why: dict) -> bool:
    """Whether a move with reasons ``why`` shows the example rule ``rule``."""
    checks = {
        "sum_one": lambda w: w["rule"] == "sum" and len(w["values"]) == 2 and not w["cleared"],
        "sum_many": lambda w: w["rule"] == "sum" and len(w["values"]) > 2 and not w["cleared"],
        "sum_choice": lambda w: w["rule"] == "sum" and w["options"] > 1 and not w["cleared"],
        "lay": lambda w: w["rule"] == "lay",
        "jack": lambda w: w["rule"] == "jack" and not w["cleared"],
        "jack_no_sur": lambda w: w["no_sur"] == "jack" and w["taken"] > 1,
        "queen": lambda w: w["rule"] == "queen" and not w["cleared"],
        "king": lambda w: w["rule"] == "king" and not w["cleared"],
        "sur": lambda w: w["sur"] and w["taken"] > 1,
        "last_round": lambda w: w["no_sur"] == "last_round" and w["rule"] == "sum",
        "points": lambda w: w["points"] >= 2 and not w["cleared"],
        "clubs": lambda w: w["clubs"] >= 3 and not w["cleared"],
    }
    return checks[rule](why)


def _random_position(rng: random.Random) -> tuple[int, int, int]:
    """A pool of one to five cards, a card played against it, and a round."""
    cards = rng.sample(range(N_CARDS), rng.randint(2, MAX_EXAMPLE_POOL + 1))
    return cards[0], mask_of(cards[1:]), rng.randrange(STANDARD.deals)


@lru_cache(maxsize=1)
def examples(seed: int = EXAMPLE_SEED, tries: int = 200_000) -> tuple[dict, ...]:
    """One position for each of :data:`EXAMPLE_RULES`: the first random position (from ``seed``)
    in which the played card shows the rule, with every action the engine allows that card."""
    rng = random.Random(seed)
    found: dict[str, dict] = {}
    for _ in range(tries):
        if len(found) == len(EXAMPLE_RULES):
            break
        card, pool, round_ = _random_position(rng)
        moves = [action_with_why(a, pool, round_) for a in card_actions(card, pool)]
        for rule in EXAMPLE_RULES:
            if rule not in found and any(shows(rule, m["why"]) for m in moves):
                found[rule] = {
                    "rule": rule,
                    "round": round_,
                    "last_round": round_ == STANDARD.deals - 1,
                    "pool": [format_card(c) for c in cards_of(pool)],
                    "card": format_card(card),
                    "actions": moves,
                }
                break
    missing = [r for r in EXAMPLE_RULES if r not in found]
    if missing:
        raise RuntimeError(f"no example found for {missing}")
    return tuple(found[r] for r in EXAMPLE_RULES)


def teach_payload() -> dict:
    """What ``GET /api/teach/examples`` answers: the examples and the numbers the rules text uses."""
    return {
        "examples": list(examples()),
        "numbers": {
            "sum": CAPTURE_SUM,
            "sur_points": STANDARD.sur_points,
            "clubs_for_bonus": STANDARD.clubs_for_bonus,
            "clubs_bonus": STANDARD.clubs_bonus,
            "rounds": STANDARD.deals,
            "hand_size": STANDARD.hand_size,
            "pool_size": STANDARD.pool_size,
        },
    }


def add_teach_routes(api: FastAPI) -> None:
    """``GET /api/teach/examples``: the same for every caller and every language (the page writes
    the words), computed once when the app is built."""
    payload = teach_payload()

    @api.get("/api/teach/examples")
    def get_examples() -> dict:
        return payload
