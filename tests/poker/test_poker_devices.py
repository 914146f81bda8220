"""The poker core on an accelerator: on every device of ``helpers.accelerators()`` the engine, the
CFR family, best responses, BUFP, Embedding CFR, HandEbdNet and the lossless solver compute what
they compute on the CPU, and their tensors live on that device (a silent CPU fallback fails).

Without an accelerator they run on the CPU device (comparing the CPU with itself: each path still
runs through its ``device`` argument and must be deterministic); none is skipped."""

from __future__ import annotations

import functools

import pytest
import torch

from helpers import device_param, no_tf32, on_device
from pasur.common.regret import METHODS, PREDICTIVE, SCHEDULED
from pasur.poker.abstraction import abstraction
from pasur.poker.dense_cfr import DenseCFR
from pasur.poker.embedding import handnet
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.phi import Embedding
from pasur.poker.embedding.solver import EmbeddingCFR
from pasur.poker.embedding.tensors import class_tensors, strength_tensors
from pasur.poker.engine import Engine
from pasur.poker.experiments import lossless
from pasur.poker.fictitious import METHODS as FP_METHODS
from pasur.poker.fictitious import FictitiousPlay
from pasur.poker.measures import best_response_policy, best_response_values, evaluate, exploitability, game_value
from pasur.poker.policy import TabularPolicy, normalize
from pasur.poker.run import make_solver, solve
from pasur.poker.solvers import CFRConfig, CFRSolver
from pasur.poker.tree import N_ACTIONS

pytestmark = device_param

# The engine works in float64. A CUDA reduction (sum, cumsum, bmm) adds in another order than the
# CPU's, and index_add_ / scatter-add add through atomics in a nondeterministic order, so results
# differ from the CPU's by rounding, about 1e-16 relative per operation; the solvers snap
# rounding-size regrets and showdown sums to 0, so exact ties stay ties on every device. The
# CPU's two CFR backends, whose operation orders differ entirely, agree to 1e-10 on these games
# (tests/poker/test_poker_solvers.py): 1e-9 (relative to values of more than a chip) leaves margin.
# Measured on an H100: at most 3e-12 on strategies, 2e-13 on values and NashConv.
TOL64 = 1e-9
# float32 (the lossless solver's and Figure 5's precision): rounding is about 6e-8 relative per
# operation, and a few dozen operations in another order stay well inside 1e-5 (measured: 1e-7).
TOL32 = 1e-5

ALL_METHODS = (*METHODS, *PREDICTIVE, *SCHEDULED)


def _diff(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    """The largest absolute difference between two lists of tables of the same shapes."""
    assert len(a) == len(b)
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        assert x.shape == y.shape
        if x.numel():
            worst = max(worst, float((x.detach().cpu().double() - y.detach().cpu().double()).abs().max()))
    return worst


def _average_diff(a: list[torch.Tensor], b: list[torch.Tensor], sums: list[torch.Tensor]) -> float:
    """The largest difference of two average-strategy tables, each row's weighted by its share of
    the largest row weight of its round (``sums``: the CPU run's unnormalized average-strategy sums,
    laid out as the tables, actions in dimension 1).

    A row's average is its sums divided by the row's total weight. Where that weight is tiny (a
    row reached only in early iterations, which the scheduled methods discount by up to t^-30:
    1e-21 of the largest on numeral211-tiny), a rounding-size contribution (the current
    strategies agree to about 1e-12, not 0) moves the normalized row by O(1) on an H100 without
    changing anything the strategy does (its measures agree to 1e-14). Weighted, this is the
    difference of the sums themselves, relative to the largest."""
    assert len(a) == len(b) == len(sums)
    worst = 0.0
    for x, y, w in zip(a, b, sums, strict=True):
        assert x.shape == y.shape and x.numel() == w.numel()
        if not x.numel():
            continue
        x, y, w = (t.detach().cpu().double().reshape(-1, N_ACTIONS, t.shape[-1]) for t in (x, y, w))
        total = w.sum(1)
        share = total / total.max().clamp_min(1e-300)
        worst = max(worst, float(((x - y).abs().amax(1) * share).max()))
    return worst


def _close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))


def _evaluation(engine, policy) -> list[float]:
    ev = evaluate(engine, policy)
    return [ev.value, *ev.br_values, ev.nash_conv]


def _cpu(x: list[torch.Tensor]) -> list[torch.Tensor]:
    return [t.detach().cpu().clone() for t in x]


# ---------------------------------------------------------------------------- the engine


