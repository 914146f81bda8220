"""``pasur solve`` and ``pasur tree-stats``: the open-hand game of a deck, exactly or by CFR."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress

from pasur.cli import app
from pasur.cli.common import (
    CFR,
    CFR_METHODS,
    DECKS,
    VARIANT_DECK,
    VARIANT_DECKS,
    AsciiOpt,
    CfrChoice,
    DeckChoice,
    DeviceOpt,
    JsonOpt,
    MemOpt,
    OverwriteOpt,
    QuietOpt,
    TreeOpt,
    command,
    progress_display,
    refuse_unless,
    tree_options,
)
from pasur.common.errors import PasurInputError
from pasur.common.outputs import make_parents
from pasur.game.gamelog import GameLog

METHODS = ("exact", "reference", *CFR_METHODS)


def _spinner(progress: Progress | None, what: str, detail):
    """A progress line for a step of unknown length: ``(task, callback)``; the callback's
    arguments go through ``detail`` into the line. ``(None, None)`` when progress is off."""
    if progress is None:
        return None, None
    task = progress.add_task(what, total=None)

    def callback(*args) -> None:
        progress.update(task, description=f"{what}: {detail(*args)}")

    return task, callback


def _on_layer(progress: Progress | None, what: str):
    """A progress line while a tree grows (and the task to remove when it is built)."""
    return _spinner(progress, f"building {what}", lambda r, t, n: f"round {r} turn {t}, {n:,} nodes")


@command(app)
def solve(
    deck: DeckChoice = VARIANT_DECKS,
    cfr: CfrChoice = CFR,
    tree: TreeOpt = None,
    device: DeviceOpt = None,
    memory_limit: MemOpt = None,
    solver_memory: Annotated[
        float | None,
        typer.Option(
            "--solver-memory",
            help="CFR: GiB a round's solver may take (default: 80 % of the device's free memory); a paper-mode "
            "round that needs more is solved in parts of its roots, with the same result.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="CFR: folder for strategy.parquet, summary.json, traces.parquet, convergence.png."),
    ] = None,
    overwrite: OverwriteOpt = False,
    as_json: JsonOpt = False,
    ascii_cards: AsciiOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Solve the open-hand game of a deck: exactly (its value, Alex minus Bob, and an optimal
    game), or with a CFR variant (an approximate equilibrium, its value, NashConv and
    exploitability = NashConv / 2: docs/conventions.md). --variant NAME plays a small rule
    variant's deck (docs/variants.md)."""
    method = cfr.method_or("exact")
    if method not in METHODS:
        raise PasurInputError(f"unknown method {method!r} (choose from {', '.join(METHODS)})")
    refuse_unless(method != "reference", ["tree", "device", "memory_limit"], "to the tensor methods, not to reference")
    refuse_unless(method in CFR_METHODS, ["out", "overwrite"], "to the CFR methods (an exact solve writes no files)")
    refuse_unless(method in CFR_METHODS, ["solver_memory"], "to the CFR methods")
    if solver_memory is not None and not (solver_memory > 0 and math.isfinite(solver_memory)):
        raise PasurInputError(f"--solver-memory must be a positive number of GiB, got {solver_memory}")
    tree, dev, limit = tree_options(tree, device, memory_limit)
    if method in CFR_METHODS:
        params = cfr.params(method)
        refuse_unless(method == "es-mccfr", ["sample_seed"], "to --method es-mccfr (the other methods sample nothing)")
        nd = deck.one("a CFR solve")
        room = None if solver_memory is None else int(solver_memory * 2**30)
        _solve_cfr(nd, tree, dev, limit, params, out, overwrite, quiet, as_json, room)
        return
    cfr.refuse_for(method)
    decks = deck.decks()
    results = []
    with progress_display(quiet) as progress:
        overall = progress.add_task("decks", total=len(decks)) if len(decks) > 1 else None
        for nd in decks:
            if method == "exact":
                from pasur.solve.runs import solve_exact_run

                task, on_layer = _on_layer(None if quiet else progress, f"the {tree} tree of {nd.id}")
                results.append(solve_exact_run(nd, tree, dev, limit, on_layer))
            else:
                from pasur.solve.runs import solve_reference

                shown = None if quiet else progress
                task, on_states = _spinner(shown, f"solving {nd.id}", lambda n: f"{n:,} states")
                results.append(solve_reference(nd, on_states))
            if task is not None:
                progress.remove_task(task)
            if overall is not None:
                progress.advance(overall)
    _print_exact(results, as_json, ascii_cards)


