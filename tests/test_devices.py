"""The Pasur side on an accelerator, checked against the CPU and the scalar engine.

Every tensor path takes one ``device`` argument; these tests run each path on every accelerator
torch sees (``helpers.accelerators``) and compare it with the CPU run of the same inputs and with
the exact values of the scalar engine. Where torch sees none (CI, the dev machine) they run on
the CPU device, comparing the CPU with itself (each path still runs, through its ``device``
argument, and must be deterministic), the heaviest sized down there (``helpers.small_on_cpu``);
none is skipped. On a GPU machine: ``pytest tests/test_devices.py tests/poker/test_poker_devices.py
tests/hidden/test_hidden_devices.py``.

Tolerances: the tree, the exact solver and self-play with a pure strategy are integer work and
must agree bit for bit. CFR is float32 with reductions (``index_add_``, ``scatter_add_``) whose
order differs on a GPU (atomics), so iterates agree to rounding, a few 1e-6 after tens of
iterations; 1e-4 leaves room for that and still fails on any wrong edge or update.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from helpers import assert_batch_replays, device_param, on_device, position, small_on_cpu
from pasur.cli import app
from pasur.common.memory import MemoryGuard, TreeTooLargeError, available_bytes, release_freed
from pasur.game.cards import Deck, NamedDeck
from pasur.game.state import GameState
from pasur.learn.models import BatchModel, ModelParams, fit_model
from pasur.play.infosets import InfosetTracker
from pasur.play.selfplay import BatchGreedy, BatchRandom, BatchState, BatchStrategy, TreeTracker, play_batch
from pasur.solve.cfr import CFRParams
from pasur.solve.exact import exploitability, pure_strategy, solve_exact
from pasur.solve.infoset import edge_features, infoset_tensor
from pasur.solve.reference import ReferenceSolver
from pasur.solve.round_parts import AVERAGE_BYTES_PER_EDGE, PART_BYTES_PER_EDGE, SOLVER_BYTES_PER_EDGE
from pasur.solve.rounds import solve_cfr
from pasur.solve.strategy_io import write_strategy_table
from pasur.solve.tree import build_tree

pytestmark = device_param

MODES = ["compact", "paper"]
SMALL = [(5, 4, 4), (0, 5, 0), (1, 4, 0)]
ITERATE_TOL = 1e-4


def _assert_on_device(tree, device: str) -> None:
    """The tree's tensors live on ``device``: a silent fallback to the CPU fails here."""
    on_device(device, tree.rounds[-1].terminal_value)
    for rt in tree.rounds:
        for t in range(rt.start_turn, 8):
            on_device(device, *rt.edges(t))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("seed", "rnd", "turn"), SMALL)
def test_the_tree_is_the_same_on_the_device(device, mode, seed, rnd, turn):
    """Built on the device: the same nodes per layer, edges, actions, links, terminal values and
    infoset rows as on the CPU."""
    s = position(seed, rnd, turn)
    cpu, dev = build_tree(s, mode), build_tree(s, mode, device)
    _assert_on_device(dev, device)
    assert dev.node_counts() == cpu.node_counts()
    assert dev.edge_checksum() == cpu.edge_checksum()
    assert torch.equal(dev.rounds[-1].terminal_value.cpu(), cpu.rounds[-1].terminal_value)
    if turn == 0:
        for rt in cpu.rounds:
            for t in range(1, 9):
                assert torch.equal(infoset_tensor(dev, rt.round, t).cpu(), infoset_tensor(cpu, rt.round, t))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("seed", "rnd", "turn"), SMALL)
def test_exact_values_on_the_device_are_the_reference_solvers(device, mode, seed, rnd, turn):
    s = position(seed, rnd, turn)
    assert solve_exact(build_tree(s, mode, device)).game_value() == ReferenceSolver(s.deck).value(s)


