"""The CFR family: convergence, OpenSpiel's iterates, dense CFR, abstractions, the Solver protocol."""

from __future__ import annotations

import math

import pyspiel
import pytest
import torch

from pasur.common.errors import PasurInputError
from pasur.common.regret import METHODS
from pasur.poker.abstraction import abstraction
from pasur.poker.dense_cfr import DenseCFR
from pasur.poker.engine import Engine
from pasur.poker.measures import evaluate, exploitability
from pasur.poker.openspiel import export_policy
from pasur.poker.policy import TabularPolicy
from pasur.poker.run import make_solver, solve
from pasur.poker.solvers import CFRConfig, CFRSolver, Solver


@pytest.fixture(scope="module")
def kuhn():
    return Engine("kuhn")


@pytest.fixture(scope="module")
def leduc():
    return Engine("leduc")


@pytest.mark.parametrize(
    ("game", "method", "budget"),
    [
        ("kuhn", "cfr", 700),
        ("kuhn", "cfr+", 150),
        ("kuhn", "lcfr", 150),
        ("kuhn", "dcfr", 175),
        ("leduc", "cfr+", 500),
        ("leduc", "dcfr", 400),
    ],
)
def test_exploitability_below_1e_3_within_budget(game, method, budget, kuhn, leduc):
    engine = kuhn if game == "kuhn" else leduc
    r = solve(engine, CFRConfig(method=method), iterations=budget, target_exploitability=1e-3, check_every=25)
    assert r.exploitability < 1e-3, (r.iterations, r.exploitability)


@pytest.mark.parametrize("updates", ["alternating", "simultaneous"])
@pytest.mark.parametrize("method", METHODS)
def test_dense_cfr_has_the_engines_iterates(kuhn, leduc, method, updates):
    for engine, n in ((kuhn, 40), (leduc, 12)):
        cfg = CFRConfig(method=method, updates=updates)
        a, b = CFRSolver(engine, cfg), DenseCFR(engine, cfg)
        a.iterate(n)
        b.iterate(n)
        for x, y in zip(a.average_policy().tables, b.average_policy().tables, strict=True):
            assert (x - y).abs().max() < 1e-10


def _openspiel_policy_table(engine, os_policy):
    return {k: os_policy.action_probability_array[i] for k, i in os_policy.state_lookup.items()}


@pytest.mark.parametrize("solver", [CFRSolver, DenseCFR])
@pytest.mark.parametrize("method", METHODS)
def test_iterates_are_openspiels_on_kuhn(kuhn, method, solver):
    """Every variant of :mod:`pasur.common.regret`, on both CFR solvers, against OpenSpiel's
    solver of the same method, after 1, 2, 5, 20 and 100 iterations."""
    from open_spiel.python.algorithms import cfr, discounted_cfr

    cls = {
        "cfr": cfr.CFRSolver,
        "cfr+": cfr.CFRPlusSolver,
        "lcfr": discounted_cfr.LCFRSolver,
        "dcfr": discounted_cfr.DCFRSolver,
    }
    theirs = cls[method](pyspiel.load_game("kuhn_poker"))
    ours = solver(kuhn, CFRConfig(method=method))
    for n in (1, 2, 5, 20, 100):
        for _ in range(n - ours.iteration):
            theirs.evaluate_and_update_policy()
        ours.iterate(n - ours.iteration)
        table = _openspiel_policy_table(kuhn, theirs.average_policy())
        for key, pairs in export_policy(kuhn, ours.average_policy()).items():
            for a, p in pairs:
                assert p == pytest.approx(table[key][a], abs=1e-9), (n, key)


def test_cfr_plus_iterates_are_openspiels_cpp_on_leduc(leduc):
    game = pyspiel.load_game("leduc_poker")
    theirs = pyspiel.CFRPlusSolver(game)
    ours = make_solver(leduc, CFRConfig(method="cfr+"))
    for _ in range(30):
        theirs.evaluate_and_update_policy()
    ours.iterate(30)
    avg = theirs.average_policy()
    worst = 0.0
    for key, pairs in export_policy(leduc, ours.average_policy()).items():
        probs = dict(avg.get_state_policy(key))
        for a, p in pairs:
            worst = max(worst, abs(p - probs[a]))
    assert worst < 1e-9
    assert exploitability(leduc, ours.average_policy()) == pytest.approx(pyspiel.exploitability(game, avg), abs=1e-12)


def test_isomorphism_classes_are_the_lossless_game():
    """CFR on the lossless keying, on the suit-isomorphism classes, and on the isomorphic engine:
    the same strategies (suit-symmetric play keeps exact ties exact)."""
    out = []
    for iso, spec in ((False, "lossless"), (False, "iso"), (True, "iso")):
        e = Engine("numeral211-tiny", iso=iso)
        r = solve(
            e, CFRConfig(method="cfr"), iterations=8, check_every=8, keying=abstraction(e, ",".join([spec] * e.R))
        )
        out.append(r.nash_conv)
    assert out[1] == pytest.approx(out[0], abs=1e-9)
    assert out[2] == pytest.approx(out[0], abs=1e-9)


