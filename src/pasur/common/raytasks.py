"""Ray for the layers that send tasks to it (sweeps, the arena): starting it here or joining a
cluster, its errors as one line, and the bounded loop that keeps at most a few tasks in flight.

Ray is imported only when a function here runs (it is slow to import and optional to the rest).
A driver that starts Ray stops it again (:func:`session`); tasks still running when the loop ends
early (an error, Ctrl-C) are cancelled, so an interrupted run leaves no work behind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pasur.common.errors import PasurInputError

T = TypeVar("T")

#: the folder that holds the ``pasur`` package (``src/`` in a checkout)
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def error_message(e: BaseException) -> str:
    """``Type: first line`` of a Ray error (its messages carry whole remote tracebacks); for a
    task that raised, the first line of what it raised (the error's own first line is only the
    task's process title)."""
    cause = getattr(e, "cause", None)
    first = str(cause if isinstance(cause, BaseException) else e).strip().splitlines()
    return f"{type(e).__name__}: {first[0] if first else ''}".strip()


def check_engine(engine: str, address: str | None, engines: tuple[str, ...]) -> str:
    """``--engine`` one of ``engines``; ``--address`` only with ``ray``."""
    if engine not in engines:
        raise PasurInputError(f"unknown --engine {engine!r} (choose from {', '.join(engines)})")
    if address is not None and engine != "ray":
        raise PasurInputError("--address needs the ray engine")
    return engine


def require_gpus(gpus_per_task: float, address: str | None) -> None:
    """Refuse tasks asking for GPUs that the Ray joined has none of: Ray would keep them waiting
    for ever, silently (its warning goes to a log the driver does not show)."""
    import ray

    if gpus_per_task > 0 and ray.cluster_resources().get("GPU", 0) < gpus_per_task:
        where = f"the Ray cluster at {address}" if address is not None else "this machine's Ray"
        raise PasurInputError(f"each task asks for {gpus_per_task:g} GPU(s), and {where} has fewer")


#: where Ray (2.60) looks for the token of a cluster with token authentication
TOKEN_PLACES = "RAY_AUTH_TOKEN, or the file RAY_AUTH_TOKEN_PATH names, or ~/.ray/auth_token"


def _chain(e: BaseException) -> list[BaseException]:
    """``e`` and the errors it was raised from."""
    out: list[BaseException] = []
    while e is not None and e not in out:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def join_hint(e: BaseException) -> str:
    """What to do when joining a cluster failed with ``e``, for Ray's own failures to connect:
    Ray 2.60's ``ray start --head`` turns token authentication on (when it finds a token, which
    any local ``ray.init()`` writes to ``~/.ray/auth_token``), and a driver joining an explicit
    address sends its token only with ``RAY_AUTH_MODE=token``; without it Ray says only
    "Failed to connect to Ray cluster at <this node's address>". Empty for other errors."""
    errors = _chain(e)
    text = " ".join(f"{type(x).__name__} {x}" for x in errors).lower()
    refused = any(w in text for w in ("unauthenticated", "invalidauthtoken", "authenticationerror"))
    if not refused and "failed to connect to ray cluster" not in text:
        return ""
    where = "see docs/cluster.md"
    if os.environ.get("RAY_AUTH_MODE", "").strip().lower() != "token":
        lead = (
            "the cluster requires token authentication"
            if refused
            else "if a cluster runs there, it may require token authentication (Ray 2.60's `ray start --head` "
            "turns it on)"
        )
        return (
            f"{lead}: set RAY_AUTH_MODE=token here, with the cluster's token in {TOKEN_PLACES} "
            f"(`ray get-auth-token` on the head prints it); {where}"
        )
    if refused:
        return (
            f"the cluster refused this token (RAY_AUTH_MODE=token; the token is read from {TOKEN_PLACES}): "
            f"give it the cluster's (`ray get-auth-token` on the head prints it); {where}"
        )
    return f"is a Ray head listening there (`ray status` on it)? {where}"


def start_ray(address: str | None, workers: int | None) -> bool:
    """Join the cluster at ``address``, or start a Ray instance of our own here (quietly, with
    ``workers`` CPUs, default all); ``True`` when this call started or joined it, ``False`` when
    Ray was already running in this process. A cluster that cannot be joined is a
    :class:`~pasur.common.errors.PasurInputError` naming it, and saying what to do when Ray
    could not connect (:func:`join_hint`: token authentication)."""
    import ray
    import ray.exceptions

    # Ray 2.60's error for a token that is missing where token authentication is on
    AuthenticationError = getattr(ray.exceptions, "AuthenticationError", RuntimeError)
    if ray.is_initialized():
        return False
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
    if address is not None:
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, ValueError, RuntimeError, AuthenticationError) as e:
            message = getattr(e, "message", None) if isinstance(e, AuthenticationError) else None
            shown = f"{type(e).__name__}: {message}" if isinstance(message, str) else error_message(e)
            hint = join_hint(e)
            raise PasurInputError(
                f"cannot join the Ray cluster at {address}: {shown}" + (f"; {hint}" if hint else "")
            ) from None
        return True
    # local workers import pasur from where this process does, even when it is not installed
    src = str(PACKAGE_ROOT)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if src not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([src, *[p for p in paths if p]])
    # address="local": a new instance of our own, never a cluster that `ray start` left running here
    ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, **quiet)
    return True


