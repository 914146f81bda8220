"""Fitting a model to strategy tables (paper section 3): the rows chosen (held-out decision
points, play weights, the priority sample), XGBoost's training, and the card's measures of the
held-out rows.

Validation reports the RMSE (in the target's units, percentage points of probability), the
*agreement* (the share of held-out decision points where the model's favourite action is one of
the strategy's most likely actions) and, with play weights, the RMSE weighted as play meets the
rows."""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from pasur import __version__
from pasur.common.errors import PasurInputError
from pasur.learn import rows as training_rows
from pasur.learn.files import StrategyModel
from pasur.learn.params import CARD_FORMAT, TARGET_SCALE, TOP_TOLERANCE, ModelParams
from pasur.learn.rows import feature_names, play_row_weights, priority_sample, read_training_table


@dataclass
class _Held:
    """The held-out rows the card measures (of the training tables' held-out decision points, or of
    the validation tables), table by table."""

    x: list = field(default_factory=list)
    y: list = field(default_factory=list)
    group: list = field(default_factory=list)
    deck: list = field(default_factory=list)
    weight: list = field(default_factory=list)
    rows: int = 0  # every held-out row, measured or not

    def add(self, x, y, group, weight=None) -> None:
        self.x.append(x)
        self.y.append(y)
        self.group.append(group)
        self.deck.append(np.full(y.shape[0], len(self.deck)))
        if weight is not None:
            self.weight.append(weight)


def _agreement(pred: np.ndarray, y: np.ndarray, group: np.ndarray) -> float:
    """Share of decision points whose highest prediction is on one of the strategy's top actions."""
    if group.size == 0:
        return float("nan")
    order = np.lexsort((-pred, group))
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    y_sorted = y[order]
    best_y = np.maximum.reduceat(y_sorted, starts)
    return float(np.mean(y_sorted[starts] >= best_y - TOP_TOLERANCE))


def _rmse(pred: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((pred.astype(np.float64) - y) ** 2))) if y.size else float("nan")


def _read_tables(tables: list[Path], validation_tables: list[Path], hold_out: bool) -> tuple[list, list, str]:
    """The training and validation tables, of one tree mode, no validation deck among the training ones."""
    train = [read_training_table(Path(p), groups=hold_out) for p in tables]
    valid = [read_training_table(Path(p)) for p in validation_tables]
    modes = {t.mode for t in train + valid}
    if len(modes) > 1:
        raise PasurInputError(
            "the tables come from different tree modes ("
            + ", ".join(f"{t.path}: {t.mode}" for t in train + valid)
            + "); their score features differ"
        )
    if {t.deck_id for t in train} & {t.deck_id for t in valid}:
        raise PasurInputError("a validation deck is also a training deck; validation decks must be unseen")
    return train, valid, modes.pop()


def _split(train: list, weights_of: dict, params: ModelParams, hold_out: bool, held: _Held) -> tuple[list, list]:
    """Each table's training rows (an index array, or None for all) and their weights; its held-out
    rows go to ``held``. The rows stay in the files: a tail deck's table is GBs."""
    keeps, ws = [], []
    for t in train:
        out = training_rows._split_groups(t.group, params.validation_fraction, params.sample_seed) if hold_out else None
        keeps.append(None if out is None else np.flatnonzero(~out))
        weights = weights_of[Path(t.path)]
        if weights is not None:
            ws.append(weights if out is None else weights[keeps[-1]])
        if out is not None and out.any():
            held.rows += int(out.sum())
            most = training_rows.MAX_MEASURED_ROWS
            shown = training_rows._measured_rows(t.group, out, params.validation_fraction, params.sample_seed, most)
            held.add(t.features(shown), t.y[shown], t.group[shown], None if weights is None else weights[shown])
        t.group = None
    return keeps, ws


def _training_rows(train: list, keeps: list, ws: list, params: ModelParams) -> tuple:
    """Features, targets and weights of the rows trained on: all of them, or ``max_rows`` drawn
    (uniformly, or by priority sampling with play weights); and the number of rows available."""
    sizes = [t.y.shape[0] if k is None else k.shape[0] for t, k in zip(train, keeps, strict=True)]
    available = int(sum(sizes))
    w = (ws[0] if len(ws) == 1 else np.concatenate(ws)) if ws else None
    pick = None  # positions among the training rows of every table, in order
    if params.max_rows is not None and available > params.max_rows:
        rng = np.random.default_rng(params.sample_seed)
        if w is None:
            pick = rng.choice(available, params.max_rows, replace=False)
            pick.sort()
        else:
            pick, w = priority_sample(w, params.max_rows, rng)
    x, y = training_rows._gather_rows(train, keeps, sizes, pick)
    return x, y, w, available


def _train(x: np.ndarray, y: np.ndarray, w: np.ndarray | None, params: ModelParams, device: str) -> tuple:
    """XGBoost's training on the rows chosen; the booster and its RMSE on them."""
    import xgboost as xgb

    dtrain = xgb.DMatrix(x.astype(np.float32), label=y, weight=w, feature_names=feature_names())
    history: dict = {}
    booster = xgb.train(
        params.xgb_params(device),
        dtrain,
        num_boost_round=params.rounds,
        evals=[(dtrain, "train")],
        evals_result=history,
        verbose_eval=False,
    )
    return booster, history["train"]["rmse"][-1]


