"""``pasur deck-values``: the exact open-hand value of every deck of a list, written as one
Parquet file (a row per deck: its value, the Jacks and clubs each player is dealt, its compact
nodes and seconds; the deck itself only as a hash, so a file of values does not carry a deck file
that is not ours to publish), resumable: decks already in the file are skipped, and the file is
rewritten (atomically) every ``save_every`` seconds and when the run stops (a time limit, an
interrupt, SIGTERM), so a run killed by SIGKILL loses at most that much work.

Decks are solved in forests (:mod:`pasur.solve.batch_values`) by worker processes: ``workers``
on the chosen device and ``cpu_workers`` more on the CPU, each taking the next group of decks
when it is free; with one worker and no CPU workers, in this process.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pasur.common.errors import PasurInputError
from pasur.common.outputs import atomic_path
from pasur.game.cards import CLUB_MASK, JACK_MASK, NamedDeck, count

#: the columns of the output, in order (``index``: the deck's place in the list given)
COLUMNS = (
    "index",
    "deck_id",
    "deck_hash",
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


def deck_hash(nd: NamedDeck) -> str:
    """The first 16 hex digits of the SHA-256 of the deck's text: tells decks apart on resume."""
    return hashlib.sha256(str(nd.deck).encode()).hexdigest()[:16]


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
    given = {nd.id: deck_hash(nd) for nd in decks}
    for row in rows:
        if row["deck_id"] in given and given[row["deck_id"]] != row["deck_hash"]:
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
                {**asdict(dv), "deck_id": nd.id, "deck_hash": deck_hash(nd), **dealt_counts(nd), "device": pool.device}
            )
    return rows


def run_deck_values(
    decks: Sequence[NamedDeck],
    out: Path,
    pools: Sequence[Pool],
    *,
    budget: int | None,
    memory_limit: int | None = None,
    time_limit: float | None = None,
    from_end: bool = False,
    save_every: float = 30.0,
    on_done: Callable[[int], None] | None = None,
) -> dict:
    """Solve the decks of ``decks`` not yet in ``out`` and write every row to ``out``; returns
    counts and the wall seconds of this run. After ``time_limit`` seconds no new group starts
    (those running finish); SIGTERM or an interrupt stops at once, keeping what is done.
    ``from_end``: the last deck first (to meet another run that goes forward).
    ``on_done(n)``: after every group, n decks more."""
    done_rows = read_done(out, decks)
    done = {r["deck_id"] for r in done_rows}
    todo = [i for i, nd in enumerate(decks) if nd.id not in done]
    if from_end:
        todo.reverse()
    run = _Run(decks, list(done_rows), out, budget, memory_limit, save_every, on_done)
    if time_limit is not None:
        run.deadline = time.perf_counter() + time_limit
    import signal

    def on_term(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    stopped = "no"
    try:
        if len(pools) == 1 and pools[0].workers == 1:
            _run_here(run, todo, pools[0])
        else:
            _run_pools(run, todo, pools)
    except KeyboardInterrupt:
        stopped = "interrupted"
    finally:
        signal.signal(signal.SIGTERM, old)
        write_rows(out, run.rows)
    solved = len(run.rows) - len(done_rows)
    if stopped == "no" and solved < len(todo):
        stopped = "time limit"
    return {
        "decks": len(decks),
        "skipped": len(decks) - len(todo),
        "solved": solved,
        "left": len(todo) - solved,
        "stopped": stopped,
        "seconds": time.perf_counter() - run.t0,
    }


@dataclass
class _Run:
    """What both ways of running share: the rows so far, where and when to save them."""

    decks: Sequence[NamedDeck]
    rows: list[dict]
    out: Path
    budget: int | None
    memory_limit: int | None
    save_every: float
    on_done: Callable[[int], None] | None
    deadline: float = float("inf")
    t0: float = field(default_factory=time.perf_counter)
    saved: float = field(default_factory=time.perf_counter)

    def add(self, rows: list[dict], n: int) -> None:
        self.rows += rows
        if self.on_done is not None:
            self.on_done(n)
        if time.perf_counter() - self.saved > self.save_every:
            write_rows(self.out, self.rows)
            self.saved = time.perf_counter()

    @property
    def late(self) -> bool:
        return time.perf_counter() > self.deadline


def _run_here(run: _Run, todo: list[int], pool: Pool) -> None:
    """One worker: this process, ``pool.batch`` decks at a time."""
    _init_worker(1)
    for lo in range(0, len(todo), pool.batch):
        if run.late:
            return
        part = todo[lo : lo + pool.batch]
        run.add(solve_group([run.decks[i] for i in part], part, pool, run.budget, run.memory_limit), len(part))


def _run_pools(run: _Run, todo: list[int], pools: Sequence[Pool]) -> None:
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
        if part and not run.late:
            args = ([run.decks[i] for i in part], part, pool, run.budget, run.memory_limit)
            running[executors[k].submit(solve_group, *args)] = (k, len(part))

    clean = False
    try:
        for k, pool in enumerate(pools):
            for _ in range(2 * pool.workers):  # one waiting behind each busy worker
                submit(k)
        while running:
            finished, _ = wait(running, timeout=5.0, return_when=FIRST_COMPLETED)
            if run.late:  # groups not started yet are dropped
                for fut in [f for f in running if f.cancel()]:
                    del running[fut]
            for fut in finished:
                k, n = running.pop(fut)
                run.add(fut.result(), n)
                submit(k)
        clean = True
    finally:
        for ex in executors:
            if not clean:  # stopped: the workers' forests are abandoned (their processes ended)
                for proc in list(getattr(ex, "_processes", {}).values()):
                    proc.terminate()
            ex.shutdown(wait=clean, cancel_futures=True)
