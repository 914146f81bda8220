"""External-sampling MCCFR walks only the sampled part of a round, and still converges."""

from __future__ import annotations

import pytest
import torch

from helpers import position
from pasur.game.state import ALEX
from pasur.solve.cfr import CFRParams, RoundCFR
from pasur.solve.exact import exploitability, solve_exact
from pasur.solve.rounds import round_solver, solve_cfr
from pasur.solve.sampling import SampledRoundCFR
from pasur.solve.tree import build_tree


@pytest.mark.parametrize("mode", ["compact", "paper"])
def test_an_iteration_walks_the_sampled_part_only(mode):
    """Round 4 of a game from round 3: per pass, every visited node of the traverser has all its
    edges walked, every visited node of the opponent exactly one; the next layer's visited nodes
    are the children of the walked edges; and the edges read are a part of the round's (a small
    one on the paper tree; compact nodes merge most of what sampling would skip)."""
    tree = build_tree(position(2, 3, 0), mode, infosets=False)
    rt = tree.round(4)
    solver = SampledRoundCFR(rt, torch.zeros(rt.n_nodes(8)), CFRParams(method="es-mccfr", seed=1), torch.device("cpu"))
    edges = [rt.edges(t) for t in range(rt.start_turn, 8)]
    round_edges = sum(int(p.shape[0]) for p, _, _ in edges)
    for traverser in (ALEX, 1 - ALEX, ALEX):
        solver.es_pass(traverser)
        read, walked = solver.touched
        assert walked <= read < round_edges * (0.6 if mode == "compact" else 0.1), (read, walked, round_edges)
        counted = 0
        for i, ((nodes, walked_edges), (parent, child, _)) in enumerate(zip(solver.walk, edges, strict=True)):
            out = torch.isin(parent, nodes)
            assert bool(torch.isin(walked_edges, torch.nonzero(out).flatten()).all())
            if (rt.start_turn + i) % 2 == traverser:
                assert sorted(walked_edges.tolist()) == torch.nonzero(out).flatten().tolist()
            else:
                assert sorted(parent[walked_edges].tolist()) == sorted(nodes.tolist())  # one per node
            counted += int(out.sum())
            if i + 1 < len(edges):
                assert sorted(solver.walk[i + 1][0].tolist()) == sorted(set(child[walked_edges].tolist()))
        assert counted == read and sum(int(e.shape[0]) for _, e in solver.walk) == walked


def test_it_converges_in_expectation_over_seeds():
    """A small game: over four seeds, the mean exploitability falls fourfold from 30 to 300
    iterations, every run gets within 0.05 points of exploitability (NashConv 0.1), and the
    mean root value near the exact one."""
    tree = build_tree(position(2, 5, 2), "compact", infosets=False)
    exact = solve_exact(tree).root_value
    expl = {30: [], 300: []}
    values = []
    for seed in range(4):
        for its in expl:
            res = solve_cfr(tree, CFRParams(method="es-mccfr", iterations=its, check_every=its, seed=seed))
            expl[its].append(exploitability(tree, res.strategy))
        values.append(res.root_value)
    mean = {k: sum(v) / len(v) for k, v in expl.items()}
    assert mean[300] < mean[30] / 4, mean
    assert max(expl[300]) < 0.05, expl
    assert sum(values) / len(values) == pytest.approx(exact, abs=0.05)


def test_the_method_picks_the_solver_class():
    """``round_solver`` gives ES-MCCFR its sampling subclass and the full-width methods the base
    class; each class refuses the other's methods instead of running them as something else."""
    rt = build_tree(position(2, 5, 2), "compact", infosets=False).round(5)
    cpu = torch.device("cpu")
    for method, cls in (("es-mccfr", SampledRoundCFR), ("dcfr", RoundCFR), ("cfr+", RoundCFR), ("cfr", RoundCFR)):
        assert type(round_solver(rt, rt.terminal_value, CFRParams(method=method), cpu)) is cls
    with pytest.raises(ValueError, match="es-mccfr"):
        RoundCFR(rt, rt.terminal_value, CFRParams(method="es-mccfr"), cpu)
    with pytest.raises(ValueError, match="dcfr"):
        SampledRoundCFR(rt, rt.terminal_value, CFRParams(method="dcfr"), cpu)
