"""Embedding CFR (section 3.2): identity Phi is vanilla CFR, one-hot Phi is CFR on the abstraction,
one advisor plays one strategy everywhere, and exploitability falls."""

from __future__ import annotations

import pytest
import torch

from pasur.common.errors import PasurInputError
from pasur.poker.abstraction import abstraction
from pasur.poker.embedding import baselines
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.phi import Embedding
from pasur.poker.embedding.solver import EmbeddingCFR
from pasur.poker.engine import Engine
from pasur.poker.measures import best_response_values, exploitability
from pasur.poker.solvers import CFRConfig, CFRSolver

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny():
    e = Engine("numeral211-tiny", iso=True)
    return e, ClassSpace(e)


def _weights(e, space):
    return [torch.as_tensor(rc.weight, dtype=e.dtype) for rc in space.rounds]


def _probs(e, policy, r):
    return policy.probs(r, 0, e.n_rows[r], 0, e.n_boards[r])


def test_identity_phi_has_vanilla_cfr_iterates(tiny):
    """Independent reference: the core's CFRSolver (vanilla CFR, simultaneous updates) on the
    lossless suit-isomorphism keying, compared board by board and hand by hand."""
    e, space = tiny
    emb = EmbeddingCFR(e, [Embedding.identity(w) for w in _weights(e, space)], space=space)
    ref = CFRSolver(e, CFRConfig(method="cfr", updates="simultaneous"), keying=abstraction(e, "iso,iso,iso"))
    for _ in range(5):
        emb.iterate()
        ref.iterate()
        for r in range(e.R):
            now = _probs(e, emb.current_policy(), r)
            assert (now - _probs(e, ref.current, r)).abs().max() < 1e-9
    for r in range(e.R):
        assert (_probs(e, emb.average_policy(), r) - _probs(e, ref.average_policy(), r)).abs().max() < 1e-9
    assert exploitability(e, emb.average_policy()) == pytest.approx(exploitability(e, ref.average_policy()), abs=1e-9)


@pytest.mark.parametrize(
    ("method", "updates"),
    [("cfr", "alternating"), ("cfr+", "alternating"), ("lcfr", "simultaneous"), ("dcfr", "alternating"),
     ("dcfr", "simultaneous"), ("pcfr+", "alternating"), ("pdcfr+", "simultaneous"), ("sapcfr+", "alternating")],
)  # fmt: skip
def test_identity_phi_has_the_cores_iterates_for_every_method(tiny, method, updates):
    """The lossless solver: Embedding CFR with an identity Phi and any of the kernel's methods and
    update orders equals the core's CFRSolver with the same config, iterate by iterate."""
    e, space = tiny
    config = CFRConfig(method=method, updates=updates)
    emb = EmbeddingCFR(e, [Embedding.identity(w) for w in _weights(e, space)], space=space, config=config)
    ref = CFRSolver(e, CFRConfig(method=method, updates=updates), keying=abstraction(e, "iso,iso,iso"))
    for _ in range(6):
        emb.iterate()
        ref.iterate()
        for r in range(e.R):
            assert (_probs(e, emb.current_policy(), r) - _probs(e, ref.current, r)).abs().max() < 1e-9, (method, r)
    for r in range(e.R):  # the averages to 1e-8: the t^5 weights of PDCFR+ scale the iterates' rounding
        assert (_probs(e, emb.average_policy(), r) - _probs(e, ref.average_policy(), r)).abs().max() < 1e-8
    assert emb.exploitability() == pytest.approx(exploitability(e, ref.average_policy()), abs=1e-9)


