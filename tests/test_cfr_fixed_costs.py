"""Fixed costs out of the CFR iteration: each player's layers updated together
(:mod:`pasur.solve.layer_groups`) give the per-layer updates' iterates bit for bit, and the CUDA
graph of an iteration (:mod:`pasur.solve.iteration_graph`) is off, not broken, off a GPU."""

from __future__ import annotations

import pytest
import torch

from helpers import position
from pasur.game.state import GameState
from pasur.solve.cfr import FULL_WIDTH, GRAPH_METHODS, CFRParams, RoundCFR
from pasur.solve.iteration_graph import IterationGraph
from pasur.solve.layer_groups import COEFFICIENTS, coefficients
from pasur.solve.rounds import solve_cfr
from pasur.solve.tree import build_tree

#: the device the graph path is checked on: a GPU where there is one (captured and replayed),
#: else the CPU (where it must run eagerly)
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def same_solve(a, b) -> None:
    assert a.strategy.keys() == b.strategy.keys()
    for key in a.strategy:
        assert torch.equal(a.strategy[key], b.strategy[key]), key
    assert (a.root_value, a.nash_conv, a.iterations) == (b.root_value, b.nash_conv, b.iterations)


@pytest.mark.parametrize("mode", ["compact", "paper"])
@pytest.mark.parametrize("method", FULL_WIDTH)
def test_fused_updates_give_the_per_layer_iterates_bit_for_bit(mode, method):
    tree = build_tree(position(2, 3, 0), mode, infosets=False)
    params = CFRParams(method=method, iterations=25, tremble=0.001 if method == "dcfr" else 0.0)
    same_solve(solve_cfr(tree, params, fused=False), solve_cfr(tree, params, fused=True))


@pytest.mark.parametrize(
    ("mode", "params", "kw"),
    [
        # simultaneous updates: both players' groups in one pass
        ("paper", CFRParams(method="cfr+", iterations=20, updates="simultaneous"), {}),
        # a target: the solver focuses on the lagging roots (new layers, grouped again)
        ("compact", CFRParams(method="dcfr", iterations=None, target_exploitability=0.002), {}),
        ("paper", CFRParams(method="dcfr", iterations=None, target_exploitability=0.002), {}),
        # a round solved in parts of its roots
        ("paper", CFRParams(method="dcfr", iterations=20, tremble=0.001), {"solver_memory": 12_000_000}),
    ],
)
def test_fused_updates_keep_the_iterates_of_focus_parts_and_simultaneous_updates(mode, params, kw):
    tree = build_tree(position(2, 3, 0), mode, infosets=False)
    fused = solve_cfr(tree, params, fused=True, **kw)
    same_solve(solve_cfr(tree, params, fused=False, **kw), fused)
    if kw:
        assert max(tr.parts for tr in fused.traces) > 1


def test_fused_solver_tensors_are_views_of_its_groups(reference_decks):
    """The per-layer tensors other passes read are the groups' slices: an update of the group is
    seen through them, and nothing of a layer's size is left outside."""
    deck = next(d for d in reference_decks if d.id == "ref2").deck
    rt = build_tree(GameState.initial(deck), "compact", infosets=False).rounds[3]
    solver = RoundCFR(rt, torch.zeros(rt.n_nodes(8)), CFRParams(), torch.device("cpu"))
    assert [g.mover for g in solver.groups] == [0, 1]
    for g in solver.groups:
        assert sorted(g.layers) == [i for i, L in enumerate(solver.layers) if L.mover == g.mover]
        g.regret.fill_(7.0)
        for i in g.layers:
            assert solver.regret[i].untyped_storage().data_ptr() == g.regret.untyped_storage().data_ptr()
            assert bool((solver.regret[i] == 7.0).all())


def test_the_first_iteration_discounts_nothing():
    """DCFR discounts with t - 1 before adding: at t = 1 the factors are 1 (nothing to discount),
    then the paper's (t-1)^a / ((t-1)^a + 1) and (t-1)^b / ((t-1)^b + 1)."""
    first = dict(zip(COEFFICIENTS, coefficients("dcfr", 1, 1.0, 1.5, 0.0), strict=True))
    assert (first["positive"], first["negative"]) == (1.0, 1.0)
    third = dict(zip(COEFFICIENTS, coefficients("dcfr", 3, 9.0, 1.5, 0.0), strict=True))
    assert third["positive"] == pytest.approx(2**1.5 / (2**1.5 + 1))
    assert third["negative"] == 0.5
    assert third["linear"] == 0.75


