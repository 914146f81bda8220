"""The paper's code's strategy carried onto our paper tree (pasur.solve.paper_strategy), on
synthetic paper-format layers made from a small tree of ours: rows shuffled, the last capturer
dropped from the scores as the paper's code drops it. The paper's own code is not needed."""

from __future__ import annotations

import pytest
import torch

from helpers import position
from pasur.solve import paper_strategy
from pasur.solve.paper_strategy import (
    PaperLayer,
    match_rows,
    match_scores,
    normalize_per_parent,
    strategy_from_paper,
)
from pasur.solve.tree import build_tree


def test_normalize_per_parent_divides_by_the_parents_sum_and_is_uniform_below_tol():
    weights = torch.tensor([2.0, 6.0, 0.0, 0.0, 1e-13, 3e-13, 5.0])
    parent = torch.tensor([0, 0, 1, 1, 2, 2, 3])
    got = normalize_per_parent(weights, parent, 4, 1e-12)
    assert got.tolist() == pytest.approx([0.25, 0.75, 0.5, 0.5, 0.5, 0.5, 1.0])


def test_match_rows_finds_shuffled_rows_and_refuses_absent_ones():
    theirs = torch.tensor([[1, 2, 3], [100, 105, 110], [-7, 0, 4], [1, 2, 4]], dtype=torch.int8)
    ours = torch.tensor([[-7, 0, 4], [1, 2, 4], [9, 9, 9], [1, 2, 3]], dtype=torch.int8)
    assert match_rows(ours, theirs).tolist() == [2, 3, -1, 0]


def test_match_rows_compares_rows_in_full_when_keys_collide(monkeypatch):
    monkeypatch.setattr(paper_strategy, "row_keys", lambda rows, seed=0: torch.zeros(rows.shape[0], dtype=torch.int64))
    theirs = torch.tensor([[5, 5], [6, 6]], dtype=torch.int8)
    ours = torch.tensor([[6, 6], [5, 5], [7, 7]], dtype=torch.int8)
    got = match_rows(ours, theirs).tolist()
    assert got[2] == -1  # every key collides: only a full-row match counts
    assert [theirs[i].tolist() for i in got[:2] if i >= 0] == [ours[j].tolist() for j in range(2) if got[j] >= 0]


def test_match_scores_drops_the_last_capturer_and_reads_the_flag_from_column_3():
    ours = torch.tensor([[3, 2, 0, 1], [3, 2, 0, 2], [0, 0, 1, 1], [0, 0, 2, 2]])
    paper = torch.tensor([[0, 0, 0, 2], [3, 2, 0, 0], [0, 0, 0, 1]])
    assert match_scores(ours, paper).tolist() == [1, 1, 2, 0]


def _paper_layer(rt, t: int, expected: torch.Tensor, gen: torch.Generator) -> PaperLayer:
    """Round ``rt``'s layer ``t`` in the paper code's format: GT rows, scores and FGT nodes shuffled,
    the last capturer dropped (nodes that differ only by it merge), the probability of the move
    into each node taken from ``expected`` (the edges of layer ``t - 1``)."""
    cmp = rt.gt[t].cmp
    perm = torch.randperm(cmp.shape[0], generator=gen)
    new_g = torch.empty_like(perm)
    new_g[perm] = torch.arange(perm.shape[0])
    sc = rt.scores.long()
    paper_rows = torch.stack([sc[:, 0], sc[:, 1], torch.zeros_like(sc[:, 0]), sc[:, 2]], 1)
    uniq, score_of = torch.unique(paper_rows, dim=0, return_inverse=True)
    sperm = torch.randperm(uniq.shape[0], generator=gen)
    new_s = torch.empty_like(sperm)
    new_s[sperm] = torch.arange(sperm.shape[0])
    fgm = rt.fgm[t].long()
    pairs = torch.stack([new_g[fgm[:, 0]], new_s[score_of[fgm[:, 1]]]], 1)
    nodes, node_of = torch.unique(pairs, dim=0, return_inverse=True)
    prob = torch.zeros(nodes.shape[0]).scatter_(0, node_of, expected)  # (merged nodes: equal values)
    order = torch.randperm(nodes.shape[0], generator=gen)
    cards = list(rt.inp)
    return PaperLayer(cards, cmp[perm], nodes[order].to(torch.int32), uniq[sperm].to(torch.int8), prob[order])


def _expected(rt, t: int) -> torch.Tensor:
    """A strategy on layer ``t``'s edges that ignores the last capturer, as the paper's does:
    weights from each child's GT node and (clubs, flag) only."""
    parent, child, gt_edge = rt.edges(t)
    sc = rt.scores.long()[rt.fgm[t + 1][:, 1].long()[child]]
    w = ((gt_edge * 7 + sc[:, 0] * 3 + sc[:, 1] * 5 + sc[:, 2] * 11) % 13 + 1).float()
    return normalize_per_parent(w, parent, rt.n_nodes(t), 0.0)


@pytest.fixture(scope="module")
def tree():
    t = build_tree(position(3, 4), "paper", "cpu", infosets=True)
    assert any(len({tuple(r[:3]) for r in rt.scores.tolist()}) < rt.scores.shape[0] for rt in t.rounds)
    return t


def test_strategy_from_paper_gives_each_edge_its_paper_node_probability(tree):
    gen = torch.Generator().manual_seed(1)
    expected = {(rt.round, t): _expected(rt, t) for rt in tree.rounds for t in rt.play_turns}
    layers = {(rt.round, t + 1): _paper_layer(rt, t + 1, expected[(rt.round, t)], gen) for rt, t in _layers(tree)}
    got = strategy_from_paper(tree, layers)
    assert got.matched == got.edges == sum(int(x.shape[0]) for x in expected.values())
    assert got.sum_error < 1e-5
    for key, want in expected.items():
        torch.testing.assert_close(got.strategy[key], want)


def test_strategy_from_paper_edges_without_a_paper_node_get_nothing_and_orphans_uniform(tree):
    gen = torch.Generator().manual_seed(2)
    rt = tree.rounds[-1]
    layers = {}
    for r, u in _layers(tree):
        layer = _paper_layer(r, u + 1, _expected(r, u), gen)
        if r is rt:  # a third of the last round's paper nodes missing
            keep = torch.arange(layer.fgm.shape[0]) % 3 != 0
            layer = PaperLayer(layer.cards, layer.cmp, layer.fgm[keep], layer.scores, layer.probability[keep])
        layers[(r.round, u + 1)] = layer
    got = strategy_from_paper(tree, layers)
    assert got.matched < got.edges
    single = 0  # edges that are their node's only move: a third of them lose it, leaving the node orphaned
    for t in rt.play_turns:
        parent, _, _ = rt.edges(t)
        probs = got.strategy[(rt.round, t)]
        sums = torch.zeros(rt.n_nodes(t)).scatter_add_(0, parent, probs)
        torch.testing.assert_close(sums, torch.ones_like(sums))  # (no NaN: orphans are uniform)
        deg = torch.bincount(parent, minlength=rt.n_nodes(t))
        single += int((deg[parent] == 1).sum())
    assert single > 0
    assert bool((got.strategy[(rt.round, rt.play_turns[0])] == 0).any())  # a missing node's edge gets nothing


def _layers(tree):
    return [(rt, t) for rt in tree.rounds for t in rt.play_turns]