def test_engine_and_solver_tensors_live_on_the_device(device):
    """Built for the device, the engine's structures, its traversal and every solver's tables are
    there (a tensor left on the CPU would make the GPU run a CPU run, or fail midway)."""
    e = Engine("leduc", device=device)
    assert e.device.type == torch.device(device).type
    lv = e.levels[1][1]
    on_device(device, e.hand_ids[1], e.mult[1], e.mult_ratio[1], e.root_index[1], e.expand_parent[1], e.expand_child[1])
    on_device(device, lv.nodes, lv.par, lv.child_slot, lv.legal, lv.fold_stake, lv.show_stake, e.cards[1].gid)
    on_device(device, e.traverse(TabularPolicy(e), players=(0, 1), modes="max"))
    cfr = CFRSolver(e, CFRConfig(method="dcfr"))
    cfr.iterate(1)
    on_device(device, *cfr.regret, *cfr.strategy_sum, *cfr.current.tables, *cfr.average_policy().tables)
    on_device(device, *cfr.keying.key)
    dense = DenseCFR(e, CFRConfig(method="pcfr+"))
    dense.iterate(1)
    on_device(device, dense.regret, dense.strategy_sum, dense.sigma, *dense.mats, *dense.gather_idx)
    on_device(device, *dense.average_policy().tables)
    fp = FictitiousPlay(e, "bufp-x")
    fp.iterate(1)
    on_device(device, *fp.average_policy().tables)
    two = Engine("numeral211-tiny", device=device)  # two private cards: card-removal incidences, tie groups
    on_device(device, two.cards[1].incidence, two.cards[1].card_pos, two.cards[2].rends, two.cards[2].hand_rgroup)
    space = ClassSpace(two)
    emb = EmbeddingCFR(two, [Embedding.identity(_weights(two, space)[r]) for r in range(two.R)], space=space)
    emb.iterate(1)
    on_device(device, *emb.regret, *emb.strategy_sum, *emb.current, emb.ops[2].groups[0][5], *emb.parent[1:])


# ---------------------------------------------------------------------------- the CFR family

#: (game, backend, iterations): the dense small-game CFR and the level-by-level engine on Kuhn
#: and Leduc, the engine alone (on suit-isomorphism classes) on the smallest Numeral211
GAMES = [("kuhn", "fast", 60), ("kuhn", "engine", 60), ("leduc", "fast", 15), ("leduc", "engine", 15),
         ("numeral211-tiny", "engine", 6)]  # fmt: skip
RULES = [(m, "alternating") for m in ALL_METHODS] + [("cfr", "simultaneous"), ("dcfr", "simultaneous")]


def _cfr_run(game: str, backend: str, method: str, updates: str, n: int, device: str) -> dict:
    e = Engine(game, device=device)
    s = make_solver(e, CFRConfig(method=method, updates=updates, horizon=n), backend=backend)
    s.iterate(n)
    avg = s.average_policy()
    # the unnormalized sums laid out as the tables (the dense solver keeps them flat)
    sums = s._tables(s.strategy_sum.reshape(-1)) if isinstance(s, DenseCFR) else s.strategy_sum
    return {"average": avg.tables, "sums": sums, "current": s.current.tables, "measures": _evaluation(e, avg)}


@functools.cache
def _cfr_cpu(game: str, backend: str, method: str, updates: str, n: int) -> dict:
    return _cfr_run(game, backend, method, updates, n, "cpu")


@pytest.mark.parametrize(("method", "updates"), RULES)
@pytest.mark.parametrize(("game", "backend", "n"), GAMES)
def test_cfr_iterates_and_exploitability_equal_the_cpus(device, game, backend, n, method, updates):
    """A fixed number of iterations of every update rule: the same current and average strategy
    tables, and the same value, best-response values and NashConv of the average."""
    ref = _cfr_cpu(game, backend, method, updates, n)
    got = _cfr_run(game, backend, method, updates, n, device)
    on_device(device, *got["average"], *got["current"])
    assert _diff(got["current"], ref["current"]) <= TOL64
    assert _average_diff(got["average"], ref["average"], ref["sums"]) <= TOL64
    for a, b in zip(got["measures"], ref["measures"], strict=True):
        assert _close(a, b, TOL64), (got["measures"], ref["measures"])


