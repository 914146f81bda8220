"""XGBoost models of solved strategies (paper section 3): a regressor of 100 × the strategy
probability on the 58 infoset features, RMSE objective, ``gamma = 1``.

Two kinds, one code path: a model per deck (the paper: trained on one deck's table, validated
on held-out decision points of it) and a model across decks (the paper's future work: trained
on the tables of many decks, validated on decks it never saw). A model is saved in XGBoost's
own format (``.ubj`` or ``.json``) next to a JSON card (``<name>.card.json``) that records its
training data, parameters, validation errors, the tree mode whose features it reads, and the
model file's SHA-256, so a truncated or swapped file is refused by name.

Validation reports the RMSE (in the target's units, percentage points of probability) and the
*agreement*: the share of held-out decision points where the model's favourite action is one
of the strategy's most likely actions.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from pasur import __version__
from pasur.common.errors import PasurInputError
from pasur.common.outputs import atomic_path, check_output_file, os_errors_as_input_errors, write_text_atomic

CARD_FORMAT = "pasur-model/1"
TARGET_SCALE = 100.0
MODEL_SUFFIXES = (".ubj", ".json")


@dataclass(frozen=True)
class ModelParams:
    """Training settings. The paper names RMSE and XGBoost's ``gamma = 1`` (here
    ``min_split_loss``, XGBoost's other name for it, so that "gamma" means only DCFR's exponent);
    its authors' per-deck training script (``singleXGBoost2.py`` in sinabaghal/Pasur) also sets
    ``max_depth 16``, ``eta 0.1``, ``lambda 0`` and 700 rounds, the defaults here. XGBoost's own
    defaults (depth 6, eta 0.3, lambda 1, 100 rounds here) underfit a strategy table: the decisions
    self-play reaches are a sliver of the table's rows, most of which are late, one-action or
    trivial, so a model can agree with 99 % of held-out rows and still lose half the table's
    strength in play (docs/experiments.md, "Figure 14"). ``sample_seed`` seeds the held-out split
    and the row sample."""

    max_depth: int = 16
    learning_rate: float = 0.1
    rounds: int = 700
    min_split_loss: float = 1.0
    reg_lambda: float = 0.0
    tree_method: str = "hist"
    validation_fraction: float = 0.1
    max_rows: int | None = None
    sample_seed: int = 0
    threads: int = 0
    #: ``uniform`` (the paper: every table row alike) or ``play``: each row weighted by how often
    #: play reaches its decision (:func:`play_row_weights`)
    row_weights: str = "uniform"

    def check(self) -> ModelParams:
        if not 1 <= self.max_depth <= 32:
            raise PasurInputError(f"--max-depth must be in 1..32, got {self.max_depth}")
        if not 0 < self.learning_rate <= 1:
            raise PasurInputError(f"--learning-rate must be in (0, 1], got {self.learning_rate}")
        if self.rounds < 1:
            raise PasurInputError(f"--rounds must be positive, got {self.rounds}")
        if self.min_split_loss < 0:
            raise PasurInputError(f"--min-split-loss must be zero or positive, got {self.min_split_loss}")
        if not (self.reg_lambda >= 0 and math.isfinite(self.reg_lambda)):
            raise PasurInputError(f"--reg-lambda must be zero or positive, got {self.reg_lambda}")
        if self.tree_method not in ("hist", "approx", "exact"):
            raise PasurInputError(f"unknown tree method {self.tree_method!r} (hist, approx or exact)")
        if not 0 <= self.validation_fraction < 1:
            raise PasurInputError(f"--validation-fraction must be in [0, 1), got {self.validation_fraction}")
        if self.max_rows is not None and self.max_rows < 1:
            raise PasurInputError(f"--max-rows must be positive, got {self.max_rows}")
        if self.threads < 0:
            raise PasurInputError(f"--threads must be zero (all) or positive, got {self.threads}")
        if self.row_weights not in ROW_WEIGHTS:
            raise PasurInputError(f"unknown row weights {self.row_weights!r} (choose from {', '.join(ROW_WEIGHTS)})")
        return self

    @classmethod
    def from_dict(cls, d: dict) -> ModelParams:
        """From JSON-like settings; an unknown name is refused by name."""
        known = set(cls.__dataclass_fields__)
        for k in d:
            if k not in known:
                raise PasurInputError(f"unknown model parameter {k!r} (known: {', '.join(sorted(known))})")
        return cls(**d).check()

    def xgb_params(self, device: str) -> dict:
        return {
            "objective": "reg:squarederror",
            "eval_metric": "rmse",
            "gamma": self.min_split_loss,
            "lambda": self.reg_lambda,
            "max_depth": self.max_depth,
            "eta": self.learning_rate,
            "tree_method": self.tree_method,
            "device": "cuda" if device.startswith("cuda") else "cpu",
            "seed": self.sample_seed,
            **({"nthread": self.threads} if self.threads else {}),
        }


@dataclass
class StrategyModel:
    """A fitted (or loaded) booster and its card."""

    booster: object  # xgboost.Booster
    card: dict

    @property
    def tree_mode(self) -> str:
        return self.card["tree_mode"]

    def predict(self, features: torch.Tensor | np.ndarray) -> np.ndarray:
        """Predicted 100 × probability for rows of 58 features (not clipped)."""
        x = features.cpu().numpy() if isinstance(features, torch.Tensor) else features
        return self.booster.inplace_predict(np.ascontiguousarray(x, dtype=np.float32))


# -- training data -----------------------------------------------------------------------
#: how training rows are weighted (:attr:`ModelParams.row_weights`)
ROW_WEIGHTS = ("uniform", "play")
#: with ``play`` weights, a row play never reaches still weighs this much (the mean row weighs 1)
PLAY_WEIGHT_FLOOR = 0.01
#: rows per slice where the fit turns a table-long array into another (play weights, the priority
#: sample): a tail deck's table has 300 M rows, and each full-length temporary GBs
WEIGHT_SLICE = 1 << 24


def play_row_weights(path: Path, tree=None, strategy=None) -> np.ndarray:
    """Per row of a whole-game strategy table (in file order): the reach of its decision, averaged
    over the matchups its model plays (against the random agent, as either player, and against
    itself; :func:`pasur.play.reach.edge_play_weights`), scaled so that the mean row weighs 1,
    plus :data:`PLAY_WEIGHT_FLOOR`. Builds the table's tree from the deck it names, unless the
    caller has it (``tree``: the same deck and tree mode; a sweep's, which saves a second tree of
    the tail's decks in memory); reads the table's strategy, unless the caller has it
    (``strategy``: the one the table was written from, on ``tree``)."""
    import pyarrow.parquet as pq

    from pasur.game.cards import parse_deck
    from pasur.game.state import GameState
    from pasur.play.reach import iter_edge_play_weights
    from pasur.solve.strategy_io import read_strategy_table
    from pasur.solve.tree import build_tree

    meta = pq.read_schema(path).metadata or {}
    if meta.get(b"pasur.start", b"").decode() != "0.0":
        raise PasurInputError(f"{path}: play weights need the table of a whole game (this one starts mid-game)")
    deck = parse_deck(meta.get(b"pasur.deck", b"").decode())
    if tree is None:
        tree = build_tree(GameState.initial(deck), meta[b"pasur.tree"].decode(), infosets=False)
    elif tree.mode != meta[b"pasur.tree"].decode() or tree.start != GameState.initial(deck):
        raise PasurInputError(f"{path}: the tree given is not this table's deck and tree mode")
    if strategy is None:
        strategy = read_strategy_table(path, tree)
    # one float64 array of the rows' weights, filled a layer at a time; the float32 weights made
    # from it a slice at a time
    w = np.empty(tree.n_edges, dtype=np.float64)
    lo = 0
    for layer in iter_edge_play_weights(tree, strategy):
        w[lo : lo + layer.shape[0]] = layer.cpu().numpy()
        lo += layer.shape[0]
    mean = w.mean()
    out = np.empty(w.shape[0], dtype=np.float32)
    for a in range(0, w.shape[0], WEIGHT_SLICE):
        out[a : a + WEIGHT_SLICE] = w[a : a + WEIGHT_SLICE] / mean + PLAY_WEIGHT_FLOOR
    return out


def priority_sample(weights: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``k`` of the rows, sorted, and their new weights, by priority sampling (Duffield, Lund and
    Thorup, 2007): row ``i`` has priority ``w_i / u_i`` (``u_i`` uniform in (0, 1]), the ``k``
    highest are kept, each weighing ``max(w_i, tau)`` where ``tau`` is the ``k+1``-th priority.
    Every weighted sum over the sample is then an unbiased estimate of the sum over all rows, and
    the rows play meets often are all kept: a large table's sample keeps what its model plays."""
    n = weights.shape[0]
    if k >= n:
        return np.arange(n), weights
    # the k+1 highest priorities, kept across slices of the rows (the same random numbers, in the
    # same order, as one draw of n): a tail deck's priorities alone would take GBs
    best_p, best_i = np.empty(0), np.empty(0, dtype=np.int64)
    for lo in range(0, n, WEIGHT_SLICE):
        u = rng.random(min(WEIGHT_SLICE, n - lo))
        cand_p = np.concatenate([best_p, weights[lo : lo + u.shape[0]] / (1.0 - u)])
        cand_i = np.concatenate([best_i, np.arange(lo, lo + u.shape[0])])
        if cand_p.shape[0] > k + 1:
            keep = np.argpartition(-cand_p, k)[: k + 1]
            cand_p, cand_i = cand_p[keep], cand_i[keep]
        best_p, best_i = cand_p, cand_i
    order = np.argsort(-best_p, kind="stable")
    tau = best_p[order[k]]
    pick = np.sort(best_i[order[:k]])
    return pick, np.maximum(weights[pick], tau).astype(weights.dtype)


@dataclass
class _Table:
    """A strategy table's targets and decision points in memory; its 58 feature columns stay in
    the file until :meth:`features` reads the rows asked for (a tail deck's table has 100 M rows
    and more, of which a fit uses a few million)."""

    path: Path
    deck_id: str
    mode: str
    y: np.ndarray  # [n] float32, 100 * probability
    group: np.ndarray | None  # [n] int64: decision point (round, ply, node) within the table

    def features(self, rows: np.ndarray | None = None) -> np.ndarray:
        """``[len(rows), 58]`` int8 as stored (every row when ``rows`` is None; a boolean mask or
        sorted indices), read a column at a time."""
        import pyarrow.parquet as pq

        from pasur.solve.strategy_io import FEATURE_COLUMNS

        pf = pq.ParquetFile(self.path)
        n = self.y.shape[0] if rows is None else (int(rows.sum()) if rows.dtype == bool else rows.shape[0])
        x = np.empty((n, len(FEATURE_COLUMNS)), dtype=np.int8)
        for i, c in enumerate(FEATURE_COLUMNS):
            col = pf.read(columns=[c]).column(c).to_numpy()
            x[:, i] = col if rows is None else col[rows]
        return x


def _table_schema(path: Path):
    """The Parquet schema of a pasur strategy table; refuses anything else in one line."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pasur.solve.strategy_io import FEATURE_COLUMNS

    if not path.exists():
        raise PasurInputError(f"strategy table not found: {path}")
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as e:
        raise PasurInputError(f"{path}: not a readable Parquet strategy table ({e})") from None
    missing = [c for c in (*FEATURE_COLUMNS, "probability", "node", "deck_id") if c not in schema.names]
    if missing:
        raise PasurInputError(f"{path}: not a pasur strategy table (no column {missing[0]!r})")
    return schema


def read_training_table(path: Path, groups: bool = True) -> _Table:
    """One strategy table as training data; refuses files that are not pasur strategy tables.
    ``groups``: also each row's decision point (8 bytes a row), which only held-out rows and
    their measures need."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pasur.solve.strategy_io import FEATURE_COLUMNS

    schema = _table_schema(path)
    meta = schema.metadata or {}
    mode = meta.get(b"pasur.tree", b"").decode()
    if mode not in ("paper", "compact"):
        raise PasurInputError(f"{path}: not a pasur strategy table (no tree mode in its metadata)")
    try:
        pf = pq.ParquetFile(path)
        if pf.metadata.num_rows == 0:
            raise PasurInputError(f"{path}: the strategy table is empty")
        # a column at a time, only those used: a tail deck's table has 300 M rows
        deck_id = str(pf.read_row_group(0, columns=["deck_id"]).column(0)[0])
        y = pf.read(columns=["probability"]).column(0).to_numpy().astype(np.float32)
        y *= TARGET_SCALE
        group = None
        if groups:
            # the features stay in the file (int8 there) until the training rows are chosen
            col = lambda i: pf.read(columns=[FEATURE_COLUMNS[i]]).column(0).to_numpy().astype(np.int64)  # noqa: E731
            node = pf.read(columns=["node"]).column(0).to_numpy().astype(np.int64)
            ply = 2 * col(56) + col(57)
            group = (col(55) * 8 + ply) << 40 | node
    except (pa.ArrowInvalid, OSError) as e:
        raise PasurInputError(f"{path}: not a readable Parquet strategy table ({e})") from None
    return _Table(path, deck_id, mode, y, group)


def _gather_rows(train: list, keeps: list, sizes: list[int], pick: np.ndarray | None) -> tuple:
    """The training rows (features int8, targets) of every table in order, or those at positions
    ``pick`` (sorted) among them: each table's rows are copied once, only the rows chosen."""
    xs, ys = [], []
    lo = 0
    for t, keep, n in zip(train, keeps, sizes, strict=True):
        if pick is None:
            rows = keep
        else:
            mine = pick[(pick >= lo) & (pick < lo + n)] - lo
            rows = mine if keep is None else keep[mine]
        xs.append(t.features(rows))
        ys.append(t.y if rows is None else t.y[rows])
        lo += n
    if len(xs) == 1:
        return xs[0], ys[0]
    return np.concatenate(xs), np.concatenate(ys)


def _split_groups(group: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """True for rows whose decision point is held out (a seeded hash, so siblings stay together)."""
    if fraction == 0:
        return np.zeros(group.shape[0], dtype=bool)
    return _group_hash(group, seed) < np.uint64(int(fraction * 1_000_000))


def _group_hash(group: np.ndarray, seed: int) -> np.ndarray:
    """Each row's decision point hashed to 0..999,999 (seeded)."""
    h = (group.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(seed * 7919 + 1)) >> np.uint64(40)
    return h % np.uint64(1_000_000)


#: held-out rows measured per table, at most about this many: the held-out tenth of a tail deck's
#: table (12 to 15 M rows) would take GBs as float features and an XGBoost matrix, and only the
#: card's measurement reads them (the model does not depend on them)
MAX_MEASURED_ROWS = 2_000_000


def _measured_rows(group: np.ndarray, held: np.ndarray, fraction: float, seed: int, most: int) -> np.ndarray:
    """The held-out rows the card measures: all of them, or where there are more than ``most``, the
    decision points of the lowest hashes among them (a nested split by the same hash, so siblings
    stay together and a smaller share is a subset of a larger one)."""
    n = int(held.sum())
    if n <= most:
        return held
    return _group_hash(group, seed) < np.uint64(int(fraction * most / n * 1_000_000))


def _agreement(pred: np.ndarray, y: np.ndarray, group: np.ndarray) -> float:
    """Share of decision points whose highest prediction is on one of the strategy's top actions."""
    if group.size == 0:
        return float("nan")
    order = np.lexsort((-pred, group))
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    y_sorted = y[order]
    best_y = np.maximum.reduceat(y_sorted, starts)
    return float(np.mean(y_sorted[starts] >= best_y - 1e-3))


def _rmse(pred: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((pred.astype(np.float64) - y) ** 2))) if y.size else float("nan")


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
        _table_schema(p)
        tree, strategy = (trees or {}).get(p), (strategies or {}).get(p)
        weights_of[p] = play_row_weights(p, tree, strategy) if params.row_weights == "play" else None
    hold_out = not validation_tables and params.validation_fraction > 0  # rows of the tables held out
    train = [read_training_table(Path(p), groups=hold_out) for p in tables]
    valid = [read_training_table(Path(p)) for p in (validation_tables or [])]
    modes = {t.mode for t in train + valid}
    if len(modes) > 1:
        raise PasurInputError(
            "the tables come from different tree modes ("
            + ", ".join(f"{t.path}: {t.mode}" for t in train + valid)
            + "); their score features differ"
        )
    ids = [t.deck_id for t in train]
    if set(ids) & {t.deck_id for t in valid}:
        raise PasurInputError("a validation deck is also a training deck; validation decks must be unseen")
    # the training rows of each table stay where they are (index arrays, not copies) until the
    # rows to train on are chosen: a tail deck's table is GBs, and only max_rows of it are used
    keeps, ws, vx, vy, vg, vdeck, vw = [], [], [], [], [], [], []
    held_rows = 0
    for t in train:
        held = _split_groups(t.group, params.validation_fraction, params.sample_seed) if hold_out else None
        keeps.append(None if held is None else np.flatnonzero(~held))
        weights = weights_of[Path(t.path)]
        if weights is not None:
            ws.append(weights if held is None else weights[keeps[-1]])
        if held is not None and held.any():
            held_rows += int(held.sum())
            shown = _measured_rows(t.group, held, params.validation_fraction, params.sample_seed, MAX_MEASURED_ROWS)
            vx.append(t.features(shown))
            vy.append(t.y[shown])
            vg.append(t.group[shown])
            vdeck.append(np.full(int(shown.sum()), len(vdeck)))
            if weights is not None:
                vw.append(weights[shown])
        t.group = None
    for t in valid:
        vx.append(t.features())
        vy.append(t.y)
        vg.append(t.group)
        vdeck.append(np.full(t.y.shape[0], len(vdeck)))
        held_rows += int(t.y.shape[0])
    sizes = [t.y.shape[0] if k is None else k.shape[0] for t, k in zip(train, keeps, strict=True)]
    rows_available = int(sum(sizes))
    w = (ws[0] if len(ws) == 1 else np.concatenate(ws)) if ws else None
    pick = None  # positions among the training rows of every table, in order
    if params.max_rows is not None and rows_available > params.max_rows:
        rng = np.random.default_rng(params.sample_seed)
        if w is None:
            pick = rng.choice(rows_available, params.max_rows, replace=False)
            pick.sort()
        else:
            pick, w = priority_sample(w, params.max_rows, rng)
    x, y = _gather_rows(train, keeps, sizes, pick)
    dtrain = xgb.DMatrix(x.astype(np.float32), label=y, weight=w, feature_names=_feature_names())
    del x
    evals = [(dtrain, "train")]
    dval = None
    if vx:
        x_val, y_val = np.concatenate(vx).astype(np.float32), np.concatenate(vy)
        dval = xgb.DMatrix(x_val, label=y_val, feature_names=_feature_names())
        evals.append((dval, "validation"))
    history: dict = {}
    booster = xgb.train(
        params.xgb_params(device),
        dtrain,
        num_boost_round=params.rounds,
        evals=evals,
        evals_result=history,
        verbose_eval=False,
    )
    validation: dict = {"train_rmse": history["train"]["rmse"][-1]}
    if dval is not None:
        pred = booster.inplace_predict(x_val)
        g_val, d_val = np.concatenate(vg), np.concatenate(vdeck)
        validation["rmse"] = _rmse(pred, y_val)
        validation["agreement"] = _agreement(pred, y_val, g_val + (d_val.astype(np.int64) << 50))
        validation["rows"] = int(y_val.shape[0])
        validation["held_rows"] = held_rows  # all held-out rows; "rows": those measured (MAX_MEASURED_ROWS)
        if vw and len(vw) == len(vx):
            # what play meets: the held-out rows weighted as the training rows are
            w_val = np.concatenate(vw).astype(np.float64)
            validation["play_weighted_rmse"] = float(np.sqrt(np.sum(w_val * (pred - y_val) ** 2) / np.sum(w_val)))
        names = [t.deck_id for t in train] if not valid else [t.deck_id for t in valid]
        validation["per_deck"] = {
            names[k]: {
                "rmse": _rmse(pred[d_val == k], y_val[d_val == k]),
                "agreement": _agreement(pred[d_val == k], y_val[d_val == k], g_val[d_val == k]),
            }
            for k in range(len(names))
            if (d_val == k).any()
        }
    else:
        validation["rmse"] = None
    card = {
        "format": CARD_FORMAT,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "kind": "per-deck" if len(set(ids)) == 1 and not valid else "multi-deck",
        "tree_mode": modes.pop(),
        "features": _feature_names(),
        "target": f"{TARGET_SCALE:g} * probability",
        "parameters": {**asdict(params), "device": device},
        "training": {
            "tables": [{"path": str(t.path), "deck_id": t.deck_id, "rows": int(t.y.shape[0])} for t in train],
            "rows_available": rows_available,
            "rows_used": int(y.shape[0]),
        },
        "validation_tables": [{"path": str(t.path), "deck_id": t.deck_id, "rows": int(t.y.shape[0])} for t in valid],
        "validation": validation,
        "versions": {"pasur": __version__, "xgboost": xgb.__version__},
    }
    return StrategyModel(booster, card)


def _feature_names() -> list[str]:
    from pasur.solve.strategy_io import FEATURE_COLUMNS

    return list(FEATURE_COLUMNS)


# -- files ----------------------------------------------------------------------------------
def card_path(path: Path) -> Path:
    """``model.ubj`` -> ``model.card.json``."""
    return path.with_name(path.stem + ".card.json")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_model_path(path: Path, *, overwrite: bool = False) -> Path:
    """A model file name XGBoost can write (its format follows the suffix), in a place that can
    be written, not replacing a model (or its card) without ``overwrite``. Checked before training."""
    if path.suffix not in MODEL_SUFFIXES:
        raise PasurInputError(f"{path}: a model file name ends in .ubj or .json (XGBoost's formats)")
    check_output_file(path, overwrite=overwrite)
    check_output_file(card_path(path), overwrite=overwrite, option="--out (its card)")
    return path


def save_model(model: StrategyModel, path: str | Path, *, overwrite: bool = True) -> Path:
    """Write the model (XGBoost's format, chosen by the suffix) and its card, each through a
    temporary name and a rename, with the user's umask; returns the card's path."""
    path = check_model_path(Path(path), overwrite=overwrite)
    cpath = card_path(path)
    with atomic_path(path) as tmp:
        with os_errors_as_input_errors(path):
            model.booster.save_model(str(tmp))
        card = {**model.card, "model_file": path.name, "model_sha256": _sha256(tmp)}
        write_text_atomic(cpath, json.dumps(card, indent=1) + "\n")
    model.card = card
    return cpath


def load_model(path: str | Path) -> StrategyModel:
    """A saved model; refuses a missing, truncated, swapped or incompatible file by name."""
    import xgboost as xgb

    path = Path(path)
    if not path.exists():
        raise PasurInputError(f"model file not found: {path}")
    cpath = card_path(path)
    if not cpath.exists():
        raise PasurInputError(f"{path}: its card {cpath.name} is missing (a model needs the card it was saved with)")
    try:
        card = json.loads(cpath.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise PasurInputError(f"{cpath}: not a readable model card ({e})") from None
    if not isinstance(card, dict) or card.get("format") != CARD_FORMAT:
        got = card.get("format") if isinstance(card, dict) else type(card).__name__
        raise PasurInputError(f"{cpath}: not a pasur model card (format {got!r}, expected {CARD_FORMAT})")
    if card.get("features") != _feature_names():
        raise PasurInputError(f"{path}: incompatible model: its features are not this version's 58 infoset features")
    if card.get("tree_mode") not in ("paper", "compact"):
        raise PasurInputError(f"{cpath}: the card names no tree mode")
    if card.get("model_sha256") != _sha256(path):
        raise PasurInputError(f"{path}: the file does not match its card (truncated or replaced since it was saved)")
    booster = xgb.Booster()
    try:
        booster.load_model(str(path))
    except xgb.core.XGBoostError as e:
        raise PasurInputError(f"{path}: not a readable XGBoost model ({str(e).splitlines()[0]})") from None
    if booster.num_features() != len(_feature_names()):
        raise PasurInputError(f"{path}: incompatible model: {booster.num_features()} features, expected 58")
    return StrategyModel(booster, card)


# -- playing --------------------------------------------------------------------------------
class BatchModel:
    """Plays a model: scores the infoset every legal action leads to, clips at 0, normalizes per
    game and samples (the paper's scheme; uniform where every score is 0)."""

    name = "model"

    def __init__(self, model: StrategyModel, seed: int | None = None) -> None:
        from pasur.play.selfplay import BatchRandom

        self.model = model
        self.feature_mode = model.tree_mode
        self.sampler = BatchRandom(seed)

    def probabilities(self, state, actions) -> torch.Tensor:
        """Per action, the model's probability of it in its game."""
        features = state.infosets[self.feature_mode].children(state, actions)
        score = torch.from_numpy(self.model.predict(features)).to(features.device, torch.float64).clamp_min(0)
        total = torch.zeros(actions.brf.shape[0], dtype=torch.float64, device=score.device)
        total.index_add_(0, actions.row, score)
        uniform = 1.0 / actions.brf.double()
        zero = total[actions.row] <= 0
        return torch.where(zero, uniform[actions.row], score / total[actions.row].clamp_min(1e-300))

    def choose(self, state, actions) -> torch.Tensor:
        from pasur.play.selfplay import sample_per_game

        if self.feature_mode not in state.infosets:
            raise ValueError("a model agent needs the batch's infoset codes (use play_batch)")
        return sample_per_game(self.probabilities(state, actions), actions, self.sampler, state.n)