@pytest.mark.parametrize("updates", ["alternating", "simultaneous"])
def test_the_advisor_regret_hook_sees_each_level_once_with_this_iterations_strategy(tiny, updates):
    """A subclass's ``_advisor_regret(r, q, lo, m)`` is called once per decision level of the
    players a pass updates, with that level's rows, while those rows of ``current`` still hold the
    strategy the traversal played (benchmarks/embedding_phi_geometric.py takes regrets against it)."""
    e, space = tiny

    passes = []

    class Spy(EmbeddingCFR):
        def _pass(self, players):
            self.played, self.calls = [c.clone() for c in self.current], []
            super()._pass(players)
            passes.append((players, self.calls))

        def _advisor_regret(self, r, q, lo, m):
            rows = slice(lo * 3, (lo + m) * 3)
            same = torch.equal(self.current[r][rows], self.played[r][rows])
            self.calls.append(((r, lo, m), same, tuple(q.shape) == (m * 3, self.emb[r].width)))
            return q

    s = Spy(e, [Embedding.identity(w) for w in _weights(e, space)], space=space, config=CFRConfig("dcfr", updates))
    s.iterate(3)
    assert len(passes) == (6 if updates == "alternating" else 3)
    decisions = [(r, lv) for r in range(e.R) for lv in e.levels[r] if lv.n_dec]
    for players, calls in passes:
        levels = [(r, lv.row_lo, lv.n_dec) for r, lv in decisions if lv.actor in players]
        assert sorted(c[0] for c in calls) == sorted(levels)
        assert all(same and shaped for _, same, shaped in calls)


def test_scheduled_methods_are_refused_not_run_otherwise(tiny):
    e, space = tiny
    config = CFRConfig(method="hs-dcfr", updates="alternating", horizon=10)
    with pytest.raises(PasurInputError, match="scheduled method 'hs-dcfr'"):
        EmbeddingCFR(e, [Embedding.identity(w) for w in _weights(e, space)], space=space, config=config)


def test_one_hot_phi_is_cfr_on_the_abstraction():
    """A baseline's bucketing: Embedding CFR with its one-hot Phi equals the core's CFR on the
    core's keying of the same buckets (how Figure 5 runs the baselines, in class space). On four
    suits, where classes stand for different numbers of hands."""
    e = Engine("numeral211-r5", iso=True)
    space = ClassSpace(e)
    buckets = baselines.paemd(space, [None, 12, 20], seed=0)
    embs = [Embedding.buckets(torch.as_tensor(b), w) for b, w in zip(buckets, _weights(e, space), strict=True)]
    emb = EmbeddingCFR(e, embs, space=space)
    ref = CFRSolver(
        e, CFRConfig(method="cfr", updates="simultaneous"), keying=baselines.keying(space, buckets, "paemd")
    )
    emb.iterate(2)
    ref.iterate(2)
    for r in range(e.R):
        assert (_probs(e, emb.average_policy(), r) - _probs(e, ref.average_policy(), r)).abs().max() < 1e-9


def test_dense_phi_embeds_the_per_hand_regrets():
    """Eq. 4 and 5 with a dense Phi: the advisor regrets of an iteration are Phi times the regrets
    that vanilla CFR (identity Phi) collects per class when every class plays Phi^T sigma(E)."""
    e = Engine("numeral211-r5", iso=True)
    space = ClassSpace(e)
    w = _weights(e, space)
    g = torch.Generator().manual_seed(4)
    phis = [torch.softmax(2 * torch.randn(m, rc.n, generator=g, dtype=e.dtype), 0) for rc, m in
            zip(space.rounds, (7, 9, 11), strict=True)]  # fmt: skip
    dense = EmbeddingCFR(e, [Embedding.dense(p, wr) for p, wr in zip(phis, w, strict=True)], space=space)
    ident = EmbeddingCFR(e, [Embedding.identity(wr) for wr in w], space=space)
    dense.iterate(2)  # a non-uniform advisor strategy
    ident.current = [c @ p for c, p in zip(dense.current, phis, strict=True)]  # eq. 4 per class
    before = [x.clone() for x in dense.regret]
    ident.iterate(1)
    dense.iterate(1)
    for r in range(e.R):
        want = ident.regret[r] @ phis[r].T  # eq. 5: Phi r(J, a), r(J, a) already weighted by class size
        assert torch.allclose(dense.regret[r] - before[r], want, rtol=1e-9, atol=1e-9)


