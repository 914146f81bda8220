"""The ``pasur sweep`` and ``pasur report`` commands (registered on the main app by :func:`register`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pasur.cli.common import (
    DeckFileOpt,
    DeviceOpt,
    JsonOpt,
    MemOpt,
    QuietOpt,
    SeedOpt,
    TreeOpt,
    err,
    parse_model_params,
    user_errors,
)
from pasur.common.errors import PasurInputError


def deck_list(n: int | None, seed: int | None, deck_file: Path | None):
    """The decks of ``--decks N --seed S`` or ``--deck-file F`` (for sweeps and experiments)."""
    from pasur.game.cards import read_deck_file
    from pasur.study.sweep import seed_decks

    if deck_file is not None:
        if n is not None or seed is not None:
            raise PasurInputError("give either --deck-file or --decks N --seed S, not both")
        return read_deck_file(deck_file)
    if n is None:
        raise PasurInputError("give the decks: --decks N [--seed S] or --deck-file F")
    return seed_decks(n, 0 if seed is None else seed)


def sweep_cmd(
    out: Annotated[Path, typer.Option("--out", help="Folder of the sweep (created; rerun to resume).")],
    decks: Annotated[int | None, typer.Option("--decks", help="How many random decks (seeds S, S+1, ...).")] = None,
    seed: SeedOpt = None,
    deck_file: DeckFileOpt = None,
    method: Annotated[
        str, typer.Option("--method", help="exact, or a CFR method: cfr, cfr+, dcfr, es-mccfr.")
    ] = "dcfr",
    tree: TreeOpt = "compact",
    iterations: Annotated[
        int | None, typer.Option("--iterations", help="CFR: iterations per round (a cap with a target).")
    ] = None,
    target: Annotated[
        float | None, typer.Option("--target-exploitability", help="CFR: stop a round below this (points).")
    ] = 0.05,
    check_every: Annotated[int, typer.Option("--check-every", help="CFR: measure exploitability every K.")] = 10,
    device: DeviceOpt = "cpu",
    fit: Annotated[bool, typer.Option("--fit", help="Fit an XGBoost model to each strategy table.")] = False,
    model_params: Annotated[
        str | None, typer.Option("--model-params", help="With --fit: model parameters as a JSON object.")
    ] = None,
    games: Annotated[int, typer.Option("--games", help="Self-play games per matchup (0: none).")] = 0,
    matchups: Annotated[
        list[str] | None, typer.Option("--matchup", help="A matchup to play (repeatable); default table-vs-table.")
    ] = None,
    job_seed: Annotated[int, typer.Option("--job-seed", help="Seed of es-mccfr sampling and self-play.")] = 0,
    keep_table: Annotated[
        bool, typer.Option("--keep-table/--no-keep-table", help="Keep each deck's strategy.parquet.")
    ] = True,
    memory_limit: MemOpt = None,
    address: Annotated[
        str | None,
        typer.Option("--address", help="Join this Ray cluster (e.g. auto, or HOST:6379); default: Ray here."),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Decks at once (default: the CPUs here, or of the cluster).")
    ] = None,
    gpus_per_task: Annotated[
        float | None,
        typer.Option("--gpus-per-task", help="GPUs per deck, with --device cuda (default 1 then; fractions share)."),
    ] = None,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Rerun the decks that failed before.")] = False,
    engine: Annotated[
        str, typer.Option("--engine", help="ray, or inline: one deck at a time in this process (debugging).")
    ] = "ray",
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the per-deck pipeline (solve, optionally fit and self-play) for many decks as Ray tasks.
    Each deck's outputs land in DIR/decks/<id>/, its status in DIR/manifest.parquet; rerunning the
    same command skips finished decks. Exit code 1 when some decks failed (see pasur report)."""
    from pasur.study.pipeline import DeckJob
    from pasur.study.sweep import SweepInterrupted, sweep

    params = parse_model_params(model_params)
    if memory_limit is not None and memory_limit <= 0:
        raise PasurInputError(f"--memory-limit must be positive, got {memory_limit}")
    job = DeckJob(
        method=method,
        tree=tree,
        iterations=iterations,
        target_exploitability=target if method != "exact" else None,
        check_every=check_every,
        device=device,
        fit=fit,
        model_params=params,
        games=games,
        matchups=tuple(matchups) if matchups else ("table-vs-table",),
        seed=job_seed,
        keep_table=keep_table,
    ).check()
    nds = deck_list(decks, seed, deck_file)
    limit = None if memory_limit is None else int(memory_limit * 2**30)

    def started(s: dict) -> None:
        if not quiet and not as_json:
            err.print(
                f"sweep into {s['out']}: {s['to_run']} decks to run, {s['skipped']} done or failed before",
                highlight=False,
                soft_wrap=True,
            )

    try:
        result = sweep(
            nds,
            job,
            out,
            workers=workers,
            address=address,
            gpus_per_task=gpus_per_task,
            retry_failed=retry_failed,
            engine=engine,
            memory_limit=limit,
            progress=not quiet,
            on_start=started,
        )
    except SweepInterrupted as e:
        s = e.summary
        err.print(
            f"interrupted: {s['done']} of {s['decks']} decks done, {s['failed']} failed, {s['pending']} left; "
            "rerun the same command to go on",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    s = result.summary
    if as_json:
        typer.echo(json.dumps(s, indent=1))
    else:
        rate = f", {s['decks_per_hour']:,.0f} decks/hour" if s["decks_per_hour"] and s["to_run"] else ""
        typer.echo(
            f"{s['done']} of {s['decks']} decks done, {s['failed']} failed, {s['skipped']} skipped "
            f"(done or failed before); {s['wall_seconds']:.1f} s{rate}; outputs in {out}"
        )
        if s["failed_decks"]:
            shown = ", ".join(s["failed_decks"][:10]) + (" ..." if len(s["failed_decks"]) > 10 else "")
            err.print(
                f"failed: {shown} (errors: pasur report {out} --decks; rerun with --retry-failed)", highlight=False
            )
    if s["failed"]:
        raise typer.Exit(1)


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _table(title: str, rows: list[dict]) -> Table:
    t = Table(title=title, title_justify="left")
    for k in rows[0]:
        t.add_column(k, justify="left" if k in ("column", "phase", "status", "deck_id", "error") else "right")
    for r in rows:
        t.add_row(*(_fmt(v) for v in r.values()))
    return t


def report_cmd(
    out: Annotated[Path, typer.Argument(help="The folder of a sweep (its --out).")],
    csv: Annotated[Path | None, typer.Option("--csv", help="Write the per-deck table to this CSV file.")] = None,
    decks: Annotated[bool, typer.Option("--decks", help="Also print one row per deck.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Summary tables over a sweep: decks by status, values, tree sizes and timings."""
    from pasur.study import report

    s = report.summary(out)
    rows = report.deck_rows(out) if decks else []
    if as_json:
        typer.echo(json.dumps({**s, **({"decks": rows} if decks else {})}, indent=1, default=str))
    else:
        console = Console(soft_wrap=False)
        if not console.is_terminal:
            console = Console(soft_wrap=False, width=200)  # a file or pipe: full columns, not an 80-column cut
        for title, key in (
            ("Decks", "status"),
            ("Values", "values"),
            ("Tree sizes", "tree_sizes"),
            ("Timings (seconds)", "timings"),
        ):
            if s[key]:
                console.print(_table(title, s[key]))
        if s["span_seconds"]:
            console.print(
                f"span {s['span_seconds']:,.1f} s, {s['decks_per_hour']:,.0f} decks/hour",
                highlight=False,
                soft_wrap=True,
            )
        if decks:
            keep = (
                "deck_id",
                "status",
                "attempts",
                "exact_value",
                "value",
                "exploitability",
                "fair_value",
                "nodes",
                "task_seconds",
                "error",
            )
            shown = [
                {k: (r.get(k).splitlines()[0] if k == "error" and r.get(k) else r.get(k)) for k in keep if k in r}
                for r in rows
            ]
            if shown:
                console.print(_table("Decks", shown))
    if csv is not None:
        n = report.write_csv(out, csv)
        err.print(f"wrote {n} rows to {csv}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``sweep`` and ``report`` to the ``pasur`` app."""
    app.command("sweep")(user_errors(sweep_cmd))
    app.command("report")(user_errors(report_cmd))