@pytest.mark.parametrize("mode", MODES)
def test_a_whole_deal_solved_on_the_device(device, mode, reference_decks):
    """ref2 from the deal (the paper tree: 4 million nodes): the known value."""
    nd = reference_decks[2]
    tree = build_tree(GameState.initial(nd.deck), mode, device, infosets=False)
    _assert_on_device(tree, device)
    assert solve_exact(tree, keep_values=False).game_value() == nd.value


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["dcfr", "cfr+", "cfr", "lcfr", "pcfr+"])
def test_cfr_iterates_on_the_device_are_the_cpus(device, mode, method):
    """40 iterations per round of every full-width method: the same average strategy, root value
    and NashConv as on the CPU, to float32 rounding."""
    s = position(0, 5, 0)
    params = CFRParams(method=method, iterations=40)
    cpu = solve_cfr(build_tree(s, mode), params)
    dev = solve_cfr(build_tree(s, mode, device), params)
    assert dev.strategy.keys() == cpu.strategy.keys()
    for key, x in cpu.strategy.items():
        y = dev.strategy[key].cpu()
        assert y.shape == x.shape
        assert float((y - x).abs().max()) < ITERATE_TOL, (method, key)
    assert dev.root_value == pytest.approx(cpu.root_value, abs=ITERATE_TOL)
    assert dev.nash_conv == pytest.approx(cpu.nash_conv, abs=ITERATE_TOL)


@pytest.mark.parametrize("mode", MODES)
def test_cfr_on_the_device_reaches_the_exact_value(device, mode):
    """A whole-game target on the device, checked by exact best responses on the CPU tree."""
    s = position(1, 4, 0)
    tree = build_tree(s, mode, device)
    res = solve_cfr(tree, CFRParams(method="dcfr", target_exploitability=2.5e-4, max_iterations=5000))
    exact = solve_exact(build_tree(s, mode))
    assert res.exploitability < 5e-4
    assert res.root_value == pytest.approx(exact.root_value, abs=1e-3)
    on_cpu = {k: v.cpu() for k, v in res.strategy.items()}  # the strategy stays on the tree's device
    assert exploitability(build_tree(s, mode), on_cpu) == pytest.approx(res.exploitability, abs=1e-4)


def test_external_sampling_on_the_device_converges(device):
    """ES-MCCFR draws its samples on the device (another random stream than the CPU's), so it
    is held to the convergence bounds of tests/test_es_mccfr.py, not to the CPU's iterates."""
    tree = build_tree(position(2, 5, 2), "compact", device, infosets=False)
    exact = solve_exact(tree).root_value
    values, expl = [], []
    for seed in range(4):
        res = solve_cfr(tree, CFRParams(method="es-mccfr", iterations=300, check_every=300, seed=seed))
        expl.append(exploitability(tree, res.strategy))
        values.append(res.root_value)
    assert max(expl) < 0.05, expl
    assert sum(values) / len(values) == pytest.approx(exact, abs=0.05)


def test_the_memory_guard_counts_the_devices_memory(device):
    """On a GPU the guard's default limit is a share of the GPU's free memory and what it counts
    as held is the GPU's allocations (the process's resident memory on the CPU): a guard that read
    the CPU's figures for a GPU build would let a tree overrun the card, or refuse one that fits."""
    dev = torch.device(device)
    # What earlier tests in this worker left to the collector, or freed but still resident in the
    # heap, would otherwise be given back (or reused) while the block is made, and the guard would
    # see less than the block (CI saw 106 MiB held for 200 MiB): start from a collected, trimmed heap.
    release_freed()
    guard = MemoryGuard(None, dev)
    assert guard.limit == pytest.approx(MemoryGuard.DEFAULT_SHARE * available_bytes(dev), rel=0.02)
    if dev.type == "cuda":
        assert available_bytes(dev) == pytest.approx(torch.cuda.mem_get_info(dev)[0], rel=0.02)
    block = torch.ones(50 * 2**20, dtype=torch.int32, device=dev)  # 200 MiB, touched
    assert guard.held >= 190 * 2**20
    del block
    with pytest.raises(TreeTooLargeError, match=r"over the limit of 0.00 GiB"):
        build_tree(GameState.initial(Deck.from_seed(3)), "paper", device, memory_limit=1000)