def test_uniform_average_is_eq_7_the_plain_mean_of_the_advisor_strategies(tiny):
    """``average="uniform"`` is eq. 7 as the paper writes it: every iteration's advisor strategy
    counts once, whatever the reach (the default, ``"reach"``, is vanilla CFR's weighting)."""
    e, space = tiny
    g = torch.Generator().manual_seed(2)
    w = _weights(e, space)
    phis = [torch.softmax(2 * torch.randn(m, rc.n, generator=g, dtype=e.dtype), 0) for rc, m in
            zip(space.rounds, (5, 6, 7), strict=True)]  # fmt: skip
    embs = [Embedding.dense(p, wr) for p, wr in zip(phis, w, strict=True)]
    uni = EmbeddingCFR(e, embs, space=space, average="uniform")
    reach = EmbeddingCFR(e, embs, space=space)
    seen = []
    for _ in range(6):
        seen.append([c.clone() for c in uni.current])
        uni.iterate()
        reach.iterate()
    for r in range(e.R):
        mean = torch.stack([c[r] for c in seen]).mean(0)
        assert torch.allclose(uni.average_tables()[r], mean, rtol=0, atol=1e-12)
        assert torch.equal(uni.current[r], reach.current[r])  # the averaging leaves the iterates alone
    assert max((uni.average_tables()[r] - reach.average_tables()[r]).abs().max() for r in range(e.R)) > 1e-3


def test_one_advisor_plays_the_same_strategy_with_every_hand(tiny):
    e, space = tiny
    s = EmbeddingCFR(e, [Embedding.uniform(w) for w in _weights(e, space)], space=space)
    s.iterate(3)
    for pol in (s.current_policy(), s.average_policy()):
        for r in range(e.R):
            p = _probs(e, pol, r)  # [rows, A, boards, hands]
            flat = p.reshape(p.shape[0], p.shape[1], -1)
            assert (flat - flat[:, :, :1]).abs().max() < 1e-12
    # and it is not the uniform strategy: the advisor learned something
    p = _probs(e, s.average_policy(), 0)
    assert (p[0, :, 0, 0] - p[0, :, 0, 0].mean()).abs().max() > 1e-3


def test_exploitability_falls_with_a_dense_phi(tiny):
    e, space = tiny
    g = torch.Generator().manual_seed(0)
    w = _weights(e, space)
    embs = [Embedding.identity(w[0])]
    for rc, m, wr in zip(space.rounds[1:], (8, 20), w[1:], strict=True):
        embs.append(Embedding.dense(torch.softmax(3 * torch.randn(m, rc.n, generator=g, dtype=e.dtype), 0), wr))
    s = EmbeddingCFR(e, embs, space=space)
    s.iterate(2)
    early = exploitability(e, s.average_policy())
    s.iterate(60)
    late = exploitability(e, s.average_policy())
    assert late < 0.8 * early, (early, late)
    # counted by hand from the betting rules: a round of two-bet limit betting has 14 (decision,
    # legal action) pairs (check or bet; after a check, check or bet; facing the first bet fold,
    # call or raise; facing the second fold or call) and 5 ways on to the next round, so rounds
    # 1 to 3 hold 14, 70 and 350 pairs, each stored once per advisor (16 lossless classes, 8, 20)
    assert s.stored_values() == 14 * 16 + 70 * 8 + 350 * 20


def _random_dense_solver(e: Engine, seed: int, m: int = 6) -> EmbeddingCFR:
    """Embedding CFR with round 1 lossless and a random dense Phi (m advisors; drawn in float64,
    so engines of either precision get the same Phi) in the later rounds."""
    space = ClassSpace(e)
    g = torch.Generator().manual_seed(seed)
    w = _weights(e, space)
    embs = [Embedding.identity(w[0])]
    for rc, wr in zip(space.rounds[1:], w[1:], strict=True):
        embs.append(Embedding.dense(torch.softmax(torch.randn(m, rc.n, generator=g, dtype=torch.float64), 0), wr))
    return EmbeddingCFR(e, embs, space=space)


@pytest.mark.parametrize("game", ["numeral211-tiny", "numeral211-r5"])
def test_class_space_best_response_equals_the_cores(game):
    """The solver's own exploitability (class space) against :mod:`pasur.poker.measures` (every
    board and hand), for a dense Phi's average strategy and its current one."""
    e = Engine(game, iso=True)
    s = _random_dense_solver(e, seed=1)
    s.iterate(3)
    assert s.exploitability() == pytest.approx(exploitability(e, s.average_policy()), rel=1e-10)
    if game == "numeral211-tiny":
        br = s.best_response_values(s.current)
        assert br == pytest.approx(best_response_values(e, s.current_policy()), rel=1e-10)


