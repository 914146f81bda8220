"""A solver run: iterate until an iteration budget or a target exploitability, with a trace.

``solve(game, method, ...)`` is what ``pasur poker solve`` calls: it picks the fast small-game
path (:mod:`pasur.poker.dense_cfr`) where it applies and gives the same iterates, measures the
average strategy's exploitability every ``check_every`` iterations (exact best responses, not
counted in the solver's time), and returns the average strategy with a summary. Exploitability
is NashConv / 2 (OpenSpiel's, and Pasur's too: docs/conventions.md), in chips per game.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from pasur.common.errors import PasurInputError
from pasur.poker.dense_cfr import DenseCFR, dense_supported
from pasur.poker.engine import Engine
from pasur.poker.measures import evaluate
from pasur.poker.policy import Keying, TabularPolicy
from pasur.poker.solvers import CFRConfig, CFRSolver


def make_solver(engine: Engine, config: CFRConfig, keying: Keying | None = None, backend: str = "auto"):
    """The solver for ``engine``: ``fast`` (small lossless games), ``engine`` (level by level,
    any size, any keying) or ``auto`` (fast where it applies)."""
    if backend not in ("auto", "fast", "engine"):
        raise PasurInputError(f"backend must be auto, fast or engine, not {backend!r}")
    fast_ok = dense_supported(engine, keying)
    if backend == "fast" and not fast_ok:
        raise PasurInputError("the fast backend needs a small game, the lossless keying and iso=False")
    if backend == "fast" or (backend == "auto" and fast_ok):
        return DenseCFR(engine, config)
    return CFRSolver(engine, config, keying)


@dataclass
class TracePoint:
    iteration: int
    seconds: float  # solver time so far (checks excluded)
    value: float
    exploitability: float
    nash_conv: float


@dataclass
class SolveResult:
    game: str
    method: str
    updates: str
    iterations: int
    seconds: float
    value: float
    exploitability: float
    nash_conv: float
    policy: TabularPolicy
    backend: str
    trace: list[TracePoint] = field(default_factory=list)

    def summary(self) -> dict:
        return {
            "game": self.game,
            "method": self.method,
            "iterations": self.iterations,
            "value": self.value,
            "exploitability": self.exploitability,
            "nash_conv": self.nash_conv,
            "seconds": self.seconds,
            "updates": self.updates,
            "backend": self.backend,
        }


def solve(
    engine: Engine,
    config: CFRConfig,
    *,
    iterations: int | None = None,
    target_exploitability: float | None = None,
    check_every: int = 100,
    keying: Keying | None = None,
    backend: str = "auto",
    progress: Callable[[int, float | None], None] | None = None,
) -> SolveResult:
    """Run until ``iterations`` or until the exploitability is at most ``target_exploitability``
    (checked every ``check_every`` iterations, and at the end). ``progress(done, exploitability)``
    is called after every iteration (``None``: not measured then) and after every check."""
    if iterations is None and target_exploitability is None:
        raise PasurInputError("give --iterations, --target-exploitability or both")
    if iterations is not None and iterations < 1:
        raise PasurInputError("--iterations must be at least 1")
    if target_exploitability is not None and not target_exploitability > 0:
        raise PasurInputError("--target-exploitability must be positive")
    if check_every < 1:
        raise PasurInputError("--check-every must be at least 1")
    solver = make_solver(engine, config, keying, backend)
    kind = "fast" if isinstance(solver, DenseCFR) else "engine"
    trace: list[TracePoint] = []
    spent = 0.0
    done = 0
    last = None
    while True:
        step = check_every if iterations is None else min(check_every, iterations - done)
        for _ in range(step):  # one at a time, so that a long iteration shows as progress
            t0 = time.perf_counter()
            solver.iterate(1)
            if engine.device.type == "cuda":
                torch.cuda.synchronize(engine.device)
            spent += time.perf_counter() - t0
            done += 1
            if progress is not None:
                progress(done, None)
        ev = evaluate(engine, solver.average_policy())
        last = TracePoint(done, spent, ev.value, ev.exploitability, ev.nash_conv)
        trace.append(last)
        if progress is not None:
            progress(done, ev.exploitability)
        if target_exploitability is not None and ev.exploitability <= target_exploitability:
            break
        if iterations is not None and done >= iterations:
            break
    return SolveResult(
        game=engine.game.name,
        method=config.method,
        updates=config.updates,
        iterations=done,
        seconds=spent,
        value=last.value,
        exploitability=last.exploitability,
        nash_conv=last.nash_conv,
        policy=solver.average_policy(),
        backend=kind,
        trace=trace,
    )
