"""Checkpoints of an experiment's runs, one file per method under ``OUT/checkpoints/``, and the
runner that advances methods to them (in turn, in processes side by side, or as Ray tasks): what
makes the long experiments resumable and extendable (a larger ``--iterations`` goes on from the
last)."""

from __future__ import annotations

import contextlib
import os
import queue
import secrets
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import torch

from pasur.common.errors import PasurInputError
from pasur.common.outputs import atomic_path

CHECKPOINTS = "checkpoints"
#: how the methods of a run are advanced (``--engine``, checked by
#: :func:`pasur.common.raytasks.check_engine`): ``local`` (one after another in this process, or
#: ``--workers`` processes side by side) or ``ray`` (one Ray task each, here or on a cluster:
#: :func:`run_methods`)
ENGINES = ("local", "ray")


def checkpoint_path(out: Path, method: str) -> Path:
    return out / CHECKPOINTS / f"{method}.pt"


def load_checkpoint(out: Path, game: str, method: str, iterations: int) -> dict | None:
    """``method``'s checkpoint in ``out``, or None; refused when it is of another game or went
    further than ``iterations``."""
    path = checkpoint_path(out, method)
    if not path.is_file():
        return None
    try:  # tensors and plain containers only: a checkpoint file cannot run code. Mapped, not read:
        # the tables are copied into the solver's own, so a resume holds them once (the lossless
        # Numeral211 state is 1.8 GB); the mapping is private, the file never changes under it
        ck = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        missing = [k for k in ("game", "method", "iteration") if k not in ck]
    except Exception as e:  # torch raises many kinds on a file that is not its own
        raise PasurInputError(f"{path}: not a checkpoint of this experiment ({str(e).splitlines()[0][:120]})") from None
    if missing:
        raise PasurInputError(f"{path}: not a checkpoint of this experiment (no {', '.join(missing)})")
    if ck["game"] != game:
        raise PasurInputError(f"--out {out} holds runs of {ck['game']}, not {game}; choose another folder")
    if ck["iteration"] > iterations:
        raise PasurInputError(
            f"--out {out} holds a {method} run of {ck['iteration']} iterations, more than --iterations "
            f"{iterations}; give --iterations {ck['iteration']} or another folder"
        )
    return ck


