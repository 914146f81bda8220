"""What a CFR solve leaves behind: the strategy table (Parquet), a JSON summary, and the
convergence traces (Parquet and a PNG in the style of the paper's Figure 15). The summary and the
traces carry ``nash_conv`` and ``exploitability = nash_conv / 2`` (docs/conventions.md); those of
an older version, whose ``exploitability`` was NashConv, read relabelled (:func:`read_summary`,
:func:`read_traces`).

The strategy table has one row per full-game-tree node after an action, i.e. per edge of
the tree: the node's 58 infoset features (:mod:`pasur.solve.infoset`), the average-strategy
probability of the action that led to it, the deck id, and enough to map the row back onto
a tree (``edge``: the edge's index in its layer; ``node``: its parent; ``child``: the node it
leads to; the action). In the compact tree a node merges histories: its features are those of
one of them, so rows of different parents can share features; (round, turn, player, node) is
the decision point, not the features.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import torch

from pasur import __version__
from pasur.common.conventions import EXPLOITABILITY, relabel_columns, relabel_summary
from pasur.common.errors import PasurInputError
from pasur.common.outputs import atomic_path, save_png, write_text_atomic
from pasur.game.cards import format_card
from pasur.solve.exact import Strategy
from pasur.solve.gametree import GameTree
from pasur.solve.infoset import FEATURE_SETS, edge_features
from pasur.solve.rounds import CFRResult

CARD_COLUMNS = [f"card_{format_card(c)}" for c in range(52)]
FEATURE_COLUMNS = [*CARD_COLUMNS, "alex_clubs", "bob_clubs", "last_capturer", "round", "turn", "player"]
SCHEMA = pa.schema(
    [pa.field(name, pa.int8()) for name in FEATURE_COLUMNS]
    + [
        pa.field("probability", pa.float32()),
        pa.field("deck_id", pa.dictionary(pa.int32(), pa.string())),
        pa.field("edge", pa.int64()),
        pa.field("node", pa.int64()),
        pa.field("child", pa.int64()),
        pa.field("action_card", pa.int8()),
        pa.field("action_captured", pa.int64()),
    ]
)


#: rows per batch written: bounds the writer's transient memory (a few hundred bytes a row) on
#: layers of tens of millions of edges. It is pyarrow's default row group (1 Mi rows since Arrow
#: 13), so the row groups fall where whole layers put them and the file of a tree without empty
#: layers is the same, byte for byte, as one written a layer at a time
CHUNK_ROWS = 1 << 20


def write_strategy_table(
    path: Path, tree: GameTree, strategy: Strategy, deck_id: str, *, chunk_rows: int = CHUNK_ROWS
) -> int:
    """Write the table layer by layer, ``chunk_rows`` edges at a time (bounded memory); returns
    the number of rows."""
    meta = {
        b"pasur.tree": tree.mode.encode(),
        b"pasur.features": FEATURE_SETS[tree.mode].encode(),
        b"pasur.deck": str(tree.start.deck).encode(),
        b"pasur.start": f"{tree.start.round}.{tree.start.turn}".encode(),
        b"pasur.version": __version__.encode(),
        b"pasur.edges": str(tree.n_edges).encode(),
        b"pasur.edge_checksum": tree.edge_checksum().encode(),
    }
    if not tree.variant.is_standard:  # (a standard table has no such key, as before variants)
        meta[b"pasur.variant"] = tree.variant.name.encode()
    deck_ids = pa.array([deck_id])
    rows = 0
    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, SCHEMA.with_metadata(meta), compression="zstd") as writer:
        for rt in tree.rounds:
            for t in rt.play_turns:
                layer, probability, n = rt.gt[t], strategy[(rt.round, t)], rt.n_edges_at(t)
                for lo in range(0, n, chunk_rows):
                    parent, child, gt_edge = rt.edge_chunk(t, lo, lo + chunk_rows)
                    features = edge_features(tree, rt.round, t, parent, child, gt_edge).cpu().numpy()
                    cols = {name: features[:, i] for i, name in enumerate(FEATURE_COLUMNS)}
                    k = features.shape[0]
                    cols["probability"] = probability[lo : lo + k].cpu().numpy().astype("float32")
                    cols["deck_id"] = pa.DictionaryArray.from_arrays(pa.array(np.zeros(k, np.int32)), deck_ids)
                    cols["edge"] = np.arange(lo, lo + k, dtype=np.int64)
                    cols["node"] = parent.cpu().numpy()
                    cols["child"] = child.cpu().numpy()
                    cols["action_card"] = layer.card[gt_edge].cpu().numpy()
                    cols["action_captured"] = layer.captured[gt_edge].cpu().numpy()
                    writer.write_table(pa.table(cols, schema=writer.schema))
                    del features, cols
                rows += n
    return rows


def table_tree_mode(path: str | Path) -> str:
    """The tree mode a strategy table was written for; refuses a file that is not one."""
    path = Path(path)
    if not path.exists():
        raise PasurInputError(f"strategy table not found: {path}")
    try:
        mode = (pq.read_schema(path).metadata or {}).get(b"pasur.tree", b"").decode()
    except (pa.ArrowInvalid, OSError) as e:
        raise PasurInputError(f"{path}: not a readable Parquet strategy table ({e})") from None
    if mode not in ("paper", "compact"):
        raise PasurInputError(f"{path}: not a pasur strategy table (no tree mode in its metadata)")
    return mode


def read_strategy_table(path: str | Path, tree: GameTree) -> Strategy:
    """The strategy of a table, on ``tree``'s edges; refuses a table of another deck or tree."""
    path = Path(path)
    try:
        meta = pq.read_schema(path).metadata or {}
        table = pq.read_table(path, columns=["round", "turn", "player", "edge", "probability"])
    except FileNotFoundError:
        raise PasurInputError(f"strategy table not found: {path}") from None
    except (pa.ArrowInvalid, OSError) as e:
        raise PasurInputError(f"{path}: not a readable Parquet strategy table ({e})") from None
    if meta.get(b"pasur.tree", b"").decode() != tree.mode:
        raise PasurInputError(
            f"{path}: a strategy of the {meta.get(b'pasur.tree', b'?').decode()!r} tree, not of this {tree.mode!r} tree"
        )
    if meta.get(b"pasur.variant", b"standard").decode() != tree.variant.name:
        raise PasurInputError(f"{path}: a strategy of another variant than {tree.variant.name}")
    if meta.get(b"pasur.deck", b"").decode() != str(tree.start.deck):
        raise PasurInputError(f"{path}: a strategy of another deck")
    if meta.get(b"pasur.start", b"").decode() != f"{tree.start.round}.{tree.start.turn}":
        raise PasurInputError(f"{path}: a strategy of a tree with another start state")
    if meta.get(b"pasur.edges", b"").decode() != str(tree.n_edges):
        raise PasurInputError(
            f"{path}: its rows belong to a tree of {meta.get(b'pasur.edges', b'?').decode()} edges, this tree has "
            f"{tree.n_edges:,} (written by another version, or edited)"
        )
    if meta.get(b"pasur.edge_checksum", b"").decode() != tree.edge_checksum():
        raise PasurInputError(f"{path}: its rows belong to another tree (the edge structure's checksum differs)")
    # small integers in int16: a tail deck's table has 100 M rows and more
    rnd = torch.from_numpy(table.column("round").to_numpy().astype("int16"))
    ply = 2 * torch.from_numpy(table.column("turn").to_numpy().astype("int16")) + torch.from_numpy(
        table.column("player").to_numpy().astype("int16")
    )
    edge = torch.from_numpy(table.column("edge").to_numpy())
    prob = torch.from_numpy(table.column("probability").to_numpy())
    del table
    out: Strategy = {}
    for rt in tree.rounds:
        for t in rt.play_turns:
            sel = (rnd == rt.round) & (ply == t)
            n = rt.edges(t)[0].shape[0]
            if int(sel.sum()) != n:
                raise PasurInputError(
                    f"{path}: round {rt.round} turn {t} has {int(sel.sum())} rows, the tree {n} "
                    "(truncated or of another start state)"
                )
            edges = edge[sel]
            if torch.unique(edges).numel() != n or int(edges.min()) < 0 or int(edges.max()) >= n:
                raise PasurInputError(f"{path}: round {rt.round} turn {t}: the edge column is not a permutation")
            p = torch.empty(n, dtype=torch.float32)
            p[edges] = prob[sel]
            out[(rt.round, t)] = p.to(tree.device)
    return out