def _print_exact(results: list[dict], as_json: bool, ascii_cards: bool) -> None:
    if as_json:
        rows = []
        for r in results:
            log: GameLog = r.pop("log")
            rows.append({**r, "optimal_line": json.loads(log.to_json())["actions"], "points": list(log.final.points)})
        typer.echo(json.dumps(rows[0] if len(rows) == 1 else rows, indent=1, ensure_ascii=False))
    else:
        for r in results:
            known = "" if r["known_value"] is None else f" (known: {r['known_value']:+g})"
            typer.echo(f"deck {r['id']}{_of_variant(r['variant'])}: {r['deck']}")
            if r["method"] == "reference":
                how = f"reference: {r['states']:,} states in {r['seconds']:.2f} s"
            else:
                how = (
                    f"exact on the {r['tree']} tree ({r['device']}): {r['nodes']:,} nodes, "
                    f"{r['tree_bytes'] / 2**20:.1f} MiB, built in {r['build_seconds']:.2f} s, "
                    f"solved in {r['solve_seconds']:.2f} s"
                )
            typer.echo(f"exact value (Alex - Bob): {r['value']:+d}{known}   [{how}]\n")
            if len(results) == 1:
                typer.echo("An optimal game (ties broken by the first action in card order):")
                typer.echo(r["log"].to_text(unicode=not ascii_cards))
    mismatched = [r["id"] for r in results if r["known_value"] is not None and r["known_value"] != r["value"]]
    if mismatched:
        from pasur.cli.common import fail

        raise fail(f"value differs from the known value for: {', '.join(mismatched)}", 1)


def _of_variant(name: str) -> str:
    """`` (variant tiny)`` after a deck's id, nothing for the standard game."""
    return "" if name == "standard" else f" (variant {name})"


def _solve_cfr(
    nd, tree: str, dev, limit, params, out: Path | None, overwrite: bool, quiet: bool, as_json: bool, room: int | None
):
    from pasur.solve.runs import run_cfr

    cap = params.iterations if params.iterations is not None else params.max_iterations
    with progress_display(quiet, BarColumn(), MofNCompleteColumn()) as progress:
        shown = None if quiet else progress
        task, on_layer = _on_layer(shown, f"the {tree} tree of {nd.id}")
        tasks: dict[int, int] = {}

        def on_iteration(r: int, it: int, expl: float | None) -> None:
            if task is not None and task in progress.task_ids:
                progress.remove_task(task)
            if r not in tasks:
                tasks[r] = progress.add_task(f"round {r}", total=cap)
            desc = f"round {r}" + ("" if expl is None else f": exploitability {expl:.2e}")
            progress.update(tasks[r], completed=it, **({"description": desc} if expl is not None else {}))

        result, info = run_cfr(
            nd,
            tree,
            dev,
            params,
            memory_limit=limit,
            out=out,
            overwrite=overwrite,
            on_layer=on_layer,
            on_iteration=on_iteration,
            solver_memory=room,
        )
    if as_json:
        typer.echo(json.dumps(info, indent=1))
        return
    typer.echo(f"deck {nd.id}{_of_variant(info['variant'])}: {nd.deck}")
    typer.echo(
        f"{params.method} on the {tree} tree ({dev}), {params.updates} updates, "
        f"{result.seconds:.2f} s; between rounds: {result.value_passed}"
    )
    typer.echo(
        f"value of the average strategy: {info['value']:+.4f}   exact value: {info['exact_value']:+g}   "
        f"exploitability (whole game): {info['exploitability']:.4g} points   NashConv: {info['nash_conv']:.4g} "
        "(exploitability = NashConv / 2)"
    )
    typer.echo(_target_line(info, params))
    typer.echo("round  iterations  exploitability (round alone, worst root)  suffix expl.  budget      nodes   seconds")
    for row in info["rounds"]:
        budget = "" if row["budget"] is None else f"{row['budget']:.3e}"
        typer.echo(
            f"{row['round']:>5}  {row['iterations']:>10}  {row['exploitability']:>40.3e}"
            f"  {row['suffix_exploitability']:>12.3e}  {budget:>9}  {row['nodes']:>9,}  {row['seconds']:>8.2f}"
        )
    if out is not None:
        typer.echo(
            f"wrote {out}/strategy.parquet ({info['strategy_rows']:,} rows), summary.json, traces.parquet, "
            "convergence.png"
        )


def _target_line(info: dict, params) -> str:
    """Whether the whole-game target was met, said plainly."""
    target = info["target"]
    if target is None:
        return f"no target: {params.iterations} iterations per round"
    if info["target_met"]:
        return f"target met: whole-game exploitability {info['exploitability']:.4g} <= {target:g} points"
    capped = [
        row["round"]
        for row in info["rounds"]
        if row["budget"] is not None and row["suffix_exploitability"] > row["budget"]
    ]
    cap = params.iterations if params.iterations is not None else params.max_iterations
    return (
        f"TARGET NOT MET: whole-game exploitability {info['exploitability']:.4g} > {target:g} points; stopped at the "
        f"cap of {cap:,} iterations per round (rounds short of their budget: {', '.join(map(str, capped)) or '-'})"
    )


