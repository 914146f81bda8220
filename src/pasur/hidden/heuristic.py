"""A rule-based player that plays like a careful human: it counts points and clubs, guards
against the opponent's Surs and best replies, and keeps its Jacks for a rich pool.

Each legal action is scored as (what it banks now) + (its worth in the clubs race) - (the
expected best reply of the opponent) - (a Jack spent cheaply). The expected reply is exact under
uniform beliefs: the opponent's hand is a uniform draw of its size from the unseen cards, so the
chance that the best-replying card held is the i-th best of the N unseen is
C(N-i, n-1) / C(N, n). No search, a few milliseconds per move.

>>> from pasur.game.cards import Deck
>>> from pasur.hidden.game import HiddenGame
>>> info = HiddenGame(Deck.from_seed(0)).observation(0)
>>> HeuristicAgent().choose(info) in info.legal_actions()
True
>>> round(club_race(6, 0, 7), 3), club_race(7, 0, 6)   # six clubs of thirteen, none for the other
(6.891, 7.0)
"""

from __future__ import annotations

from functools import cache
from math import comb

from pasur.game.cards import CLUBS_BONUS, CLUBS_FOR_BONUS, JACK, N_CLUBS, cards_of, clubs_in, rank
from pasur.game.rules import Action, captures_for, immediate_points
from pasur.game.state import TURNS_PER_ROUND
from pasur.hidden.agents import HiddenAgent
from pasur.hidden.infostate import InfoState


@cache
def club_race(mine: int, theirs: int, left: int) -> float:
    """Expected clubs bonus margin (mine minus theirs) if each of the ``left`` clubs still out
    goes to either player with probability 1/2."""
    if mine >= CLUBS_FOR_BONUS:
        return float(CLUBS_BONUS)
    if theirs >= CLUBS_FOR_BONUS:
        return -float(CLUBS_BONUS)
    need_me, need_them = CLUBS_FOR_BONUS - mine, CLUBS_FOR_BONUS - theirs
    p_me = sum(comb(left, x) for x in range(need_me, left + 1)) / 2**left
    p_them = sum(comb(left, x) for x in range(0, left - need_them + 1)) / 2**left
    return CLUBS_BONUS * (p_me - p_them)


def club_worth(taken: int, mine: int, theirs: int) -> float:
    """What taking ``taken`` clubs adds to the expected clubs margin of its taker."""
    if not taken:
        return 0.0
    left = N_CLUBS - mine - theirs
    return club_race(mine + taken, theirs, left - taken) - club_race(mine, theirs, left)


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


class HeuristicAgent(HiddenAgent):
    """Careful rule-based play (see the module docstring). ``jack_keep``: points a Jack is worth
    kept in hand while other cards remain; ``caution``: weight of the opponent's expected reply."""

    name = "heuristic"

    def __init__(self, jack_keep: float = 1.0, caution: float = 1.0) -> None:
        self.jack_keep = jack_keep
        self.caution = caution

    def _reply(self, pool: int, round_: int, unseen: int, n: int, clubs_opp: int, clubs_me: int) -> float:
        """Expected best immediate gain of the opponent (points, Sur, clubs) against ``pool``."""
        if n == 0:
            return 0.0
        values = []
        for c in cards_of(unseen):
            best = 0.0
            for cap in captures_for(c, pool):
                taken = cap | (1 << c)
                v = immediate_points(Action(c, cap), pool, round_) + club_worth(clubs_in(taken), clubs_opp, clubs_me)
                best = max(best, v)
            values.append(best)
        return expected_max(values, n)

    def action_values(self, info: InfoState) -> list[tuple[Action, float]]:
        me = info.player
        mine, theirs = info.clubs[me], info.clubs[1 - me]
        # the opponent replies this round only if it still holds cards after this move
        n_reply = info.opponent_hand_size if info.turn + 1 < TURNS_PER_ROUND else 0
        out = []
        for a in info.legal_actions():
            taken = a.captured | (1 << a.card) if a.captured else 0
            pool = info.pool & ~a.captured if a.captured else info.pool | (1 << a.card)
            got = clubs_in(taken)
            v = info.margin + immediate_points(a, info.pool, info.round) + club_worth(got, mine, theirs)
            v -= self.caution * self._reply(pool, info.round, info.unseen, n_reply, theirs, mine + got)
            if rank(a.card) == JACK and info.hand.bit_count() > 1:
                v -= self.jack_keep
            out.append((a, v))
        return out