def decode_rows(
    table_or_path: pa.Table | str | Path, *, where: dict[str, object] | None = None, cards: bool = False
) -> list[dict]:
    """Rows of a strategy table in readable form, one dict per row (docs/architecture.md, "The
    strategy table", lists the columns): the action's card as text (``action``, e.g. ``"TD"``),
    the cards it captures as a list of texts (``captured``, empty when the card is laid), and the
    other columns as they are (``round``, ``turn``, ``player``, ``node``, ``edge``, ``child``,
    ``alex_clubs``, ``bob_clubs``, ``last_capturer``, ``probability``, ``deck_id``); the 52
    ``card_XX`` feature columns only with ``cards=True``. ``where`` keeps the rows whose columns
    equal its values (read as a Parquet filter, so a large file is not read whole).

    Bob's first decision on a ``mini`` deck (round 0, turn 0, player 1, node 0): two captures of 6D:

    ```pycon
    >>> import tempfile
    >>> from pathlib import Path
    >>> from pasur.game import Deck, GameState, get_variant
    >>> from pasur.solve import CFRParams, build_tree, solve_cfr, write_strategy_table
    >>> tree = build_tree(GameState.initial(Deck.from_seed(1, get_variant("mini"))))
    >>> path = Path(tempfile.mkdtemp()) / "strategy.parquet"
    >>> _ = write_strategy_table(path, tree, solve_cfr(tree, CFRParams("dcfr", iterations=50)).strategy, "mini-1")
    >>> rows = decode_rows(path, where={"round": 0, "turn": 0, "player": 1, "node": 0})
    >>> [(row["action"], row["captured"]) for row in rows]
    [('5C', ['6D']), ('5D', ['6D'])]
    >>> round(sum(row["probability"] for row in rows), 4)
    1.0

    ```
    """
    where = where or {}
    unknown = sorted(set(where) - set(SCHEMA.names))
    if unknown:
        raise PasurInputError(f"not columns of a strategy table: {', '.join(unknown)}")
    if isinstance(table_or_path, pa.Table):
        table = table_or_path
        for name, value in where.items():
            table = table.filter(pc.equal(table[name], value))
    else:
        path = Path(table_or_path)
        table_tree_mode(path)  # refuses a missing file or one that is not a strategy table
        table = pq.read_table(path, filters=[(k, "=", v) for k, v in where.items()] or None)
    rows = table.to_pylist()
    for row in rows:
        row["action"] = format_card(row.pop("action_card"))
        mask = row.pop("action_captured")
        row["captured"] = [format_card(c) for c in range(52) if (mask >> c) & 1]
        if not cards:
            for name in CARD_COLUMNS:
                row.pop(name, None)
    return rows


