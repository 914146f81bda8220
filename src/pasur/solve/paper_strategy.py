"""The strategy of the paper's own code (sinabaghal/Pasur, ``SimulateGameRun9.py``) carried onto
our ``paper`` tree, so that our exact best responses can value it (issue 43, item 5;
``benchmarks/paper_code_cfr.py`` runs that code).

The paper's code keeps, per layer ``{round}_{turn}_{player}`` (the layer after that move), the
game-tree nodes' card codes ``t_cmp`` [G, m], the full-game-tree nodes ``t_fgm`` [Q, 2] = (GT
node, score id) with the round's inherited scores ``t_scr`` [S, 4] = (Alex clubs, Bob clubs,
points (kept 0), 7-clubs flag), and one probability per FGT node: that of the move into it. Our
paper tree has the same game-tree nodes (same card codes, rows in any order) and FGT nodes
keyed by (Alex clubs, Bob clubs, flag, last capturer): the paper's code drops the last capturer
(it resets it every round), so each of our FGT nodes has exactly one paper node, and nodes
that differ only by the last capturer get the same probabilities. Rows are matched by value,
never by position: a 64-bit hash of each card-code row, then the matched rows compared in full.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pasur.solve.exact import Strategy
from pasur.solve.gametree import GameTree, RoundTree

#: columns of the paper's ``t_scr`` that our score rows (Alex clubs, Bob clubs, flag, last) map to
PAPER_SCORE_COLUMNS = (0, 1, 3)


@dataclass
class PaperLayer:
    """One layer of the paper code's tree and strategy (the nodes after a move)."""

    cards: list[int]  # the round's in-play cards: the columns of ``cmp``
    cmp: torch.Tensor  # [G, m] int8 card codes of the game-tree nodes
    fgm: torch.Tensor  # [Q, 2] (GT node, score id) of the full-game-tree nodes
    scores: torch.Tensor  # [S, 4] the round's inherited scores (t_scr)
    probability: torch.Tensor  # [Q] probability of the move into each FGT node


@dataclass
class Mapped:
    """A strategy on our tree and how much of it came from the paper's (the rest: uniform)."""

    strategy: Strategy
    matched: int  # our edges given the paper's probability
    edges: int  # all our edges
    #: the largest distance from 1 of a node's matched probabilities' sum (before they are
    #: renormalized): 0 up to rounding when each node's moves are the paper node's moves
    sum_error: float = 0.0


def row_keys(rows: torch.Tensor, seed: int = 0) -> torch.Tensor:
    """[N] int64: a hash of each int8 row (sum of ``(code + 128) x`` a random odd 64-bit
    multiplier per column, wrapping). Equal rows get equal keys; unequal rows collide with
    probability about 2^-57, and callers compare matched rows in full."""
    g = torch.Generator().manual_seed(seed)
    mult = torch.randint(-(2**62), 2**62, (rows.shape[1],), generator=g, dtype=torch.int64) * 2 + 1
    return ((rows.long() + 128) * mult.to(rows.device)).sum(1)


def match_keys(ours: torch.Tensor, theirs: torch.Tensor) -> torch.Tensor:
    """For each key of ``ours``, the index of an equal key in ``theirs``, or -1 where there is none."""
    if theirs.numel() == 0:
        return torch.full_like(ours, -1)
    sorted_keys, order = torch.sort(theirs)
    pos = torch.searchsorted(sorted_keys, ours).clamp_(max=sorted_keys.shape[0] - 1)
    found = sorted_keys[pos] == ours
    return torch.where(found, order[pos], -1)


def match_rows(ours: torch.Tensor, theirs: torch.Tensor) -> torch.Tensor:
    """For each row of ``ours`` [N, m], the index of the equal row of ``theirs`` [M, m], or -1."""
    idx = match_keys(row_keys(ours), row_keys(theirs))
    hit = idx >= 0
    same = torch.zeros_like(hit)
    same[hit] = (theirs[idx[hit]] == ours[hit]).all(1)
    return torch.where(same, idx, -1)