def test_cfr_on_an_abstraction_equals_the_cpus(device):
    """CFR+ on EHS buckets (the keying is computed on the device too) traversing the real game."""
    out = []
    for dev in ("cpu", device):
        e = Engine("numeral211-tiny", device=dev)
        k = abstraction(e, "iso,ehs:6,ehs:8")
        s = CFRSolver(e, CFRConfig(method="cfr+"), k)
        s.iterate(6)
        avg = s.average_policy()
        on_device(dev, *k.key, *avg.tables)
        out.append((k.n_keys, _cpu(k.key), avg.tables, s.strategy_sum, _evaluation(e, avg)))
    (nk0, key0, avg0, sums0, ev0), (nk1, key1, avg1, _, ev1) = out
    assert nk0 == nk1 and all(torch.equal(a, b) for a, b in zip(key0, key1, strict=True))
    assert _average_diff(avg1, avg0, sums0) <= TOL64
    assert all(_close(a, b, TOL64) for a, b in zip(ev1, ev0, strict=True)), (ev1, ev0)


def test_kuhn_reaches_its_game_value_on_the_device(device):
    """The whole run (``solve``: iterations, checks, the CUDA synchronisation) reaches Kuhn's value
    -1/18 for player 0 within the policy's NashConv, as on the CPU (tests/poker/test_poker_cli.py)."""
    r = solve(Engine("kuhn", device=device), CFRConfig(method="cfr+"), iterations=200, check_every=100)
    on_device(device, *r.policy.tables)
    assert 0 < r.nash_conv < 0.01 and abs(r.value + 1 / 18) <= r.nash_conv, (r.value, r.nash_conv)
    ref = solve(Engine("kuhn"), CFRConfig(method="cfr+"), iterations=200, check_every=100)
    assert _close(r.value, ref.value, TOL64) and _close(r.nash_conv, ref.nash_conv, TOL64)
    assert _diff(r.policy.tables, ref.policy.tables) <= TOL64


# ---------------------------------------------------------------------------- best responses


def _random_tables(engine: Engine, seed: int) -> list[torch.Tensor]:
    """A seeded policy far from uniform, on the CPU (the same numbers for every device)."""
    g = torch.Generator().manual_seed(seed)
    pol = TabularPolicy(engine)
    legal = [pol.legal(r).to(engine.dtype)[:, :, None] for r in range(engine.R)]
    raw = [(torch.rand(t.shape, generator=g, dtype=engine.dtype) ** 3 + 1e-3) * lg for t, lg in
           zip(pol.tables, legal, strict=True)]  # fmt: skip
    return normalize(raw, [lg[:, :, 0] for lg in legal])


@pytest.mark.parametrize(("game", "iso"), [("kuhn", None), ("leduc", None), ("leduc5", None),
                                           ("numeral211-tiny", True), ("numeral211-tiny", False)])  # fmt: skip
def test_best_responses_equal_the_cpus(device, game, iso):
    """Best-response values against the uniform policy and a random one, and the value of the
    pure best-response policy built on the device (which must achieve them there). The random
    policy is not suit-symmetric, so not on the suit-isomorphic engine (which assumes it)."""
    cpu = Engine(game, iso=iso)
    dev = Engine(game, iso=iso, device=device)
    for tables in (None,) if cpu.iso else (None, _random_tables(cpu, seed=7)):
        p_cpu = TabularPolicy(cpu, tables=tables)
        p_dev = TabularPolicy(dev, tables=None if tables is None else [t.to(device) for t in tables])
        on_device(device, *p_dev.tables)
        want = best_response_values(cpu, p_cpu)
        got = best_response_values(dev, p_dev)
        assert all(_close(a, b, TOL64) for a, b in zip(got, want, strict=True)), (got, want)
        assert _close(game_value(dev, p_dev), game_value(cpu, p_cpu), TOL64)
        for p in (0, 1):
            br = best_response_policy(dev, p_dev, p)
            on_device(device, *br.tables)
            v = game_value(dev, br)
            assert _close(v if p == 0 else -v, want[p], TOL64), (p, v, want)


# ---------------------------------------------------------------------------- fictitious play


@functools.cache
def _fp_cpu(game: str, method: str, n: int) -> tuple[list[torch.Tensor], int, float]:
    e = Engine(game)
    s = FictitiousPlay(e, method)
    s.iterate(n)
    return s.average_policy().tables, s.fallbacks, exploitability(e, s.average_policy())


