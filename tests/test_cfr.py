"""CFR variants against exact values: convergence, exploitability, outputs, bad parameters."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from helpers import position, random_strategy, scalar_profile_value
from pasur.cli import app
from pasur.common.errors import PasurInputError
from pasur.game.state import GameState
from pasur.solve.cfr import CFRParams
from pasur.solve.exact import pure_strategy, solve_exact, subgame_gap, uniform_strategy
from pasur.solve.rounds import solve_cfr
from pasur.solve.strategy_io import read_strategy_table, write_strategy_table
from pasur.solve.tree import build_tree

SMALL = [(5, 4, 4), (6, 4, 4), (0, 5, 0), (1, 5, 2)]


def target(method: str, iterations: int | None = None, **kw) -> CFRParams:
    # (targets and bounds are on exploitability = NashConv / 2, docs/conventions.md)
    return CFRParams(method=method, iterations=iterations, target_exploitability=2.5e-4, max_iterations=5000, **kw)


@pytest.mark.parametrize("mode", ["compact", "paper"])
@pytest.mark.parametrize(("seed", "rnd", "turn"), SMALL)
def test_dcfr_and_cfr_plus_converge_to_the_exact_value(mode, seed, rnd, turn):
    """Stated bounds: DCFR reaches exploitability 5e-4 (NashConv 1e-3) within 200 iterations per
    round, CFR+ within 1000, on every small game; fewer for DCFR than for CFR+."""
    tree = build_tree(position(seed, rnd, turn), mode)
    exact = solve_exact(tree).root_value
    runs = {}
    for method, bound in (("dcfr", 200), ("cfr+", 1000)):
        res = solve_cfr(tree, target(method))
        assert max(res.iterations.values()) <= bound, (method, res.iterations)
        assert res.exploitability < 5e-4
        assert res.root_value == pytest.approx(exact, abs=1e-3)
        runs[method] = sum(res.iterations.values())
    assert runs["dcfr"] <= runs["cfr+"]


@pytest.mark.parametrize("method", ["pcfr+", "pdcfr+", "sapcfr+"])
@pytest.mark.parametrize(("seed", "rnd", "turn"), [(5, 4, 4), (3, 4, 0), (0, 3, 0)])
def test_predictive_variants_converge_to_the_exact_value(method, seed, rnd, turn):
    """The predictive variants of the shared kernel on Pasur's round CFR: exploitability 2.5e-4
    within 300 iterations per round and the exact value to 1e-3; PDCFR+ (measured: 20 to 40
    iterations in all) needs fewer iterations than DCFR (30 to 120)."""
    tree = build_tree(position(seed, rnd, turn), "compact")
    res = solve_cfr(tree, target(method))
    assert max(res.iterations.values()) <= 300, res.iterations
    assert res.exploitability < 2.5e-4
    assert res.root_value == pytest.approx(solve_exact(tree).root_value, abs=1e-3)
    if method == "pdcfr+":
        assert sum(res.iterations.values()) < sum(solve_cfr(tree, target("dcfr")).iterations.values())


def test_predictive_defaults_are_the_published_ones():
    assert (CFRParams(method="pdcfr+").alpha, CFRParams(method="pdcfr+").gamma) == (2.3, 5.0)
    assert (CFRParams(method="dcfr").alpha, CFRParams(method="dcfr").gamma) == (1.5, 2.0)
    assert CFRParams(method="pcfr+", gamma=3.0).gamma == 3.0


@pytest.mark.parametrize(("seed", "rnd", "turn"), SMALL[:2])
def test_linear_cfr_converges_to_the_exact_value(seed, rnd, turn):
    """Linear CFR (the shared kernel's ``lcfr`` rule, on Pasur's round CFR): exploitability 5e-4
    within 2,000 iterations per round, the exact value to 1e-3, and not the same iterates as CFR+
    or vanilla CFR."""
    tree = build_tree(position(seed, rnd, turn), "compact")
    res = solve_cfr(tree, target("lcfr"))
    assert max(res.iterations.values()) <= 2000, res.iterations
    assert res.exploitability < 5e-4
    assert res.root_value == pytest.approx(solve_exact(tree).root_value, abs=1e-3)
    twenty = {m: solve_cfr(tree, CFRParams(method=m, iterations=20)).strategy for m in ("lcfr", "cfr+", "cfr")}
    for other in ("cfr+", "cfr"):
        assert any(not bool((twenty["lcfr"][k] - twenty[other][k]).abs().max() < 1e-6) for k in twenty["lcfr"])


@pytest.mark.parametrize(("seed", "rnd", "turn", "bound"), [(5, 4, 4, 2000), (0, 5, 4, 50)])
def test_vanilla_cfr_converges_and_dcfr_is_faster(seed, rnd, turn, bound):
    tree = build_tree(position(seed, rnd, turn), "compact")
    vanilla = solve_cfr(
        tree, CFRParams(method="cfr", iterations=None, target_exploitability=5e-4, max_iterations=bound)
    )
    dcfr = solve_cfr(tree, CFRParams(method="dcfr", iterations=None, target_exploitability=5e-4))
    assert max(vanilla.iterations.values()) <= bound and vanilla.traces[-1].exploitability[-1] <= 5e-4
    assert vanilla.root_value == pytest.approx(solve_exact(tree).root_value, abs=2e-3)
    assert sum(dcfr.iterations.values()) <= sum(vanilla.iterations.values())


def test_dcfr_is_faster_than_vanilla_cfr_on_every_small_game():
    for seed, rnd, turn in SMALL:
        tree = build_tree(position(seed, rnd, turn), "compact")
        its = {}
        for method in ("cfr", "dcfr"):
            res = solve_cfr(
                tree, CFRParams(method=method, iterations=None, target_exploitability=5e-4, max_iterations=3000)
            )
            its[method] = sum(res.iterations.values())
        assert its["dcfr"] < its["cfr"] or its["cfr"] == its["dcfr"] == len(tree.rounds) * 10, its


def test_alternating_and_simultaneous_updates_both_converge_and_differ():
    tree = build_tree(position(0, 5, 0), "compact")
    exact = solve_exact(tree).root_value
    results = {
        u: solve_cfr(tree, CFRParams(method="dcfr", iterations=40, updates=u)) for u in ("alternating", "simultaneous")
    }
    for res in results.values():
        assert res.root_value == pytest.approx(exact, abs=0.05)
    a, s = (results[u].strategy[(5, 0)] for u in ("alternating", "simultaneous"))
    assert not bool((a - s).abs().max() < 1e-6)  # not the same algorithm under two names


def test_external_sampling_converges_in_expectation():
    tree = build_tree(position(5, 4, 4), "compact")
    exact = solve_exact(tree).root_value
    res = solve_cfr(tree, CFRParams(method="es-mccfr", iterations=1500, check_every=500, seed=3))
    assert res.exploitability < 0.025
    assert res.root_value == pytest.approx(exact, abs=0.05)
    # seeded: the same seed gives the same iterates, another seed others (checked on short runs)
    short = [solve_cfr(tree, CFRParams(method="es-mccfr", iterations=100, check_every=50, seed=s)) for s in (3, 3, 4)]
    assert all(short[0].strategy[k].tolist() == short[1].strategy[k].tolist() for k in short[0].strategy)
    assert any(short[2].strategy[k].tolist() != short[0].strategy[k].tolist() for k in short[0].strategy)


@pytest.mark.parametrize("mode", ["compact", "paper"])
def test_first_iteration_regrets_and_average_from_scratch(mode):
    """One simultaneous vanilla iteration from the uniform strategy, recomputed from scratch in
    float64: regrets = ±(opponent reach) x (q - v(parent)), average = own reach x uniform. Reach
    is summed over parents (compact nodes have several). Regrets are continuous in the inputs,
    so unlike the matched strategies they can be compared to a tolerance."""
    import torch

    from pasur.solve.cfr import RoundCFR

    rt = build_tree(position(1, 4, 2), mode).round(5)
    rt_tree = rt
    solver = RoundCFR(rt_tree, rt.terminal_value, CFRParams(method="cfr", updates="simultaneous"), torch.device("cpu"))
    layers = [rt.edges(t) for t in range(rt.start_turn, 8)]
    uniform = []
    for t, (parent, _, _) in zip(range(rt.start_turn, 8), layers, strict=True):
        deg = torch.bincount(parent, minlength=rt.n_nodes(t)).double()
        uniform.append(1.0 / deg[parent])
    # reach of Alex and Bob at each layer's parents
    reach = [(torch.ones(rt.n_nodes(rt.start_turn), dtype=torch.float64),) * 2]
    for i, (t, (parent, child, _)) in enumerate(zip(range(rt.start_turn, 8), layers, strict=True)):
        ra, rb = reach[-1]
        ea = ra[parent] * (uniform[i] if t % 2 == 0 else 1.0)
        eb = rb[parent] * (uniform[i] if t % 2 == 1 else 1.0)
        n = rt.n_nodes(t + 1)
        reach.append(
            (
                torch.zeros(n, dtype=torch.float64).index_add_(0, child, ea),
                torch.zeros(n, dtype=torch.float64).index_add_(0, child, eb),
            )
        )
    v = rt.terminal_value.double()
    want_regret, want_avg = {}, {}
    for i in reversed(range(len(layers))):
        t = rt.start_turn + i
        parent, child, gt_edge = layers[i]
        q = rt.gt[t].reward[gt_edge].double() + v[child]
        vp = torch.zeros(rt.n_nodes(t), dtype=torch.float64).index_add_(0, parent, uniform[i] * q)
        ra, rb = reach[i]
        own, opp, sign = (ra, rb, 1.0) if t % 2 == 0 else (rb, ra, -1.0)
        want_regret[i] = sign * opp[parent] * (q - vp[parent])
        want_avg[i] = own[parent] * uniform[i]
        v = vp
    solver.iterate()
    for i in range(len(layers)):
        assert torch.allclose(solver.regret[i].double(), want_regret[i], atol=1e-4), i
        assert torch.allclose(solver.avg[i].double(), want_avg[i], atol=1e-6), i


def test_value_passed_back_is_the_average_strategys_value():
    """Each round passes the exact value of its average strategy, so the root value is the value of
    the whole average strategy (the paper's code passes the iterates' mean instead)."""
    s = position(6, 4, 4)
    tree = build_tree(s, "paper")
    res = solve_cfr(tree, CFRParams(method="cfr", iterations=30))
    assert res.root_value == pytest.approx(scalar_profile_value(tree, res.strategy, s), abs=1e-4)
    oracle = scalar_profile_value(tree, res.strategy, s, 0) - scalar_profile_value(tree, res.strategy, s, 1)
    assert res.nash_conv == pytest.approx(oracle, abs=1e-4) and oracle > 0
    assert res.exploitability == pytest.approx(oracle / 2, abs=1e-4)  # docs/conventions.md


@pytest.mark.parametrize("mode", ["compact", "paper"])
@pytest.mark.parametrize(("seed", "turn"), [(0, 0), (1, 2), (3, 0)])
def test_per_round_best_response_matches_the_scalar_oracle(mode, seed, turn):
    """CFR's own best response (one round, the final one here, so it is the whole game's)
    against a random non-uniform strategy, checked against the scalar recursion."""
    from pasur.solve.cfr import RoundCFR

    s = position(seed, 5, turn)
    tree = build_tree(s, mode)
    sigma = random_strategy(tree, seed)
    rt = tree.round(5)
    solver = RoundCFR(rt, rt.terminal_value, CFRParams(method="cfr"), tree.device)
    layers = [sigma[(5, t)] for t in range(rt.start_turn, 8)]
    for who in (0, 1):
        got = float(solver.best_response(layers, who)[0])
        assert got == pytest.approx(scalar_profile_value(tree, sigma, s, who), abs=1e-4)


def test_dcfr_on_the_reference_decks(reference_decks):
    for nd in reference_decks:
        tree = build_tree(GameState.initial(nd.deck), "compact")
        res = solve_cfr(tree, CFRParams(method="dcfr", iterations=None, target_exploitability=5e-4))
        assert abs(res.game_value() - nd.value) < 0.01, nd.id
        assert res.exploitability < 0.005, nd.id


# -- outputs --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["compact", "paper"])
def test_strategy_table_round_trips_with_one_row_per_edge(tmp_path, mode):
    tree = build_tree(position(8, 4, 0), mode)  # infosets need rounds that start at turn 0
    res = solve_cfr(tree, CFRParams(method="dcfr", iterations=20))
    path = tmp_path / "s.parquet"
    rows = write_strategy_table(path, tree, res.strategy, "deck-x")
    n_edges = sum(rt.edges(t)[0].shape[0] for rt in tree.rounds for t in range(rt.start_turn, 8))
    assert rows == n_edges == pq.read_metadata(path).num_rows
    back = read_strategy_table(path, tree)
    assert back.keys() == res.strategy.keys()
    assert all(bool((back[k] == res.strategy[k]).all()) for k in back)
    table = pq.read_table(path)
    assert len(table.schema) == 58 + 7
    assert set(table.column("deck_id").to_pylist()) == {"deck-x"}
    assert set(table.column("round").to_pylist()) == {4, 5}


@pytest.mark.parametrize("mode", ["compact", "paper"])
def test_a_table_written_in_small_chunks_holds_the_same_rows(tmp_path, mode):
    """The writer walks a layer ``chunk_rows`` edges at a time (a tail deck's layer has tens of
    millions); chunks that split layers at odd places give the same rows, in the same order, as
    whole layers: features, probabilities and the edge, node, child and action columns."""
    tree = build_tree(position(8, 4, 0), mode)
    res = solve_cfr(tree, CFRParams(method="dcfr", iterations=5))
    whole, chunked = tmp_path / "whole.parquet", tmp_path / "chunked.parquet"
    largest = max(rt.n_edges_at(t) for rt in tree.rounds for t in range(rt.start_turn, 8))
    write_strategy_table(whole, tree, res.strategy, "d", chunk_rows=largest)
    write_strategy_table(chunked, tree, res.strategy, "d", chunk_rows=997)
    assert pq.ParquetFile(chunked).metadata.num_row_groups > pq.ParquetFile(whole).metadata.num_row_groups
    assert pq.read_table(chunked).equals(pq.read_table(whole))


@pytest.mark.parametrize("chunk", [1 << 20, 997])
def test_the_edge_checksum_is_the_one_tables_were_written_with(monkeypatch, chunk):
    """Tables written before carry this digest in their metadata (computed then a whole column at
    a time); the checksum, now fed a chunk of edges at a time, must stay the same stream of bytes
    whatever the chunk, or they would all be refused (997 edges cut the larger layers here)."""
    from pasur.solve import gametree

    monkeypatch.setattr(gametree, "CHECKSUM_CHUNK", chunk)
    s = position(1, 4, 0)
    assert build_tree(s, "paper").edge_checksum() == "350ff21d5c4a357ac9f4903ec2f706b4"
    assert build_tree(s, "compact").edge_checksum() == "bfaa6a3f4ccc005b1e863334b8930323"


def test_strategy_table_refuses_another_tree_or_a_broken_file(tmp_path):
    tree = build_tree(position(5, 5, 0), "compact")
    res = solve_cfr(tree, CFRParams(method="dcfr", iterations=5))
    path = tmp_path / "s.parquet"
    write_strategy_table(path, tree, res.strategy, "d")
    with pytest.raises(PasurInputError, match="'compact' tree, not of this 'paper' tree"):
        read_strategy_table(path, build_tree(position(5, 5, 0), "paper"))
    with pytest.raises(PasurInputError, match="another deck"):
        read_strategy_table(path, build_tree(position(6, 5, 0), "compact"))
    # a tree of the same deck, mode, start and size whose edges are wired otherwise: two edges of
    # one layer exchange their children (a table from another build, or another version)
    import copy

    other = copy.deepcopy(tree)
    g = other.round(5).gt[2]
    a, b = 0, int((g.parent != g.parent[0]).nonzero()[0])
    g.child[[a, b]] = g.child[[b, a]]
    with pytest.raises(PasurInputError, match=r"another tree .*checksum"):
        read_strategy_table(path, other)
    # a table whose metadata claims another number of edges (rows of another tree)
    table = pq.read_table(path)
    meta = {**table.schema.metadata, b"pasur.edges": b"12345"}
    pq.write_table(table.replace_schema_metadata(meta), tmp_path / "edited.parquet")
    with pytest.raises(PasurInputError, match="a tree of 12345 edges"):
        read_strategy_table(tmp_path / "edited.parquet", tree)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.raises(PasurInputError, match="not a readable Parquet"):
        read_strategy_table(broken, tree)
    with pytest.raises(PasurInputError, match="not found"):
        read_strategy_table(tmp_path / "nope.parquet", tree)


@pytest.mark.parametrize("mode", ["compact", "paper"])
@pytest.mark.parametrize(("seed", "rnd", "turn"), [(3, 4, 0), (5, 4, 4)])
def test_a_tremble_plays_every_node_near_its_minimax_value(mode, seed, rnd, turn):
    """Plain DCFR reaches the equilibrium but leaves the nodes it never reaches nearly
    unlearned (their value under the strategy is more than a point from their minimax value);
    with a tremble of 1e-3 every node of the tree is within 0.1 point of it, while the root value
    is still the exact one and the exploitability is still below 5e-5 (the tremble is taken out
    of the strategy returned: edges an optimal player never takes get less than it)."""
    tree = build_tree(position(seed, rnd, turn), mode)
    exact = solve_exact(tree)
    plain = solve_cfr(tree, CFRParams(method="dcfr", iterations=300))
    trembled = solve_cfr(tree, CFRParams(method="dcfr", iterations=300, tremble=1e-3))
    assert subgame_gap(tree, plain.strategy, exact) > 1.0
    assert subgame_gap(tree, trembled.strategy, exact) < 0.1
    assert trembled.exploitability < 5e-5
    assert trembled.root_value == pytest.approx(exact.root_value, abs=1e-4)
    assert min(float(p.min()) for p in trembled.strategy.values() if p.numel()) < 1e-4


def test_the_subgame_gap_is_zero_for_the_exact_strategy_only():
    tree = build_tree(position(3, 4, 0), "paper")
    exact = solve_exact(tree)
    assert subgame_gap(tree, pure_strategy(exact)) == 0.0
    assert subgame_gap(tree, uniform_strategy(tree)) > 1.0


BAD_PARAMS = [
    (dict(iterations=0), "--iterations must be between 1 and 10,000,000, got 0"),
    (dict(iterations=-5), "--iterations must be between 1 and 10,000,000, got -5"),
    (dict(iterations=10**12), "--iterations must be between 1 and 10,000,000"),
    (dict(method="cfr++"), "unknown CFR method 'cfr\\+\\+'"),
    (dict(updates="sometimes"), "unknown update scheme"),
    (dict(alpha=-1.0), "alpha must be in"),
    (dict(gamma=float("nan")), "gamma must be in"),
    (dict(iterations=None), "give a number of iterations or a target"),
    (dict(iterations=None, target_exploitability=0.0), "target exploitability must be positive"),
    (dict(check_every=0), "check-every must be positive"),
    (dict(method="es-mccfr", updates="simultaneous"), "es-mccfr traverses each player in turn"),
    (dict(max_iterations=0), "--max-iterations must be between 1 and"),
    (dict(tremble=-1e-3), "--tremble must be in"),
    (dict(tremble=0.5), "--tremble must be in"),
    (dict(tremble=float("nan")), "--tremble must be in"),
    (dict(method="es-mccfr", tremble=1e-3), "--tremble applies to the full-width methods"),
]


@pytest.mark.parametrize(("kw", "message"), BAD_PARAMS, ids=[m for _, m in BAD_PARAMS])
def test_bad_parameters_are_refused(kw, message):
    with pytest.raises(PasurInputError, match=message):
        CFRParams(**kw).check()


runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--iterations", "0"], "invalid value for '--iterations'"),
        (["--alpha", "-2"], "invalid value for '--alpha'"),
        (["--updates", "both"], "unknown update scheme"),
        (["--target-exploitability", "-1"], "--target-exploitability must be a positive number"),
    ],
)
def test_cli_refuses_bad_cfr_parameters_before_any_work(args, message, tmp_path):
    out = tmp_path / "out"
    r = runner.invoke(app, ["solve", "--seed", "1", "--method", "dcfr", "--out", str(out), *args])
    assert r.exit_code == 2 and message in r.stderr and not out.exists()
    assert len(r.stderr.strip().splitlines()) == 1


def test_cli_cfr_writes_outputs_atomically(tmp_path, reference_decks):
    nd = reference_decks[2]
    out = tmp_path / "solve"
    args = ["solve", "--deck", str(nd.deck), "--method", "dcfr", "--iterations", "30", "--out", str(out), "-q"]
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["method"] == "dcfr" and summary["parameters"]["alpha"] == 1.5 and summary["exact_value"] == 5
    assert abs(summary["value"] - 5) < 0.05 and summary["exploitability"] < 0.05
    assert [x["round"] for x in summary["rounds"]] == list(range(6))
    assert "average strategy" in summary["value_passed_between_rounds"]
    assert sorted(p.name for p in out.iterdir()) == [
        ".pasur-outputs.json",
        "convergence.png",
        "strategy.parquet",
        "summary.json",
        "traces.parquet",
    ]
    assert (
        json.loads((out / "summary.json").read_text())["strategy_rows"]
        == pq.read_metadata(out / "strategy.parquet").num_rows
    )
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left behind
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "exists already" in again.stderr
