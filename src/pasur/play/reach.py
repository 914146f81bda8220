"""How often play reaches each node of a tree: reach probabilities over the whole game, round
after round through the links between rounds.

A strategy table holds a row for every edge of the tree, and most of those rows are decisions
that play against an equilibrium or a random player almost never meets (issue 29: the first
decision of deck 2 is 5 rows of 3.99 million). A model fitted to every row alike spends its
capacity where it never plays; these reaches let it weigh each row by how often it is met.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from pasur.game.state import ALEX, TURNS_PER_ROUND
from pasur.solve.exact import Strategy
from pasur.solve.gametree import GameTree


def node_reach(
    tree: GameTree, strategy: Strategy, player: int, opponent: Strategy | None = None, mover: int | None = None
) -> dict[tuple[int, int], torch.Tensor]:
    """``{(round, turn): reach}``: the probability (per root, float64) that play reaches every
    node at ``turn`` (the parents of that turn's edges) when ``player`` follows ``strategy`` and
    the other player ``opponent`` (``None``: uniformly at random over the legal actions, as the
    random agent plays). In compact mode a merged node sums the reach of its histories.
    ``mover``: keep only the turns that player moves at (half the memory on a tail deck's tree)."""
    out: dict[tuple[int, int], torch.Tensor] = {}
    v = torch.ones(tree.n_roots, dtype=torch.float64, device=tree.device)
    prev = None
    for rt in tree.rounds:
        if prev is not None:
            nxt = torch.zeros(rt.n_nodes(rt.start_turn), dtype=torch.float64, device=v.device)
            v = nxt.index_add_(0, prev.link.long().to(v.device), v)
        elif v.shape[0] != rt.n_nodes(rt.start_turn):
            v = torch.cat([v, v.new_zeros(rt.n_nodes(rt.start_turn) - v.shape[0])])
        for t in range(rt.start_turn, TURNS_PER_ROUND):
            parent, child, _ = (x.to(v.device) for x in rt.edges(t))
            acting = ALEX if (t & 1) == ALEX else 1 - ALEX
            if mover is None or acting == mover:
                out[(rt.round, t)] = v
            if acting == player:
                p = strategy[(rt.round, t)].to(v.device, torch.float64)
            elif opponent is not None:
                p = opponent[(rt.round, t)].to(v.device, torch.float64)
            else:
                deg = torch.bincount(parent, minlength=rt.n_nodes(t)).to(torch.float64)
                p = 1.0 / deg[parent]
            nxt = torch.zeros(rt.n_nodes(t + 1), dtype=torch.float64, device=v.device)
            v = nxt.index_add_(0, child, v[parent] * p)
        prev = rt
    return out


def iter_edge_play_weights(tree: GameTree, strategy: Strategy) -> Iterator[torch.Tensor]:
    """Per layer, in the tree's order (the order of a strategy table's rows): each edge's weight
    in play, the reach of its node averaged over the matchups a model of ``strategy`` plays: with
    its mover following ``strategy`` against the random agent and against ``strategy`` itself.
    A layer at a time, each node's weights freed once its layer is given (a tail deck's tree has
    300 M edges)."""
    node: dict[tuple[int, int], torch.Tensor] = {}  # each turn's node weight, its mover's two matchups
    for p in (ALEX, 1 - ALEX):
        against_random = node_reach(tree, strategy, p, None, mover=p)
        for key, v in node_reach(tree, strategy, p, strategy, mover=p).items():
            node[key] = 0.5 * (against_random.pop(key) + v)
        del against_random
    for rt in tree.rounds:
        for t in range(rt.start_turn, TURNS_PER_ROUND):
            parent = rt.edges(t)[0].to(tree.device)
            yield node.pop((rt.round, t))[parent]
