"""The open-hand optimal player: it sees everything (both hands, the undealt cards) and plays the
exact solver's move. Not a hidden-hand agent: the arena's upper bound, showing what hidden
information costs the others. It is the only agent given the full state (``omniscient``).

Each deck's whole game is built and solved once (compact tree, :mod:`pasur.solve.exact`); a game
in progress is followed through the tree along its moves, so a move costs a lookup.

>>> from pasur.game.cards import Deck
>>> from pasur.hidden.agents import GreedyAgent
>>> from pasur.hidden.game import play_hidden
>>> from pasur.solve.reference import ReferenceSolver
>>> deck = Deck.from_seed(11)  # a deck of the fast half (the time to solve one is heavy-tailed)
>>> result = play_hidden(deck, (OptimalAgent(), OptimalAgent()))
>>> result.utility == ReferenceSolver(deck).value(result.state.__class__.initial(deck))
True
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import torch

from pasur.game.cards import Deck
from pasur.game.rules import Action
from pasur.game.state import TURNS_PER_ROUND, GameState
from pasur.hidden.infostate import Move


class OptimalAgent:
    """Optimal open-hand play (ties: first in legal order, as the reference solver)."""

    name = "optimal"
    omniscient = True

    def __init__(self, device: str | torch.device = "cpu", cache: int = 64) -> None:
        self.device = torch.device(device)
        self.cache = cache
        self._solved: OrderedDict[Deck, tuple] = OrderedDict()
        self._cursor: dict[tuple[Deck, tuple[Move, ...]], tuple[int, int, int]] = {}

    def prepare(self, decks: Sequence[Deck]) -> None:
        """Solve these decks now (the arena calls this before a batch of games)."""
        for d in decks:
            self._solution(d)

    def _solution(self, deck: Deck):
        if deck in self._solved:
            self._solved.move_to_end(deck)
            return self._solved[deck]
        from pasur.solve.exact import solve_exact
        from pasur.solve.tree import build_tree

        tree = build_tree(GameState.initial(deck), "compact", self.device, infosets=False)
        sol = solve_exact(tree)
        self._solved[deck] = (tree, sol)
        while len(self._solved) > self.cache:
            old, _ = self._solved.popitem(last=False)
            self._cursor = {k: v for k, v in self._cursor.items() if k[0] != old}
        return self._solved[deck]

    def _node(self, deck: Deck, moves: tuple[Move, ...]) -> tuple[int, int, int]:
        """(round, turn, node) of the game after ``moves``, walked from the longest known prefix."""
        tree, _ = self._solution(deck)
        n = len(moves)
        for back in range(n + 1):
            hit = self._cursor.get((deck, moves[: n - back]))
            if hit is not None or back == n:
                break
        r, t, node = hit if hit is not None else (0, 0, 0)
        for mv in moves[n - back :]:
            rt = tree.round(r)
            parent, child, gt_edge = rt.edges(t)
            layer = rt.gt[t]
            mine = torch.nonzero(parent == node).flatten()
            g = gt_edge[mine]
            hit_edge = mine[(layer.card[g].long() == mv.card) & (layer.captured[g] == mv.captured)]
            node, t = int(child[hit_edge[0]]), t + 1
            if t == TURNS_PER_ROUND and rt.link is not None:
                node, r, t = int(rt.link[node]), r + 1, 0
        self._cursor[(deck, moves)] = (r, t, node)
        return r, t, node

    def action_values_open(self, state: GameState, moves: Sequence[Move]) -> list[tuple[Action, float]]:
        """Each legal action's exact final margin for the mover."""
        from pasur.solve.reference import banked_diff

        tree, sol = self._solution(state.deck)
        r, t, node = self._node(state.deck, tuple(moves))
        rt = tree.round(r)
        parent, child, gt_edge = rt.edges(t)
        mine = torch.nonzero(parent == node).flatten()
        nxt = sol.values[(r, t + 1)]
        layer = rt.gt[t]
        sign = 1 if state.player == 0 else -1
        base = banked_diff(state)
        out = []
        for e in mine.tolist():
            g = int(gt_edge[e])
            v = base + float(layer.reward[g]) + float(nxt[child[e]])
            out.append((Action(int(layer.card[g]), int(layer.captured[g])), sign * v))
        return sorted(out, key=lambda av: av[0])

    def choose_open(self, state: GameState, moves: Sequence[Move]) -> Action:
        tree, sol = self._solution(state.deck)
        r, t, node = self._node(state.deck, tuple(moves))
        if (r, t) != (state.round, state.turn):
            raise AssertionError("the optimal player lost track of the game")
        g = int(sol.best_edge[(r, t)][node])
        layer = tree.round(r).gt[t]
        return Action(int(layer.card[g]), int(layer.captured[g]))

    def forget(self) -> None:
        """Drop the solved decks (memory) and the games followed."""
        self._solved.clear()
        self._cursor.clear()