def summary(result: CFRResult, deck_id: str, device: str, rows: int | None) -> dict:
    """The JSON summary of a solve."""
    import pyarrow

    tree, p = result.tree, result.params
    return {
        "deck_id": deck_id,
        "deck": str(tree.start.deck),
        "method": p.method,
        "parameters": {
            "iterations": p.iterations,
            "target_exploitability": p.target_exploitability,
            "check_every": p.check_every,
            "updates": p.updates,
            "seed": p.seed,
            **({"alpha": p.alpha, "beta": p.beta, "gamma": p.gamma} if p.method == "dcfr" else {}),
            **({"tremble": p.tremble} if p.tremble else {}),
        },
        "tree": tree.mode,
        "device": device,
        "value": result.game_value(),
        "value_passed_between_rounds": result.value_passed,
        "nash_conv": result.nash_conv,
        "exploitability": result.exploitability,
        "exploitability_meaning": (
            "whole game: exact best responses of both players over all rounds (points); " + EXPLOITABILITY
        ),
        "target": result.target,
        "target_met": result.target_met,
        "round_nash_conv": [tr.nash_conv[-1] for tr in result.traces],
        "round_exploitability": [tr.exploitability[-1] for tr in result.traces],
        "rounds": [
            {
                "round": tr.round,
                "iterations": result.iterations[tr.round],
                "nodes": tr.nodes,
                "seconds": round(tr.seconds, 4),
                "nash_conv": tr.nash_conv[-1],
                "exploitability": tr.exploitability[-1],
                "mean_nash_conv": tr.mean_nash_conv[-1],
                "mean_exploitability": tr.mean_exploitability[-1],
                "suffix_gap": tr.suffix_gap[-1],
                "suffix_exploitability": tr.suffix_gap[-1] / 2,
                "budget": tr.budget,
                "parts": tr.parts,
            }
            for tr in result.traces
        ],
        "seconds": round(result.seconds, 4),
        "tree_nodes": tree.n_nodes,
        "strategy_rows": rows,
        "versions": {
            "pasur": __version__,
            "torch": torch.__version__,
            "pyarrow": pyarrow.__version__,
            "python": platform.python_version(),
        },
    }


