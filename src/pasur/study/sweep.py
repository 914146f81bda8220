"""Sweeps: the per-deck pipeline (:func:`pasur.study.pipeline.run_deck`) over many decks, as Ray
tasks on this machine (Ray started inside the process) or on a Ray cluster.

Loss-free and resumable by construction:

- the driver is the only writer of the output folder. A task runs a deck into a temporary
  folder on its worker and returns the record and the files' bytes; the driver writes
  ``DIR/decks/<deck_id>/`` under a temporary name and renames it when complete, then rewrites
  ``DIR/manifest.parquet`` atomically. A cluster needs no shared filesystem, and a driver killed
  at any moment leaves finished decks finished and nothing half-written that looks finished;
- ``DIR/sweep.json`` holds the job and the decks; a rerun with the same job skips the decks
  that are done (and the failed ones, unless asked to retry them), and a different job is
  refused rather than mixed into the same folder;
- a deck that fails (bad input, a tree too large, out of memory, a crashed worker) is recorded
  ``failed`` with its error and the sweep goes on. With the inline engine a deck runs in the
  driver's process and is marked ``running`` first; a deck that killed the process twice in a row
  (the OOM killer) is recorded failed at the next start instead of killing every resume. At most
  about ``workers`` decks are in flight, so Ctrl-C loses at most the decks that were running.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pasur.common import raytasks
from pasur.common.conventions import relabel_summary
from pasur.common.errors import PasurInputError
from pasur.common.memory import release_freed
from pasur.common.outputs import atomic_path, folder_lock, prepare_resumable_dir, replace_dir, write_text_atomic
from pasur.game.cards import NamedDeck, parse_deck
from pasur.study.manifest import Manifest
from pasur.study.pipeline import DeckJob

SWEEP_FILE = "sweep.json"
MANIFEST_FILE = "manifest.parquet"
RECORDS_FILE = "records.parquet"
DECKS_DIR = "decks"
ENGINES = ("ray", "inline")
#: 2: the job's ``cfr.target_exploitability`` and the records' ``exploitability`` are NashConv / 2
#: (docs/conventions.md); a sweep of format 1 held NashConv there and is read relabelled
FORMAT = 2

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep, after the manifest was written; ``summary`` says what is done."""

    def __init__(self, summary: dict) -> None:
        super().__init__("sweep interrupted")
        self.summary = summary


@dataclass
class SweepResult:
    """The records of the decks asked for that are done (in deck order), and a summary."""

    records: list[dict]
    summary: dict = field(default_factory=dict)


def check_decks(decks: list[NamedDeck]) -> None:
    """Deck ids become folder names: they must be safe file names, and unique."""
    if not decks:
        raise PasurInputError("no decks to sweep")
    seen: set[str] = set()
    for nd in decks:
        if not _SAFE_ID.fullmatch(nd.id):
            raise PasurInputError(
                f"deck id {nd.id!r} is not a safe file name (use letters, digits, '.', '_', '+', '-'; "
                "at most 128 characters, not starting with '.' or '-')"
            )
        if nd.id in seen:
            raise PasurInputError(f"deck id {nd.id!r} appears twice")
        seen.add(nd.id)


def _gpus(job: DeckJob, gpus_per_task: float | None) -> float:
    """GPUs each task asks Ray for: only for a CUDA device (default one), never for the CPU."""
    cuda = job.device.startswith("cuda")
    if gpus_per_task is not None and gpus_per_task < 0:
        raise PasurInputError(f"--gpus-per-task must be zero or positive, got {gpus_per_task}")
    if gpus_per_task:
        if job.device == "cpu":
            raise PasurInputError("--gpus-per-task needs a CUDA device (--device cuda); the job runs on the CPU")
        return float(gpus_per_task)
    if gpus_per_task is None and cuda:
        return 1.0
    return 0.0


# ---------------------------------------------------------------- the output folder


def _spec(job: DeckJob, decks: list[dict]) -> dict:
    return {"format": FORMAT, "job": job.to_json(), "decks": decks}


def _deck_entry(nd: NamedDeck) -> dict:
    e: dict = {"id": nd.id, "deck": str(nd.deck)}
    if nd.value is not None:
        e["value"] = nd.value
    return e


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def _with_defaults(job: dict, fmt: int = FORMAT) -> dict:
    """A job as an older version wrote it, with the options added since at their defaults (so
    that a sweep started before ``--tremble`` existed resumes), and a target of format 1 (a
    bound on NashConv) as the exploitability bound it is (half of it)."""
    if fmt < 2 and isinstance(job.get("cfr"), dict) and job["cfr"].get("target_exploitability") is not None:
        job = {**job, "cfr": {**job["cfr"], "target_exploitability": job["cfr"]["target_exploitability"] / 2}}
    try:
        return DeckJob.from_json(job).to_json()
    except (TypeError, ValueError, AttributeError):
        return job


