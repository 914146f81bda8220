"""A real two-node Ray cluster on loopback with token authentication on (what Ray 2.60's
``ray start --head`` gives a user): a sweep and an arena join it with ``--address``, and a driver
without the token is told what to do (issue 24, item 6).

The nodes are started here with the venv's ``ray start --block`` (head, then one worker node), on
free ports, in a temporary folder of their own and in a process group of their own; teardown
ends exactly those process groups (and any process left whose command line names that folder),
never ``ray stop``, which would stop every Ray on the machine, the test suite's own included.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

VENV_BIN = Path(sys.executable).parent
RAY = VENV_BIN / "ray"
PASUR = [sys.executable, "-c", "from pasur.cli import main; main()"]
SRC = Path(__file__).resolve().parents[1] / "src"


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without any RAY_ setting (the test's own Ray sets RAY_AUTH_MODE), with
    ``src`` importable (the workers import pasur) and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    return {**env, **extra}


def _node_command(head_port: int, temp_dir: str | None) -> list[str]:
    """The head has no CPU and the worker node two: every task a driver sends the cluster runs on
    the worker node, so the test can tell that the second node ran the work."""
    p = _free_ports(10)
    cmd = [
        str(RAY),
        "start",
        "--block",
        "--node-ip-address=127.0.0.1",
        f"--num-cpus={0 if temp_dir is not None else 2}",
        "--object-store-memory=80000000",
        "--disable-usage-stats",
        f"--node-manager-port={p[0]}",
        f"--object-manager-port={p[1]}",
        f"--worker-port-list={p[2]},{p[3]},{p[4]},{p[5]}",
        f"--dashboard-agent-listen-port={p[6]}",
        f"--dashboard-agent-grpc-port={p[7]}",
        f"--metrics-export-port={p[8]}",
        f"--runtime-env-agent-port={p[9]}",
    ]
    if temp_dir is not None:  # the head
        return [*cmd, "--head", f"--port={head_port}", f"--temp-dir={temp_dir}", "--include-dashboard=false"]
    return [*cmd, f"--address=127.0.0.1:{head_port}"]


def _wait_port(port: int, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"the Ray head exited early:\n{log.read_text()[-3000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.2)
    raise RuntimeError(f"the Ray head did not listen on {port} in {timeout} s:\n{log.read_text()[-3000:]}")


def _processes_naming(text: str) -> list[int]:
    """Processes whose command line contains ``text`` (our own temporary folder)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            with contextlib.suppress(OSError):
                if text.encode() in (d / "cmdline").read_bytes():
                    found.append(int(d.name))
    return found


def _stop(procs: list[subprocess.Popen], temp_dir: str) -> None:
    """End the nodes started here: SIGTERM to each node's own process group (``ray start --block``
    then stops its node's processes), SIGKILL to what is left after a grace period, then any
    process still naming our temporary folder."""
    for proc in reversed(procs):  # the worker node first
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    end = time.monotonic() + 5
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.1, end - time.monotonic()))
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    for pid in _processes_naming(temp_dir):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


#: the worker node's ``sitecustomize``: every Python process of that node (its Ray workers among
#: them) leaves a file named by its pid in MARKS, and one named ``PID-MODULE`` when it imports
#: one of pasur's task modules (a task of the sweep or the arena ran in it)
_MARKER = """
import os, sys
MARKS = {marks!r}
open(os.path.join(MARKS, str(os.getpid())), "w").close()

class _Noted:
    def find_spec(self, name, path=None, target=None):
        if name in ("pasur.study.sweep", "pasur.hidden.arena"):
            open(os.path.join(MARKS, f"{{os.getpid()}}-{{name}}"), "w").close()
        return None

sys.meta_path.insert(0, _Noted())
"""


def _marking_env(env: dict[str, str], temp_dir: str) -> tuple[dict[str, str], Path]:
    """The worker node's environment, with :data:`_MARKER` as its ``sitecustomize``, and the
    folder its marks go to."""
    site, marks = Path(temp_dir) / "site", Path(temp_dir) / "marks"
    site.mkdir()
    marks.mkdir()
    (site / "sitecustomize.py").write_text(_MARKER.format(marks=str(marks)))
    return {**env, "PYTHONPATH": os.pathsep.join([str(site), env["PYTHONPATH"]])}, marks


