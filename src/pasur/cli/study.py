"""``pasur sweep``, ``pasur report`` and ``pasur experiment``: many decks at once (on Ray or
inline), summaries over a sweep, and the paper's experiments."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pasur.cli import app
from pasur.cli.common import (
    CFR,
    DECKS,
    AddressOpt,
    CfrChoice,
    DeckChoice,
    DeviceOpt,
    JsonOpt,
    MemOpt,
    OverwriteOpt,
    QuietOpt,
    TreeOpt,
    command,
    given,
    memory_bytes,
    note,
    parse_model_params,
    refuse_unless,
)
from pasur.common.errors import PasurInputError

WorkersOpt = Annotated[
    int | None,
    typer.Option("--workers", min=1, max=4096, help="Decks at once (default: the CPUs here, or of the cluster)."),
]
EngineOpt = Annotated[str, typer.Option("--engine", help="ray, or inline: one deck at a time in this process.")]
RetryOpt = Annotated[bool, typer.Option("--retry-failed", help="Rerun the decks that failed before.")]
FitOpt = Annotated[bool, typer.Option("--fit", help="Fit an XGBoost model to each strategy table.")]
ModelParamsOpt = Annotated[
    str | None, typer.Option("--model-params", help="With --fit: model parameters as a JSON object.")
]


def _job(
    cfr: CfrChoice,
    default_method: str,
    tree,
    device,
    *,
    fit=False,
    model_params=None,
    games=0,
    matchups=(),
    keep_table=True,
):
    from pasur.study.pipeline import DeckJob

    method = cfr.method_or(default_method)
    if method == "reference":
        raise PasurInputError("--method reference runs in `pasur solve` only (sweeps use the tensor tree)")
    if method == "exact":
        cfr.refuse_for(method)
        params = None
    else:
        params = cfr.params(method)
        refuse_unless(method == "es-mccfr" or games > 0, ["sample_seed"], "to es-mccfr and to self-play (--games)")
    return DeckJob(
        cfr=params,
        tree=tree or "compact",
        device=device or "cpu",
        fit=fit,
        model_params=parse_model_params(model_params),
        games=games,
        matchups=tuple(matchups),
        keep_table=keep_table,
    ).check()


_SweepGamesOpt = Annotated[int, typer.Option("--games", min=0, max=100_000_000, help="Self-play games per matchup.")]
_SweepMatchupsOpt = Annotated[
    list[str] | None, typer.Option("--matchup", help="A matchup to play (repeatable); default table-vs-table.")
]
_SweepKeepTableOpt = Annotated[
    bool, typer.Option("--keep-table/--no-keep-table", help="Keep each deck's strategy.parquet.")
]
_SweepGpusPerTaskOpt = Annotated[
    float | None,
    typer.Option("--gpus-per-task", min=0, help="GPUs per deck, with --device cuda (default 1; fractions share)."),
]


@command(app)
def sweep(
    out: Annotated[Path, typer.Option("--out", help="Folder of the sweep (created; rerun to resume).")],
    decks: DeckChoice = DECKS,
    cfr: CfrChoice = CFR,
    tree: TreeOpt = None,
    device: DeviceOpt = None,
    fit: FitOpt = False,
    model_params: ModelParamsOpt = None,
    games: _SweepGamesOpt = 0,
    matchups: _SweepMatchupsOpt = None,
    keep_table: _SweepKeepTableOpt = True,
    memory_limit: MemOpt = None,
    address: AddressOpt = None,
    workers: WorkersOpt = None,
    gpus_per_task: _SweepGpusPerTaskOpt = None,
    retry_failed: RetryOpt = False,
    engine: EngineOpt = "ray",
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the per-deck pipeline (solve, optionally fit and self-play) for many decks as Ray tasks.
    Each deck's outputs land in DIR/decks/<id>/, its status in DIR/manifest.parquet; rerunning the
    same command skips finished decks. Exit code 1 when some decks failed (see pasur report).
    Records carry nash_conv and exploitability = NashConv / 2 (docs/conventions.md)."""
    from pasur.study.sweep import SweepInterrupted
    from pasur.study.sweep import sweep as run

    if matchups and not games:
        raise PasurInputError("--matchup needs --games N")
    job = _job(
        cfr,
        "dcfr",
        tree,
        device,
        fit=fit,
        model_params=model_params,
        games=games,
        matchups=matchups or ("table-vs-table",),
        keep_table=keep_table,
    )
    nds = decks.decks(random_if_none=False)

    def started(s: dict) -> None:
        if not quiet and not as_json:
            note(f"sweep into {s['out']}: {s['to_run']} decks to run, {s['skipped']} done or failed before")

    try:
        result = run(
            nds,
            job,
            out,
            workers=workers,
            address=address,
            gpus_per_task=gpus_per_task,
            retry_failed=retry_failed,
            engine=engine,
            memory_limit=memory_bytes(memory_limit),
            progress=not quiet,
            on_start=started,
        )
    except SweepInterrupted as e:
        s = e.summary
        note(
            f"interrupted: {s['done']} of {s['decks']} decks done, {s['failed']} failed, {s['pending']} left; "
            "rerun the same command to go on"
        )
        raise typer.Exit(130) from None
    s = result.summary
    if as_json:
        typer.echo(json.dumps(s, indent=1))
    else:
        _print_sweep(s, result.records, out)
    if s["failed"]:
        raise typer.Exit(1)