def test_abstraction_solves_toward_equilibrium_in_the_real_game():
    e = Engine("numeral211-tiny")
    k = abstraction(e, "iso,ehs:6,ehs:8")
    assert k.n_keys[1:] == [6, 8]
    s = CFRSolver(e, CFRConfig(method="cfr+"), k)
    s.iterate(3)
    early = evaluate(e, s.average_policy()).exploitability
    s.iterate(27)
    late = evaluate(e, s.average_policy()).exploitability
    assert late < early / 3


def test_bad_configs_are_refused(kuhn):
    with pytest.raises(PasurInputError, match="unknown method"):
        CFRConfig(method="cfr++")
    with pytest.raises(PasurInputError, match="updates"):
        CFRConfig(updates="both")
    with pytest.raises(PasurInputError, match="iterations"):
        solve(kuhn, CFRConfig(), iterations=0)
    with pytest.raises(PasurInputError, match="give"):
        solve(kuhn, CFRConfig())
    with pytest.raises(PasurInputError, match="fast backend"):
        make_solver(Engine("numeral211-tiny"), CFRConfig(), backend="fast")


def test_user_bucket_tables_on_both_engines():
    """A bucket table per round over every actual board (what a clustering gives): the same
    strategies on the isomorphic engine as on the full one; a suit-asymmetric table is refused there."""
    import numpy as np

    from pasur.poker.abstraction import isomorphic_classes
    from pasur.poker.policy import Keying, actual_boards

    full = Engine("numeral211-tiny", iso=False)
    tables = []
    for r in range(full.R):
        boards = actual_boards(full.game, r)
        index = {tuple(b): i for i, b in enumerate(full.boards.boards[r].tolist())}
        cls = isomorphic_classes(full, r)  # [listed boards, positions]
        tab = np.zeros((len(boards), len(full.boards.hands)), dtype=np.int64)
        for i, b in enumerate(boards.tolist()):
            j = index[tuple(b)]
            tab[i, full.boards.hand_ids[r][j]] = cls[j] % 5  # 5 buckets per round
        tables.append(tab)
    iso = Engine("numeral211-tiny", iso=True)
    out = []
    for e in (full, iso):
        k = Keying.from_buckets(e, tables)
        out.append(solve(e, CFRConfig(method="cfr+"), iterations=6, check_every=6, keying=k).nash_conv)
    assert out[1] == pytest.approx(out[0], abs=1e-9)
    tables[2] = tables[2].copy()
    tables[2][0, :] = np.arange(tables[2].shape[1]) % 5  # depends on suits: not symmetric
    with pytest.raises(PasurInputError, match="not suit-symmetric"):
        Keying.from_buckets(iso, tables)
    Keying.from_buckets(full, tables)  # fine on the full engine


# ---------------------------------------------------------------- the Solver protocol


def _embedding_cfr():
    """Embedding CFR needs two private cards: the smallest such game, identity Phi."""
    from pasur.poker.embedding.classes import ClassSpace
    from pasur.poker.embedding.phi import Embedding
    from pasur.poker.embedding.solver import EmbeddingCFR

    e = Engine("numeral211-tiny", iso=True)
    space = ClassSpace(e)
    embs = [Embedding.identity(torch.as_tensor(rc.weight, dtype=e.dtype)) for rc in space.rounds]
    return EmbeddingCFR(e, embs, space=space)


def _fictitious(method):
    from pasur.poker.fictitious import FictitiousPlay

    return lambda: FictitiousPlay(Engine("kuhn"), method)


SOLVERS = {
    "engine-cfr": lambda: CFRSolver(Engine("kuhn"), CFRConfig(method="cfr")),
    "engine-dcfr-simultaneous": lambda: CFRSolver(Engine("kuhn"), CFRConfig(method="dcfr", updates="simultaneous")),
    "dense-cfr+": lambda: DenseCFR(Engine("kuhn"), CFRConfig(method="cfr+")),
    "dense-lcfr": lambda: DenseCFR(Engine("kuhn"), CFRConfig(method="lcfr")),
    "embedding": _embedding_cfr,
    "xfp": _fictitious("xfp"),
    "bufp-x": _fictitious("bufp-x"),
    "bufp-ef": _fictitious("bufp-ef"),
}


@pytest.mark.parametrize("name", list(SOLVERS))
def test_every_poker_solver_is_a_solver(name):
    """Constructed, each is a :class:`Solver` at iteration 0; ``iterate(2)`` does two iterations;
    its average policy is measurable and better than the uniform strategy it starts from."""
    s = SOLVERS[name]()
    assert isinstance(s, Solver)
    assert s.iteration == 0
    s.iterate(2)
    assert s.iteration == 2
    s.iterate()
    assert s.iteration == 3
    e = s.engine
    ev = evaluate(e, s.average_policy())
    uniform = evaluate(e, TabularPolicy(e)).exploitability
    assert math.isfinite(ev.exploitability)
    assert 0 <= ev.exploitability < uniform


def test_the_protocol_asks_for_all_three_members(kuhn):
    class NoCounter:
        def iterate(self, n: int = 1) -> None: ...

        def average_policy(self): ...

    class NoAverage:
        iteration = 0

        def iterate(self, n: int = 1) -> None: ...

    assert not isinstance(NoCounter(), Solver)
    assert not isinstance(NoAverage(), Solver)
    assert not isinstance(TabularPolicy(kuhn), Solver)
