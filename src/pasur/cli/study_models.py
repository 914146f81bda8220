"""The ``pasur fit`` and ``pasur experiment`` commands (registered on the main app by :func:`register`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pasur.cli.common import (
    DeckFileOpt,
    DeckIdOpt,
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

MaxDepthOpt = Annotated[int, typer.Option("--max-depth", help="Depth of each boosted tree.")]
EtaOpt = Annotated[float, typer.Option("--learning-rate", help="XGBoost's eta.")]
RoundsOpt = Annotated[int, typer.Option("--rounds", help="Boosting rounds.")]


def fit_cmd(
    tables: Annotated[list[Path], typer.Argument(help="Strategy tables (strategy.parquet) to train on.")],
    out: Annotated[Path, typer.Option("--out", help="Model file to write: .ubj or .json (XGBoost's formats).")],
    validate_on: Annotated[
        list[Path] | None,
        typer.Option("--validate-on", help="Tables of unseen decks to judge the model on (repeatable)."),
    ] = None,
    max_depth: MaxDepthOpt = 6,
    learning_rate: EtaOpt = 0.3,
    rounds: RoundsOpt = 100,
    gamma: Annotated[float, typer.Option("--gamma", help="Minimum loss reduction of a split (the paper: 1).")] = 1.0,
    validation_fraction: Annotated[
        float, typer.Option("--validation-fraction", help="Share of decision points held out (without --validate-on).")
    ] = 0.1,
    max_rows: Annotated[int | None, typer.Option("--max-rows", help="Train on a seeded sample of rows.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split and the sample.")] = 0,
    device: DeviceOpt = "cpu",
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing model file.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Fit an XGBoost model of 100 × the strategy probability on the 58 infoset features, from
    one deck's table (the paper) or many (judged on unseen decks with --validate-on)."""
    from pasur.learn.models import ModelParams, check_model_path, fit_model, save_model

    if out.exists() and not overwrite:
        raise PasurInputError(f"{out} exists (add --overwrite to replace it)")
    check_model_path(out)  # before the training, not after
    params = ModelParams(
        max_depth=max_depth,
        learning_rate=learning_rate,
        rounds=rounds,
        gamma=gamma,
        validation_fraction=validation_fraction,
        max_rows=max_rows,
        seed=seed,
    ).check()
    with err.status(f"fitting on {len(tables)} table(s)"):
        model = fit_model(tables, params, device=device, validation_tables=validate_on)
    card = save_model(model, out)
    v = model.card["validation"]
    if as_json:
        typer.echo(json.dumps({"model": str(out), "card": str(card), **model.card}, indent=1))
        return
    typer.echo(f"model {out} (card {card.name}): {model.card['kind']}, {model.card['tree_mode']} tree features")
    typer.echo(f"trained on {model.card['training']['rows_used']:,} rows; train RMSE {v['train_rmse']:.3f}")
    if v.get("rmse") is not None:
        typer.echo(
            f"validation ({v['rows']:,} rows): RMSE {v['rmse']:.3f} (of 100 × probability), "
            f"top-action agreement {v['agreement']:.1%}"
        )


def experiment_cmd(
    name: Annotated[str, typer.Argument(help="figure12, figure14, figure15, figure16 or table16.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the plots, tables and the sweep (rerun to resume).")],
    decks: Annotated[int | None, typer.Option("--decks", help="How many random decks (seeds S, S+1, ...).")] = None,
    seed: SeedOpt = None,
    deck_file: DeckFileOpt = None,
    deck_id: DeckIdOpt = None,
    method: Annotated[str, typer.Option("--method", help="CFR method.")] = "dcfr",
    tree: TreeOpt = "compact",
    iterations: Annotated[int | None, typer.Option("--iterations", help="CFR iterations per round.")] = None,
    target: Annotated[
        float | None, typer.Option("--target-exploitability", help="Stop a round below this (points).")
    ] = 0.05,
    games: Annotated[int, typer.Option("--games", help="Self-play games per matchup and deck.")] = 2000,
    fit: Annotated[bool, typer.Option("--fit", help="Play XGBoost models of the strategies (the paper).")] = False,
    model_params: Annotated[
        str | None, typer.Option("--model-params", help="With --fit: model parameters as a JSON object.")
    ] = None,
    paper_memory_limit: Annotated[
        float, typer.Option("--paper-memory-limit", help="figure12: GiB a paper tree may take (larger: not built).")
    ] = 4.0,
    workers: Annotated[int | None, typer.Option("--workers", help="Decks at once on Ray (default: the CPUs).")] = None,
    engine: Annotated[str, typer.Option("--engine", help="ray, or inline (one deck at a time here).")] = "ray",
    address: Annotated[str | None, typer.Option("--address", help="Join this Ray cluster.")] = None,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Rerun decks that failed before.")] = False,
    device: DeviceOpt = "cpu",
    memory_limit: MemOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Reproduce one of the paper's figures or tables over many decks; writes PNG, CSV and
    Markdown into --out (and the per-deck sweep beside them, so a rerun resumes)."""
    from pasur.study import experiments as ex
    from pasur.cli.study import deck_list
    from pasur.study.pipeline import DeckJob

    if name not in ex.EXPERIMENTS:
        raise PasurInputError(f"unknown experiment {name!r} (choose from {', '.join(ex.EXPERIMENTS)})")
    params = parse_model_params(model_params)
    if paper_memory_limit <= 0:
        raise PasurInputError(f"--paper-memory-limit must be positive, got {paper_memory_limit}")
    job = DeckJob(
        method=method,
        tree=tree,
        iterations=iterations,
        target_exploitability=target,
        device=device,
        fit=fit,
        model_params=params,
        games=games,
        matchups=(),
        seed=0,
    ).check()
    nds = deck_list(decks, seed, deck_file)
    if deck_id is not None:
        if deck_file is None:
            raise PasurInputError("--deck-id goes with --deck-file")
        nds = [nd for nd in nds if nd.id == deck_id]
        if not nds:
            raise PasurInputError(f"no deck with id {deck_id!r} in {deck_file}")
    if not out.parent.is_dir():
        raise PasurInputError(f"the folder {out.parent} for --out does not exist")
    opts = {
        "workers": workers,
        "engine": engine,
        "address": address,
        "memory_limit": None if memory_limit is None else int(memory_limit * 2**30),
        "progress": not quiet,
        "retry_failed": retry_failed,
    }
    if name == "figure12":
        summary = ex.figure12(nds, out, opts, int(paper_memory_limit * 2**30))
    elif name == "figure14":
        summary = ex.figure14(nds, out, job, opts)
    elif name == "figure15":
        summary = ex.figure15(nds, out, job, opts)
    elif name == "figure16":
        if len(nds) != 1:
            raise PasurInputError("figure16 takes one deck: --decks 1 --seed S, or a deck file of one deck")
        summary = ex.figure16(nds[0], out, job)
    else:
        summary = ex.table16(nds, out, job, opts)
    if as_json:
        typer.echo(json.dumps(summary, indent=1))
        return
    typer.echo(f"{name}: {len(nds)} decks; outputs in {out}")
    for f in sorted(out.iterdir()):
        if f.is_file() and not f.name.startswith("."):
            typer.echo(f"  {f.name}")


def register(app: typer.Typer) -> None:
    """Add ``fit`` and ``experiment`` to the ``pasur`` app."""
    app.command("fit")(user_errors(fit_cmd))
    app.command("experiment")(user_errors(experiment_cmd))
