"""The native CPU kernel of a round's CFR iteration (:mod:`pasur.solve.native`): its iterates are
the torch path's bit for bit (every method it runs, both update schedules, both dtypes, with and
without the tremble, solves to a target that focus, rounds solved in parts); without a compiler
``auto`` falls back to torch and ``native`` is refused in one line; the compiled library is cached."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from typer.testing import CliRunner

from helpers import position
from pasur.cli import app
from pasur.common.errors import PasurInputError
from pasur.solve import native
from pasur.solve.cfr import CFRParams, RoundCFR
from pasur.solve.native import toolchain
from pasur.solve.native.toolchain import NativeUnavailable
from pasur.solve.rounds import round_solver, solve_cfr
from pasur.solve.tree import build_tree

CPU = torch.device("cpu")
METHODS = tuple(native.METHOD_CODES)


@pytest.fixture(scope="module")
def trees():
    return {mode: build_tree(position(2, 3, 0), mode, infosets=False) for mode in ("compact", "paper")}


@pytest.fixture
def no_compiler(monkeypatch, tmp_path):
    """A compiler that is not there, an empty cache, and the kernel forgotten (and again after)."""
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    native.reset()
    yield
    native.reset()


def state(solver: RoundCFR) -> list[torch.Tensor]:
    """The state an iteration leaves, per layer: regrets, average, strategy and both reaches (the
    edges' q and the parents' vpar are scratch, which the kernel fills only as far as it needs)."""
    out = []
    for i in range(len(solver.layers)):
        out += [solver.regret[i], solver.avg[i], solver.sigma[i], *solver.reach[i]]
    return out


def same_solve(a, b) -> None:
    assert a.strategy.keys() == b.strategy.keys()
    for key in a.strategy:
        assert torch.equal(a.strategy[key], b.strategy[key]), key
    assert (a.root_value, a.nash_conv, a.iterations) == (b.root_value, b.nash_conv, b.iterations)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("tremble", [0.0, 0.002])
@pytest.mark.parametrize("updates", ["alternating", "simultaneous"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("mode", ["compact", "paper"])
def test_native_iterates_are_the_torch_iterates_bit_for_bit(trees, mode, method, updates, tremble, dtype):
    """The state an iteration leaves (regrets, average, strategy, reaches), after each of 12
    iterations of every round, against the torch path's fused iteration."""
    params = CFRParams(method=method, updates=updates, tremble=tremble)
    for rt in trees[mode].rounds:
        terminal = rt.terminal_value if rt.terminal_value is not None else torch.rand(rt.n_nodes(8)) * 10 - 5
        fast = RoundCFR(rt, terminal, dataclasses.replace(params, kernel="native"), CPU, dtype=dtype)
        slow = RoundCFR(rt, terminal, dataclasses.replace(params, kernel="torch"), CPU, fused=True, dtype=dtype)
        assert (fast.kernel, slow.kernel) == ("native", "torch")
        for it in range(12):
            fast.iterate()
            slow.iterate()
            for a, b in zip(state(fast), state(slow), strict=True):
                assert torch.equal(a, b), (rt.round, it)


@pytest.mark.parametrize("mode", ["compact", "paper"])
@pytest.mark.parametrize("method", METHODS)
def test_a_solve_with_the_native_kernel_is_the_torch_solve(trees, mode, method):
    """``auto`` on the CPU runs the kernel; the torch path by default per layer on tree-like rounds."""
    params = CFRParams(method=method, iterations=20, tremble=0.001 if method == "dcfr" else 0.0)
    same_solve(solve_cfr(trees[mode], dataclasses.replace(params, kernel="torch")), solve_cfr(trees[mode], params))