def test_batched_games_on_the_device_replay_in_the_scalar_engine(device):
    deck = Deck.from_seed(11)
    batch = play_batch(deck, BatchRandom(seed=1), BatchGreedy(), n_games=40, device=device)
    on_device(device, batch.utility())
    assert len({tuple(batch.actions_of(g)) for g in range(40)}) > 20  # the games differ
    assert_batch_replays(GameState.initial(deck), batch)


def test_greedy_play_on_the_device_is_the_cpus(device):
    """A deterministic agent plays the same games on every device."""
    deck = Deck.from_seed(5)
    cpu = play_batch(deck, BatchGreedy(), BatchGreedy(), n_games=3)
    dev = play_batch(deck, BatchGreedy(), BatchGreedy(), n_games=3, device=device)
    assert [cpu.actions_of(g) for g in range(3)] == [dev.actions_of(g) for g in range(3)]


@pytest.mark.parametrize("mode", MODES)
def test_an_exact_strategy_played_on_the_device_reaches_the_value(device, mode, reference_decks):
    nd = reference_decks[2]
    tree = build_tree(GameState.initial(nd.deck), mode, device)
    pure = pure_strategy(solve_exact(tree))
    both = play_batch(nd.deck, BatchStrategy(pure, 1), BatchStrategy(pure, 2), n_games=6, device=device, tree=tree)
    assert both.utility().cpu().tolist() == [nd.value] * 6
    vs_random = play_batch(nd.deck, BatchStrategy(pure, 1), BatchRandom(seed=9), 50, device=device, tree=tree)
    assert bool((vs_random.utility() >= nd.value).all())


@pytest.mark.parametrize("mode", MODES)
def test_infoset_features_built_in_play_on_the_device_are_the_trees(device, mode):
    """The features a model agent scores in play, built on the device, are the strategy table's
    rows of the edges it takes (``edge_features`` of the CPU tree, every column: the paper's
    infoset of the child in paper mode, the state features in compact mode; so nothing here is
    compared with itself)."""
    start = position(2, 4, 0)
    cpu_tree = build_tree(start, mode)
    tree = build_tree(start, mode, device)
    state = BatchState.from_state(start, 30, device)
    state.tracker = TreeTracker(tree, 30)
    tracker = InfosetTracker(state, mode)
    state.infosets[mode] = tracker
    agent = BatchRandom(3)
    while not state.is_terminal:
        actions = state.legal_actions()
        pick = agent.choose(state, actions)
        features = tracker.children(state, actions)[pick]
        on_device(device, features)
        first = torch.cumsum(actions.brf, 0) - actions.brf
        edge = state.tracker.edges_of_games(state.round, state.turn, pick - first[actions.row[pick]])
        parent, child, gt_edge = (x[edge.cpu()] for x in cpu_tree.round(state.round).edges(state.turn))
        expected = edge_features(cpu_tree, state.round, state.turn, parent, child, gt_edge)
        assert torch.equal(features.cpu(), expected)
        state.apply(actions, pick)


def test_a_model_agent_on_the_device_plays_legal_games_and_scores_as_on_the_cpu(device, tmp_path):
    start = position(3, 4, 0)
    tree = build_tree(start, "compact")
    res = solve_cfr(tree, CFRParams(method="dcfr", iterations=30))
    path = tmp_path / "s3.parquet"
    write_strategy_table(path, tree, res.strategy, "deck-3")
    model = fit_model([path], ModelParams(rounds=8, max_depth=4, row_weights="uniform"))
    # the first decision's probabilities: the same features, so the same scores on both devices
    probs = []
    for dev in ("cpu", device):
        state = BatchState.from_state(start, 5, dev)
        state.infosets["compact"] = InfosetTracker(state, "compact")
        probs.append(BatchModel(model, 0).probabilities(state, state.legal_actions()).cpu().numpy())
    np.testing.assert_allclose(probs[1], probs[0], rtol=1e-6, atol=1e-7)
    assert_batch_replays(
        start, play_batch(start.deck, BatchModel(model, 1), BatchRandom(2), 30, device=device, start=start)
    )


