"""The experiments' worker processes (``--workers N``) end with their driver: a driver killed
outright runs no cleanup, and before the watcher its workers went on computing as orphans."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc to tell a zombie from a live process")

DRIVER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from types import SimpleNamespace
    from pasur.poker.experiments.checkpoints import run_methods

    def advance(game, method, iterations, out, device, report, threads=None):
        (Path(out) / f"{method}.pid").write_text(str(os.getpid()))
        report(1)
        time.sleep(600)  # a long method, still running when the driver is killed

    if __name__ == "__main__":
        run = SimpleNamespace(game="kuhn", iterations=2, out=Path(sys.argv[1]), device="cpu", workers=2,
                              progress=lambda *a: None)
        run_methods(run, ("a", "b"), advance)
    """
)


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for a parent that reaps it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _wait_for(cond, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.2)
    return cond()


def test_workers_exit_when_the_driver_is_killed(tmp_path):
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    driver = subprocess.Popen([sys.executable, str(script), str(tmp_path)])
    pids = [tmp_path / "a.pid", tmp_path / "b.pid"]
    try:
        # generous: two fresh interpreters import torch, on a machine that may be busy
        assert _wait_for(lambda: all(p.is_file() and p.read_text() for p in pids), 180), "workers never started"
        workers = [int(p.read_text()) for p in pids]
        assert all(_alive(w) for w in workers)
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        # the watcher polls once a second; the deadline is for a loaded machine, not a speed check
        assert _wait_for(lambda: not any(_alive(w) for w in workers), 60), "orphaned workers still running"
    finally:
        driver.kill()
        for p in pids:
            if p.is_file() and p.read_text():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(p.read_text()), signal.SIGKILL)
