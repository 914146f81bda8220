"""A rule-based player that plays like a careful human: it counts points and clubs, guards
against the opponent's Surs and best replies, and keeps its Jacks for a rich pool.

Each legal action is scored as (what it banks now) + (its worth in the clubs race) - (the
expected best reply of the opponent) - (a Jack spent cheaply). The expected reply is exact under
uniform beliefs: the opponent's hand is a uniform draw of its size from the unseen cards, so the
chance that the best-replying card held is the i-th best of the N unseen is
C(N-i, n-1) / C(N, n). No search, a few milliseconds per move. Every constant (the deck, the
point cards, Surs, the clubs race, the turns of a deal) is the information state's variant's
(:mod:`pasur.game.variants`), so it plays the small variants too.

>>> from pasur.game.cards import Deck
>>> from pasur.hidden.game import HiddenGame
>>> info = HiddenGame(Deck.from_seed(0)).observation(0)
>>> HeuristicAgent().choose(info) in info.legal_actions()
True
>>> round(club_race(6, 0, 7), 3), club_race(7, 0, 6)   # six clubs of thirteen, none for the other
(6.891, 7.0)
>>> club_race(2, 1, 1, for_bonus=3, bonus=5)   # tiny: 3 of its 4 clubs win 5; one club still out
2.5
"""

from __future__ import annotations

from functools import cache
from math import comb

from pasur.game.cards import JACK, cards_of, rank
from pasur.game.rules import Action, captures_for, immediate_points
from pasur.game.variants import STANDARD, Variant
from pasur.hidden.agents import HiddenAgent
from pasur.hidden.infostate import InfoState


@cache
def club_race(
    mine: int, theirs: int, left: int, for_bonus: int = STANDARD.clubs_for_bonus, bonus: int = STANDARD.clubs_bonus
) -> float:
    """Expected clubs bonus margin (mine minus theirs) if each of the ``left`` clubs still out
    goes to either player with probability 1/2; whoever has ``for_bonus`` clubs gets ``bonus``
    (the standard game's 7 and 7 by default)."""
    if mine >= for_bonus:
        return float(bonus)
    if theirs >= for_bonus:
        return -float(bonus)
    need_me, need_them = for_bonus - mine, for_bonus - theirs
    p_me = sum(comb(left, x) for x in range(need_me, left + 1)) / 2**left
    p_them = sum(comb(left, x) for x in range(0, left - need_them + 1)) / 2**left
    return bonus * (p_me - p_them)


def club_worth(taken: int, mine: int, theirs: int, variant: Variant = STANDARD) -> float:
    """What taking ``taken`` clubs adds to the expected clubs margin of its taker (``variant``:
    its clubs, threshold and bonus)."""
    if not taken:
        return 0.0
    left = variant.n_clubs - mine - theirs
    rule = (variant.clubs_for_bonus, variant.clubs_bonus)
    return club_race(mine + taken, theirs, left - taken, *rule) - club_race(mine, theirs, left, *rule)


def expected_max(values: list[float], n: int) -> float:
    """E[max over a uniform n-subset] of ``values`` (without replacement); 0 when n == 0."""
    if n <= 0 or not values:
        return 0.0
    v = sorted(values, reverse=True)
    total, norm = 0.0, comb(len(v), n)
    for i, x in enumerate(v):
        if len(v) - i - 1 < n - 1:
            break
        total += x * comb(len(v) - i - 1, n - 1) / norm
    return total


def _points_now(action: Action, pool: int, round_: int, variant: Variant) -> int:
    """Card points and Sur of ``action`` under ``variant``'s scoring and final deal."""
    return immediate_points(action, pool, round_, final_round=variant.final_round, variant=variant)


class HeuristicAgent(HiddenAgent):
    """Careful rule-based play (see the module docstring). ``jack_keep``: points a Jack is worth
    kept in hand while other cards remain; ``caution``: weight of the opponent's expected reply."""

    name = "heuristic"

    def __init__(self, jack_keep: float = 1.0, caution: float = 1.0) -> None:
        self.jack_keep = jack_keep
        self.caution = caution

    def _reply(self, info: InfoState, pool: int, n: int, clubs_opp: int, clubs_me: int) -> float:
        """Expected best immediate gain of the opponent (points, Sur, clubs) against ``pool``."""
        if n == 0:
            return 0.0
        v = info.variant
        values = []
        for c in cards_of(info.unseen):
            best = 0.0
            for cap in captures_for(c, pool):
                taken = cap | (1 << c)
                gain = _points_now(Action(c, cap), pool, info.round, v)
                best = max(best, gain + club_worth((taken & v.club_mask).bit_count(), clubs_opp, clubs_me, v))
            values.append(best)
        return expected_max(values, n)

    def action_values(self, info: InfoState) -> list[tuple[Action, float]]:
        me, v = info.player, info.variant
        mine, theirs = info.clubs[me], info.clubs[1 - me]
        # the opponent replies this deal only if it still holds cards after this move
        n_reply = info.opponent_hand_size if info.turn + 1 < v.turns_per_round else 0
        out = []
        for a in info.legal_actions():
            taken = a.captured | (1 << a.card) if a.captured else 0
            pool = info.pool & ~a.captured if a.captured else info.pool | (1 << a.card)
            got = (taken & v.club_mask).bit_count()
            value = info.margin + _points_now(a, info.pool, info.round, v) + club_worth(got, mine, theirs, v)
            value -= self.caution * self._reply(info, pool, n_reply, theirs, mine + got)
            if rank(a.card) == JACK and info.hand.bit_count() > 1:
                value -= self.jack_keep
            out.append((a, value))
        return out