def save_checkpoint(out: Path, ck: dict) -> None:
    """Written through a temporary name: an interrupted save leaves the previous checkpoint."""
    path = checkpoint_path(out, ck["method"])
    path.parent.mkdir(exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save(ck, tmp)


#: a running method writes its checkpoint at least this often (seconds) ...
SAVE_EVERY_S = 60.0
#: ... unless writing it takes longer than this share of the time: then the interval grows so
#: that saving costs at most this share (the lossless Numeral211 state is 1.8 GB, several
#: seconds a save: every minute it wrote 114 GB over an hour's run)
SAVE_SHARE = 0.05


def powers_of_two(n: int) -> list[int]:
    """1, 2, 4, ... up to ``n``, and ``n``: where Figure 5 and the lossless solve measure."""
    pts, p = set(), 1
    while p <= n:
        pts.add(p)
        p *= 2
    return sorted(pts | {n})


def drive(
    ck: dict,
    points: list[int],
    out: Path,
    *,
    step: Callable[[int], None],
    iteration: Callable[[], int],
    state: Callable[[], dict],
    measure: Callable[[int], dict],
    costs: Callable[[], dict] = dict,
    report: Callable[[int], None] | None = None,
    chunk: int = 1,
    save_every: float = SAVE_EVERY_S,
) -> dict:
    """Advance one method through ``points`` and measure at each not yet in ``ck["trace"]``.

    ``step(k)`` runs ``k`` more iterations (at most ``chunk`` at a time), ``measure(point)`` gives
    the trace row; solver and measuring seconds are summed into ``ck``. The checkpoint (``ck``
    with ``costs()``, the iteration and ``state()``) is saved after each measurement and every
    ``save_every`` seconds in between, or less often where a save takes more than
    :data:`SAVE_SHARE` of that, so a stopped run loses at most the larger interval."""
    done = {p["iteration"] for p in ck["trace"]}
    last_save = time.monotonic()
    interval = save_every

    def save() -> None:
        nonlocal last_save, interval
        began = time.monotonic()
        save_checkpoint(out, ck)
        last_save = time.monotonic()
        interval = max(save_every, (last_save - began) / SAVE_SHARE)

    for point in points:
        while iteration() < point:
            t0 = time.perf_counter()
            step(min(point - iteration(), chunk))
            ck["solver_seconds"] += time.perf_counter() - t0
            if report is not None:
                report(iteration())
            if time.monotonic() - last_save > interval and iteration() < point:
                ck |= costs() | {"iteration": iteration(), "state": state()}
                save()
        if point in done:
            continue
        t0 = time.perf_counter()
        row = measure(point)
        ck["measure_seconds"] += time.perf_counter() - t0
        ck["trace"].append(row)
        ck |= costs() | {"iteration": iteration(), "state": state()}
        save()
    return ck


def traces_until(cks: dict[str, dict], iterations: int) -> dict[str, list[dict]]:
    """Each method's trace up to ``iterations`` (a checkpoint of a longer run holds more)."""
    return {m: [r for r in ck["trace"] if r["iteration"] <= iterations] for m, ck in cks.items()}


def run_methods(run, methods, advance: Callable[..., dict], *extra, label: str = "") -> dict[str, dict]:
    """Advance every method to ``run.iterations`` and return their checkpoints.

    ``advance(game, method, iterations, out, device, *extra, report=, threads=)`` runs or resumes
    one method (a module-level function, so that a worker process can import it). With
    ``run.engine == "ray"`` each method is a Ray task (:func:`_run_ray`); otherwise, with
    ``run.workers > 1``, methods run side by side in processes, one torch thread each, or one
    after another with the command's threads. Progress is iterations done over all methods."""
    total = run.iterations * len(methods)
    cks = {m: load_checkpoint(run.out, run.game, m, run.iterations) for m in methods}
    done = {m: ck["iteration"] if ck else 0 for m, ck in cks.items()}

    def show() -> None:
        run.progress(sum(done.values()), total, f"{run.game}: {label or f'{len(methods)} methods'}")

    show()
    if getattr(run, "engine", "local") == "ray":
        _run_ray(run, methods, advance, extra, done, show)
    elif run.workers > 1 and len(methods) > 1:
        import multiprocessing as mp
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        ctx = mp.get_context("spawn")
        reports = ctx.Queue()
        workers = min(run.workers, len(methods))
        init = (os.getpid(), reports)
        with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=init) as pool:
            args = [(run.game, m, run.iterations, run.out, run.device, *extra) for m in methods]
            futures = {pool.submit(_advance_reporting, advance, a) for a in args}
            while futures:
                finished, futures = wait(futures, timeout=1.0, return_when=FIRST_COMPLETED)
                for f in finished:
                    f.result()
                done.update(_drain(reports))
                show()
        done.update(_drain(reports))  # what the workers sent after their last future settled
        show()
        reports.close()
    else:
        for m in methods:

            def report(n: int, m: str = m) -> None:
                done[m] = n
                show()

            advance(
                run.game, m, run.iterations, run.out, run.device, *extra, report=report, threads=torch.get_num_threads()
            )
    return {m: load_checkpoint(run.out, run.game, m, run.iterations) for m in methods}


_REPORTS = None  # in a worker process: the queue its iterations are reported through


def _init_worker(driver: int, reports) -> None:
    """Worker initializer: keep the report queue, and end this process once the driver is gone.

    A driver killed outright (SIGTERM, SIGKILL: no ``finally`` runs) would otherwise leave its
    workers computing as orphans; a watcher thread notices the new parent within a second and
    exits. Checkpoints are written through a temporary name, so an exit anywhere leaves the last
    one whole and a rerun resumes from it."""
    global _REPORTS
    _REPORTS = reports

    def watch() -> None:
        while os.getppid() == driver:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-driver", daemon=True).start()


def _drain(reports) -> dict[str, int]:
    """The latest iteration count each method reported since the last drain."""
    latest: dict[str, int] = {}
    while True:
        try:
            method, n = reports.get_nowait()
        except queue.Empty:
            return latest
        latest[method] = n


def _advance_reporting(advance: Callable[..., dict], args: tuple) -> str:
    """In a worker process: ``advance`` one method, its iterations reported through the queue."""
    method = args[1]

    def report(n: int) -> None:
        _REPORTS.put((method, n))

    advance(*args, report=report)
    return method


#: a Ray task reports its iterations at most this often (seconds), and at its last
RAY_REPORT_EVERY_S = 0.5


