"""The CFR agent: each decision solves the rest of its round over both players' ranges.

At a decision the agent builds the public belief state from its information state alone
(:func:`belief_state`): the public position at the round's start, the opponent's possible hands
(every one when at most ``exact`` of them, else ``hands`` sampled) and its own possible hands as
the opponent sees them (its true hand and ``hands - 1`` sampled). Hands are dealt afresh each
round, so at the round's start both ranges are uniform: the round's earlier moves enter through
the solve itself, whose histories start at the round's start. The round is solved over every
disjoint pair of hands by CFR (:mod:`pasur.hidden.rangesolve`), leaves valued by the boundary
value (the learned one; a small variant's exact one), and the agent samples its move from the
solved strategy at its true hand's information set. The opponent's hands are all enumerated when
they are few (:data:`EXACT_HANDS`); at a round's start they never are, before the last deal.

Later decisions of the same round re-solve safely (``resolve``): the histories below the current
public node, the ranges there from the previous solve (the agent's own reach; the opponent's,
mixed with ``epsilon`` of uniform), and the re-solving gadget, so the opponent's best response
gains no more on any of its hands than against the previous solve (``docs/hidden.md``, "The CFR
agent"). When the opponent's moves leave the sampled hands (no history of the solve made them),
the agent samples again, each opponent hand now holding the cards it saw the opponent play this
round, and solves the round again from its start, so the solve's histories still weigh what the
round's moves said about the hands (the opponent's reach); a solve from the current position with
every consistent hand as likely is the last resort. Without ``resolve`` it plays the round
start's solve to the round's end.

The two ranges may differ in size (``hands`` the opponent's, ``own`` the agent's as the opponent
sees it, its true hand always one): the agent's decision depends on where the opponent's cards
lie, its own range only shapes the opponent's replies in the solve.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from pasur.game.cards import cards_of
from pasur.game.rules import Action
from pasur.hidden.agents import HiddenAgent
from pasur.hidden.infostate import InfoState
from pasur.hidden.rangesolve import Expansion, PublicRoot, RangeSolve, expand, history_tree
from pasur.hidden.worlds import info_seed

#: the opponent's hands are all enumerated when there are at most this many (its last card or two
#: of a round; at the start of the fifth deal there are 495: sampled, or one solve has thousands
#: of pairs)
EXACT_HANDS = 100
#: rounds solved and kept at most (concurrent games each keep their round's solve)
CACHE = 64
#: at most this many pairs of hands in a solve from a round's start before the standard game's
#: last round: each pair expands the whole round, and every leaf asks the boundary network (a
#: decision that enumerated both ranges late in a round took 133 s of CPU); a small variant's
#: exact boundary is a look-up, so its ranges stay whole
MAX_PAIRS = 128
#: at most this many expansion nodes in a solve of the standard game (about twice a first deal's
#: 200,000 for 50 pairs): a round with a large pool has many capture choices, and one solve of the
#: fifth deal took 30 s of CPU; past it the solve keeps the first opponent hands drawn (a uniform
#: draw still), all their pairs, and drops the rest
NODE_BUDGET = 400_000
#: a solve of the standard game over more nodes than this runs fewer iterations, in proportion
#: (at least half): its work stays within ``iterations`` x 200,000 node-iterations, so the largest
#: solve (NODE_BUDGET) runs 16 of 32. A fifth deal's solve of 342,000 nodes took 2.6 s of CPU at
#: 32; its subgame exploitability is 0.034 points after 16 iterations, 0.006 after 32
#: (results/cfr-agent/solve-convergence)
WORK_NODES = 200_000


@dataclass(frozen=True)
class BeliefState:
    """The public belief state at the start of the round: the public position, the round's moves
    so far (card, captured), each seat's possible hands as dealt this round (``hands[seat]``, the
    agent's true hand first in its own seat), every disjoint pair (``pairs``: indices into both),
    each pair's prior weight and the cards dealt after the round in its world (``remaining``)."""

    root: PublicRoot
    moves: tuple[tuple[int, int], ...]
    hands: tuple[np.ndarray, np.ndarray]
    pairs: np.ndarray
    weight: np.ndarray
    remaining: np.ndarray