def match_scores(ours: torch.Tensor, paper: torch.Tensor) -> torch.Tensor:
    """For each of our score rows (Alex clubs, Bob clubs, flag, last capturer), the paper's score
    row with the same clubs and flag, or -1."""
    theirs = {tuple(r): i for i, r in enumerate(paper[:, list(PAPER_SCORE_COLUMNS)].tolist())}
    return torch.tensor([theirs.get(tuple(r[:3]), -1) for r in ours.tolist()], dtype=torch.int64)


def layer_index(rt: RoundTree, t: int, layer: PaperLayer) -> torch.Tensor:
    """[Q] for each FGT node of our round ``rt`` at turn ``t`` (>= 1), the index of the paper's
    FGT node in ``layer``, or -1. Needs the tree's card codes (built with ``infosets=True``)."""
    if rt.mode != "paper":
        raise ValueError("the paper's strategy maps onto a paper-mode tree")
    if sorted(layer.cards) != list(rt.inp):
        raise ValueError(f"round {rt.round}: the paper's in-play cards differ from the tree's")
    dev = rt.fgm[t].device
    cols = torch.tensor([sorted(layer.cards).index(c) for c in rt.inp], dtype=torch.int64)
    paper_cmp = layer.cmp[:, cols].to(dev)
    gt = match_rows(rt.gt[t].cmp.to(dev), paper_cmp)
    sc = match_scores(rt.scores.cpu(), layer.scores.cpu()).to(dev)
    fgm = rt.fgm[t].long()
    pg, ps = gt[fgm[:, 0]], sc[fgm[:, 1]]
    width = max(int(layer.scores.shape[0]), 1)
    ours = torch.where((pg >= 0) & (ps >= 0), pg * width + ps, -1)
    pf = layer.fgm.to(dev).long()
    return torch.where(ours >= 0, match_keys(ours, pf[:, 0] * width + pf[:, 1]), -1)


def normalize_per_parent(weights: torch.Tensor, parent: torch.Tensor, n_parents: int, tol: float) -> torch.Tensor:
    """Probabilities from non-negative weights per edge: each parent's weights over their sum,
    uniform over its edges where that sum is at most ``tol`` (the paper code's rule for its
    average strategy, with its ``TOL``)."""
    parent = parent.long()
    total = torch.zeros(n_parents, dtype=weights.dtype, device=weights.device).scatter_add_(0, parent, weights)
    deg = torch.bincount(parent, minlength=n_parents).to(weights.dtype)
    per_edge = total[parent]
    return torch.where(per_edge <= tol, 1.0 / deg[parent], weights / per_edge.clamp_min(tol))


def strategy_from_paper(tree: GameTree, layers: dict[tuple[int, int], PaperLayer]) -> Mapped:
    """Our strategy ``{(round, turn): probabilities of edges(turn)}`` from the paper's layers
    keyed ``(round, turn after the move)``; an edge without a paper node gets weight 0, a parent
    with none of them its uniform strategy."""
    out = Mapped({}, 0, 0)
    for rt in tree.rounds:
        for t in rt.play_turns:
            parent, _, _ = rt.edges(t)
            idx = layer_index(rt, t + 1, layers[(rt.round, t + 1)])
            hit = idx >= 0
            prob = layers[(rt.round, t + 1)].probability.to(device=idx.device, dtype=torch.float32)
            weights = torch.zeros(idx.shape[0], dtype=torch.float32, device=idx.device)
            weights[hit] = prob[idx[hit]]
            n = rt.n_nodes(t)
            total = torch.zeros(n, dtype=torch.float32, device=idx.device).scatter_add_(0, parent, weights)
            some = torch.zeros(n, dtype=torch.bool, device=idx.device).index_fill_(0, parent[hit], True)
            if bool(some.any()):
                out.sum_error = max(out.sum_error, float((total[some] - 1).abs().max()))
            out.strategy[(rt.round, t)] = normalize_per_parent(weights, parent, n, 0.0)
            out.matched += int(hit.sum())
            out.edges += int(idx.shape[0])
    return out
