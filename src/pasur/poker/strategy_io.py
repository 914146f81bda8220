"""Strategy files (Parquet), run summaries (JSON), convergence traces and plots.

Our strategy table has one row per (information set or abstract row, legal action):
``round`` (1-based), ``history`` (betting sequence, ``f``/``c``/``r``, rounds split by ``/``),
``player``, ``board`` and ``hand`` (card text; empty for an abstraction), ``bucket`` (the
abstraction's key; -1 for lossless), ``action`` (``fold``, ``check``, ``call``, ``bet``,
``raise``), ``probability``. The game (all its fields), the keying and the suit-isomorphism
flag are in the file's metadata, so a file is read back onto the same engine or refused.
With suit isomorphism a lossless table lists one board per class (the engine's).

OpenSpiel's form (Kuhn and Leduc) is ``{infostate: [[action_id, probability], ...]}`` as JSON
(``{"game": ..., "policy": {...}}``) or Parquet (columns ``infostate``, ``action``, ``probability``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from pasur import __version__
from pasur.common.errors import PasurInputError
from pasur.common.outputs import atomic_path, save_png, write_text_atomic
from pasur.poker.games import PokerGame
from pasur.poker.policy import TabularPolicy
from pasur.poker.tree import CALL, FOLD, RAISE

MAX_ROWS = 20_000_000


def action_names(engine, node: int) -> dict[int, str]:
    t = engine.tree
    c, p = t.contrib[node], t.actor[node]
    facing = c[1 - p] > c[p]
    return {FOLD: "fold", CALL: "call" if facing else "check", RAISE: "raise" if facing else "bet"}


def game_json(game: PokerGame) -> str:
    """The game's rules as JSON: its identity in a strategy file (``big_blind``, a unit of
    reporting, left out, so files written before it existed read as before)."""
    fields = dataclasses.asdict(game)
    fields.pop("big_blind", None)
    return json.dumps(fields, sort_keys=True)


def write_strategy(path: str | Path, engine, policy: TabularPolicy) -> int:
    """Write ``policy`` as our Parquet table; returns the number of rows."""
    t, bd = engine.tree, engine.boards
    g = engine.game
    lossless = policy.keying.lossless
    n_rows = sum(int(t.legal[t.round_decisions[r]].sum()) * policy.keying.n_keys[r] for r in range(engine.R))
    if n_rows > MAX_ROWS:
        raise PasurInputError(f"the strategy has {n_rows:,} rows, more than a file of {MAX_ROWS:,}; use an abstraction")
    cols: dict[str, list] = {
        k: [] for k in ("round", "history", "player", "board", "hand", "bucket", "action", "probability")
    }
    for r in range(engine.R):
        table = policy.tables[r].cpu().numpy()  # [rows, A, keys]
        K = table.shape[2]
        if lossless:
            H = engine.Hr[r]
            board_txt = np.repeat(np.array([g.cards_text(b) for b in bd.boards[r]], dtype=object), H)
            hand_txt = np.array([g.cards_text(bd.hands[h]) for h in bd.hand_ids[r].reshape(-1)], dtype=object)
            bucket = np.full(K, -1)
        else:
            board_txt = np.full(K, "", dtype=object)
            hand_txt = np.full(K, "", dtype=object)
            bucket = np.arange(K)
        for row, node in enumerate(t.round_decisions[r]):
            names = action_names(engine, node)
            for a in (FOLD, CALL, RAISE):
                if not t.legal[node, a]:
                    continue
                cols["round"].append(np.full(K, r + 1, dtype=np.int8))
                cols["history"].append(np.full(K, t.history[node], dtype=object))
                cols["player"].append(np.full(K, t.actor[node], dtype=np.int8))
                cols["board"].append(board_txt)
                cols["hand"].append(hand_txt)
                cols["bucket"].append(bucket.astype(np.int32))
                cols["action"].append(np.full(K, names[a], dtype=object))
                cols["probability"].append(table[row, a])
    data = {k: np.concatenate(v) if v else np.zeros(0) for k, v in cols.items()}
    meta = {
        b"pasur.poker.game": game_json(g).encode(),
        b"pasur.poker.keying": policy.keying.name.encode(),
        b"pasur.poker.lossless": str(lossless).lower().encode(),
        b"pasur.poker.iso": str(engine.iso).lower().encode(),
        b"pasur.version": __version__.encode(),
    }
    tab = pa.table({k: pa.array(v) for k, v in data.items()}).replace_schema_metadata(meta)
    with atomic_path(path) as tmp:
        pq.write_table(tab, tmp, compression="zstd")
    return tab.num_rows


def read_metadata(path: str | Path) -> dict[str, str]:
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowInvalid) as e:
        raise PasurInputError(f"cannot read {path} as Parquet: {e}") from None
    return {k.decode(): v.decode() for k, v in meta.items()}


def game_of(path: str | Path) -> PokerGame | None:
    meta = read_metadata(path)
    if "pasur.poker.game" not in meta:
        return None
    fields = json.loads(meta["pasur.poker.game"])
    for k, v in fields.items():
        if isinstance(v, list):
            fields[k] = tuple(v)
    return PokerGame(**fields)


def read_strategy(path: str | Path, engine, keying=None) -> TabularPolicy:
    """Read our Parquet strategy onto ``engine`` (same game, same iso flag; an abstraction's
    keying must be given, as the file stores bucket ids, not the bucketing)."""
    meta = read_metadata(path)
    if "pasur.poker.game" not in meta:
        raise PasurInputError(f"{path} is not a pasur poker strategy (no game in its metadata)")
    if meta["pasur.poker.game"] != game_json(engine.game):
        raise PasurInputError(f"{path} holds a strategy for another game than {engine.game.name!r}")
    lossless = meta.get("pasur.poker.lossless") == "true"
    if lossless and meta.get("pasur.poker.iso") != str(engine.iso).lower():
        raise PasurInputError(
            f"{path} was written with iso={meta.get('pasur.poker.iso')}; the engine has iso={engine.iso}"
        )
    if not lossless and keying is None:
        raise PasurInputError(f"{path} holds an abstraction ({meta.get('pasur.poker.keying')}); give its keying")
    tab = pq.read_table(path)
    policy = TabularPolicy(engine, keying)
    tables = [torch.zeros_like(x) for x in policy.tables]
    t, bd, g = engine.tree, engine.boards, engine.game
    node_of = {h: i for i, h in enumerate(t.history)}
    col = {
        k: tab.column(k).to_pylist() for k in ("round", "history", "board", "hand", "bucket", "action", "probability")
    }
    key_of: list[dict] = []
    if lossless:
        for r in range(engine.R):
            d = {}
            for b, board in enumerate(bd.boards[r]):
                bt = g.cards_text(board)
                for j, h in enumerate(bd.hand_ids[r][b]):
                    d[(bt, g.cards_text(bd.hands[h]))] = b * engine.Hr[r] + j
            key_of.append(d)
    names = {"fold": FOLD, "check": CALL, "call": CALL, "bet": RAISE, "raise": RAISE}
    rounds = np.asarray(col["round"], dtype=np.int64) - 1
    node = np.asarray([node_of.get(h, -1) for h in col["history"]], dtype=np.int64)
    act = np.asarray([names.get(a, -1) for a in col["action"]], dtype=np.int64)
    prob = np.asarray(col["probability"], dtype=np.float64)
    bad = (node < 0) | (rounds < 0) | (rounds >= engine.R)
    bad |= ~bad & ((t.round[node] != rounds) | ~t.is_decision[node])
    if bad.any():
        i = int(np.nonzero(bad)[0][0])
        raise PasurInputError(f"{path}: unknown betting sequence {col['history'][i]!r} in round {col['round'][i]}")
    illegal = (act < 0) | ~t.legal[node, np.maximum(act, 0)]
    if illegal.any():
        i = int(np.nonzero(illegal)[0][0])
        raise PasurInputError(f"{path}: action {col['action'][i]!r} is not legal after {col['history'][i]!r}")
    if not (np.isfinite(prob).all() and (prob >= 0).all()):
        raise PasurInputError(f"{path}: probabilities must be numbers >= 0")
    if lossless:
        pairs = zip(rounds, col["board"], col["hand"], strict=True)
        keys = np.asarray([key_of[r].get((b, h), -1) for r, b, h in pairs], dtype=np.int64)
        if (keys < 0).any():
            i = int(np.nonzero(keys < 0)[0][0])
            raise PasurInputError(f"{path}: unknown board/hand {col['board'][i]!r}/{col['hand'][i]!r}")
    else:
        keys = np.asarray(col["bucket"], dtype=np.int64)
    for r in range(engine.R):
        sel = rounds == r
        if not (keys[sel] >= 0).all() or not (keys[sel] < tables[r].shape[2]).all():
            raise PasurInputError(f"{path}: a key of round {r + 1} is out of range")
        idx = (torch.as_tensor(t.decision_index[node[sel]]), torch.as_tensor(act[sel]), torch.as_tensor(keys[sel]))
        tables[r][tuple(i.to(tables[r].device) for i in idx)] = torch.as_tensor(prob[sel], dtype=tables[r].dtype).to(
            tables[r].device
        )
    for r, x in enumerate(tables):
        s = x.sum(1)
        if (s <= 0).any():
            raise PasurInputError(f"{path}: some information sets of round {r + 1} have no probabilities")
        tables[r] = x / s[:, None, :]
    policy.tables = tables
    return policy


# ---------------------------------------------------------------- OpenSpiel form


def write_openspiel(path: str | Path, engine, table: dict) -> None:
    path = Path(path)
    if path.suffix == ".json":
        write_text_atomic(path, json.dumps({"game": engine.game.openspiel, "policy": table}, indent=0) + "\n")
        return
    keys, acts, probs = [], [], []
    for k, pairs in table.items():
        for a, p in pairs:
            keys.append(k)
            acts.append(int(a))
            probs.append(float(p))
    tab = pa.table({"infostate": keys, "action": pa.array(acts, pa.int32()), "probability": probs})
    tab = tab.replace_schema_metadata({b"openspiel.game": str(engine.game.openspiel).encode()})
    with atomic_path(path) as tmp:
        pq.write_table(tab, tmp, compression="zstd")


def read_openspiel(path: str | Path) -> tuple[str | None, dict]:
    """``(game, {infostate: [[action, probability], ...]})`` from a JSON or Parquet file."""
    path = Path(path)
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise PasurInputError(f"cannot read {path}: {e}") from None
        if isinstance(data, dict) and "policy" in data:
            return data.get("game"), data["policy"]
        if isinstance(data, dict):
            return None, data
        raise PasurInputError(f"{path}: expected a JSON object of information states")
    tab = pq.read_table(path)
    if not {"infostate", "action", "probability"} <= set(tab.column_names):
        raise PasurInputError(f"{path}: an OpenSpiel policy needs columns infostate, action, probability")
    out: dict[str, list] = {}
    for k, a, p in zip(*(tab.column(c).to_pylist() for c in ("infostate", "action", "probability")), strict=True):
        out.setdefault(k, []).append([a, p])
    meta = {k.decode(): v.decode() for k, v in (tab.schema.metadata or {}).items()}
    return meta.get("openspiel.game"), out


def is_openspiel_file(path: str | Path) -> bool:
    path = Path(path)
    if path.suffix == ".json":
        return True
    try:
        return "infostate" in pq.read_schema(path).names
    except (OSError, pa.ArrowInvalid):
        return False


# ---------------------------------------------------------------- summaries, traces, plots


def write_summary(path: str | Path, summary: dict) -> None:
    write_text_atomic(path, json.dumps(summary, indent=2, sort_keys=False) + "\n")


def write_trace(path: str | Path, trace) -> None:
    cols = {k: [getattr(p, k) for p in trace] for k in ("iteration", "seconds", "value", "exploitability", "nash_conv")}
    with atomic_path(path) as tmp:
        pq.write_table(pa.table(cols), tmp)


def plot_trace(path: str | Path, trace, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    x = [p.iteration for p in trace]
    y = [max(p.exploitability, 1e-16) for p in trace]
    ax.loglog(x, y, marker="o", markersize=3)
    ax.set_xlabel("iterations")
    ax.set_ylabel("exploitability = NashConv / 2 (chips per game)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    save_png(fig, path)