def test_class_space_best_response_of_a_bucketing_equals_the_cores():
    """The baselines' path in Figure 5: a one-hot Phi (EHS buckets) measured in class space."""
    e = Engine("numeral211-r5", iso=True)
    space = ClassSpace(e)
    buckets = baselines.ehs(space, [None, 9, 14], seed=3)
    s = EmbeddingCFR(e, [Embedding.buckets(torch.as_tensor(b), w) for b, w in
                         zip(buckets, _weights(e, space), strict=True)], space=space)  # fmt: skip
    s.iterate(3)
    assert s.exploitability() == pytest.approx(exploitability(e, s.average_policy()), rel=1e-10)


def test_float32_runs_agree_with_float64():
    """Figure 5 runs in float32: its exploitability must track float64's closely."""
    out = []
    for dt in (torch.float64, torch.float32):
        s = _random_dense_solver(Engine("numeral211-tiny", iso=True, dtype=dt), seed=2)
        s.iterate(30)
        out.append(s.exploitability())
    assert out[1] == pytest.approx(out[0], rel=1e-4)


def test_dense_phi_refuses_columns_that_are_not_distributions(tiny):
    """Columns summing to 3, or summing to 1 with a negative entry, are refused with the one-line
    input error; the same shape with each column a distribution (uniform, or one-hot) is taken and
    keeps its columns (so the refusals are about the values, not the shape)."""
    e, space = tiny
    w = _weights(e, space)[1]
    n = len(w)
    with pytest.raises(PasurInputError, match=r"^Phi's columns must be probability vectors$"):
        Embedding.dense(torch.ones(3, n, dtype=e.dtype), w)
    signed = torch.full((3, n), 0.5, dtype=e.dtype)
    signed[2] = 0.0
    signed[1, 0], signed[2, 0] = 1.0, -0.5  # column 0 sums to 1 with a negative entry
    with pytest.raises(PasurInputError, match=r"^Phi's columns must be probability vectors$"):
        Embedding.dense(signed, w)
    with pytest.raises(PasurInputError, match=rf"^Phi must be \[m, {n}\], got \(3, {n - 1}\)$"):
        Embedding.dense(torch.full((3, n - 1), 1 / 3, dtype=e.dtype), w)
    uniform = Embedding.dense(torch.full((3, n), 1 / 3, dtype=e.dtype), w)
    assert uniform.m == 3 and torch.allclose(uniform.to_dense(), torch.full((3, n), 1 / 3, dtype=e.dtype))
    one_hot = torch.zeros(3, n, dtype=e.dtype)
    one_hot[torch.arange(n) % 3, torch.arange(n)] = 1.0
    assert torch.equal(Embedding.dense(one_hot, w).to_dense(), one_hot)


def test_checkpoint_round_trip_resumes_the_same_iterates(tiny):
    e, space = tiny
    embs = [Embedding.identity(w) for w in _weights(e, space)]
    a = EmbeddingCFR(e, embs, space=space)
    a.iterate(3)
    b = EmbeddingCFR(e, embs, space=space)
    b.load_state_dict(a.state_dict())
    a.iterate(2)
    b.iterate(2)
    for x, y in zip(a.average_tables(), b.average_tables(), strict=True):
        assert torch.equal(x, y)


def _coarse_dense_phis(e, space, sizes=(7, 9, 11), seed=5):
    """A dense Phi per round with one column per strength class (repeated over its isomorphism
    classes), as Figure 5's ``--classes strength`` makes them."""
    from pasur.poker.embedding.strength import coarse_phi, strength_classes

    coarse = strength_classes(space, "paper")
    g = torch.Generator().manual_seed(seed)
    out = []
    for c, rc, m in zip(coarse, space.rounds, sizes, strict=True):
        k = int(c.max()) + 1
        per_class = torch.softmax(3 * torch.randn(m, k, generator=g, dtype=e.dtype), 0)
        out.append(coarse_phi(per_class[:, torch.as_tensor(c)], c, rc.weight))
    return out