@pytest.mark.parametrize(
    ("mode", "params", "kw"),
    [
        # a target: the solver focuses on the lagging roots (new layers, a new binding)
        ("compact", CFRParams(method="dcfr", iterations=None, target_exploitability=0.002), {}),
        ("paper", CFRParams(method="dcfr", iterations=None, target_exploitability=0.002), {}),
        # a round solved in parts of its roots
        ("paper", CFRParams(method="dcfr", iterations=20, tremble=0.001), {"solver_memory": 12_000_000}),
    ],
)
def test_the_native_kernel_keeps_the_iterates_of_focus_and_parts(trees, mode, params, kw):
    fast = solve_cfr(trees[mode], dataclasses.replace(params, kernel="native"), **kw)
    same_solve(solve_cfr(trees[mode], dataclasses.replace(params, kernel="torch"), **kw), fast)
    if kw:
        assert max(tr.parts for tr in fast.traces) > 1


def test_auto_runs_native_where_it_applies():
    rt = build_tree(position(4, 3, 0), "compact", infosets=False).rounds[-1]
    terminal = torch.zeros(rt.n_nodes(8))
    kernel = {m: round_solver(rt, terminal, CFRParams(method=m), CPU).kernel for m in ("dcfr", "pdcfr+", "es-mccfr")}
    assert kernel == {"dcfr": "native", "pdcfr+": "torch", "es-mccfr": "torch"}
    assert RoundCFR(rt, terminal, CFRParams(), CPU, fused=False).kernel == "torch"
    assert native.unsupported("cuda", "dcfr") is not None and native.unsupported("cpu", "dcfr") is None


def test_native_is_refused_where_it_cannot_run(trees):
    with pytest.raises(PasurInputError, match="runs cfr, cfr\\+, lcfr, dcfr, pcfr\\+, not --method sapcfr\\+"):
        CFRParams(method="sapcfr+", kernel="native").check()
    with pytest.raises(PasurInputError, match="unknown --kernel 'fast'"):
        CFRParams(kernel="fast").check()
    with pytest.raises(PasurInputError, match="on the CPU only"):  # (before any work: no GPU needed)
        solve_cfr(trees["compact"], CFRParams(iterations=5, kernel="native"), "cuda")


def test_without_a_compiler_auto_falls_back_and_native_is_refused(no_compiler, trees, tmp_path):
    solved = solve_cfr(trees["compact"], CFRParams(iterations=10))
    rt = trees["compact"].rounds[-1]
    assert RoundCFR(rt, torch.zeros(rt.n_nodes(8)), CFRParams(), CPU).kernel == "torch"
    same_solve(solve_cfr(trees["compact"], CFRParams(iterations=10, kernel="torch")), solved)
    with pytest.raises(PasurInputError, match=r"--kernel native cannot run here: the C compiler .* did not run"):
        CFRParams(kernel="native").check()
    out = tmp_path / "out"
    args = ["solve", "--seed", "1", "--method", "dcfr", "--iterations", "5", "--kernel", "native", "--out", str(out)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2 and r.stderr.startswith("error: --kernel native cannot run here") and not out.exists()
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_failed_compile_is_unavailable_not_a_crash(monkeypatch, tmp_path):
    monkeypatch.setenv("CC", "false")  # a compiler that runs and fails
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    native.reset()
    try:
        with pytest.raises(NativeUnavailable, match="failed"):
            native.library()
        assert native.unavailable() is not None
    finally:
        native.reset()


def test_the_library_is_compiled_once_into_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    runs = []
    real = toolchain._run
    monkeypatch.setattr(toolchain, "_run", lambda cmd: runs.append(cmd) or real(cmd))
    native.reset()
    try:
        native.library()
        assert native._state["compiled"]
        [lib] = (tmp_path / "pasur" / "native").iterdir()  # (no temporary file left beside it)
        compiles = [c for c in runs if "-o" in c]
        assert len(compiles) == 1 and {"-O3", "-ffp-contract=off"} <= set(compiles[0])
        native.reset()  # a new process: the library is loaded, not compiled again
        native.library()
        assert not native._state["compiled"] and len([c for c in runs if "-o" in c]) == 1
        assert [p.name for p in (tmp_path / "pasur" / "native").iterdir()] == [lib.name]
    finally:
        native.reset()