@pytest.mark.parametrize("tree", MODES)
def test_the_cli_solves_on_the_device(device, tree, reference_decks):
    nd = reference_decks[2]
    args = ["solve", "--deck", str(nd.deck), "--tree", tree, "--device", device, "--json", "--quiet"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["value"] == nd.value and out["device"] == device


def test_cfr_in_parts_on_the_device_is_the_whole_solve(device):
    """A tree-like round solved in parts of its roots (pasur.solve.round_parts) on the device:
    the whole solve's values and exploitability, to the device's rounding. (Its sums are atomics:
    with a tremble, near-equal actions split by rounding, so strategies are compared by what they
    are worth, measured exactly on the CPU; on the H100, 3.8e-3 apart on one edge after 30
    iterations, results/tail-memory/gpu.)"""
    start = position(0, 2, 0)
    tree = build_tree(start, "paper", device)
    params = CFRParams(method="dcfr", iterations=30, tremble=0.001)
    whole = solve_cfr(tree, params, solver_memory=10**12)
    widest = max(sum(rt.n_edges_at(t) for t in range(rt.start_turn, 8)) for rt in tree.rounds)
    per_edge = SOLVER_BYTES_PER_EDGE + PART_BYTES_PER_EDGE
    parts = solve_cfr(tree, params, solver_memory=AVERAGE_BYTES_PER_EDGE * widest + per_edge * widest // 3)
    assert max(tr.parts for tr in parts.traces) > 1
    on_device(device, *parts.strategy.values())
    assert parts.root_value == pytest.approx(whole.root_value, abs=ITERATE_TOL)
    assert parts.nash_conv == pytest.approx(whole.nash_conv, abs=ITERATE_TOL)
    cpu_tree = build_tree(start, "paper")
    worth = [exploitability(cpu_tree, {k: v.cpu() for k, v in r.strategy.items()}) for r in (whole, parts)]
    assert worth[1] == pytest.approx(worth[0], abs=ITERATE_TOL)
    assert worth[1] == pytest.approx(parts.exploitability, abs=ITERATE_TOL)


def test_a_sweep_deck_runs_on_the_device_as_on_the_cpu(device, tmp_path, reference_decks):
    """A Figure 14 deck of the sweep on the device: paper tree, CFR, strategy table, a model fitted
    with play weights (XGBoost where its build can train: the card says where) and its matchups.
    On the CPU device the same steps run once (the CPU's run is the device's) on deck 11, the
    smallest whole-game paper tree of seeds 0..23 (2.7 M edges against ref2's 4 M), with fewer
    rows and games: about 9 s instead of 45."""
    import xgboost as xgb

    from pasur.study.pipeline import DeckJob, run_deck

    small = small_on_cpu(device)
    deck = NamedDeck("seed-11", Deck.from_seed(11)) if small else reference_decks[2]
    rows, games = (5_000, 10) if small else (50_000, 40)
    params = {"rounds": 4, "max_depth": 4, "max_rows": rows, "row_weights": "play", "validation_fraction": 0}
    matchups = ("model-vs-model", "model-vs-random", "random-vs-model", "table-vs-random")
    recs = {}
    for dev in dict.fromkeys(("cpu", device)):
        cfr = CFRParams(method="dcfr", iterations=20, tremble=0.001)
        job = DeckJob(cfr, "paper", dev, True, params, games, matchups)
        recs[dev] = run_deck(deck, job, tmp_path / dev)
    cpu, acc = recs["cpu"], recs[device]
    assert acc["device"] == device and acc["nodes"] == cpu["nodes"] and acc["exact_value"] == cpu["exact_value"]
    assert acc["value"] == pytest.approx(cpu["value"], abs=ITERATE_TOL)
    # the profile's value is within its NashConv (twice the exploitability) of the game's value
    assert abs(acc["value"] - acc["exact_value"]) <= 2 * acc["exploitability"]
    assert deck.value is None or acc["exact_value"] == deck.value
    card = json.loads((tmp_path / device / "model.card.json").read_text())
    assert card["parameters"]["device"] == (
        "cuda" if device.startswith("cuda") and xgb.build_info().get("USE_CUDA") else "cpu"
    )
    assert card["training"]["rows_used"] == rows
    for m in matchups:
        assert -60 <= acc[f"{m.replace('-', '_')}_mean"] <= 60