#: job options that change how a deck is solved but not what comes out (the native and the torch
#: CFR kernels give the same iterates bit for bit), so a sweep may resume with another value
RESULT_NEUTRAL = frozenset({"cfr.kernel"})


def _job_differences(old: dict, new: dict) -> list[str]:
    old, new = _flat(old), _flat(new)
    keys = sorted((set(old) | set(new)) - RESULT_NEUTRAL)
    if old.get("method") != new.get("method"):  # the CFR settings of another method say nothing more
        keys = [k for k in keys if not k.startswith("cfr.")]
    return [f"{k}: {old.get(k)!r} there, {new.get(k)!r} now" for k in keys if old.get(k) != new.get(k)]


def _clean_leftovers(out: Path) -> None:
    """Temporary files and folders of a driver that was killed while writing (never a finished output)."""
    for folder in (out, out / DECKS_DIR):
        if not folder.is_dir():
            continue
        for p in folder.iterdir():
            if p.name.startswith(".") and (".tmp-" in p.name or ".old-" in p.name):
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)


def prepare(out: Path, decks: list[NamedDeck], job: DeckJob) -> Manifest:
    """Create or reopen the output folder: check the job against ``sweep.json``, add new decks,
    and reconcile the manifest with the deck folders (a driver killed between writing a deck's
    folder and the manifest leaves a finished folder: it counts as done)."""
    spec_path = out / SWEEP_FILE
    if spec_path.exists():
        try:
            spec = json.loads(spec_path.read_text(encoding="utf-8"))
            old_job, old_decks, old_format = spec["job"], spec["decks"], int(spec.get("format", 1))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise PasurInputError(f"{spec_path} is not a readable sweep description ({e})") from None
        diffs = _job_differences(_with_defaults(old_job, old_format), job.to_json())
        if diffs:
            raise PasurInputError(
                f"{out} holds a sweep with another job ({'; '.join(diffs)}); use another --out or the same options"
            )
        known = {d["id"]: d["deck"] for d in old_decks}
        for nd in decks:
            if nd.id in known and known[nd.id] != str(nd.deck):
                raise PasurInputError(f"deck {nd.id} in {out} is another deck than the one given now; rename it")
        entries = list(old_decks) + [_deck_entry(nd) for nd in decks if nd.id not in known]
    else:
        entries = [_deck_entry(nd) for nd in decks]
    _clean_leftovers(out)
    (out / DECKS_DIR).mkdir(exist_ok=True)
    write_text_atomic(spec_path, json.dumps(_spec(job, entries), indent=1) + "\n")
    manifest = Manifest.load(out / MANIFEST_FILE)
    for e in entries:
        manifest.add(e["id"], e["deck"])
        folder = out / DECKS_DIR / e["id"]
        done_there = (folder / "record.json").is_file()
        if done_there and manifest.status(e["id"]) != "done":
            record = relabel_summary(json.loads((folder / "record.json").read_text(encoding="utf-8")))
            manifest.finish(e["id"], "done", record, error=None)
        elif not done_there and manifest.status(e["id"]) == "done":
            manifest.rows[e["id"]].update(status="pending", error=f"outputs missing from {folder}; redone")
    manifest.recover_running()
    manifest.save()
    return manifest


def read_records(out: Path) -> list[dict]:
    """The records of the done decks of the sweep in ``out``, in the sweep's deck order."""
    out = Path(out)
    manifest_path = out / MANIFEST_FILE
    if not manifest_path.exists():
        raise PasurInputError(f"{out} holds no sweep ({MANIFEST_FILE} not found)")
    manifest = Manifest.load(manifest_path)
    records = []
    for deck_id, row in manifest.rows.items():
        if row["status"] == "done":
            path = out / DECKS_DIR / deck_id / "record.json"
            records.append(relabel_summary(json.loads(path.read_text(encoding="utf-8"))))
    return records


def records_table(records: list[dict]):
    """The records as one Arrow table: the union of their keys, integers widened to floats in a
    column that holds both (Arrow wants one type per column)."""
    import pyarrow as pa

    keys: dict[str, None] = {}
    for r in records:
        keys.update(dict.fromkeys(r))
    floats = {
        k
        for k in keys
        if any(isinstance(r.get(k), float) for r in records)
        and all(
            r.get(k) is None or (isinstance(r.get(k), int | float) and not isinstance(r.get(k), bool)) for r in records
        )
    }
    rows = [{k: (float(r[k]) if k in floats and r.get(k) is not None else r.get(k)) for k in keys} for r in records]
    return pa.Table.from_pylist(rows)


