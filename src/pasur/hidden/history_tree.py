"""The whole hidden-hand game of a small variant as a tree of histories, level by level.

Chance deals the pool and both first hands at the root, and both next hands at the end of each
deal but the last; the players move in turn (Alex leads every deal). Every node is a history:
nodes are never merged, so a node's information set is fixed by what its mover has seen. Each
node carries, per player, an *observation id*: an interned chain of what that player has seen
(the initial pool and own hand at the deal, then each public move, then each own new hand),
which is exactly the content of :class:`~pasur.hidden.infostate.InfoState`; a decision node's
information set is its mover's observation id. The rules are those of the scalar engine
(:class:`~pasur.game.state.GameState` with the variant; ``deck=None``, as chance deals here).

Every level holds nodes of one kind: all chance, all Alex's, all Bob's, or (the last) all
terminal, since the order of turns and deals is the same in every game. The arrays are what the
vectorized solver (:mod:`pasur.hidden.exact_cfr`) moves to its device.

>>> micro = Variant("micro", "A T J of clubs, diamonds", (0, 9, 10), (0, 1), 1, 2, 2, ((0, 1), (1, 1)), 2, 1, 1)
>>> tree = build_tree(micro)
>>> [lv.kind for lv in tree.levels]
['chance', 'alex', 'bob', 'chance', 'alex', 'bob', 'terminal']
>>> len(tree.levels[1]) == micro.deals_count() // 2   # 6 pools x 4 x 3 hands; then 2 x 1 hands
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from pasur.game.cards import JACK, format_cards, mask_of, rank
from pasur.game.rules import Action
from pasur.game.state import GameState
from pasur.game.variants import Variant, get_variant

KINDS = ("alex", "bob", "chance", "terminal")

#: the sizes of the small variants' trees, as :func:`build_tree` counts them (histories, then
#: Alex's and Bob's information sets): ``pasur variants`` lists them without building the trees;
#: ``tests/hidden/test_variants_cfr.py`` rebuilds tiny's, micro's and duo's, ``pasur hidden-solve`` writes each one's
#: into its summary (``results/hidden-variants/``)
SIZES: dict[str, tuple[int, int, int]] = {
    "tiny": (180_445, 56_764, 71_104),
    "mini": (4_983_137, 1_589_212, 1_968_816),
    "micro": (745, 192, 252),
    "duo": (625, 204, 252),
}


@dataclass
class Level:
    """One level of the tree: its nodes' ``kind``, and how each was reached: ``parent`` (an index
    into the previous level), ``edge`` (the index of the action taken in the parent's legal
    actions, for a decision parent) and ``prob`` (the deal's probability, for a chance parent;
    1 otherwise). ``infoset`` (decision levels): the mover's information set, numbered per player.
    ``value`` (terminal level): Alex's points minus Bob's."""

    kind: str
    parent: np.ndarray
    edge: np.ndarray
    prob: np.ndarray
    infoset: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return int(self.parent.shape[0])


@dataclass
class HistoryTree:
    """The levels; per player, its information sets' legal actions and where each was found
    (level and representative node); and per level the observations' chains (``obs_parent``: the
    id the observation extends, in the level before; ``obs_event``: what was seen)."""

    variant: Variant
    levels: list[Level]
    actions: tuple[list[tuple[Action, ...]], list[tuple[Action, ...]]]
    infoset_level: tuple[list[int], list[int]]
    infoset_obs: tuple[list[int], list[int]]
    obs_parent: list[tuple[np.ndarray, np.ndarray]]
    obs_event: list[tuple[list, list]]

    @property
    def n_histories(self) -> int:
        return sum(len(lv) for lv in self.levels)

    @property
    def n_infosets(self) -> tuple[int, int]:
        return len(self.actions[0]), len(self.actions[1])

    @property
    def max_actions(self) -> int:
        return max((int(action_counts(side).max(initial=0)) for side in self.actions), default=1) or 1

    def seen(self, player: int, infoset: int) -> list[tuple]:
        """What the player has seen at that information set, in order: ``("deal", pool, hand)``,
        then ``("move", card, captured)`` and ``("hand", hand)`` events."""
        level, obs = self.infoset_level[player][infoset], self.infoset_obs[player][infoset]
        chain = []
        while level > 0:
            chain.append(self.obs_event[level][player][obs])
            obs = int(self.obs_parent[level][player][obs])
            level -= 1
        return chain[::-1]

    def describe_infoset(self, player: int, infoset: int) -> str:
        """:meth:`seen` as text, such as ``pool 5C 6D hand AC KD | AC lays | KS takes KD``."""
        parts = []
        for event in self.seen(player, infoset):
            if event[0] == "deal":
                parts.append(f"pool {format_cards(event[1])} hand {format_cards(event[2])}")
            elif event[0] == "hand":
                parts.append(f"hand {format_cards(event[1])}")
            else:
                parts.append(str(Action(event[1], event[2])))
        return " | ".join(parts)


def action_counts(side) -> np.ndarray:
    """How many legal actions each of a player's information sets has: ``side.lengths()`` where
    the list builds its tuples on demand (:class:`pasur.hidden.rangesolve.InfosetActions`), so
    counting them builds none."""
    lengths = getattr(side, "lengths", None)
    return np.asarray(lengths() if lengths is not None else [len(a) for a in side], dtype=np.int64)


def _hands(cards: int, size: int):
    """Every (Alex's hand, Bob's hand) of ``size`` cards each from ``cards``."""
    pool = [1 << c for c in range(52) if cards >> c & 1]
    for a in combinations(pool, size):
        ha = sum(a)
        rest = [c for c in pool if not c & ha]
        for b in combinations(rest, size):
            yield ha, sum(b)


class _Observations:
    """Per level, each node's observation id per player: the parent's id and the event seen,
    numbered densely within the level (``np.unique`` of ``parent id x events + event code``)."""

    def __init__(self) -> None:
        self.parent: list[tuple[np.ndarray, np.ndarray]] = []
        self.event: list[tuple[list, list]] = []

    def extend(self, parent_obs: tuple[np.ndarray, np.ndarray], events: tuple[list, list]) -> tuple:
        """The children's ids from their parents' ids and the event each player saw."""
        ids, parents, kept = [], [], []
        for p in (0, 1):
            codes: dict = {}
            code = np.array([codes.setdefault(e, len(codes)) for e in events[p]], dtype=np.int64)
            key = parent_obs[p] * max(len(codes), 1) + code
            _uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            ids.append(inverse.astype(np.int64))
            parents.append(parent_obs[p][first])
            kept.append([events[p][i] for i in first.tolist()])
        self.parent.append((parents[0], parents[1]))
        self.event.append((kept[0], kept[1]))
        return ids[0], ids[1]


def _root_deals(v: Variant):
    """The root's children: every (pool, Alex's hand, Bob's hand), the pool without Jacks."""
    non_jacks = [c for c in v.cards if rank(c) != JACK]
    states, events = [], ([], [])
    for pool_cards in combinations(non_jacks, v.pool_size):
        pool = mask_of(pool_cards)
        for ha, hb in _hands(v.deck_mask & ~pool, v.hand_size):
            states.append(GameState(None, 0, 0, (ha, hb), pool, variant=v))  # type: ignore[arg-type]
            events[0].append(("deal", pool, ha))
            events[1].append(("deal", pool, hb))
    return states, events