def test_a_dense_phi_with_repeated_columns_keeps_them_once_and_has_the_same_iterates(monkeypatch):
    """A Phi over strength classes is stored by its distinct columns (products over those, gathers
    and scatter-adds between them and the classes); its iterates and exploitability equal those of
    the same Phi kept column by column (float64, to 1e-12), and every map agrees."""
    from pasur.poker.embedding import phi as phi_module

    e = Engine("numeral211-r5", iso=True)
    space = ClassSpace(e)
    w = _weights(e, space)
    phis = _coarse_dense_phis(e, space)
    grouped = [Embedding.dense(p, wr) for p, wr in zip(phis, w, strict=True)]
    monkeypatch.setattr(phi_module, "REPEATED", 0.0)
    plain = [Embedding.dense(p, wr) for p, wr in zip(phis, w, strict=True)]
    assert grouped[2].cols is not None and grouped[2].width < space.rounds[2].n // 2  # 494 of 3,185 columns
    assert all(emb.cols is None for emb in plain)
    g = torch.Generator().manual_seed(6)
    for a, b, rc in zip(grouped, plain, space.rounds, strict=True):
        assert torch.equal(a.to_dense(), b.to_dense())
        sig = torch.rand(5, a.m, generator=g, dtype=e.dtype)
        x = torch.rand(5, rc.n, generator=g, dtype=e.dtype)
        ids = torch.randperm(rc.n, generator=g)[:40]
        assert torch.allclose(a.recover(sig, 3, rc.n - 2), b.recover(sig, 3, rc.n - 2), rtol=1e-12, atol=1e-14)
        assert torch.allclose(a.recover_at(sig, ids), b.recover_at(sig, ids), rtol=1e-12, atol=1e-14)
        out_a, out_b = torch.zeros(5, a.m, dtype=e.dtype), torch.zeros(5, b.m, dtype=e.dtype)
        a.embed_into(out_a, x[:, 3:], 3, rc.n)
        b.embed_into(out_b, x[:, 3:], 3, rc.n)
        assert torch.allclose(out_a, out_b, rtol=1e-12, atol=1e-12)
    fast = EmbeddingCFR(e, grouped, space=space, chunk=700)
    slow = EmbeddingCFR(e, plain, space=space, chunk=700)
    for _ in range(3):
        fast.iterate(1)
        slow.iterate(1)
        for r in range(e.R):
            for x, y in ((fast.regret[r], slow.regret[r]), (fast.strategy_sum[r], slow.strategy_sum[r])):
                assert torch.allclose(x, y, rtol=1e-12, atol=1e-12 * float(y.abs().max()))
            assert torch.allclose(fast.current[r], slow.current[r], rtol=0, atol=1e-12)
    assert fast.exploitability() == pytest.approx(slow.exploitability(), rel=1e-12)


def test_strategies_picked_by_rows_first_equal_the_recovered_ones(tiny):
    """Embedding.strategies (rows first, then spread over a chunk of classes) equals Phi^T of the
    whole table cut to those rows and classes, for every kind of Phi."""
    e, space = tiny
    w = _weights(e, space)
    rc = space.rounds[2]
    g = torch.Generator().manual_seed(7)
    embs = [
        Embedding.identity(w[2]),
        Embedding.buckets(torch.randint(0, 5, (rc.n,), generator=g), w[2], 5),
        Embedding.dense(torch.softmax(torch.randn(6, rc.n, generator=g, dtype=e.dtype), 0), w[2]),
        Embedding.dense(_coarse_dense_phis(e, space)[2], w[2]),
    ]
    assert embs[3].cols is not None
    rows = [None, torch.tensor([3, 0, 0, 7]), torch.tensor([1, 2])]
    for emb in embs:
        sig = torch.rand(9, emb.m, generator=g, dtype=e.dtype)
        chunk = emb.strategies(sig, rows)(5, rc.n - 3)
        for d in (1, 2):
            want = emb.recover(sig, 5, rc.n - 3).index_select(0, rows[d])
            assert torch.allclose(chunk(d), want, rtol=1e-12, atol=1e-15), emb.kind
