"""``pasur deck-values``: the exact open-hand value of every deck of a list, written as one
Parquet file (a row per deck: its value, the Jacks and clubs each player is dealt, its compact
nodes and seconds), resumable: decks already in the file are skipped, and the file is rewritten
(atomically) every ``save_every`` seconds, so a run killed loses at most that much work.

Decks are solved in forests (:mod:`pasur.solve.batch_values`) by worker processes: ``workers``
on the chosen device and ``cpu_workers`` more on the CPU, each taking the next group of decks
when it is free; with one worker and no CPU workers, in this process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path

from pasur.common.errors import PasurInputError
from pasur.common.outputs import atomic_path
from pasur.game.cards import CLUB_MASK, JACK_MASK, NamedDeck, count

#: the columns of the output, in order (``index``: the deck's place in the list given)
COLUMNS = (
    "index",
    "deck_id",
    "deck",
    "value",
    "alex_jacks",
    "alex_clubs",
    "bob_jacks",
    "bob_clubs",
    "pool_jacks",
    "pool_clubs",
    "nodes",
    "seconds",
    "batch_decks",
    "batch_seconds",
    "device",
)


@dataclass(frozen=True)
class Pool:
    """Worker processes of one device, and the decks each forest takes."""

    device: str
    workers: int
    batch: int


def dealt_counts(nd: NamedDeck) -> dict:
    """Jacks and clubs each player is dealt over the game, and those of the first pool (Table
    16's features, as :func:`pasur.study.pipeline.dealt_counts`; any variant's deals)."""
    deck, out = nd.deck, {}
    for p, who in ((0, "alex"), (1, "bob")):
        m = 0
        for r in range(deck.variant.deals):
            m |= deck.hand_mask(p, r)
        out[f"{who}_jacks"], out[f"{who}_clubs"] = count(m & JACK_MASK), count(m & CLUB_MASK)
    out["pool_jacks"], out["pool_clubs"] = count(deck.pool_mask & JACK_MASK), count(deck.pool_mask & CLUB_MASK)
    return out


def read_done(out: Path, decks: Sequence[NamedDeck]) -> list[dict]:
    """The rows of an earlier run in ``out`` (none if it does not exist). Refused: a file that is
    not such a Parquet, or one whose deck of some id is not the deck given now under that id."""
    if not out.exists():
        return []
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(out)
    except Exception as e:  # pyarrow raises several kinds for a file that is not Parquet
        raise PasurInputError(
            f"--out {out} exists and is not a deck-values Parquet file ({type(e).__name__})"
        ) from None
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise PasurInputError(f"--out {out} exists and is not a deck-values file (no column {missing[0]!r})")
    rows = table.to_pylist()
    given = {nd.id: str(nd.deck) for nd in decks}
    for row in rows:
        if row["deck_id"] in given and given[row["deck_id"]] != row["deck"]:
            raise PasurInputError(f"--out {out} holds another deck under the id {row['deck_id']} than the one given")
    return rows


def write_rows(out: Path, rows: list[dict]) -> None:
    """All rows, sorted by index, through a temporary file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = sorted(rows, key=lambda r: (r["index"], r["deck_id"]))
    table = pa.Table.from_pylist([{c: r[c] for c in COLUMNS} for r in rows])
    with atomic_path(out) as tmp:
        pq.write_table(table, tmp)


def _init_worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def solve_group(
    decks: Sequence[NamedDeck], indices: Sequence[int], pool: Pool, budget: int | None, memory_limit: int | None
) -> list[dict]:
    """The rows of a group of decks, solved on ``pool.device`` in forests of ``pool.batch``."""
    from pasur.solve.batch_values import solve_decks

    rows, where = [], {i: k for k, i in enumerate(indices)}
    for batch in solve_decks(decks, indices, pool.device, batch=pool.batch, budget=budget, memory_limit=memory_limit):
        for dv in batch:
            nd = decks[where[dv.index]]
            rows.append(
                {**asdict(dv), "deck_id": nd.id, "deck": str(nd.deck), **dealt_counts(nd), "device": pool.device}
            )
    return rows


def run_deck_values(
    decks: Sequence[NamedDeck],
    out: Path,
    pools: Sequence[Pool],
    *,
    budget: int | None,
    memory_limit: int | None = None,
    save_every: float = 30.0,
    on_done: Callable[[int], None] | None = None,
) -> dict:
    """Solve the decks of ``decks`` not yet in ``out`` and write every row to ``out``; returns
    counts and the wall seconds of this run. ``on_done(n)``: after every group, n decks more."""
    done_rows = read_done(out, decks)
    done = {r["deck_id"] for r in done_rows}
    todo = [i for i, nd in enumerate(decks) if nd.id not in done]
    rows = list(done_rows)
    t0 = time.perf_counter()
    if todo:
        if len(pools) == 1 and pools[0].workers == 1:
            _run_here(decks, todo, pools[0], budget, memory_limit, rows, out, save_every, on_done)
        else:
            _run_pools(decks, todo, pools, budget, memory_limit, rows, out, save_every, on_done)
    write_rows(out, rows)
    return {
        "decks": len(decks),
        "skipped": len(decks) - len(todo),
        "solved": len(todo),
        "seconds": time.perf_counter() - t0,
    }


def _run_here(decks, todo, pool, budget, memory_limit, rows, out, save_every, on_done) -> None:
    """One worker: this process, ``pool.batch`` decks at a time."""
    _init_worker(1)
    saved = time.perf_counter()
    try:
        for lo in range(0, len(todo), pool.batch):
            part = todo[lo : lo + pool.batch]
            rows += solve_group([decks[i] for i in part], part, pool, budget, memory_limit)
            if on_done is not None:
                on_done(len(part))
            if time.perf_counter() - saved > save_every:
                write_rows(out, rows)
                saved = time.perf_counter()
    finally:
        write_rows(out, rows)


def _run_pools(decks, todo, pools, budget, memory_limit, rows, out, save_every, on_done) -> None:
    """Worker processes (spawned: CUDA does not survive a fork), each pool's free worker taking
    the next ``batch`` decks of the queue."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    executors = [ProcessPoolExecutor(p.workers, mp_context=ctx, initializer=_init_worker, initargs=(1,)) for p in pools]
    queue = list(todo)
    running: dict[Future, tuple[int, int]] = {}

    def submit(k: int) -> None:
        pool = pools[k]
        part, queue[:] = queue[: pool.batch], queue[pool.batch :]
        if part:
            fut = executors[k].submit(solve_group, [decks[i] for i in part], part, pool, budget, memory_limit)
            running[fut] = (k, len(part))

    saved = time.perf_counter()
    try:
        for k, pool in enumerate(pools):
            for _ in range(2 * pool.workers):  # one waiting behind each busy worker
                submit(k)
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                k, n = running.pop(fut)
                rows += fut.result()
                if on_done is not None:
                    on_done(n)
                submit(k)
            if time.perf_counter() - saved > save_every:
                write_rows(out, rows)
                saved = time.perf_counter()
    finally:
        for fut in running:
            fut.cancel()
        for ex in executors:
            ex.shutdown(wait=True, cancel_futures=True)
        write_rows(out, rows)
