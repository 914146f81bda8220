"""One solver run on one named deck, as the command line and notebooks use it: build, solve,
and return a flat result (value, sizes, times, the optimal game, the deck's rule variant).
Progress goes through callbacks; nothing here prints.

>>> from pasur.game.cards import seed_decks
>>> r = solve_exact_run(seed_decks(1, 2)[0], "compact", "cpu")
>>> r["method"], r["value"] == r["log"].final.utility()
('exact', True)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import torch

from pasur.game.cards import NamedDeck
from pasur.game.gamelog import GameLog
from pasur.game.state import GameState
from pasur.solve.reference import ReferenceSolver

#: ``(round, turn, nodes so far)`` while a tree grows
OnLayer = Callable[[int, int, int], None]
#: ``(round, iteration, exploitability or None)`` while CFR runs
OnIteration = Callable[[int, int, float | None], None]


def build(
    nd: NamedDeck,
    tree: str,
    device,
    memory_limit: int | None = None,
    on_layer: OnLayer | None = None,
    infosets: bool = False,
):
    """The deck's tensor tree (``compact`` or ``paper``), of the deck's variant."""
    from pasur.solve.tree import build_tree

    return build_tree(
        GameState.initial(nd.deck),
        tree,
        torch.device(device),
        infosets=infosets,
        memory_limit=memory_limit,
        progress=on_layer,
    )


def solve_reference(nd: NamedDeck, on_states: Callable[[int], None] | None = None) -> dict:
    """The plain-Python reference solver: value, states, time and the optimal game."""
    solver = ReferenceSolver(nd.deck)
    if on_states is not None:
        solver.on_progress = on_states
    t0 = time.perf_counter()
    start = GameState.initial(nd.deck)
    value = solver.value(start)
    seconds = time.perf_counter() - t0
    return {
        "id": nd.id,
        "deck": str(nd.deck),
        "variant": nd.deck.variant.name,
        "method": "reference",
        "value": value,
        "known_value": nd.value,
        "states": solver.n_states,
        "seconds": round(seconds, 4),
        "log": GameLog(nd.deck, tuple(solver.optimal_line(start))),
    }


def solve_exact_run(
    nd: NamedDeck, tree: str, device, memory_limit: int | None = None, on_layer: OnLayer | None = None
) -> dict:
    """Backward induction on the deck's tensor tree: value, tree size, times and the optimal game."""
    from pasur.solve.exact import optimal_line, solve_exact

    t0 = time.perf_counter()
    built = build(nd, tree, device, memory_limit, on_layer)
    t1 = time.perf_counter()
    solution = solve_exact(built, keep_values=False)
    value = solution.game_value()  # (a float: waits for the device)
    t2 = time.perf_counter()
    return {
        "id": nd.id,
        "deck": str(nd.deck),
        "variant": nd.deck.variant.name,
        "method": "exact",
        "tree": tree,
        "device": str(built.device),
        "value": int(value),
        "known_value": nd.value,
        "nodes": built.n_nodes,
        "tree_bytes": built.nbytes(),
        "build_seconds": round(t1 - t0, 4),
        "solve_seconds": round(t2 - t1, 4),
        "seconds": round(t2 - t0, 4),
        "log": GameLog(nd.deck, tuple(optimal_line(solution))),
    }


def run_cfr(
    nd: NamedDeck,
    tree: str,
    device,
    params,
    *,
    memory_limit: int | None = None,
    out: Path | None = None,
    overwrite: bool = False,
    on_layer: OnLayer | None = None,
    on_iteration: OnIteration | None = None,
    solver_memory: int | None = None,
):
    """A CFR solve; with ``out``, its outputs (strategy table, summary, traces, plot) written as
    one folder (see :func:`pasur.common.outputs.output_dir`). Returns ``(result, summary)``.
    ``solver_memory``: bytes a round's solver may take (:func:`pasur.solve.rounds.solve_cfr`)."""
    from pasur.common.outputs import check_output_dir, output_dir
    from pasur.solve.exact import solve_exact
    from pasur.solve.rounds import solve_cfr
    from pasur.solve.strategy_io import summary, write_outputs

    params.check()
    if out is not None:
        check_output_dir(out, overwrite=overwrite)  # before the work, not after
    built = build(nd, tree, device, memory_limit, on_layer, infosets=out is not None)
    result = solve_cfr(built, params, built.device, progress=on_iteration, solver_memory=solver_memory)
    extra = {"exact_value": solve_exact(built, keep_values=False).game_value(), "variant": built.variant.name}
    if out is None:
        return result, {**summary(result, nd.id, str(built.device), None), **extra}
    with output_dir(out, overwrite=overwrite) as tmp:
        info = write_outputs(tmp, result, nd.id, str(built.device), extra)
    return result, info