def _run_ray(run, methods, advance: Callable[..., dict], extra: tuple, done: dict, show: Callable[[], None]) -> None:
    """Each method one Ray task (one CPU; one GPU as well on a CUDA device), on a Ray instance of
    our own with ``run.workers`` CPUs or on the cluster at ``run.address`` (every CPU it has, or
    ``run.workers`` tasks at once when that is more than 1). One method that fails ends the run
    (the others are cancelled; a rerun resumes every method from its checkpoint).

    The tasks write their checkpoints into ``run.out`` themselves, as the local workers do, so on
    a cluster ``--out`` must be a folder every node mounts (a shared filesystem, as Ray Tune asks
    of multi-node runs): each task first looks for a file the driver wrote under
    ``checkpoints/`` and fails in one line naming its node when it cannot see it. Tasks report
    their iterations through a Ray queue; Ctrl-C or an error cancels the tasks still running."""
    import ray
    from ray.exceptions import RayError
    from ray.util.queue import Queue

    from pasur.common import raytasks

    address = getattr(run, "address", None)
    gpus = 1.0 if str(run.device).startswith("cuda") else 0.0
    # Ray gives each task its GPU as the only one it sees, so a task names it plainly
    device = "cuda" if gpus else run.device
    out = Path(run.out).resolve()  # a worker's own working folder is not the driver's
    marker = out / CHECKPOINTS / f".ray-driver-{secrets.token_hex(8)}"
    try:
        with raytasks.session(address, None if address is not None else run.workers):
            raytasks.require_gpus(gpus, address)
            marker.parent.mkdir(exist_ok=True)
            marker.write_text(f"written by the driver on {socket.gethostname()}, removed when it ends\n")
            reports = Queue(actor_options={"num_cpus": 0})
            task = ray.remote(num_cpus=1, num_gpus=gpus, max_retries=0)(_advance_ray)
            if address is None:
                limit = run.workers
            else:  # the cluster's CPUs (or GPUs), capped by --workers when it is given
                limit = raytasks.capacity(gpus) if run.workers == 1 else min(run.workers, raytasks.capacity(gpus))

            def submit(method: str):
                args = (run.game, method, run.iterations, out, device, *extra)
                return task.remote(advance, args, str(marker), reports)

            def failed(method: str, error: BaseException, submitted: float) -> None:
                cause = getattr(error, "cause", None)
                if isinstance(cause, PasurInputError):  # the user's mistake, said as the task said it
                    raise PasurInputError(str(cause)) from None
                node = getattr(error, "ip", None) or "?"
                raise PasurInputError(f"{method} failed on Ray node {node}: {raytasks.error_message(error)}") from None

            def in_flight(n: int) -> None:
                done.update(_drain_ray(reports))
                show()

            try:
                raytasks.run_bounded(submit, list(methods), max(1, limit), lambda m, r: None,
                                     failed=failed, in_flight=in_flight)  # fmt: skip
                done.update(_drain_ray(reports))
                show()
            finally:
                with contextlib.suppress(Exception):  # never hide the error that ended the loop
                    reports.shutdown(force=True)
    except RayError as e:  # Ray itself failed (a lost node, the queue's actor): one line
        raise PasurInputError(f"Ray: {raytasks.error_message(e)}") from None
    finally:
        marker.unlink(missing_ok=True)


def _drain_ray(reports) -> dict[str, int]:
    """The latest iteration count each method reported through the Ray queue since the last drain."""
    latest: dict[str, int] = {}
    n = reports.qsize()
    if n:
        for method, k in reports.get_nowait_batch(n):
            latest[method] = k
    return latest


def _advance_ray(advance: Callable[..., dict], args: tuple, marker: str, reports) -> str:
    """A Ray task: check that ``--out`` is the driver's folder, then ``advance`` one method, its
    iterations reported through ``reports`` at most every :data:`RAY_REPORT_EVERY_S`."""
    method, iterations, out = args[1], args[2], args[3]
    if not Path(marker).is_file():
        raise PasurInputError(
            f"--out {out} is not the driver's folder on Ray node {socket.gethostname()}: with --address, give a "
            "folder on a filesystem every node mounts"
        )
    last = [0.0]

    def report(n: int) -> None:
        now = time.monotonic()
        if n >= iterations or now - last[0] >= RAY_REPORT_EVERY_S:
            reports.put_nowait((method, n))
            last[0] = now

    advance(*args, report=report)
    return method