def round_start(info: InfoState) -> tuple[PublicRoot, tuple[tuple[int, int], ...]]:
    """The public position at the start of ``info``'s round (this round's moves undone: the
    pool before each, the clubs taken) and this round's moves."""
    v = info.variant
    moves = [m for m in info.moves if m.round == info.round]
    pool, clubs = info.pool, list(info.clubs)
    for m in reversed(moves):
        if m.captured:
            pool |= m.captured
            clubs[m.player] -= ((m.captured | 1 << m.card) & v.club_mask).bit_count()
        else:
            pool &= ~(1 << m.card)
    last = 0
    for m in info.moves:
        if m.round < info.round and m.captured:
            last = m.player + 1
    root = PublicRoot(info.round, 0, pool, (clubs[0], clubs[1]), last, v)
    return root, tuple((m.card, m.captured) for m in moves)


def _round_rng(info: InfoState, seed: int) -> np.random.Generator:
    """A generator seeded by ``seed`` and what the player knew at the round's start (its dealt
    hand, the public history before the round): every decision of a round draws the same hands."""
    h = hashlib.blake2b(digest_size=16)
    before = [(m.player, m.card, m.captured) for m in info.moves if m.round < info.round]
    h.update(repr((info.player, info.round, info.initial_pool, info.dealt(info.player, info.round), before)).encode())
    return np.random.default_rng([seed & 0xFFFFFFFF, *np.frombuffer(h.digest(), dtype=np.uint32).tolist()])


def _hands(
    known: int, free: int, size: int, k: int, every: int, rng: np.random.Generator, first: int | None
) -> list[int]:
    """Hands ``known`` plus ``size`` cards of ``free``: all of them when at most ``every``, else
    ``k`` distinct ones drawn uniformly (``first`` always among them, first)."""
    cards = cards_of(free)
    out = [] if first is None else [first]
    if math.comb(len(cards), size) <= max(k, every):
        every = [known | sum(1 << c for c in combo) for combo in combinations(cards, size)]
        return out + [h for h in every if h != first]
    seen = set(out)
    for _ in range(20 * k):
        if len(out) >= k:
            break
        hand = known | sum(1 << int(c) for c in rng.choice(cards, size, replace=False))
        if hand not in seen:
            seen.add(hand)
            out.append(hand)
    return out


def belief_state(
    info: InfoState, hands: int, exact: int, seed: int, *, here: bool = False, own: int | None = None
) -> BeliefState:
    """The public belief state of ``info`` (see the module docstring), from ``info`` alone: at
    the round's start (hands as dealt this round), or ``here``, at the current position (hands
    as held now, every consistent hand as likely: what the round's moves said is dropped).
    ``hands`` opponent hands, ``own`` (default ``hands``) of the agent's own range; either range
    enumerated whole when it has at most ``exact`` hands."""
    me, opp = info.player, 1 - info.player
    if here:
        last = 0 if info.last_capturer is None else info.last_capturer + 1
        root = PublicRoot(info.round, info.turn, info.pool, info.clubs, last, info.variant)
        moves: tuple[tuple[int, int], ...] = ()
        mine_played = opp_played = 0
    else:
        root, moves = round_start(info)
        mine_played, opp_played = info.played_this_round(me), info.played_this_round(opp)
    rng = _round_rng(info, seed) if not here else info_seed(info, seed)
    opp_hands = _hands(opp_played, info.unseen, info.opponent_hand_size, hands, exact, rng, None)
    true_hand = mine_played | info.hand
    own = hands if own is None else own
    my_free, my_size = info.unseen | info.hand, info.hand.bit_count()
    my_hands = _hands(mine_played, my_free, my_size, own, exact, rng, true_hand)
    capped = not here and info.variant.is_standard and info.round < info.variant.final_round
    if capped and _n_pairs(my_hands, opp_hands) > MAX_PAIRS:
        my_hands = _hands(mine_played, my_free, my_size, own, own, rng, true_hand)
        if _n_pairs(my_hands, opp_hands) > MAX_PAIRS:
            opp_hands = _hands(opp_played, info.unseen, info.opponent_hand_size, hands, hands, rng, None)
    seat = [np.zeros(0, np.int64), np.zeros(0, np.int64)]
    seat[me], seat[opp] = np.array(my_hands, dtype=np.int64), np.array(opp_hands, dtype=np.int64)
    ii, jj = np.meshgrid(np.arange(len(seat[0])), np.arange(len(seat[1])), indexing="ij")
    ii, jj = ii.ravel(), jj.ravel()
    disjoint = (seat[0][ii] & seat[1][jj]) == 0
    pairs = np.stack([ii[disjoint], jj[disjoint]], 1)
    universe = info.unseen | true_hand | opp_played
    remaining = universe & ~(seat[0][pairs[:, 0]] | seat[1][pairs[:, 1]])
    return BeliefState(root, moves, (seat[0], seat[1]), pairs, np.ones(len(pairs)), remaining)