@pytest.mark.parametrize("method", FP_METHODS)
@pytest.mark.parametrize(("game", "n"), [("kuhn", 12), ("leduc", 6)])
def test_fictitious_play_equals_the_cpus(device, game, n, method):
    """XFP and the BUFP variants: best responses are discrete (ties within 1e-12 of the values'
    size count as ties), so a device whose rounding broke a tie differently would move the
    strategies by a whole step, far beyond the tolerance."""
    tables, fallbacks, expl = _fp_cpu(game, method, n)
    e = Engine(game, device=device)
    s = FictitiousPlay(e, method)
    s.iterate(n)
    on_device(device, *s.average_policy().tables)
    assert _diff(s.average_policy().tables, tables) <= TOL64
    assert s.fallbacks == fallbacks
    assert _close(exploitability(e, s.average_policy()), expl, TOL64)


# ---------------------------------------------------------------------------- Embedding CFR


def _weights(engine: Engine, space: ClassSpace) -> list[torch.Tensor]:
    return [torch.as_tensor(rc.weight, dtype=engine.dtype, device=engine.device) for rc in space.rounds]


def _embedding_run(device: str, config: CFRConfig, n: int, phis=None, dtype=torch.float64) -> dict:
    """Embedding CFR on the smallest two-card game: identity Phi (the lossless solver), or round 1
    lossless and the dense ``phis`` (CPU, float64) in the later rounds."""
    e = Engine("numeral211-tiny", iso=True, device=device, dtype=dtype)
    space = ClassSpace(e)
    w = _weights(e, space)
    embs = [Embedding.identity(x) for x in w]
    if phis is not None:
        embs = [embs[0]] + [Embedding.dense(p, x) for p, x in zip(phis, w[1:], strict=True)]
    s = EmbeddingCFR(e, embs, space=space, config=config)
    s.iterate(n)
    on_device(device, *s.regret, *s.strategy_sum, *s.current, *(x.phi for x in embs if x.phi is not None))
    return {
        "average": s.average_tables(),
        "sums": s.strategy_sum,
        "current": s.current,
        "class_space": list(s.best_response_values()),  # the solver's own best responses
        "core": list(best_response_values(e, s.average_policy())),  # the engine's, every board and hand
    }


EMBEDDING_RULES = [CFRConfig(method="cfr", updates="simultaneous"), CFRConfig(method="cfr+"),
                   CFRConfig(method="dcfr"), CFRConfig(method="pcfr+")]  # fmt: skip


@functools.cache
def _embedding_cpu(rule: int, n: int) -> dict:
    return _embedding_run("cpu", EMBEDDING_RULES[rule], n)


@pytest.mark.parametrize("rule", range(len(EMBEDDING_RULES)))
def test_embedding_cfr_with_identity_phi_equals_the_cpus(device, rule):
    """The paper's vanilla CFR with simultaneous updates and the kernel's other rules: the same
    advisor tables and exploitability (class-space and core best responses)."""
    ref = _embedding_cpu(rule, 8)
    got = _embedding_run(device, EMBEDDING_RULES[rule], 8)
    assert _diff(got["current"], ref["current"]) <= TOL64
    assert _average_diff(got["average"], ref["average"], ref["sums"]) <= TOL64
    for key in ("class_space", "core"):
        assert all(_close(a, b, TOL64) for a, b in zip(got[key], ref[key], strict=True)), (key, got[key], ref[key])


def _random_phis(seed: int, m: int = 6) -> list[torch.Tensor]:
    """Dense column-stochastic Phis for rounds 2 and 3 (drawn in float64 on the CPU)."""
    space = ClassSpace(Engine("numeral211-tiny", iso=True))
    g = torch.Generator().manual_seed(seed)
    return [torch.softmax(2 * torch.randn(m, rc.n, generator=g, dtype=torch.float64), 0) for rc in space.rounds[1:]]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_embedding_cfr_with_dense_phi_equals_the_cpus(device, dtype):
    """A dense Phi (matrix products on the device; float32 is Figure 5's precision): the same
    iterates and exploitability. A dense Phi mixes every class's regrets, so no regret-matching
    discontinuity amplifies float32 rounding (float32 and float64 agree to 1e-7 here on the CPU)."""
    phis = _random_phis(seed=2)
    config = CFRConfig(method="cfr", updates="simultaneous")
    ref = _embedding_run("cpu", config, 12, phis, dtype)
    got = _embedding_run(device, config, 12, phis, dtype)
    tol = TOL64 if dtype == torch.float64 else TOL32
    # float32 tables after 12 iterations: accumulated rounding, 2e-6 measured on an H100
    assert _average_diff(got["average"], ref["average"], ref["sums"]) <= (TOL64 if dtype == torch.float64 else 1e-4)
    for key in ("class_space", "core"):
        assert all(_close(a, b, tol) for a, b in zip(got[key], ref[key], strict=True)), (key, got[key], ref[key])


