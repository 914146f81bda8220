"""``pasur fit``: XGBoost models of solved strategies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pasur.cli import app
from pasur.cli.common import DeviceOpt, JsonOpt, OverwriteOpt, SampleSeedOpt, command, err, note

_ValidateOnOpt = Annotated[
    list[Path] | None,
    typer.Option("--validate-on", help="Tables of unseen decks to judge the model on (repeatable)."),
]

_MaxDepthOpt = Annotated[
    int | None, typer.Option("--max-depth", min=1, max=32, help="Depth of each boosted tree (default 16).")
]

_LearningRateOpt = Annotated[
    float | None,
    typer.Option("--learning-rate", help="XGBoost's eta, in (0, 1] (default 0.3; the paper's authors' 0.1)."),
]

_RoundsOpt = Annotated[
    int | None,
    typer.Option("--rounds", min=1, max=100_000, help="Boosting rounds (default 200; the paper's authors' 700)."),
]

_MinSplitLossOpt = Annotated[
    float | None,
    typer.Option(
        "--min-split-loss",
        min=0,
        help="XGBoost's gamma: minimum loss reduction of a split (default 1, the paper's).",
    ),
]

_RegLambdaOpt = Annotated[
    float | None, typer.Option("--reg-lambda", min=0, help="XGBoost's lambda: L2 weight penalty (default 0).")
]

_ValidationFractionOpt = Annotated[
    float | None,
    typer.Option(
        "--validation-fraction",
        help="Share of decision points held out to measure the model (without --validate-on; default 0.1).",
    ),
]

_MaxRowsOpt = Annotated[
    int | None,
    typer.Option("--max-rows", min=1, help="Train on a seeded sample of at most this many rows (default 5,000,000)."),
]

_RowWeightsOpt = Annotated[
    str | None,
    typer.Option(
        "--row-weights",
        help=(
            "play (the default): each row weighted by how often play reaches its decision (against random, "
            "either seat, and against itself); or uniform (the paper: every table row alike)."
        ),
    ),
]

_CheckGamesOpt = Annotated[
    int,
    typer.Option(
        "--check-games",
        min=0,
        max=1_000_000,
        help=(
            "Games a matchup of the play check: table and model each against random, both seats, on the "
            "table's deck (with --validate-on, on each unseen deck); 0 skips it."
        ),
    ),
]


@command(app)
def fit(
    tables: Annotated[list[Path], typer.Argument(help="Strategy tables (strategy.parquet) to train on.")],
    out: Annotated[Path, typer.Option("--out", help="Model file to write: .ubj or .json (XGBoost's formats).")],
    validate_on: _ValidateOnOpt = None,
    max_depth: _MaxDepthOpt = None,
    learning_rate: _LearningRateOpt = None,
    rounds: _RoundsOpt = None,
    min_split_loss: _MinSplitLossOpt = None,
    reg_lambda: _RegLambdaOpt = None,
    validation_fraction: _ValidationFractionOpt = None,
    max_rows: _MaxRowsOpt = None,
    row_weights: _RowWeightsOpt = None,
    check_games: _CheckGamesOpt = 1000,
    sample_seed: SampleSeedOpt = 0,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Fit an XGBoost model of 100 × the strategy probability on the 58 features of a strategy table,
    from one deck's table (the paper) or many (judged on unseen decks with --validate-on), then
    check it in play against its table. The defaults are those the registered 100-deck run showed
    keep the table's strength (docs/experiments.md): play-weighted rows, depth 16, eta 0.3, 200
    rounds, lambda 0, gamma 1; the paper's authors' were eta 0.1, 700 rounds, uniform rows."""
    from pasur.common.device import resolve_device
    from pasur.learn.check import check_verdict
    from pasur.learn.models import ModelParams, check_model_path, save_model

    dev = resolve_device(device or "cpu")
    check_model_path(out, overwrite=overwrite)  # before the training, not after
    # the model's settings default to ModelParams' (those the registered run showed work): only those given change
    given = {
        "max_depth": max_depth,
        "learning_rate": learning_rate,
        "rounds": rounds,
        "min_split_loss": min_split_loss,
        "reg_lambda": reg_lambda,
        "validation_fraction": validation_fraction,
        "row_weights": row_weights,
        "max_rows": max_rows,
    }
    params = ModelParams(**{k: v for k, v in given.items() if v is not None}, sample_seed=sample_seed).check()
    with err.status(f"fitting on {len(tables)} table(s)"):
        model, checks = _fit_and_check(tables, validate_on or [], params, str(dev), check_games, sample_seed)
    card = save_model(model, out, overwrite=overwrite)
    if as_json:
        typer.echo(json.dumps({"model": str(out), "card": str(card), **model.card}, indent=1))
    else:
        _print_fit(model, out, card)
    for c in checks:
        verdict = check_verdict(c)
        if verdict:
            note(f"{c['table']}: {verdict}")


def _fit_and_check(tables, validate_on, params, device: str, games: int, seed: int) -> tuple:
    """The fit, then the play check on the training table (one deck) or on each unseen deck; the
    checks go into the model's card (``play_check``)."""
    from pasur.learn.check import check_table
    from pasur.learn.models import fit_model
    from pasur.learn.rows import check_tables, table_tree

    checked = set(tables) if params.row_weights == "play" else set()
    if games:
        checked |= set(validate_on or (tables if len(tables) == 1 else []))
    check_tables(tables, validate_on, checked)  # what the fit would refuse late, before any work
    held = {}  # a per-deck fit's table: its tree and strategy, built once for weights and check
    if len(tables) == 1 and not validate_on and (games or params.row_weights == "play"):
        _, tree, strategy = table_tree(tables[0])
        held = {"trees": {tables[0]: tree}, "strategies": {tables[0]: strategy}}
    model = fit_model(tables, params, device=device, validation_tables=validate_on, **held)
    checks = []
    if games:
        targets = validate_on or (tables if len(tables) == 1 else [])
        for path in targets:
            tree = held.get("trees", {}).get(path)
            strategy = held.get("strategies", {}).get(path)
            checks.append(check_table(model, path, games, seed, tree, strategy))
        model.card["play_check"] = checks
    return model, checks


def _print_fit(model, out: Path, card: Path) -> None:
    v = model.card["validation"]
    typer.echo(f"model {out} (card {card.name}): {model.card['kind']}, {model.card['tree_mode']} tree features")
    typer.echo(f"trained on {model.card['training']['rows_used']:,} rows; train RMSE {v['train_rmse']:.3f}")
    if v.get("rmse") is not None:
        weighted = f", play-weighted RMSE {v['play_weighted_rmse']:.3f}" if "play_weighted_rmse" in v else ""
        typer.echo(
            f"validation ({v['rows']:,} rows): RMSE {v['rmse']:.3f} (of 100 × probability){weighted}, "
            f"top-action agreement {v['agreement']:.1%}"
        )
    for c in model.card.get("play_check", []):
        gaps = ", ".join(f"as {s} table {g['table']:+.2f}, model {g['model']:+.2f}" for s, g in c["seats"].items())
        typer.echo(
            f"in play against random ({c['games']:,} games a matchup, {c['table']}): {gaps}; "
            f"the table's favourite on {c['play_agreement']:.1%} of {c['play_decisions']:,} decisions"
        )