def _print_sweep(s: dict, records: list[dict], out: Path) -> None:
    """A sweep's summary ``s`` in a few lines: decks done, failed and skipped, the rate, a line over
    the done decks' ``records``, the failed decks (on stderr)."""
    rate = f", {s['decks_per_hour']:,.0f} decks/hour" if s["decks_per_hour"] and s["to_run"] else ""
    typer.echo(
        f"{s['done']} of {s['decks']} decks done, {s['failed']} failed, {s['skipped']} skipped "
        f"(done or failed before); {s['wall_seconds']:.1f} s{rate}; outputs in {out}"
    )
    line = per_deck_line(records)
    if line:
        typer.echo(line)
    if s["failed_decks"]:
        shown = ", ".join(s["failed_decks"][:10]) + (" ..." if len(s["failed_decks"]) > 10 else "")
        note(f"failed: {shown} (errors: pasur report {out} --per-deck; rerun with --retry-failed)")


def per_deck_line(records: list[dict]) -> str:
    """One line over the done decks: values (points), exploitability (NashConv / 2), time per deck."""
    if not records:
        return ""
    values = [r["exact_value"] for r in records if r.get("exact_value") is not None]
    parts = [f"per deck ({len(records)}):"]
    if values:
        parts.append(
            f"exact value mean {statistics.fmean(values):+.2f} points (min {min(values):+g}, max {max(values):+g})"
        )
    expl = [r["exploitability"] for r in records if r.get("exploitability") is not None]
    if expl:
        parts.append(f"exploitability (NashConv / 2) max {max(expl):.3g}")
    fair = [r["fair_value"] for r in records if r.get("fair_value") is not None]
    if fair:
        parts.append(f"fair value (Alex's win rate) mean {statistics.fmean(fair):.3f}")
    secs = [r["seconds"] for r in records if r.get("seconds") is not None]
    if secs:
        parts.append(f"median {statistics.median(secs):.2f} s")
    return parts[0] + " " + "; ".join(parts[1:])


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