def build_tree(variant: str | Variant) -> HistoryTree:
    """The variant's whole hidden-hand game tree (every deal, every line of play)."""
    v = get_variant(variant)
    observations = _Observations()
    observations.parent.append((np.zeros(1, np.int64), np.zeros(1, np.int64)))
    observations.event.append(([None], [None]))
    actions: tuple[list, list] = ([], [])
    where: tuple[list, list] = ([], [])  # per infoset: its level and observation id
    none_i, none_f = np.zeros(0, np.int64), np.zeros(0)
    levels = [Level("chance", np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1), none_i, none_f)]
    states, events = _root_deals(v)
    parent = np.zeros(len(states), np.int64)
    edge, prob = np.zeros(len(states), np.int64), np.full(len(states), 1.0 / len(states))
    zero = np.zeros(len(states), np.int64)
    obs = observations.extend((zero, zero), events)
    while True:
        s0 = states[0]
        if s0.is_terminal:
            values = np.array([s.utility() for s in states], dtype=np.float64)
            levels.append(Level("terminal", parent, edge, prob, none_i, values))
            break
        dealing = s0.turn == v.turns_per_round
        level = Level("chance" if dealing else ("alex", "bob")[s0.player], parent, edge, prob, none_i, none_f)
        levels.append(level)
        if dealing:  # the end of a deal but the last: chance deals the next hands
            states, events, parent, prob = _deal_next(states)
            edge = np.zeros(len(states), np.int64)
        else:
            mover = s0.player
            level.infoset = _infosets(obs[mover], len(levels) - 1, states, actions[mover], where[mover])
            states, events, parent, edge = _decide(states)
            prob = np.ones(len(states))
        obs = observations.extend((obs[0][parent], obs[1][parent]), events) if not states[0].is_terminal else obs
    infoset_level = tuple([lv for lv, _ in w] for w in where)
    infoset_obs = tuple([o for _, o in w] for w in where)
    return HistoryTree(v, levels, actions, infoset_level, infoset_obs, observations.parent, observations.event)