@no_tf32()
def test_handnet_trains_and_embeds_as_on_the_cpu(device):
    """HandEbdNet (float32 convolution and linear layers): a short seeded training gives the same
    losses and Phi, and Embedding CFR on its Phi the same exploitability (TF32 off: :func:`no_tf32`)."""
    space = ClassSpace(Engine("numeral211-tiny", iso=True))
    x, y, w = class_tensors(space, 1), strength_tensors(space, 1), space.rounds[1].weight
    kw = {"game": "numeral211-tiny", "round": 1, "epochs": 3, "features": 20, "seed": 5, "batch": 32}
    net_cpu, card_cpu = handnet.train(x, y, w, 6, device="cpu", **kw)
    net_dev, card_dev = handnet.train(x, y, w, 6, device=device, **kw)
    on_device(device, *net_dev.parameters())
    # three epochs of Adam on float32 sums in another order: 1e-4 relative on the losses and Phi
    assert len(card_dev.loss) == 3
    losses = list(zip(card_dev.loss, card_cpu.loss, strict=True))
    assert all(_close(a, b, 1e-4) for a, b in losses), losses
    phi_cpu = handnet.embedding_matrix(net_cpu, x)
    assert float((handnet.embedding_matrix(net_dev, x, device=device).cpu() - phi_cpu).abs().max()) <= 1e-4
    # the CPU-trained network on the device: one forward pass, float32 rounding only
    phi_dev = handnet.embedding_matrix(net_cpu, x, device=device)
    on_device(device, phi_dev)
    assert float((phi_dev.cpu() - phi_cpu).abs().max()) <= TOL32
    # Embedding CFR (float64) on the CPU's Phi in round 2, lossless elsewhere
    ident = Embedding.identity(torch.as_tensor(space.rounds[2].weight, dtype=torch.float64)).to_dense()
    phis = [phi_cpu, ident]
    config = CFRConfig(method="cfr", updates="simultaneous")
    ref = _embedding_run("cpu", config, 6, phis)
    got = _embedding_run(device, config, 6, phis)
    assert _average_diff(got["average"], ref["average"], ref["sums"]) <= TOL64
    assert all(_close(a, b, TOL64) for a, b in zip(got["core"], ref["core"], strict=True)), (got["core"], ref["core"])


# ---------------------------------------------------------------------------- the lossless solver


@pytest.mark.parametrize(
    ("method", "dtype", "n", "tol"),
    # float32: one iteration, and its average-strategy sums (the uniform strategy, weighted). In
    # float32 the class-space solver does not snap rounding noise to 0 (lossless.py's docstring),
    # so a regret that is 0 in exact arithmetic comes out as noise of either sign and regret
    # matching jumps on it: on the CPU, float32 and float64 regrets part by 5e-3 after one
    # iteration and strategies by 0.67; two float32 runs that round differently part likewise.
    [("dcfr", "float64", 8, TOL64), ("pcfr+", "float64", 8, TOL64), ("dcfr", "float32", 1, TOL32)],
)
def test_lossless_solver_equals_the_cpus(device, method, dtype, n, tol, tmp_path):
    """``pasur poker experiment lossless``'s per-method run (what each worker runs, checkpoint and
    measurements included) on the device: the same best-response values at every measured
    iteration and the same checkpointed tables as on the CPU."""
    (tmp_path / "cpu").mkdir()
    (tmp_path / "dev").mkdir()
    ref = lossless.advance("numeral211-tiny", method, n, tmp_path / "cpu", "cpu", dtype)
    got = lossless.advance("numeral211-tiny", method, n, tmp_path / "dev", device, dtype)
    assert [r["iteration"] for r in got["trace"]] == [r["iteration"] for r in ref["trace"]] == lossless.schedule(n)
    for a, b in zip(got["trace"], ref["trace"], strict=True):
        for key in ("br0", "br1", "exploitability_chips"):
            assert _close(a[key], b[key], tol), (key, a, b)
    tables = ("regret", "strategy_sum", "current") if dtype == "float64" else ("strategy_sum",)
    for key in tables:  # regrets and weighted sums in chips: relative
        size = max(1.0, *(float(t.abs().max()) for t in ref["state"][key] if t.numel()))
        assert _diff(got["state"][key], ref["state"][key]) <= tol * size, key
    assert got["peak_mb"] > 0