def _measure(booster, held: _Held, names: list[str]) -> dict:
    """The card's measures of the held-out rows."""
    x = np.concatenate(held.x).astype(np.float32)
    y = np.concatenate(held.y)
    pred = booster.inplace_predict(x)
    group, deck = np.concatenate(held.group), np.concatenate(held.deck)
    out = {
        "rmse": _rmse(pred, y),
        "agreement": _agreement(pred, y, group + (deck.astype(np.int64) << 50)),
        "rows": int(y.shape[0]),
        "held_rows": held.rows,  # all held-out rows; "rows": those measured (MAX_MEASURED_ROWS)
    }
    if held.weight and len(held.weight) == len(held.x):
        # what play meets: the held-out rows weighted as the training rows are
        w = np.concatenate(held.weight).astype(np.float64)
        out["play_weighted_rmse"] = float(np.sqrt(np.sum(w * (pred - y) ** 2) / np.sum(w)))
    out["per_deck"] = {}
    for k, name in enumerate(names):
        mine = deck == k
        if mine.any():
            out["per_deck"][name] = {
                "rmse": _rmse(pred[mine], y[mine]),
                "agreement": _agreement(pred[mine], y[mine], group[mine]),
            }
    return out


def _card(params, device, mode, train, valid, rows_used, available, validation) -> dict:
    import xgboost as xgb

    from pasur.solve.infoset import FEATURE_SETS

    ids = [t.deck_id for t in train]
    return {
        "format": CARD_FORMAT,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "kind": "per-deck" if len(set(ids)) == 1 and not valid else "multi-deck",
        "tree_mode": mode,
        "feature_set": FEATURE_SETS[mode],
        "features": feature_names(),
        "target": f"{TARGET_SCALE:g} * probability",
        "parameters": {**asdict(params), "device": device},
        "training": {
            "tables": [
                {"path": str(t.path), "deck_id": t.deck_id, "deck": t.deck, "rows": int(t.y.shape[0])} for t in train
            ],
            "rows_available": available,
            "rows_used": rows_used,
        },
        "validation_tables": [{"path": str(t.path), "deck_id": t.deck_id, "rows": int(t.y.shape[0])} for t in valid],
        "validation": validation,
        "versions": {"pasur": __version__, "xgboost": xgb.__version__},
    }


def fit_model(
    tables: list[Path],
    params: ModelParams | None = None,
    device: str | torch.device = "cpu",
    validation_tables: list[Path] | None = None,
    trees: dict | None = None,
    strategies: dict | None = None,
) -> StrategyModel:
    """Fit a model to the strategy ``tables``. Without ``validation_tables`` a seeded share of
    decision points is held out of each table; with them, the model trains on every row of
    ``tables`` and is judged on the unseen decks. ``trees``: a table's game tree by its path, when
    the caller holds it (play weights then need no second tree); ``strategies``: likewise the
    strategy a table was written from (play weights then need not read the table back)."""
    import xgboost as xgb

    params = (params or ModelParams()).check()
    # XGBoost trains where its build can: xgboost-cpu (the project's dependency) has no CUDA, so
    # a fit asked for on a GPU (a sweep's --device cuda) trains on the CPU, and the card says so
    device = str(device) if str(device).startswith("cuda") and xgb.build_info().get("USE_CUDA") else "cpu"
    if not tables:
        raise PasurInputError("no strategy tables to fit")
    # play weights first: they read the table (and may build its tree) on their own, and a tail
    # deck's weights and training rows together would not fit where either alone does
    weights_of: dict[Path, np.ndarray | None] = {}
    for p in map(Path, tables):
        training_rows._table_schema(p)
        tree, strategy = (trees or {}).get(p), (strategies or {}).get(p)
        weights_of[p] = play_row_weights(p, tree, strategy) if params.row_weights == "play" else None
    hold_out = not validation_tables and params.validation_fraction > 0  # rows of the tables held out
    train, valid, mode = _read_tables(tables, validation_tables or [], hold_out)
    held = _Held()
    keeps, ws = _split(train, weights_of, params, hold_out, held)
    for t in valid:
        held.add(t.features(), t.y, t.group)
        held.rows += int(t.y.shape[0])
    x, y, w, available = _training_rows(train, keeps, ws, params)
    booster, train_rmse = _train(x, y, w, params, device)
    validation: dict = {"train_rmse": train_rmse, "rmse": None}
    if held.x:
        names = [t.deck_id for t in (valid or train)]
        validation.update(_measure(booster, held, names))
    if hold_out and params.refit and held.rows:
        # the measures above are of a fit without the held-out decision points; the model kept is
        # fitted again on every row, so that play meets no decision the model never saw
        del x, y, w
        every = [weights_of[Path(t.path)] for t in train if weights_of[Path(t.path)] is not None]
        x, y, w, available = _training_rows(train, [None] * len(train), every, params)
        booster, validation["train_rmse"] = _train(x, y, w, params, device)
        validation["measured_before_refit"] = True
    return StrategyModel(booster, _card(params, device, mode, train, valid, int(y.shape[0]), available, validation))
