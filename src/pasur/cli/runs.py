"""Running the solvers for the command line: each returns its results, printing nothing."""

from __future__ import annotations

import time
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress

from pasur.game.cards import NamedDeck
from pasur.cli.common import progress_display
from pasur.game.gamelog import GameLog
from pasur.solve.reference import ReferenceSolver
from pasur.game.state import GameState


def build(nd: NamedDeck, tree: str, dev, limit, progress: Progress | None, infosets: bool = False):
    """The deck's tree, showing the round, turn and nodes as it grows."""
    from pasur.solve.tree import build_tree

    task = None
    callback = None
    if progress is not None:
        task = progress.add_task(f"building the {tree} tree of {nd.id}", total=None)

        def callback(r: int, t: int, n: int) -> None:
            progress.update(task, description=f"building the {tree} tree of {nd.id}: round {r} turn {t}, {n:,} nodes")

    built = build_tree(GameState.initial(nd.deck), tree, dev, infosets=infosets, memory_limit=limit, progress=callback)
    if task is not None:
        progress.remove_task(task)
    return built


def solve_reference(nd: NamedDeck, progress: Progress | None) -> dict:
    """The plain-Python reference solver on one deck: value, states, time and the optimal game."""
    solver = ReferenceSolver(nd.deck)
    task = None
    if progress is not None:
        task = progress.add_task(f"solving {nd.id}", total=None)
        solver.on_progress = lambda n: progress.update(task, description=f"solving {nd.id}: {n:,} states")
    t0 = time.perf_counter()
    start = GameState.initial(nd.deck)
    value = solver.value(start)
    seconds = time.perf_counter() - t0
    if progress is not None and task is not None:
        progress.remove_task(task)
    line = solver.optimal_line(start)
    return {
        "id": nd.id,
        "deck": str(nd.deck),
        "method": "reference",
        "value": value,
        "known_value": nd.value,
        "states": solver.n_states,
        "seconds": round(seconds, 4),
        "log": GameLog(nd.deck, tuple(line)),
    }


def solve_exact_run(nd: NamedDeck, tree: str, dev, limit, progress: Progress | None) -> dict:
    """Backward induction on the deck's tensor tree: value, tree size, times and the optimal game."""
    from pasur.solve.exact import optimal_line, solve_exact

    t0 = time.perf_counter()
    built = build(nd, tree, dev, limit, progress)
    t1 = time.perf_counter()
    solution = solve_exact(built, keep_values=False)
    value = solution.game_value()  # (a float: waits for the device)
    t2 = time.perf_counter()
    line = optimal_line(solution)
    return {
        "id": nd.id,
        "deck": str(nd.deck),
        "method": "exact",
        "tree": tree,
        "device": str(dev),
        "value": int(value),
        "known_value": nd.value,
        "nodes": built.n_nodes,
        "tree_bytes": built.nbytes(),
        "build_seconds": round(t1 - t0, 4),
        "solve_seconds": round(t2 - t1, 4),
        "seconds": round(t2 - t0, 4),
        "log": GameLog(nd.deck, tuple(line)),
    }


def run_cfr(nd: NamedDeck, tree: str, dev, limit, params, out: Path | None, overwrite: bool, quiet: bool):
    """A CFR solve with a progress bar per round; writes ``out`` atomically. Returns (result, summary)."""
    from pasur.common.outputs import atomic_dir
    from pasur.solve.cfr import solve_cfr
    from pasur.solve.exact import solve_exact

    cap = params.iterations if params.iterations is not None else params.max_iterations
    with progress_display(quiet, BarColumn(), MofNCompleteColumn()) as progress:
        built = build(nd, tree, dev, limit, None if quiet else progress, infosets=out is not None)
        tasks: dict[int, int] = {}

        def on_iteration(r: int, it: int, expl: float | None) -> None:
            if r not in tasks:
                tasks[r] = progress.add_task(f"round {r}", total=cap)
            desc = f"round {r}" + ("" if expl is None else f": exploitability {expl:.2e}")
            progress.update(tasks[r], completed=it, **({"description": desc} if expl is not None else {}))

        result = solve_cfr(built, params, dev, progress=on_iteration)
        extra = {"exact_value": solve_exact(built, keep_values=False).game_value()}
        if out is None:
            from pasur.solve.tables import summary

            return result, {**summary(result, nd.id, str(dev), None), **extra}
        from pasur.solve.tables import write_outputs

        progress.add_task(f"writing {out}", total=None)
        with atomic_dir(out, overwrite=overwrite) as tmp:
            info = write_outputs(tmp, result, nd.id, str(dev), extra)
    return result, info


def batch_agent(spec: str, nd: NamedDeck, seed: int | None, dev, trees: dict):
    """A batch agent from its name: random, greedy, exact, ``table:PATH`` (a strategy table;
    its tree is built once per mode into ``trees``) or ``model:PATH`` (an XGBoost model)."""
    from pasur.common.errors import PasurInputError
    from pasur.play.selfplay import BATCH_AGENTS, BatchStrategy

    if spec.startswith("model:"):
        from pasur.learn.models import BatchModel, load_model

        return BatchModel(load_model(Path(spec[len("model:") :])), seed), None
    if spec.startswith("table:"):
        import pyarrow.parquet as pq

        from pasur.solve.tables import read_strategy_table
        from pasur.solve.tree import build_tree

        path = Path(spec[len("table:") :])
        if not path.exists():
            raise PasurInputError(f"strategy table not found: {path}")
        try:
            mode = (pq.read_schema(path).metadata or {}).get(b"pasur.tree", b"").decode()
        except Exception as e:  # pyarrow raises several types for a broken file
            raise PasurInputError(f"{path}: not a readable Parquet strategy table ({e})") from None
        if mode not in ("paper", "compact"):
            raise PasurInputError(f"{path}: not a pasur strategy table (no tree mode in its metadata)")
        if mode not in trees:
            trees[mode] = build_tree(GameState.initial(nd.deck), mode, dev, infosets=False)
        return BatchStrategy(read_strategy_table(path, trees[mode]), seed), trees[mode]
    if spec not in BATCH_AGENTS:
        raise PasurInputError(
            f"unknown agent {spec!r} (choose from {', '.join(BATCH_AGENTS)}, table:PATH or model:PATH)"
        )
    return (BATCH_AGENTS[spec](seed) if spec == "random" else BATCH_AGENTS[spec]()), None