def _n_pairs(mine: list[int], theirs: list[int]) -> int:
    """How many pairs of the two ranges hold no card twice."""
    b = np.array(theirs, dtype=np.int64)
    return int(sum(np.count_nonzero((b & h) == 0) for h in mine))


@dataclass
class _Round:
    """A round's expansion, its solve from the round's start and its latest re-solve."""

    expansion: Expansion
    base: RangeSolve
    solve: RangeSolve


def _covers(solve: RangeSolve, level: int, pub: int) -> bool:
    """Whether the public node is in the solve's tree."""
    j = level - solve.rt.level
    return 0 <= j < len(solve.rt.node) and bool(np.any(solve.rt.expansion.pub[level][solve.rt.node[j]] == pub))


class CFRAgent(HiddenAgent):
    """See the module docstring: ``hands`` of the opponent's range, ``own`` of the agent's
    (default ``hands``), ``iterations`` of CFR per solve (DCFR), ``resolve`` later decisions of a
    round, ``exact`` as :data:`EXACT_HANDS`."""

    def __init__(
        self,
        hands: int = 8,
        iterations: int = 64,
        *,
        own: int | None = None,
        resolve: bool = True,
        exact: int = EXACT_HANDS,
        epsilon: float = 0.1,
        seed: int = 0,
        device: str = "cpu",
        boundary=None,
        name: str = "cfr",
    ) -> None:
        self.hands, self.iterations, self.resolve, self.exact = hands, iterations, resolve, exact
        self.own = hands if own is None else own
        self.epsilon, self.seed, self.device, self.name = epsilon, seed, device, name
        self.boundary = boundary
        self._exact_boundaries: dict = {}
        self._rounds: OrderedDict[tuple, _Round] = OrderedDict()

    # -- the interface -------------------------------------------------------------------------
    def choose(self, info: InfoState) -> Action:
        actions, probs = self.strategy(info)
        u = float(info_seed(info, self.seed).random())
        return actions[min(int(np.searchsorted(np.cumsum(probs), u * probs.sum(), side="right")), len(actions) - 1)]

    def action_values(self, info: InfoState) -> list[tuple[Action, float]]:
        solve, level, pub, hand_id = self._solved(info)
        sign = 1 if info.player == 0 else -1
        q = solve.action_values(level, pub, hand_id)
        banked = _banked(solve, level, pub)
        acts = solve.strategy(level, pub, hand_id)[0]
        return [(a, float(info.margin + sign * (x - banked))) for a, x in zip(acts, q, strict=True)]

    def strategy(self, info: InfoState) -> tuple[list[Action], np.ndarray]:
        """The legal actions (the rules' order) and the probability the agent plays each (a
        forced move, its round's last card, without a solve: no later decision of the round needs it)."""
        legal = info.legal_actions()
        if len(legal) == 1:
            return legal, np.ones(1)
        solve, level, pub, hand_id = self._solved(info)
        acts, probs = solve.strategy(level, pub, hand_id)
        if sorted(legal) != sorted(acts):
            raise AssertionError("the range solve's actions differ from the rules' legal actions")
        by_action = dict(zip(acts, probs.tolist(), strict=True))
        return legal, np.array([by_action[a] for a in legal])

    # -- solving -------------------------------------------------------------------------------
    def _solved(self, info: InfoState) -> tuple[RangeSolve, int, int, int]:
        """The solve that answers ``info``, the expansion level and public node of its decision
        and its true hand's index in its seat's range."""
        key = _round_key(info)
        state = self._rounds.get(key)
        _, moves = round_start(info)
        if state is not None:
            self._rounds.move_to_end(key)
            try:
                level, pub = state.expansion.public_node(list(moves[state.expansion.root.turn :]))
                if not _covers(state.base, level, pub):
                    raise KeyError("outside the solved pairs")
            except KeyError:  # the opponent's moves left the sampled hands: sample them again
                state = None
        if state is None:
            state, level, pub = self._fresh_at(info, moves)
        if not _covers(state.solve, level, pub):
            state.solve = state.base
        if self.resolve and level > state.solve.rt.level:
            nodes, weight, gadget = state.solve.resolve_inputs(level, pub, self.epsilon)
            rt = history_tree(state.expansion, level, nodes, weight, gadget)
            state.solve = RangeSolve(rt, self._iterations(rt, info), device=self.device)
        self._rounds[key] = state
        while len(self._rounds) > CACHE:
            self._rounds.popitem(last=False)
        return state.solve, level, pub, 0

    def _fresh_at(self, info: InfoState, moves: tuple[tuple[int, int], ...]) -> tuple[_Round, int, int]:
        """A solve from the round's start (every sampled hand holds the cards its seat played this
        round) and the public node of ``info`` in it; from the current position if none is."""
        state = self._fresh(info)
        try:
            level, pub = state.expansion.public_node(list(moves))
        except KeyError:
            return self._fresh(info, here=True), 0, 0
        if not _covers(state.base, level, pub):
            return self._fresh(info, here=True), 0, 0
        return state, level, pub

    def _fresh(self, info: InfoState, here: bool = False) -> _Round:
        """Sample the ranges, expand the round from its start (or ``here``) and solve it."""
        b = belief_state(info, self.hands, self.exact, self.seed, here=here, own=self.own)
        pair_hands = (b.hands[0][b.pairs[:, 0]], b.hands[1][b.pairs[:, 1]])
        exp = expand(b.root, pair_hands, b.remaining, self._boundary_for(info))
        exp.hand_id = (b.pairs[:, 0], b.pairs[:, 1])  # the true hand is index 0 of its seat's range
        roots = _within_budget(exp, b.pairs[:, 1 - info.player]) if info.variant.is_standard else None
        roots = np.arange(len(b.pairs)) if roots is None else roots
        rt = history_tree(exp, 0, roots, b.weight[roots])
        solve = RangeSolve(rt, self._iterations(rt, info), device=self.device)
        return _Round(exp, solve, solve)

    def _iterations(self, rt, info: InfoState) -> int:
        """``iterations``, or in the standard game fewer for a tree over :data:`WORK_NODES` nodes
        (in proportion to its size, at least half)."""
        nodes = rt.tree.n_histories
        if not info.variant.is_standard or nodes <= WORK_NODES:
            return self.iterations
        return max((self.iterations + 1) // 2, self.iterations * WORK_NODES // nodes)

    def _boundary_for(self, info: InfoState):
        """None after the last round; the learned boundary in the standard game; a variant's exact one."""
        v = info.variant
        if info.round == v.final_round:
            return None
        if v.is_standard:
            if self.boundary is None:
                from pasur.hidden.boundary import default_boundary

                self.boundary = default_boundary(self.device)
            return self.boundary
        if v not in self._exact_boundaries:
            from pasur.hidden.variant_boundary import ExactBoundary

            self._exact_boundaries[v] = ExactBoundary(v, self.device)
        return self._exact_boundaries[v]


def _within_budget(exp: Expansion, opp_hand: np.ndarray, budget: int | None = None) -> np.ndarray | None:
    """The roots (pairs) to solve when the expansion has more than ``budget`` nodes (default
    :data:`NODE_BUDGET`): every pair of the opponent hands that fit, taken in a fixed scrambled
    order of their indices (an enumerated range is in the cards' order, a drawn one in the
    draw's), at least one hand's; ``None`` when all fit."""
    budget = NODE_BUDGET if budget is None else budget
    n = len(opp_hand)
    per_pair = np.zeros(n, dtype=np.int64)
    for level_pairs in exp.pair:
        per_pair += np.bincount(level_pairs, minlength=n)
    if per_pair.sum() <= budget:
        return None
    per_hand = np.bincount(opp_hand, weights=per_pair)
    order = np.argsort((np.arange(len(per_hand), dtype=np.int64) * 2654435761) % 4294967291, kind="stable")
    keep = max(1, int(np.searchsorted(np.cumsum(per_hand[order]), budget, side="right")))
    return np.flatnonzero(np.isin(opp_hand, order[:keep]))


def _round_key(info: InfoState) -> tuple:
    """What identifies a round of one game for its player: the history before it and its hand."""
    before = tuple((m.player, m.card, m.captured) for m in info.moves if m.round < info.round)
    return (info.variant.name, info.player, info.round, info.initial_pool, info.dealt(info.player, info.round), before)


def _banked(solve: RangeSolve, level: int, pub: int) -> float:
    """The points banked from the expansion's root to the public node (the same in every history
    there: they are the public moves' points)."""
    exp = solve.rt.expansion
    return float(exp.banked[level][np.flatnonzero(exp.pub[level] == pub)[0]])