def write_records(out: Path) -> None:
    """``DIR/records.parquet``: every done deck's record, one row each (for ``pasur report``)."""
    import pyarrow.parquet as pq

    records = read_records(out)
    path = out / RECORDS_FILE
    if not records:
        path.unlink(missing_ok=True)
        return
    with atomic_path(path) as tmp:
        pq.write_table(records_table(records), tmp)


# ---------------------------------------------------------------- one deck (in a worker)


def run_one(deck: dict, job: dict, memory_limit: int | None, threads: int = 1) -> dict:
    """Run one deck in a temporary folder and return its record and files' bytes, or its error.
    Never raises for a failing deck (only for Ctrl-C), so every failure becomes a manifest row."""
    import torch

    from pasur.study import pipeline

    torch.set_num_threads(threads)
    started = time.time()
    base = {"host": socket.gethostname(), "worker": f"pid {os.getpid()}", "started": started}
    try:
        nd = NamedDeck(deck["id"], parse_deck(deck["deck"]), deck.get("value"))
        with tempfile.TemporaryDirectory(prefix="pasur-deck-") as tmp:
            folder = Path(tmp) / "out"
            record = pipeline.run_deck(nd, DeckJob.from_json(job), folder, memory_limit)
            files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    except Exception as e:
        return {**base, "ok": False, "error": _error_message(e), "finished": time.time()}
    finally:
        release_freed()  # the next deck of this process starts from what is really held
    return {**base, "ok": True, "record": record, "files": files, "finished": time.time()}


def _error_message(e: BaseException) -> str:
    """``Type: message``; for an unexpected error (a bug, not a user mistake) the traceback's tail too."""
    text = f"{type(e).__name__}: {e}".strip()
    if isinstance(e, PasurInputError | MemoryError) or type(e).__name__ == "OutOfMemoryError":
        return text
    tail = "".join(traceback.format_exception(e)[-4:]).strip()
    return f"{text}\n{tail}"


def _store(out: Path, deck_id: str, files: dict[str, bytes]) -> None:
    """Write a deck's folder: a temporary sibling renamed when every file is written."""
    with replace_dir(out / DECKS_DIR / deck_id) as tmp:
        for name, data in files.items():
            p = tmp / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)


# ---------------------------------------------------------------- the driver


