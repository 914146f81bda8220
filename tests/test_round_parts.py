"""A tree-like round solved in parts of its roots (pasur.solve.round_parts): the parts partition
the round, and CFR in parts gives the whole solve's iterates, bit for bit."""

from __future__ import annotations

import pytest
import torch

from helpers import position
from pasur.common.errors import PasurInputError
from pasur.game.state import TURNS_PER_ROUND
from pasur.solve import rounds
from pasur.solve.cfr import CFRParams
from pasur.solve.exact import solve_exact
from pasur.solve.round_parts import (
    AVERAGE_BYTES_PER_EDGE,
    PART_BYTES_PER_EDGE,
    SOLVER_BYTES_PER_EDGE,
    root_groups,
    round_part,
    subtree_edges,
)
from pasur.solve.rounds import solve_cfr
from pasur.solve.tree import build_tree


@pytest.fixture(scope="module")
def paper_tree():
    return build_tree(position(0, 2, 0), "paper")  # rounds 3 to 5: 46, 154 and 58 roots


def round_edges(rt) -> int:
    return sum(rt.n_edges_at(t) for t in range(rt.start_turn, TURNS_PER_ROUND))


def room_for(parts: int, edges: int) -> int:
    """Solver memory that splits a round of ``edges`` into about ``parts`` parts."""
    return AVERAGE_BYTES_PER_EDGE * edges + (SOLVER_BYTES_PER_EDGE + PART_BYTES_PER_EDGE) * edges // parts


def test_the_parts_partition_the_round_and_count_its_edges(paper_tree):
    for rt in paper_tree.rounds:
        below = subtree_edges(rt)
        assert int(below.sum()) == round_edges(rt)
        if rt.n_nodes(rt.start_turn) == 1:  # one root: nothing to split
            continue
        groups = root_groups(rt, room_for(4, round_edges(rt)))
        assert 3 <= len(groups) <= 6
        assert torch.equal(torch.cat(groups), torch.arange(rt.n_nodes(rt.start_turn)))
        parts = [round_part(rt, g) for g in groups]
        assert [int(below[g].sum()) for g in groups] == [p.n_edges for p in parts]
        for i, t in enumerate(range(rt.start_turn, TURNS_PER_ROUND)):
            parent = rt.edges(t)[0]
            ids = torch.cat([p.edges[i] for p in parts])
            assert torch.equal(ids.sort().values, torch.arange(rt.n_edges_at(t)))
            for p in parts:
                # each edge's parent, through the part's own numbering of its nodes, is the round's
                nodes = p.roots if i == 0 else p.edges[i - 1]
                assert torch.equal(nodes[p.parents[i]], parent[p.edges[i]])


def test_a_round_that_fits_is_solved_whole(paper_tree):
    rt = paper_tree.rounds[-1]
    assert root_groups(rt, SOLVER_BYTES_PER_EDGE * round_edges(rt)) is None
    compact = build_tree(position(0, 2, 0), "compact").rounds[-1]
    assert root_groups(compact, 1) is None  # a compact round's subtrees share nodes


def test_a_round_whose_largest_root_cannot_fit_is_refused(paper_tree):
    rt = max(paper_tree.rounds, key=round_edges)
    with pytest.raises(PasurInputError, match=f"round {rt.round}: .* its largest root alone"):
        root_groups(rt, AVERAGE_BYTES_PER_EDGE * round_edges(rt) + 1000)


@pytest.mark.parametrize(
    "params",
    [
        CFRParams(method="dcfr", iterations=40, tremble=0.001, check_every=7),
        CFRParams(method="cfr+", iterations=25, updates="simultaneous", check_every=10),
        CFRParams(method="pcfr+", iterations=25, check_every=5),
    ],
    ids=["dcfr-tremble", "cfr+-simultaneous", "pcfr+"],
)
def test_cfr_in_parts_is_the_whole_solve_bit_for_bit(paper_tree, params, monkeypatch):
    if params.method == "dcfr":  # the MSE trace on a sample of edges, as on a tail deck's rounds
        monkeypatch.setattr(rounds, "MSE_SAMPLE", 5000)
    whole = solve_cfr(paper_tree, params, solver_memory=10**12)
    room = room_for(3, max(round_edges(rt) for rt in paper_tree.rounds))
    split = [rt.round for rt in paper_tree.rounds if (g := root_groups(rt, room)) is not None and len(g) > 1]
    assert len(split) >= 2, split  # several rounds really ran in parts
    seen = []
    parts = solve_cfr(paper_tree, params, solver_memory=room, progress=lambda r, it, e: seen.append((r, it)))
    assert whole.strategy.keys() == parts.strategy.keys()
    for key, x in whole.strategy.items():
        assert torch.equal(x, parts.strategy[key]), key
    for r, vab in whole.suffix.items():
        assert all(torch.equal(x, y) for x, y in zip(vab, parts.suffix[r], strict=True)), r
    fields = ("round", "iterations", "nash_conv", "mean_nash_conv", "mse_to_final", "suffix_gap")
    for a, b in zip(whole.traces, parts.traces, strict=True):
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
    assert [t.parts for t in whole.traces] == [1] * len(whole.traces)
    assert {t.round for t in parts.traces if t.parts > 1} == set(split)
    assert (whole.root_value, whole.nash_conv, whole.iterations) == (
        parts.root_value,
        parts.nash_conv,
        parts.iterations,
    )
    # progress climbs to the round's iterations in every round split
    for r in split:
        its = [it for rr, it in seen if rr == r]
        assert its == sorted(its) and its[-1] == params.iterations


def test_cfr_in_parts_reaches_the_exact_value(paper_tree):
    res = solve_cfr(paper_tree, CFRParams(method="dcfr", iterations=200), solver_memory=room_for(3, 10**5))
    assert res.root_value == pytest.approx(solve_exact(paper_tree).root_value, abs=2e-3)
    assert res.exploitability < 2e-3


def test_the_cli_solves_in_parts_with_the_same_result(reference_decks):
    """``pasur solve --solver-memory``: a user can check the claim, a solve in parts (here ref2's
    paper tree, its rounds 2 to 5 split) reports what the whole solve does, number for number."""
    import json

    from typer.testing import CliRunner

    from pasur.cli import app

    args = ["solve", "--deck", str(reference_decks[2].deck), "--tree", "paper", "--method", "dcfr"]
    args += ["--iterations", "20", "--tremble", "0.001", "--json", "--quiet"]
    runs = []
    for extra in ([], ["--solver-memory", "0.02"]):
        r = CliRunner().invoke(app, [*args, *extra])
        assert r.exit_code == 0, r.output
        runs.append(json.loads(r.stdout))
    whole, parts = runs
    assert [r["parts"] for r in whole["rounds"]] == [1] * 6
    assert max(r["parts"] for r in parts["rounds"]) > 1
    for key in ("value", "nash_conv", "exploitability"):
        assert whole[key] == parts[key]
    measures = ("nash_conv", "mean_nash_conv", "suffix_gap", "iterations")
    assert [[r[m] for m in measures] for r in whole["rounds"]] == [[r[m] for m in measures] for r in parts["rounds"]]
    bad = CliRunner().invoke(app, [*args, "--solver-memory", "-1"])
    assert bad.exit_code == 2 and "error: --solver-memory must be a positive number of GiB" in bad.output