@command(app)
def report(
    out: Annotated[Path, typer.Argument(help="The folder of a sweep (its --out).")],
    csv: Annotated[Path | None, typer.Option("--csv", help="Write the per-deck table to this CSV file.")] = None,
    overwrite: OverwriteOpt = False,
    per_deck: Annotated[bool, typer.Option("--per-deck", help="Also print one row per deck.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Summary tables over a sweep: decks by status, point values, win rates, tree sizes, timings.
    nash_conv and exploitability = NashConv / 2 (docs/conventions.md); a sweep written before that
    convention (its exploitability was NashConv) is read relabelled."""
    from pasur.common.outputs import check_output_file
    from pasur.study import report as rep

    refuse_unless(csv is not None, ["overwrite"], "with --csv")
    if csv is not None:
        check_output_file(csv, overwrite=overwrite, option="--csv")
    s = rep.summary(out)
    rows = rep.deck_rows(out) if per_deck else []
    if as_json:
        typer.echo(json.dumps({**s, **({"decks": rows} if per_deck else {})}, indent=1, default=str))
    else:
        console = Console(soft_wrap=False)
        if not console.is_terminal:
            console = Console(soft_wrap=False, width=200)  # a file or pipe: full columns, not an 80-column cut
        for title, key in (
            ("Decks", "status"),
            ("Values (points, Alex - Bob)", "values"),
            ("Rates (share of games)", "rates"),
            ("Models (RMSE of 100 x probability)", "models"),
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
        if per_deck:
            keep = (
                "deck_id",
                "status",
                "attempts",
                "exact_value",
                "value",
                "nash_conv",
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
        n = rep.write_csv(out, csv, overwrite=overwrite)
        note(f"wrote {n} rows to {csv}")


def _list_experiments(value: bool) -> None:
    if value:
        from pasur.study import experiments as ex

        for n in ex.names():
            typer.echo(f"{n:<12} {ex.get(n).help}")
        raise typer.Exit(0)


_ExpNameOpt = Annotated[str, typer.Argument(help="The experiment: see `pasur experiment --list`.")]
_ExpOutOpt = Annotated[
    Path, typer.Option("--out", help="Folder for the plots, tables and the sweep (rerun to resume).")
]
_ExpGamesOpt = Annotated[
    int, typer.Option("--games", min=1, max=100_000_000, help="Self-play games per matchup and deck.")
]
_ExpFitOpt = Annotated[bool, typer.Option("--fit", help="Play XGBoost models of the strategies (the paper).")]
_ExpPaperMemoryLimitOpt = Annotated[
    float, typer.Option("--paper-memory-limit", help="figure12: GiB a paper tree may take (larger: not built).")
]
_ExpPaperResultsOpt = Annotated[
    Path | None,
    typer.Option(
        "--paper-results",
        help="figure14: the paper's recorded self-play (MM.csv of sinabaghal/Pasur), to compare with; "
        "read the decks from its decks_10000.pt (--deck-file F --decks N).",
    ),
]
_ExpListingOpt = Annotated[
    bool, typer.Option("--list", callback=_list_experiments, is_eager=True, help="List the experiments and exit.")
]


@command(app)
def experiment(
    name: _ExpNameOpt,
    out: _ExpOutOpt,
    decks: DeckChoice = DECKS,
    cfr: CfrChoice = CFR,
    tree: TreeOpt = None,
    games: _ExpGamesOpt = 2000,
    fit: _ExpFitOpt = False,
    model_params: ModelParamsOpt = None,
    paper_memory_limit: _ExpPaperMemoryLimitOpt = 4.0,
    paper_results: _ExpPaperResultsOpt = None,
    workers: WorkersOpt = None,
    engine: EngineOpt = "ray",
    address: AddressOpt = None,
    retry_failed: RetryOpt = False,
    device: DeviceOpt = None,
    memory_limit: MemOpt = None,
    listing: _ExpListingOpt = False,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Reproduce one of the paper's figures or tables over many decks; writes PNG, CSV and
    Markdown into --out (and the per-deck sweep beside them, so a rerun resumes), and prints the
    table. Exploitability is NashConv / 2 throughout (docs/conventions.md)."""
    from pasur.study import experiments as ex

    spec = ex.get(name)
    # the options only some experiments take: refused here, before any folder is made, unless this one does
    own = {
        "tree": tree,
        "games": games,
        "fit": fit,
        "model_params": model_params,
        "paper_memory_limit": paper_memory_limit,
        "paper_results": paper_results,
    }
    shown = given(*own)
    spec.check_options({**{k: v for k, v in own.items() if k in shown}, **cfr.given_values()})
    job = None
    if spec.cfr:
        job = _job(
            cfr,
            "dcfr",
            tree,
            device,
            fit=fit,
            model_params=model_params,
            games=games if spec.plays else 0,
            matchups=(),
            keep_table=True,
        )
        if job.cfr is None:
            raise PasurInputError(f"{name} needs a CFR method (it plays or plots strategies)")
    nds = decks.decks(random_if_none=False)
    sweep_opts = {
        "workers": workers,
        "engine": engine,
        "address": address,
        "memory_limit": memory_bytes(memory_limit),
        "progress": not quiet,
        "retry_failed": retry_failed,
    }
    spec.check_decks(nds)
    options = {k: v for k, v in own.items() if k in spec.options}
    summary = spec.run(ex.StudyRun(nds, out, job, sweep_opts, options))
    if as_json:
        typer.echo(json.dumps(summary, indent=1))
        return
    typer.echo(f"{name}: {len(nds)} decks; outputs in {out}\n")
    for md in spec.tables:
        if (out / md).exists():  # some tables are written only with an option (figure14's --paper-results)
            typer.echo((out / md).read_text(encoding="utf-8"))
    if not spec.tables:
        width = max(len(k) for k in summary)
        for k, v in summary.items():
            typer.echo(f"{k:<{width}}  {_fmt(v)}")