@pytest.mark.parametrize("mode", ["compact", "paper"])
def test_graphs_give_the_eager_iterates_on_this_device(mode):
    """On a GPU the iteration is captured once and replayed; on the CPU the flag asks for nothing
    and the solve runs eagerly: either way the solve is the eager one. On the CPU bit for bit; on
    a GPU the scatter-adds sum in no fixed order, so two eager solves differ too, and where regrets
    are nearly tied a probability can tip entirely (0.076 and 1.0 were seen on an H100,
    results/gpu-h100-s3/README.md): there the root value and the exploitability must agree."""
    tree = build_tree(position(2, 3, 0), mode, infosets=False, device=DEVICE)
    params = CFRParams(method="dcfr", iterations=40, tremble=0.001)
    eager = solve_cfr(tree, params, DEVICE, graphs=False)
    graphed = solve_cfr(tree, params, DEVICE, graphs=True)
    if DEVICE.type == "cpu":
        same_solve(eager, graphed)
        return
    assert graphed.nash_conv == pytest.approx(eager.nash_conv, abs=1e-4)
    assert graphed.root_value == pytest.approx(eager.root_value, abs=1e-4)


def test_a_round_solver_off_a_gpu_never_captures():
    rt = build_tree(position(4, 3, 0), "compact", infosets=False).rounds[-1]
    solver = RoundCFR(rt, torch.zeros(rt.n_nodes(8)), CFRParams(method="dcfr"), torch.device("cpu"), graphs=True)
    for _ in range(4):
        solver.iterate()
    assert not solver._graph.enabled and not solver._graph.captured


def test_the_iteration_graph_runs_its_body_eagerly_off_a_gpu():
    calls = []
    graph = IterationGraph(torch.device("cpu"))
    coef = torch.zeros(2)
    for k in range(3):
        graph.set_coefficients(coef, [k, 2.0 * k], k)
        assert graph.run(lambda: calls.append(1) or frozenset({1}), frozenset({1})) == frozenset({1})
    assert calls == [1, 1, 1] and not graph.captured
    assert coef.tolist() == [2.0, 4.0]


def test_a_dropped_solver_is_freed_at_once():
    """No reference cycle keeps a round's solver (and its tensors) alive until the garbage
    collector runs: ``solve_cfr`` drops each round's solver before the next, on a 24 GiB machine."""
    import gc
    import weakref

    rt = build_tree(position(4, 3, 0), "compact", infosets=False).rounds[-1]
    solver = RoundCFR(rt, torch.zeros(rt.n_nodes(8)), CFRParams(method="dcfr"), torch.device("cpu"))
    solver.iterate()
    ref = weakref.ref(solver)
    gc.disable()
    try:
        del solver
        assert ref() is None
    finally:
        gc.enable()


def test_pdcfr_plus_is_not_captured():
    """PDCFR+'s prediction takes a Python number that changes every iteration: its solver asks
    for no graph, so a GPU runs it eagerly."""
    assert "pdcfr+" not in GRAPH_METHODS and "dcfr" in GRAPH_METHODS
    rt = build_tree(position(4, 3, 0), "compact", infosets=False).rounds[-1]
    solver = RoundCFR(rt, torch.zeros(rt.n_nodes(8)), CFRParams(method="pdcfr+"), DEVICE, graphs=True)
    assert not solver._graph.enabled


def test_by_default_the_cpu_fuses_compact_rounds_only():
    """Fused updates pay on the compact tree's small layers; on the CPU a tree-like round keeps
    the per-layer path (no faster fused there, and no group index to hold). (The torch path's
    choice: the native kernel reads the groups, tests/test_cfr_native.py.)"""
    for mode, fused in (("compact", True), ("paper", False)):
        rt = build_tree(position(4, 3, 0), mode, infosets=False).rounds[-1]
        solver = RoundCFR(rt, torch.zeros(rt.n_nodes(8)), CFRParams(kernel="torch"), torch.device("cpu"))
        assert solver.fused is fused and bool(solver.groups) is fused