def read_summary(path: str | Path) -> dict:
    """A solve's ``summary.json``; one of an older version (its ``exploitability`` was NashConv)
    relabelled: ``nash_conv`` and ``exploitability = nash_conv / 2`` (docs/conventions.md)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PasurInputError(f"summary not found: {path}") from None
    except (OSError, ValueError) as e:
        raise PasurInputError(f"{path}: not a readable JSON summary ({e})") from None
    if not isinstance(data, dict):
        raise PasurInputError(f"{path}: not a solve summary (not a JSON object)")
    return relabel_summary(data)


def read_traces(path: str | Path) -> dict[str, list]:
    """A solve's ``traces.parquet`` as columns; one of an older version (its ``exploitability``
    was NashConv) relabelled, as :func:`read_summary`."""
    return relabel_columns(pq.read_table(path).to_pydict())


def write_traces(folder: Path, result: CFRResult, deck_id: str = "") -> None:
    """``traces.parquet`` (round, iteration, NashConv and exploitability of the worst root and
    mean over roots, MSE to the final average strategy) and ``convergence.png``."""
    names = ("round", "iteration", "nash_conv", "exploitability", "mean_nash_conv", "mean_exploitability")
    rows: dict[str, list] = {n: [] for n in (*names, "mse_to_final")}
    for tr in result.traces:
        for i, it in enumerate(tr.iterations):
            rows["round"].append(tr.round)
            rows["iteration"].append(it)
            rows["nash_conv"].append(tr.nash_conv[i])
            rows["exploitability"].append(tr.nash_conv[i] / 2)
            rows["mean_nash_conv"].append(tr.mean_nash_conv[i])
            rows["mean_exploitability"].append(tr.mean_nash_conv[i] / 2)
            rows["mse_to_final"].append(tr.mse_to_final[i])
    with atomic_path(folder / "traces.parquet") as tmp:
        pq.write_table(pa.table(rows), tmp)
    plot_traces(result, folder / "convergence.png", deck_id)


def plot_traces(result: CFRResult, path: Path, deck_id: str = "") -> None:
    """Exploitability and the distance to the final average strategy, per round, titled with
    the deck, the method and the tree."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for tr in result.traces:
        ax1.plot(tr.iterations, [max(x, 1e-9) for x in tr.exploitability], label=f"round {tr.round}")
        ax2.plot(tr.iterations, [max(x, 1e-12) for x in tr.mse_to_final], label=f"round {tr.round}")
    ax1.set(
        yscale="log",
        xlabel="iteration",
        ylabel="exploitability = NashConv / 2 (points, worst root)",
        title="exploitability per round",
    )
    ax2.set(
        yscale="log",
        xlabel="iteration",
        ylabel="MSE to the final average strategy",
        title="average strategy vs the final one",
    )
    for ax in (ax1, ax2):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    p = result.params
    deck = f"deck {deck_id}" if deck_id else "deck"
    fig.suptitle(f"{deck}: {p.method} on the {result.tree.mode} tree, {p.updates} updates")
    save_png(fig, path, dpi=110)


def write_outputs(
    folder: Path, result: CFRResult, deck_id: str, device: str, extra: dict | None = None, table: bool = True
) -> dict:
    """All outputs into ``folder`` (which the caller makes atomic); returns the summary
    (with ``extra`` fields, such as the exact value, added). ``table=False`` leaves out the
    strategy table (its rows count is then None)."""
    rows = write_strategy_table(folder / "strategy.parquet", result.tree, result.strategy, deck_id) if table else None
    write_traces(folder, result, deck_id)
    info = {**summary(result, deck_id, device, rows), **(extra or {})}
    write_text_atomic(folder / "summary.json", json.dumps(info, indent=1) + "\n")
    return info
