"""The betting tree: the public tree of a poker game without its chance nodes.

Every node is a betting history (a string such as ``"cr/rc"``: ``f`` fold, ``c`` check or call,
``r`` bet or raise, ``/`` between rounds). The node reached by the call (or second check) that
ends round ``r`` is the *root* of round ``r + 1``; the cards dealt there are not nodes here: the
engine crosses a round boundary by gathering over boards (:mod:`pasur.poker.boards`). Nodes are
numbered round by round, and inside a round by depth (actions since the round began), so each
level of each round is a contiguous range: the engine processes one level of every betting
sequence at once.

>>> from pasur.poker.games import get_game
>>> t = BettingTree(get_game("kuhn"))
>>> [t.history[i] for i in range(t.n_nodes)]
['', 'c', 'r', 'cc', 'cr', 'rf', 'rc', 'crf', 'crc']
>>> t.n_decision
4
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pasur.poker.games import PokerGame

FOLD, CALL, RAISE = 0, 1, 2
N_ACTIONS = 3
ACTION_LETTERS = "fcr"

DECISION, FOLDED, SHOWDOWN = 0, 1, 2


@dataclass
class _State:
    history: str
    round: int
    contrib: tuple[int, int]
    bets: int  # bets and raises in this round
    acted: int  # actions in this round
    player: int
    parent: int
    action: int


class BettingTree:
    """Arrays over nodes (numpy): ``parent``, ``action`` (into it), ``round``, ``depth`` (in its
    round), ``kind`` (DECISION / FOLDED / SHOWDOWN), ``actor`` (player to act, or the player who
    folded, or -1), ``contrib`` ``[N, 2]`` (chips each player has put in), ``legal`` ``[N, 3]``,
    ``child`` ``[N, 3]`` (-1 where illegal), ``decision_index`` (the node's row among its round's
    decision nodes, or -1)."""

    def __init__(self, game: PokerGame) -> None:
        self.game = game
        states = self._expand(game)
        # order: by round, then depth in round, then creation (breadth-first) order
        order = sorted(range(len(states)), key=lambda i: (states[i].round, states[i].acted, i))
        new = {old: k for k, old in enumerate(order)}
        n = len(order)
        self.n_nodes = n
        self.history = [states[i].history for i in order]
        self.parent = np.array([new.get(states[i].parent, -1) for i in order], dtype=np.int64)
        self.action = np.array([states[i].action for i in order], dtype=np.int64)
        self.round = np.array([states[i].round for i in order], dtype=np.int64)
        self.depth = np.array([states[i].acted for i in order], dtype=np.int64)
        self.contrib = np.array([states[i].contrib for i in order], dtype=np.int64)
        self.kind = np.full(n, DECISION, dtype=np.int64)
        self.actor = np.full(n, -1, dtype=np.int64)
        self.legal = np.zeros((n, N_ACTIONS), dtype=bool)
        self.child = np.full((n, N_ACTIONS), -1, dtype=np.int64)
        for k, i in enumerate(order):
            s = states[i]
            if s.player >= 0:
                self.actor[k] = s.player
            elif s.action == FOLD:
                self.kind[k] = FOLDED
                self.actor[k] = states[s.parent].player  # who folded
            else:
                self.kind[k] = SHOWDOWN
        for k in range(n):
            if self.parent[k] >= 0:
                self.child[self.parent[k], self.action[k]] = k
                self.legal[self.parent[k], self.action[k]] = True
        self.n_rounds = game.n_rounds
        self.is_decision = self.kind == DECISION
        self.decision_index = np.full(n, -1, dtype=np.int64)
        self.round_nodes: list[tuple[int, int]] = []
        self.round_levels: list[list[tuple[int, int]]] = []
        self.round_decisions: list[np.ndarray] = []
        for r in range(game.n_rounds):
            ids = np.nonzero(self.round == r)[0]
            lo, hi = (int(ids[0]), int(ids[-1]) + 1) if len(ids) else (0, 0)
            self.round_nodes.append((lo, hi))
            levels = []
            for d in range(int(self.depth[lo:hi].max()) + 1 if hi > lo else 0):
                lv = np.nonzero(self.depth[lo:hi] == d)[0] + lo
                levels.append((int(lv[0]), int(lv[-1]) + 1))
            self.round_levels.append(levels)
            dec = ids[self.is_decision[ids]]
            self.decision_index[dec] = np.arange(len(dec))
            self.round_decisions.append(dec)
        self.n_decision = int(self.is_decision.sum())

    @staticmethod
    def _expand(game: PokerGame) -> list[_State]:
        a = game.ante
        states = [_State("", 0, (a, a), 0, 0, game.first_player[0], -1, -1)]
        i = 0
        while i < len(states):
            s = states[i]
            if s.player >= 0:
                for act in _legal(game, s):
                    states.append(_step(game, s, i, act))
            i += 1
        return states

    @property
    def max_depth(self) -> int:
        return int(self.depth.max())

    def round_roots(self, r: int) -> np.ndarray:
        """Nodes where round ``r`` begins (its first level)."""
        lo, hi = self.round_levels[r][0]
        return np.arange(lo, hi)


def _legal(game: PokerGame, s: _State) -> list[int]:
    facing = s.contrib[1 - s.player] > s.contrib[s.player]
    acts = []
    if facing or game.fold_without_bet:
        acts.append(FOLD)
    acts.append(CALL)
    if s.bets < game.max_bets[s.round]:
        acts.append(RAISE)
    return acts


def _step(game: PokerGame, s: _State, index: int, act: int) -> _State:
    p = s.player
    c = list(s.contrib)
    sep = ""
    hist = s.history + ACTION_LETTERS[act]
    if act == FOLD:
        return _State(hist, s.round, s.contrib, s.bets, s.acted + 1, -1, index, act)
    if act == RAISE:
        c[p] = c[1 - p] + game.bet_sizes[s.round]
        return _State(hist, s.round, (c[0], c[1]), s.bets + 1, s.acted + 1, 1 - p, index, act)
    # check or call
    c[p] = c[1 - p]
    ends = s.bets > 0 or s.acted >= 1
    if not ends:
        return _State(hist, s.round, (c[0], c[1]), s.bets, s.acted + 1, 1 - p, index, act)
    if s.round + 1 == game.n_rounds:
        return _State(hist, s.round, (c[0], c[1]), s.bets, s.acted + 1, -1, index, act)
    sep = "/"
    r = s.round + 1
    return _State(hist + sep, r, (c[0], c[1]), 0, 0, game.first_player[r], index, act)
