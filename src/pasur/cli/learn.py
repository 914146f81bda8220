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
    max_depth: Annotated[int, typer.Option("--max-depth", min=1, max=32, help="Depth of each boosted tree.")] = 6,
    learning_rate: Annotated[float, typer.Option("--learning-rate", help="XGBoost's eta, in (0, 1].")] = 0.3,
    rounds: Annotated[int, typer.Option("--rounds", min=1, max=100_000, help="Boosting rounds.")] = 100,
    min_split_loss: Annotated[
        float,
        typer.Option(
            "--min-split-loss", min=0, help="XGBoost's gamma: minimum loss reduction of a split (the paper: 1)."
        ),
    ] = 1.0,
    validation_fraction: Annotated[
        float, typer.Option("--validation-fraction", help="Share of decision points held out (without --validate-on).")
    ] = 0.1,
    max_rows: Annotated[
        int | None, typer.Option("--max-rows", min=1, help="Train on a seeded sample of this many rows.")
    ] = None,
    sample_seed: SampleSeedOpt = 0,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Fit an XGBoost model of 100 × the strategy probability on the 58 infoset features, from
    one deck's table (the paper) or many (judged on unseen decks with --validate-on)."""
    from pasur.learn.models import ModelParams, check_model_path, fit_model, save_model

    dev = resolve_device(device or "cpu")
    check_model_path(out, overwrite=overwrite)  # before the training, not after
    params = ModelParams(
        max_depth=max_depth,
        learning_rate=learning_rate,
        rounds=rounds,
        min_split_loss=min_split_loss,
        validation_fraction=validation_fraction,
        max_rows=max_rows,
        sample_seed=sample_seed,
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