def _infosets(obs: np.ndarray, level: int, states: list, actions: list, where: list) -> np.ndarray:
    """The mover's information sets at a decision level: one per observation id, numbered after
    those of the earlier levels; each one's legal actions from its first node."""
    uniq, first = np.unique(obs, return_index=True)
    base = len(actions)
    for o, n in zip(uniq.tolist(), first.tolist(), strict=True):
        actions.append(tuple(states[n].legal_actions()))
        where.append((level, o))
    return base + np.searchsorted(uniq, obs)


def _decide(states):
    """Every legal action of every node of a decision level, played; after the last card of
    the game, the final sweep."""
    mover = states[0].player
    final = states[0].turn + 1 == states[0].variant.turns_per_round and states[0].round == states[0].variant.final_round
    children, child_parent, child_edge, seen = [], [], [], []
    legal_of: dict[tuple[int, int], list[Action]] = {}
    for n, s in enumerate(states):
        hp = (s.hands[mover], s.pool)
        legal = legal_of.get(hp)
        if legal is None:
            legal = legal_of[hp] = s.legal_actions()
        for a, act in enumerate(legal):
            child = s.play(act)
            children.append(child.end_round() if final else child)  # the final sweep
            child_parent.append(n)
            child_edge.append(a)
            seen.append(("move", act.card, act.captured))
    return children, (seen, seen), np.array(child_parent, np.int64), np.array(child_edge, np.int64)


def _deal_next(states):
    """The end of a deal: every node deals both next hands from the cards not yet seen."""
    v = states[0].variant
    children, child_parent, prob, events = [], [], [], ([], [])
    for n, s in enumerate(states):
        undealt = v.deck_mask & ~(s.pool | s.piles[0] | s.piles[1])
        deals = list(_hands(undealt, v.hand_size))
        for ha, hb in deals:
            children.append(replace(s, round=s.round + 1, turn=0, hands=(ha, hb)))
            events[0].append(("hand", ha))
            events[1].append(("hand", hb))
            child_parent.append(n)
            prob.append(1.0 / len(deals))
    return children, events, np.array(child_parent, np.int64), np.array(prob)


def seen_key(info) -> tuple:
    """What :meth:`HistoryTree.seen` lists, read off an
    :class:`~pasur.hidden.infostate.InfoState`: the deal, then the moves, with each own new hand
    where its deal began. The key of the information set ``info`` is in."""
    p = info.player
    events: list[tuple] = [("deal", info.initial_pool, info.dealt(p, 0))]
    rnd = 0
    for m in info.moves:
        while m.round > rnd:
            rnd += 1
            events.append(("hand", info.dealt(p, rnd)))
        events.append(("move", m.card, m.captured))
    while info.round > rnd:
        rnd += 1
        events.append(("hand", info.dealt(p, rnd)))
    return tuple(events)