class _Progress:
    """Decks done, failed and running, with the time left, on stderr (nothing when disabled)."""

    def __init__(self, total: int, enabled: bool) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        from pasur.common.console import err

        self.progress = Progress(
            TextColumn("sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}  running {task.fields[running]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=err,
            transient=True,
            disable=not enabled,
        )
        self.task = self.progress.add_task("sweep", total=total, failed=0, running=0)

    def __enter__(self) -> _Progress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def update(self, finished: int, failed: int, running: int) -> None:
        self.progress.update(self.task, completed=finished, failed=failed, running=running)


@dataclass
class _Run:
    """The state of one driver run: what it finished, and the counters the progress shows."""

    out: Path
    manifest: Manifest
    progress: _Progress
    done: int = 0
    failed: int = 0
    running: int = 0

    def settle(self, nd: NamedDeck, res: dict) -> None:
        """Write a finished deck's folder, then its manifest row (in this order: a crash between
        the two leaves a folder that :func:`prepare` counts as done)."""
        when = {"started": res.get("started"), "finished": res.get("finished")}
        who = {"host": res.get("host"), "worker": res.get("worker")}
        if res["ok"]:
            try:
                _store(self.out, nd.id, res["files"])
            except OSError as e:
                res = {**res, "ok": False, "error": f"cannot write the outputs of {nd.id}: {e}"}
        if res["ok"]:
            self.manifest.finish(nd.id, "done", res["record"], **when, **who)
            self.done += 1
        else:
            self.manifest.finish(nd.id, "failed", error=res["error"], **when, **who)
            self.failed += 1
        self.manifest.save()
        self.show()

    def show(self) -> None:
        self.progress.update(self.done + self.failed, self.failed, self.running)


def _run_inline(todo: list[NamedDeck], job: DeckJob, memory_limit: int | None, run: _Run) -> None:
    for nd in todo:
        # the deck runs in this process: if it kills it (the OOM killer), the resume must know
        run.manifest.start(nd.id, time.time(), socket.gethostname(), f"pid {os.getpid()}")
        run.manifest.save()
        run.running = 1
        run.show()
        res = run_one(_deck_entry(nd), job.to_json(), memory_limit)
        run.running = 0
        run.settle(nd, res)


def _run_ray(
    todo: list[NamedDeck],
    job: DeckJob,
    memory_limit: int | None,
    run: _Run,
    workers: int | None,
    address: str | None,
    gpus: float,
) -> None:
    import ray

    def running(n: int) -> None:
        run.running = n
        run.show()

    def failed(nd: NamedDeck, e: BaseException, submitted: float) -> None:
        run.settle(nd, {"ok": False, "error": raytasks.error_message(e), "started": submitted, "finished": time.time()})

    with raytasks.session(address, workers):
        raytasks.require_gpus(gpus, address)
        task = ray.remote(run_one).options(num_cpus=1, num_gpus=gpus, max_retries=0)
        job_json = job.to_json()
        raytasks.run_bounded(
            lambda nd: task.remote(_deck_entry(nd), job_json, memory_limit),
            todo,
            workers or raytasks.capacity(gpus),
            run.settle,
            failed=failed,
            in_flight=running,
        )


def sweep(
    decks: list[NamedDeck],
    job: DeckJob,
    out: Path,
    *,
    workers: int | None = None,
    address: str | None = None,
    gpus_per_task: float | None = None,
    retry_failed: bool = False,
    engine: str = "ray",
    memory_limit: int | None = None,
    progress: bool = True,
    on_start: Callable[[dict], None] | None = None,
) -> SweepResult:
    """Run ``job`` on every deck not done yet in ``out``; see :func:`run_sweep`. ``on_start``
    gets a first summary (decks to run, skipped) before the first deck starts."""
    job.check()
    check_decks(decks)
    raytasks.check_engine(engine, address, ENGINES)
    if workers is not None and workers < 1:
        raise PasurInputError(f"--workers must be at least 1, got {workers}")
    if memory_limit is not None and memory_limit <= 0:
        raise PasurInputError(f"the memory limit must be positive, got {memory_limit}")
    gpus = _gpus(job, gpus_per_task)
    out = prepare_resumable_dir(out, marker=SWEEP_FILE)
    t0 = time.perf_counter()
    with folder_lock(out, "sweep"):
        manifest = prepare(out, decks, job)
        todo = [
            nd
            for nd in decks
            if manifest.status(nd.id) == "pending" or (retry_failed and manifest.status(nd.id) == "failed")
        ]
        summary = {"out": str(out), "decks": len(decks), "to_run": len(todo), "skipped": len(decks) - len(todo)}
        if on_start is not None:
            on_start(summary)
        with _Progress(len(todo), progress and bool(todo)) as shown, _terminate_as_interrupt():
            run = _Run(out, manifest, shown)
            try:
                if engine == "inline":
                    _run_inline(todo, job, memory_limit, run)
                else:
                    _run_ray(todo, job, memory_limit, run, workers, address, gpus)
            except KeyboardInterrupt:
                manifest.release_running()
                manifest.save()
                write_records(out)
                raise SweepInterrupted(_summary(summary, run, decks, manifest, t0, interrupted=True)) from None
            except BaseException:  # the driver's own error: the running deck did not fail
                manifest.release_running()
                manifest.save()
                raise
        write_records(out)
        summary = _summary(summary, run, decks, manifest, t0, interrupted=False)
    by_id = {r["deck_id"]: r for r in read_records(out)}
    return SweepResult([by_id[nd.id] for nd in decks if nd.id in by_id], summary)


@contextmanager
def _terminate_as_interrupt():
    """SIGTERM (a session or a scheduler ending the job) stops a sweep as Ctrl-C does, so the deck
    that was running is not counted against it; only SIGKILL and the OOM killer leave it
    ``running``. Only in the main thread, and only where nobody installed a handler."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _summary(first: dict, run: _Run, decks: list[NamedDeck], manifest: Manifest, t0: float, interrupted: bool) -> dict:
    wall = time.perf_counter() - t0
    statuses = [manifest.status(nd.id) for nd in decks]
    return {
        **first,
        "ran_done": run.done,
        "ran_failed": run.failed,
        "done": statuses.count("done"),
        "failed": statuses.count("failed"),
        "pending": statuses.count("pending"),
        "failed_decks": [nd.id for nd, s in zip(decks, statuses, strict=True) if s == "failed"],
        "wall_seconds": round(wall, 3),
        "decks_per_hour": round((run.done + run.failed) / wall * 3600, 1) if wall > 0 else None,
        "interrupted": interrupted,
    }


def run_sweep(decks: list[NamedDeck], job: DeckJob, out: Path, **options: Any) -> list[dict]:
    """Run ``job`` on every deck into ``out`` and return the records of all done decks, in deck order;
    ``options`` are :func:`sweep`'s.

    ``workers``: decks at once (default: the CPUs of this machine, or of the cluster at
    ``address``); ``gpus_per_task``: GPUs each task asks Ray for (default 1 for a CUDA device, 0
    for the CPU); ``engine="inline"`` runs the decks one by one in this process, without Ray, with
    the same outputs. Decks already done in ``out`` are skipped, failed ones too unless
    ``retry_failed``. Ctrl-C raises :class:`SweepInterrupted` (a ``KeyboardInterrupt``) after
    saving the manifest.
    """
    return sweep(decks, job, out, **options).records