@contextlib.contextmanager
def session(address: str | None = None, workers: int | None = None) -> Iterator[None]:
    """Ray for the ``with`` block (:func:`start_ray`); shut down at its end if the block started it."""
    import ray

    started = start_ray(address, workers)
    try:
        yield
    finally:
        if started:
            ray.shutdown()


def capacity(gpus_per_task: float = 0.0) -> int:
    """Tasks Ray can run at once: the cluster's CPUs, or its GPUs over the GPUs each task asks for."""
    import ray

    res = ray.cluster_resources()
    cpus = int(res.get("CPU", 1))
    if gpus_per_task > 0:
        return max(1, min(cpus, int(res.get("GPU", 0) / gpus_per_task)))
    return max(1, cpus)


def run_bounded(
    submit: Callable[[T], Any],
    items: Iterable[T],
    limit: int,
    settle: Callable[[T, Any], None],
    *,
    failed: Callable[[T, BaseException, float], None] | None = None,
    in_flight: Callable[[int], None] | None = None,
    poll: float = 0.5,
) -> None:
    """Send ``submit(item)`` (it returns a Ray object ref) for each item, in order, with at most
    ``limit`` tasks in flight, and hand each result to ``settle(item, result)`` in this process as
    its task ends (in the order they end).

    A task whose result cannot be had (a ``RayError``: the task raised, its worker died) goes to
    ``failed(item, error, submitted)``, ``submitted`` the ``time.time()`` it was sent; without
    ``failed`` the error propagates. ``in_flight(n)`` hears the number of tasks running before each
    wait and before each ``settle``. ``poll``: seconds between checks when nothing ends (for the
    callbacks' sake; a task that ends is seen at once). Whatever ends the loop early (an error
    here or in a callback, Ctrl-C) cancels the tasks still in flight.
    """
    import ray
    from ray.exceptions import RayError

    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    queue = deque(items)
    inflight: dict[Any, tuple[T, float]] = {}
    try:
        while queue or inflight:
            while queue and len(inflight) < limit:
                item = queue.popleft()
                inflight[submit(item)] = (item, time.time())
            if in_flight is not None:
                in_flight(len(inflight))
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=poll)
            for ref in ready:
                item, submitted = inflight.pop(ref)
                try:
                    result = ray.get(ref)
                except RayError as e:
                    if failed is None:
                        raise
                    if in_flight is not None:
                        in_flight(len(inflight))
                    failed(item, e, submitted)
                    continue
                if in_flight is not None:
                    in_flight(len(inflight))
                settle(item, result)
    finally:
        for ref in inflight:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
