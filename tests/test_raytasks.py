"""Ray for sweeps and the arena (``pasur.common.raytasks``): the bounded loop keeps to its limit,
hands every result over once, sends failures aside or raises, and cancels what is still running when
it ends early; starting Ray puts the package on the workers' path and names a cluster it cannot join."""

from __future__ import annotations

import os
import time
from itertools import pairwise
from pathlib import Path

import pytest

from pasur.common import raytasks
from pasur.common.errors import PasurInputError


def _remote(ray, behaviour: str):
    """A task by behaviour (defined here, so that Ray ships it by value to workers that cannot
    import this test module)."""

    def timed(x: int) -> tuple[int, float, float]:
        start = time.time()
        time.sleep(0.3)
        return x * x, start, time.time()

    def fail_on_2(x: int) -> int:
        if x == 2:
            raise ValueError("two is refused")
        return x

    def slow_unless_0(x: int) -> int:
        if x == 0:
            raise ValueError("first")
        time.sleep(120)
        return x

    fn = {"timed": timed, "fail_on_2": fail_on_2, "slow_unless_0": slow_unless_0}[behaviour]
    return ray.remote(fn).options(num_cpus=1, max_retries=0)


def test_the_loop_keeps_to_its_limit_and_settles_every_result_once(ray_here):
    task = _remote(ray_here, "timed")
    settled: dict[int, tuple] = {}
    counts: list[int] = []

    def settle(x, result):
        assert x not in settled
        settled[x] = result

    raytasks.run_bounded(task.remote, range(5), 1, settle, in_flight=counts.append, poll=0.05)
    assert {x: r[0] for x, r in settled.items()} == {x: x * x for x in range(5)}
    # Ray has two CPUs, but with a limit of one the tasks ran one after the other, in order
    spans = sorted((r[1], r[2]) for r in settled.values())
    assert all(nxt[0] >= prev[1] for prev, nxt in pairwise(spans))
    assert [x for x, _ in sorted(settled.items(), key=lambda kv: kv[1][1])] == [0, 1, 2, 3, 4]
    assert counts and max(counts) == 1 and counts[-1] == 0


def test_a_failed_task_goes_aside_and_the_others_go_on(ray_here):
    task = _remote(ray_here, "fail_on_2")
    settled, failures = {}, []
    t0 = time.time()
    raytasks.run_bounded(
        task.remote,
        range(5),
        2,
        settled.__setitem__,
        failed=lambda x, e, submitted: failures.append((x, raytasks.error_message(e), submitted)),
    )
    assert settled == {0: 0, 1: 1, 3: 3, 4: 4}
    [(x, message, submitted)] = failures
    assert x == 2 and t0 <= submitted <= time.time()
    assert message.startswith("RayTaskError(ValueError)") and "\n" not in message


@pytest.mark.parametrize("how", ["a task fails", "Ctrl-C in settle"])
def test_ending_early_cancels_the_tasks_in_flight(ray_here, how):
    from ray.exceptions import TaskCancelledError

    task = _remote(ray_here, "slow_unless_0" if how == "a task fails" else "timed")
    slow = _remote(ray_here, "slow_unless_0")
    refs = []

    def submit(x):
        # item 0 is the task that ends first; the others would run for two minutes
        ref = task.remote(x) if x == 0 else slow.remote(x)
        refs.append(ref)
        return ref

    def settle(x, result):
        raise KeyboardInterrupt

    with pytest.raises(Exception if how == "a task fails" else KeyboardInterrupt) as caught:
        raytasks.run_bounded(submit, range(4), 2, settle, poll=0.05)
    if how == "a task fails":
        assert "first" in str(caught.value)
    assert len(refs) == 2  # the limit: the other items were never sent
    ready, _ = ray_here.wait(refs[1:], num_returns=1, timeout=30)
    assert ready, "the slow task was left running"
    with pytest.raises(TaskCancelledError):
        ray_here.get(refs[1])


def test_a_session_inside_a_running_ray_leaves_it_running(ray_here):
    with raytasks.session(None, 2):
        pass
    assert ray_here.is_initialized()


def test_starting_ray_here_puts_the_package_folder_on_the_workers_path(monkeypatch):
    import ray

    calls = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: calls.append(kw))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/elsewhere", ""]))
    assert raytasks.start_ray(None, 3) is True
    first, *rest = os.environ["PYTHONPATH"].split(os.pathsep)
    assert (Path(first) / "pasur" / "__init__.py").is_file() and rest == ["/elsewhere"]
    [kw] = calls
    assert kw["address"] == "local" and kw["num_cpus"] == 3 and kw["include_dashboard"] is False


def test_a_cluster_that_cannot_be_joined_is_named(monkeypatch):
    import ray

    def refuse(**kw):
        raise ConnectionError("nobody at that address\n(a long Ray explanation)")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(PasurInputError) as e:
        raytasks.start_ray("10.0.0.9:6379", None)
    assert str(e.value) == "cannot join the Ray cluster at 10.0.0.9:6379: ConnectionError: nobody at that address"


def test_a_session_that_starts_ray_stops_it_even_on_an_error(monkeypatch):
    import ray

    calls = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: calls.append("init"))
    monkeypatch.setattr(ray, "shutdown", lambda: calls.append("shutdown"))
    with raytasks.session(None, 2):
        assert calls == ["init"]
    assert calls == ["init", "shutdown"]
    with pytest.raises(KeyError), raytasks.session(None, 2):
        raise KeyError("the work failed")
    assert calls == ["init", "shutdown", "init", "shutdown"]


def test_tasks_asking_for_gpus_that_ray_lacks_are_refused(ray_here):
    """Ray would keep such tasks waiting for ever, and say so only in a log the driver hides."""
    assert ray_here.cluster_resources().get("GPU", 0) == 0  # the test fixture's Ray: two CPUs only
    raytasks.require_gpus(0.0, None)  # CPU tasks are fine
    with pytest.raises(PasurInputError, match="this machine's Ray has fewer"):
        raytasks.require_gpus(1.0, None)


def test_a_task_error_is_said_by_what_the_task_raised(ray_here):
    """A task's own error, not its process title, which is all the Ray error's first line holds."""
    task = _remote(ray_here, "fail_on_2")
    failures = []
    raytasks.run_bounded(task.remote, [2], 1, lambda x, r: None,
                         failed=lambda x, e, submitted: failures.append(raytasks.error_message(e)))  # fmt: skip
    [message] = failures
    assert message == "RayTaskError(ValueError): two is refused", message