@contextlib.contextmanager
def loopback_cluster(token: str) -> Iterator[tuple[str, dict[str, str], str, Path]]:
    """A head (no CPU) and one worker node (two CPUs) on 127.0.0.1, token authentication on with
    ``token``; yields the head's address, the environment a driver needs to join it, the nodes'
    temporary folder (every process of the nodes names it) and the folder where the worker node's
    processes leave their marks (:data:`_MARKER`)."""
    temp_dir = tempfile.mkdtemp(prefix="pasur-ray-", dir="/tmp")  # short: Ray's socket paths live under it
    env = _clean_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token)
    worker_env, marks = _marking_env(env, temp_dir)
    [port] = _free_ports(1)
    procs: list[subprocess.Popen] = []
    try:
        head_log = Path(temp_dir) / "node-0.log"
        with head_log.open("wb") as f:
            procs.append(
                subprocess.Popen(
                    _node_command(port, temp_dir), env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True
                )
            )
        _wait_port(port, procs[0], head_log, timeout=60)
        address = f"127.0.0.1:{port}"
        # The worker node's ports are picked free and then let go, so another process may take
        # one before Ray binds it, and a loaded machine may take long to start it: a node that
        # exits is started again on fresh ports, up to three times, within three minutes in all.
        end = time.monotonic() + 180
        for attempt in range(3):
            log = Path(temp_dir) / f"node-1-{attempt}.log"
            with log.open("wb") as f:
                procs.append(
                    subprocess.Popen(
                        _node_command(port, None),
                        env=worker_env,
                        stdout=f,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
            nodes, cpus = _wait_nodes(address, env, 2, procs[-1], end)
            if nodes == 2 or procs[-1].poll() is None:
                break
        assert (nodes, cpus) == (2, 2.0), f"{nodes} node(s) alive; the worker node's log:\n{log.read_text()[-3000:]}"
        yield address, env, temp_dir, marks
    finally:
        _stop(procs, temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _wait_nodes(address: str, env: dict[str, str], n: int, node: subprocess.Popen, end: float) -> tuple[int, float]:
    """The nodes alive and the cluster's CPUs once ``n`` nodes are alive, ``node`` has exited,
    or the monotonic time ``end`` has passed (whichever comes first)."""
    stop = Path(tempfile.mkdtemp(prefix="pasur-wait-", dir="/tmp")) / "node-exited"
    code = (
        "import ray, sys, time, os\n"
        f"ray.init(address={address!r}, logging_level='ERROR', log_to_driver=False)\n"
        f"end = time.monotonic() + {max(1.0, end - time.monotonic())}\n"
        f"while sum(x['Alive'] for x in ray.nodes()) < {n} and time.monotonic() < end"
        f" and not os.path.exists({str(stop)!r}):\n"
        "    time.sleep(0.2)\n"
        "print(sum(x['Alive'] for x in ray.nodes()), ray.cluster_resources().get('CPU'))\n"
    )
    waiter = subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        while waiter.poll() is None:
            if node.poll() is not None:
                stop.touch()
            if time.monotonic() > end + 60:  # ray.init itself hung
                waiter.kill()
            time.sleep(0.2)
        out, err = waiter.communicate(timeout=60)
    finally:
        if waiter.poll() is None:
            waiter.kill()
        shutil.rmtree(stop.parent, ignore_errors=True)
    assert waiter.returncode == 0, err[-3000:]
    nodes, cpus = out.split()[-2:]
    return int(nodes), float(cpus)


def _pasur(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*PASUR, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_a_sweep_and_an_arena_join_a_two_node_cluster_with_token_authentication(tmp_path):
    """One test, one cluster (about 15 s to start, 5 s to stop): a sweep and an arena with
    ``--address`` and the token, run by the worker node's processes (the head has no CPU; the
    worker node's processes mark themselves), then two drivers that cannot join, each told what
    to do."""
    import pyarrow.parquet as pq

    from pasur.hidden.arena import play_pair

    with loopback_cluster(secrets.token_hex(32)) as (address, env, temp_dir, marks):
        assert len(_processes_naming(temp_dir)) >= 4  # two nodes: ray start, gcs, raylets, ...
        r = _pasur(
            [
                *["sweep", "--decks", "2", "--seed", "36", "--method", "exact"],
                *["--address", address, "--out", str(tmp_path / "sweep")],
            ],
            env,
        )
        assert r.returncode == 0, r.stderr[-3000:]
        assert "2 of 2 decks done, 0 failed" in r.stdout, r.stdout
        rows = pq.read_table(tmp_path / "sweep" / "manifest.parquet").to_pylist()
        assert [row["status"] for row in rows] == ["done", "done"]
        # each deck ran in a process of the worker node, which imported the sweep's task module
        ran = {int(row["worker"].removeprefix("pid ")) for row in rows}
        assert all((marks / f"{pid}-pasur.study.sweep").exists() for pid in ran), (ran, sorted(os.listdir(marks)))

        r = _pasur(
            [
                *["arena", "--agents", "greedy,random", "--deals", "4", "--chunk", "2", "--seed", "3"],
                *["--address", address, "--json", "--out", str(tmp_path / "arena")],
            ],
            env,
        )
        assert r.returncode == 0, r.stderr[-3000:]
        [pair] = json.loads(r.stdout)["pairs"]
        here = play_pair("greedy", "random", deals=4, seed=3)
        assert (pair["deals"], pair["margin"], pair["win_rate"]) == (4, here["margin"], here["win_rate"])
        assert any(m.name.endswith("-pasur.hidden.arena") for m in marks.iterdir()), sorted(os.listdir(marks))

        # Without RAY_AUTH_MODE=token Ray's own error is a bare ConnectionError naming this node's
        # address; with a wrong token, the same. The one line says what to do in each case.
        # RAY_gcs_server_port_wait_time_s=1: Ray gives up after one try instead of about twenty.
        bare = {k: v for k, v in env.items() if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
        bare["RAY_gcs_server_port_wait_time_s"] = "1"
        for extra, says in [
            ({}, "the cluster requires token authentication: set RAY_AUTH_MODE=token"),
            ({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "0" * 64}, "the cluster refused this token"),
        ]:
            r = _pasur(
                [
                    "arena",
                    "--agents",
                    "greedy,random",
                    "--deals",
                    "1",
                    "--address",
                    address,
                    "--out",
                    str(tmp_path / "no"),
                ],
                {**bare, **extra},
            )
            assert r.returncode == 2, r.stderr[-3000:]
            line = r.stderr.strip().splitlines()[-1]
            assert line.startswith(f"error: cannot join the Ray cluster at {address}: ConnectionError"), line
            assert says in line and "RAY_AUTH_TOKEN" in line and "docs/cluster.md" in line, line
    assert _processes_naming(temp_dir) == []  # both nodes stopped


# -- without a cluster: the hint and the options -------------------------------------------


def _failed_join(cause: str) -> ConnectionError:
    """Ray's error when a driver cannot join: a bare ConnectionError raised from the cause."""
    try:
        try:
            raise RuntimeError(cause)
        except RuntimeError as e:
            raise ConnectionError("Failed to connect to Ray cluster at 192.0.2.2:6379") from e
    except ConnectionError as e:
        return e


@pytest.mark.parametrize(
    ("mode", "cause", "says"),
    [
        (None, "Unauthenticated: RPC error: InvalidAuthToken", "the cluster requires token authentication: set"),
        ("disabled", "Unauthenticated", "the cluster requires token authentication: set RAY_AUTH_MODE=token"),
        (None, "Connection refused", "if a cluster runs there, it may require token authentication"),
        ("token", "Unauthenticated: RPC error: InvalidAuthToken", "the cluster refused this token"),
        ("token", "Connection refused", "is a Ray head listening there"),
    ],
)
def test_the_hint_names_what_to_do(monkeypatch, mode, cause, says):
    from pasur.common import raytasks

    if mode is None:
        monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    else:
        monkeypatch.setenv("RAY_AUTH_MODE", mode)
    hint = raytasks.join_hint(_failed_join(cause))
    assert hint.startswith(says) and hint.endswith("see docs/cluster.md"), hint
    assert raytasks.join_hint(ConnectionError("nobody at that address")) == ""


def test_a_join_that_fails_is_one_line_with_the_hint(monkeypatch):
    import ray

    from pasur.common import raytasks
    from pasur.common.errors import PasurInputError

    def refuse(**kw):
        raise _failed_join("Unauthenticated: InvalidAuthToken")

    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(PasurInputError) as e:
        raytasks.start_ray("10.0.0.9:6379", None)
    assert str(e.value).startswith(
        "cannot join the Ray cluster at 10.0.0.9:6379: ConnectionError: Failed to connect to Ray cluster at "
        "192.0.2.2:6379; the cluster requires token authentication: set RAY_AUTH_MODE=token here"
    )
    assert "\n" not in str(e.value)


def test_the_arena_takes_address_only_with_ray(tmp_path):
    from typer.testing import CliRunner

    import pasur.cli.hidden  # noqa: F401  (registers the command)
    from pasur.cli import app

    r = CliRunner().invoke(
        app,
        ["arena", "--agents", "greedy,random", "--engine", "inline", "--address", "h:1", "--out", str(tmp_path / "a")],
    )
    assert r.exit_code == 2 and r.stderr.strip() == "error: --address needs the ray engine", r.output
    assert not (tmp_path / "a").exists()
