"""Reach probabilities over whole games (pasur.play.reach), against a plain recursion over the
tree's edges; and the play weights of a strategy table's rows that ``pasur fit --row-weights
play`` trains with."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from helpers import position
from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck
from pasur.game.state import ALEX, GameState
from pasur.learn.models import PLAY_WEIGHT_FLOOR, ModelParams, fit_model, play_row_weights
from pasur.play.reach import node_reach
from pasur.solve.cfr import CFRParams
from pasur.solve.rounds import solve_cfr
from pasur.solve.strategy_io import write_strategy_table
from pasur.solve.tree import build_tree


def _recursive_reach(tree, strategy, player, opponent):
    """Reach of every node by walking each history from the root, multiplying the probabilities
    of its edges one by one (a merged node adds up its histories)."""
    kids = {}
    for rt in tree.rounds:
        for t in range(rt.start_turn, 8):
            parent, child, _ = rt.edges(t)
            deg = torch.bincount(parent, minlength=rt.n_nodes(t))
            d = defaultdict(list)
            for e, (p, c) in enumerate(zip(parent.tolist(), child.tolist(), strict=True)):
                mover = t & 1
                if mover == player:
                    prob = float(strategy[(rt.round, t)][e])
                elif opponent is None:
                    prob = 1.0 / int(deg[p])
                else:
                    prob = float(opponent[(rt.round, t)][e])
                d[p].append((c, prob))
            kids[(rt.round, t)] = d
    reach = defaultdict(float)
    rounds = {rt.round: rt for rt in tree.rounds}

    def walk(r, t, node, pr):
        rt = rounds[r]
        if t == 8:
            if r + 1 in rounds:
                walk(r + 1, rounds[r + 1].start_turn, int(rt.link[node]), pr)
            return
        reach[(r, t, node)] += pr
        for c, p in kids[(r, t)][node]:
            walk(r, t + 1, c, pr * p)

    first = tree.rounds[0]
    walk(first.round, first.start_turn, 0, 1.0)
    return reach


def _random_strategy(tree, seed):
    g = torch.Generator().manual_seed(seed)
    out = {}
    for rt in tree.rounds:
        for t in range(rt.start_turn, 8):
            parent = rt.edges(t)[0]
            w = torch.rand(parent.shape[0], generator=g, dtype=torch.float64) + 0.05
            out[(rt.round, t)] = w / torch.zeros(rt.n_nodes(t), dtype=torch.float64).index_add_(0, parent, w)[parent]
    return out


@pytest.mark.parametrize("mode", ["compact", "paper"])
@pytest.mark.parametrize("against", ["random", "strategy"])
def test_node_reach_is_the_product_along_every_history(mode, against):
    tree = build_tree(position(3, 4, 2), mode)
    sigma, other = _random_strategy(tree, 1), _random_strategy(tree, 2)
    for player in (ALEX, 1 - ALEX):
        opponent = None if against == "random" else other
        fast = node_reach(tree, sigma, player, opponent)
        slow = _recursive_reach(tree, sigma, player, opponent)
        for rt in tree.rounds:
            for t in range(rt.start_turn, 8):
                v = fast[(rt.round, t)]
                want = torch.tensor([slow[(rt.round, t, i)] for i in range(v.shape[0])], dtype=torch.float64)
                assert torch.allclose(v, want, rtol=1e-12, atol=1e-15), (rt.round, t)
                assert float(v.sum()) == pytest.approx(1.0, abs=1e-12)  # every history ends the round


def test_play_weights_of_a_tables_rows(tmp_path):
    """Row weights follow the file's row order and the decisions' reach: the game's first decision
    weighs most; a row play never reaches keeps the floor; the mean (over rows) is 1 + floor; a
    mid-game table is refused; a model trains with them and says so in its card."""
    deal = GameState.initial(Deck.from_seed(36))
    tree = build_tree(deal, "compact", infosets=True)
    res = solve_cfr(tree, CFRParams(method="dcfr", iterations=20))
    path = tmp_path / "t.parquet"
    rows = write_strategy_table(path, tree, res.strategy, "seed-36")
    w = play_row_weights(path)
    assert w.shape == (rows,) and w.dtype == np.float32
    assert float(w.mean()) == pytest.approx(1 + PLAY_WEIGHT_FLOOR, rel=1e-4)
    assert float(w.min()) >= PLAY_WEIGHT_FLOOR * (1 - 1e-6)
    table = pq.read_table(path, columns=["round", "turn", "player", "edge"]).to_pydict()
    first = [i for i in range(rows) if table["round"][i] == 0 and table["turn"][i] == 0]
    assert float(w[first].max()) == float(w.max())
    # each row's weight from the file's own columns (its round, ply 2 * turn + player, mover and
    # node) and the reach of that node (node_reach, checked against the recursion over histories
    # above): the mean of the mover's two matchups, following the table's strategy against the
    # random agent and against itself, scaled to mean 1, plus the floor
    cols = pq.read_table(path, columns=["round", "turn", "player", "node"]).to_pydict()
    reach = {
        p: (node_reach(tree, res.strategy, p, None), node_reach(tree, res.strategy, p, res.strategy))
        for p in (ALEX, 1 - ALEX)
    }
    met = np.array(
        [
            0.5 * sum(float(m[(r, 2 * turn + p)][n]) for m in reach[p])
            for r, turn, p, n in zip(cols["round"], cols["turn"], cols["player"], cols["node"], strict=True)
        ]
    )
    assert np.allclose(w, met / met.mean() + PLAY_WEIGHT_FLOOR, rtol=1e-5)

    # the caller's tree (a sweep's, with infosets) gives the same weights as the rebuilt one, and
    # the same model; another deck's or mode's tree is refused
    assert np.array_equal(play_row_weights(path, tree), w)
    # and the strategy the table was written from (a sweep's, in memory) gives them too, as does
    # a fit given it
    assert np.array_equal(play_row_weights(path, tree, res.strategy), w)
    with pytest.raises(PasurInputError, match="not this table's deck"):
        play_row_weights(path, build_tree(GameState.initial(Deck.from_seed(37)), "compact", infosets=False))
    with pytest.raises(PasurInputError, match="not this table's deck"):
        play_row_weights(path, build_tree(deal, "paper", infosets=False))

    params = ModelParams(rounds=4, max_depth=4, row_weights="play", max_rows=rows // 2)
    model = fit_model([path], params)
    x = np.random.default_rng(0).integers(-1, 3, size=(64, 58)).astype(np.float32)
    for again in (
        fit_model([path], params, trees={path: tree}),
        fit_model([path], params, trees={path: tree}, strategies={path: res.strategy}),
    ):
        assert np.array_equal(model.predict(x), again.predict(x))
        assert model.card["validation"]["rmse"] == again.card["validation"]["rmse"]
    model = fit_model([path], ModelParams(rounds=4, max_depth=4, row_weights="play"))
    assert model.card["parameters"]["row_weights"] == "play"
    v = model.card["validation"]
    assert v["play_weighted_rmse"] > 0 and v["play_weighted_rmse"] != pytest.approx(v["rmse"])
    assert (
        "play_weighted_rmse"
        not in fit_model([path], ModelParams(rounds=4, max_depth=4, row_weights="uniform")).card["validation"]
    )

    mid = tmp_path / "mid.parquet"
    mid_tree = build_tree(position(3, 4, 0), "compact", infosets=True)
    write_strategy_table(mid, mid_tree, solve_cfr(mid_tree, CFRParams(method="dcfr", iterations=5)).strategy, "m")
    with pytest.raises(PasurInputError, match="whole game"):
        play_row_weights(mid)
    with pytest.raises(PasurInputError, match="unknown row weights 'visits'"):
        ModelParams(row_weights="visits").check()


def test_priority_sampling_keeps_heavy_rows_and_is_unbiased():
    """A few heavy rows among many light ones are always kept at their own weight; the sample's
    weighted sum estimates the whole sum without bias (mean over seeds within 1 %)."""
    from pasur.learn.models import priority_sample

    w = np.full(10_000, 0.01)
    w[:5] = 100.0
    totals = []
    for seed in range(200):
        pick, nw = priority_sample(w, 200, np.random.default_rng(seed))
        assert pick.shape == (200,) and np.all(np.diff(pick) > 0)
        assert set(range(5)) <= set(pick.tolist()) and np.all(nw[:5] == 100.0)
        totals.append(nw.sum())
    assert np.mean(totals) == pytest.approx(w.sum(), rel=0.01)
    everything, same = priority_sample(w, 20_000, np.random.default_rng(0))
    assert np.array_equal(everything, np.arange(10_000)) and np.array_equal(same, w)


@pytest.mark.parametrize("slice_rows", [7, 1000, 1 << 24])
def test_priority_sampling_in_slices_is_the_one_draw(monkeypatch, slice_rows):
    """The sample is drawn a slice of rows at a time (a tail deck's table has 300 M rows): the same
    rows and weights as the plain formula over one draw of all the random numbers."""
    from pasur.learn import rows as models

    monkeypatch.setattr(models, "WEIGHT_SLICE", slice_rows)
    w = np.random.default_rng(3).gamma(0.3, size=5_000).astype(np.float32)
    for k in (1, 10, 999, 4_999):
        u = np.random.default_rng(k).random(w.shape[0])
        priority = w / (1.0 - u)
        order = np.argsort(-priority, kind="stable")
        want = np.sort(order[:k])
        pick, nw = models.priority_sample(w, k, np.random.default_rng(k))
        assert np.array_equal(pick, want)
        assert np.array_equal(nw, np.maximum(w[want], priority[order[k]]).astype(np.float32))
