"""A fit's training rows: strategy tables read lean (a tail deck's table has 300 M rows, of
which a fit uses a few million), each row's play weight, the priority sample, and the seeded
split of decision points into training and held-out ones."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pasur.common.errors import PasurInputError
from pasur.learn.params import TARGET_SCALE

#: with ``play`` weights, a row play never reaches still weighs this much (the mean row weighs 1)
PLAY_WEIGHT_FLOOR = 0.01
#: rows per slice where the fit turns a table-long array into another (play weights, the priority
#: sample): a tail deck's table has 300 M rows, and each full-length temporary GBs
WEIGHT_SLICE = 1 << 24


def play_row_weights(path: Path, tree=None, strategy=None) -> np.ndarray:
    """Per row of a whole-game strategy table (in file order): the reach of its decision, averaged
    over the matchups its model plays (against the random agent, as either player, and against
    itself; :func:`pasur.play.reach.iter_edge_play_weights`), scaled so that the mean row weighs 1,
    plus :data:`PLAY_WEIGHT_FLOOR`. Builds the table's tree from the deck it names, unless the
    caller has it (``tree``: the same deck and tree mode; a sweep's, which saves a second tree of
    the tail's decks in memory); reads the table's strategy, unless the caller has it
    (``strategy``: the one the table was written from, on ``tree``)."""
    from pasur.play.reach import iter_edge_play_weights

    _, tree, strategy = table_tree(path, tree, strategy)
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


def table_tree(path: Path, tree=None, strategy=None) -> tuple:
    """(deck, tree, strategy) of a whole-game strategy table: its deck from the metadata, its tree
    built (without infosets) unless the caller has it (``tree``: the same deck and tree mode),
    its strategy read unless the caller has it (``strategy``: the one the table was written from)."""
    import pyarrow.parquet as pq

    from pasur.game.cards import parse_deck
    from pasur.game.state import GameState
    from pasur.solve.strategy_io import read_strategy_table
    from pasur.solve.tree import build_tree

    meta = pq.read_schema(path).metadata or {}
    if meta.get(b"pasur.start", b"").decode() != "0.0":
        raise PasurInputError(
            f"{path}: play weights and play checks need the table of a whole game "
            "(this one starts mid-game; --row-weights uniform and --check-games 0 fit without them)"
        )
    deck = parse_deck(meta.get(b"pasur.deck", b"").decode())
    if tree is None:
        tree = build_tree(GameState.initial(deck), meta[b"pasur.tree"].decode(), infosets=False)
    elif tree.mode != meta[b"pasur.tree"].decode() or tree.start != GameState.initial(deck):
        raise PasurInputError(f"{path}: the tree given is not this table's deck and tree mode")
    if strategy is None:
        strategy = read_strategy_table(path, tree)
    return deck, tree, strategy


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
    deck: str = ""  # the deck's 52 cards, from the table's metadata

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


def check_feature_set(path: Path, mode: str, feature_set: str) -> None:
    """A compact table or model of a version before the state features (its rows one history's
    codes, which play does not meet) is refused: solve or fit again."""
    from pasur.solve.infoset import FEATURE_SETS

    if feature_set != FEATURE_SETS[mode]:
        raise PasurInputError(
            f"{path}: its {mode}-tree features are {feature_set!r}, this version's are {FEATURE_SETS[mode]!r} "
            "(written by an older version: solve and fit again)"
        )


def check_tables(tables: list[Path], validation: list[Path], whole_game: set) -> None:
    """What a fit would refuse late, refused before any work from the tables' metadata: a file that
    is not a strategy table, a compact table of an older version, tables of two tree modes, a
    validation deck among the training decks, and a table of a game's middle where play weights
    or a play check need a whole game (``whole_game``: those paths)."""
    decks, modes = {}, {}
    for path in [*tables, *validation]:
        meta = _table_schema(path).metadata or {}
        mode = meta.get(b"pasur.tree", b"").decode()
        if mode not in ("paper", "compact"):
            raise PasurInputError(f"{path}: not a pasur strategy table (no tree mode in its metadata)")
        check_feature_set(path, mode, meta.get(b"pasur.features", b"history").decode())
        if path in whole_game and meta.get(b"pasur.start", b"").decode() != "0.0":
            raise PasurInputError(
                f"{path}: play weights and play checks need the table of a whole game "
                "(this one starts mid-game; --row-weights uniform and --check-games 0 fit without them)"
            )
        modes[path] = mode
        decks.setdefault(path in validation, set()).add(meta.get(b"pasur.deck", b"").decode())
    if len(set(modes.values())) > 1:
        raise PasurInputError(
            "the tables come from different tree modes (" + ", ".join(f"{p}: {m}" for p, m in modes.items()) + ")"
        )
    if decks.get(True, set()) & decks.get(False, set()):
        raise PasurInputError("a validation deck is also a training deck; validation decks must be unseen")


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
    check_feature_set(path, mode, meta.get(b"pasur.features", b"history").decode())
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
    return _Table(path, deck_id, mode, y, group, meta.get(b"pasur.deck", b"").decode())


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


def feature_names() -> list[str]:
    from pasur.solve.strategy_io import FEATURE_COLUMNS

    return list(FEATURE_COLUMNS)
