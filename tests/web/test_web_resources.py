"""Issue 46: the server's resources stay bounded (database connections and files across the
worker threads' turnover, sockets per seat) and what it says of errors is true."""

from __future__ import annotations

import os
import threading

import pytest

from pasur.web.store import POOL_IDLE

TOKEN = "X-Pasur-Token"


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def burst(n_threads: int, work) -> None:
    """``work`` in ``n_threads`` new threads at once, each ended before returning (as the server's
    worker pool retires idle threads and starts new ones for the next burst)."""
    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files in /proc (Linux)")
def test_bursts_across_thread_turnover_keep_open_files_bounded(client):
    """Issue 46, item 1: each thread kept its own SQLite connection (two files: the database and
    its WAL) until shutdown, so every burst of requests on new threads left more files open,
    until the server ran out of descriptors and answered 500. Ten bursts of twelve new threads."""
    r = client.post("/api/games", json={"level": "greedy"})
    game, token = r.json()["id"], r.json()["token"]
    service = client.app.state.service
    views: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        v = service.view(game, token)
        with lock:
            views.append(v["hand_number"])

    burst(12, work)
    before = open_files()
    for _ in range(10):
        burst(12, work)
    assert views == [1] * 132  # every request answered
    assert service.store.open_connections() <= POOL_IDLE
    assert open_files() - before <= 2 * POOL_IDLE, (before, open_files())