@command(app, "tree-stats")
def tree_stats(
    deck: DeckChoice = VARIANT_DECK,
    tree: Annotated[str, typer.Option("--tree", help="compact, paper, or both.")] = "both",
    device: DeviceOpt = None,
    memory_limit: MemOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Build a deck's tree and report nodes per round and turn, bytes held and build time."""
    from pasur.solve.runs import build

    modes = ["compact", "paper"] if tree == "both" else [tree]
    for m in modes:
        _, dev, limit = tree_options(m, device, memory_limit)
    nd = deck.one("tree-stats")
    reports = []
    with progress_display(quiet) as progress:
        for m in modes:
            task, on_layer = _on_layer(None if quiet else progress, f"the {m} tree of {nd.id}")
            built = build(nd, m, dev, limit, on_layer)
            if task is not None:
                progress.remove_task(task)
            reports.append(
                {
                    "id": nd.id,
                    "variant": nd.deck.variant.name,
                    "tree": m,
                    "device": str(dev),
                    "nodes": built.n_nodes,
                    "bytes": built.nbytes(),
                    "build_seconds": round(built.seconds, 4),
                    "layers": built.node_counts(),
                }
            )
    if as_json:
        typer.echo(json.dumps(reports[0] if len(reports) == 1 else reports, indent=1))
        return
    typer.echo(f"deck {nd.id}{_of_variant(nd.deck.variant.name)}: {nd.deck}")
    n_turns = nd.deck.variant.turns_per_round + 1  # the layers of a round, its end included (9)
    header = "round " + " ".join(f"{'turn ' + str(t):>11}" for t in range(n_turns)) + "        total"
    for rep in reports:
        typer.echo(
            f"\n{rep['tree']} tree on {rep['device']}: {rep['nodes']:,} nodes, "
            f"{rep['bytes'] / 2**20:.1f} MiB, built in {rep['build_seconds']:.2f} s"
        )
        typer.echo(header)
        by_round: dict[int, dict[int, int]] = {}
        for row in rep["layers"]:
            by_round.setdefault(row["round"], {})[row["turn"]] = row["nodes"]
        for r, turns in by_round.items():
            cells = " ".join(f"{turns[t]:>11,}" if t in turns else f"{'':>11}" for t in range(n_turns))
            typer.echo(f"{r:<5} {cells} {sum(turns.values()):>12,}")
    if len(reports) == 2:
        a, b = reports
        typer.echo(f"\n{a['tree']} / {b['tree']}: {a['nodes'] / b['nodes']:.3f} of the nodes")


@command(app, "deck-values")
def deck_values(
    deck: DeckChoice = DECKS,
    out: Annotated[
        Path, typer.Option("--out", help="Parquet file of the values; decks already in it are skipped (resume).")
    ] = Path("deck-values.parquet"),
    device: DeviceOpt = None,
    workers: Annotated[int, typer.Option("--workers", min=1, max=1024, help="Worker processes on --device.")] = 1,
    cpu_workers: Annotated[
        int, typer.Option("--cpu-workers", min=0, max=1024, help="More worker processes on the CPU (beside a GPU).")
    ] = 0,
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch", min=1, max=100_000, help="Decks per forest on --device (default: 1 on a CPU, 32 on CUDA)."
        ),
    ] = None,
    budget: Annotated[
        int, typer.Option("--budget", min=1, help="Edges a forest of several decks may hold before it is split.")
    ] = 4_000_000,
    memory_limit: MemOpt = None,
    time_limit: Annotated[
        float | None,
        typer.Option("--time-limit", min=0.0, help="Seconds after which no new forest starts (rerun to go on)."),
    ] = None,
    from_end: Annotated[
        bool, typer.Option("--from-end", help="The last deck first (to meet another run that goes forward).")
    ] = False,
    quiet: QuietOpt = False,
) -> None:
    """Exact open-hand values of many decks (compact trees solved as forests), into one resumable Parquet."""
    from pasur.study.deck_values import Pool, read_done, run_deck_values

    _, dev, limit = tree_options("compact", device, memory_limit)
    if out.is_dir():
        raise PasurInputError(f"--out {out} is a folder; give a .parquet file")
    make_parents(out.absolute(), "--out")
    if not deck.any:
        raise PasurInputError("give the decks: --deck-file F, --deck, or --seed S --decks N")
    decks = deck.decks(random_if_none=False)
    pools = [Pool(str(dev), workers, batch or (1 if dev.type == "cpu" else 32))]
    if cpu_workers:
        pools.append(Pool("cpu", cpu_workers, 1))
    with progress_display(quiet, BarColumn(), MofNCompleteColumn()) as progress:
        task = progress.add_task("decks", total=len(decks))
        ids = {nd.id for nd in decks}
        progress.update(task, completed=sum(r["deck_id"] in ids for r in read_done(out, decks)))
        info = run_deck_values(
            decks,
            out,
            pools,
            budget=budget,
            memory_limit=limit,
            time_limit=time_limit,
            from_end=from_end,
            on_done=lambda n: progress.advance(task, n),
        )
    typer.echo(
        f"{info['solved']:,} decks solved, {info['skipped']:,} already in {out}; {info['seconds']:.1f} s on "
        + " + ".join(f"{p.workers} x {p.device}" for p in pools)
        + ("" if info["stopped"] == "no" else f"; stopped ({info['stopped']}), {info['left']:,} left: rerun to go on")
    )
