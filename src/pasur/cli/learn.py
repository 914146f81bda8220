"""``pasur fit``: XGBoost models of solved strategies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pasur.cli import app
from pasur.cli.common import DeviceOpt, JsonOpt, OverwriteOpt, SampleSeedOpt, command, err
from pasur.common.device import resolve_device


@command(app)
def fit(
    tables: Annotated[list[Path], typer.Argument(help="Strategy tables (strategy.parquet) to train on.")],
    out: Annotated[Path, typer.Option("--out", help="Model file to write: .ubj or .json (XGBoost's formats).")],
    validate_on: Annotated[
        list[Path] | None,
        typer.Option("--validate-on", help="Tables of unseen decks to judge the model on (repeatable)."),
    ] = None,
    max_depth: Annotated[
        int | None, typer.Option("--max-depth", min=1, max=32, help="Depth of each boosted tree (default 16).")
    ] = None,
    learning_rate: Annotated[
        float | None, typer.Option("--learning-rate", help="XGBoost's eta, in (0, 1] (default 0.1).")
    ] = None,
    rounds: Annotated[
        int | None, typer.Option("--rounds", min=1, max=100_000, help="Boosting rounds (default 700).")
    ] = None,
    min_split_loss: Annotated[
        float | None,
        typer.Option(
            "--min-split-loss",
            min=0,
            help="XGBoost's gamma: minimum loss reduction of a split (default 1, the paper's).",
        ),
    ] = None,
    reg_lambda: Annotated[
        float | None, typer.Option("--reg-lambda", min=0, help="XGBoost's lambda: L2 weight penalty (default 0).")
    ] = None,
    validation_fraction: Annotated[
        float, typer.Option("--validation-fraction", help="Share of decision points held out (without --validate-on).")
    ] = 0.1,
    max_rows: Annotated[
        int | None, typer.Option("--max-rows", min=1, help="Train on a seeded sample of this many rows.")
    ] = None,
    row_weights: Annotated[
        str,
        typer.Option(
            "--row-weights",
            help=(
                "uniform (the paper: every table row alike) or play: each row weighted by how often play "
                "reaches its decision (against random, either seat, and against itself)."
            ),
        ),
    ] = "uniform",
    sample_seed: SampleSeedOpt = 0,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Fit an XGBoost model of 100 × the strategy probability on the 58 infoset features, from
    one deck's table (the paper) or many (judged on unseen decks with --validate-on). The defaults
    are the paper's authors' (RMSE, gamma 1, depth 16, eta 0.1, lambda 0, 700 rounds)."""
    from pasur.learn.models import ModelParams, check_model_path, fit_model, save_model

    dev = resolve_device(device or "cpu")
    check_model_path(out, overwrite=overwrite)  # before the training, not after
    # the model's settings default to ModelParams' (the paper's authors' values): only those given here change
    given = {
        "max_depth": max_depth,
        "learning_rate": learning_rate,
        "rounds": rounds,
        "min_split_loss": min_split_loss,
        "reg_lambda": reg_lambda,
    }
    params = ModelParams(
        **{k: v for k, v in given.items() if v is not None},
        validation_fraction=validation_fraction,
        max_rows=max_rows,
        sample_seed=sample_seed,
        row_weights=row_weights,
    ).check()
    with err.status(f"fitting on {len(tables)} table(s)"):
        model = fit_model(tables, params, device=str(dev), validation_tables=validate_on)
    card = save_model(model, out, overwrite=overwrite)
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
