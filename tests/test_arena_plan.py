"""Pre-registered arena runs (issue 24, item 4): ``pasur arena --plan PLAN.json`` runs only a
plan committed unchanged in its git repository, takes every parameter from it, writes the plan's
commit, path and SHA-256 into results.json; a reader's check (``pasur arena-verify``, and the git
commands docs/hidden.md gives) accepts a result committed after its plan and nothing else."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pasur.cli.hidden  # noqa: F401  (registers the commands)
from pasur.cli import app
from pasur.common.errors import PasurInputError
from pasur.hidden import plan as plan_module
from pasur.hidden.arena import play_pair
from pasur.hidden.plan import parse_plan, verify

runner = CliRunner()

PLAN = {
    "claim": "greedy beats random: A's margin per deal has a 95 % interval above 0",
    "agents": ["greedy", "random"],
    "pairs": [["greedy", "random"]],
    "deals": 4,
    "seed": 7,
    "sample_seed": 1,
    "chunk": 2,
    "stopping": "fixed",
}


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=check, env=env)


def commit(repo: Path, *paths: str, message: str = "c") -> str:
    git(repo, "add", "--", *paths)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q")
    (r / "README").write_text("a repository\n")
    commit(r, "README", message="start")
    return r


def write_plan(repo: Path, plan: dict | None = None, name: str = "plans/p.json") -> Path:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan or PLAN, indent=1) + "\n")
    return path


def arena(*args: str):
    return runner.invoke(app, ["arena", "--engine", "inline", *args])


def one_line_error(r, *needles: str) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_a_committed_plan_runs_and_its_commit_goes_into_the_results(repo):
    plan = write_plan(repo)
    plan_commit = commit(repo, "plans/p.json", message="plan")
    (repo / "README").write_text("a later commit, not touching the plan\n")
    head = commit(repo, "README")
    out = repo / "results" / "run"
    r = arena("--plan", str(plan), "--out", str(out))
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())
    rec = res["plan"]
    assert rec["path"] == "plans/p.json"
    assert rec["commit"] == plan_commit != head  # the commit that last changed the plan, not HEAD
    assert rec["head"] == head
    assert rec["sha256"] == hashlib.sha256(plan.read_bytes()).hexdigest()
    assert rec["blob"] == git(repo, "rev-parse", f"{plan_commit}:plans/p.json").stdout.strip()
    assert rec["claim"] == PLAN["claim"] and rec["stopping"] == "fixed"
    assert rec["committed_at"] == git(repo, "show", "-s", "--format=%cI", plan_commit).stdout.strip()
    # everything played is the plan's
    spec = res["spec"]
    assert {k: spec[k] for k in ("agents", "pairs", "deals", "seed", "sample_seed", "chunk")} == {
        k: PLAN[k] for k in ("agents", "pairs", "deals", "seed", "sample_seed", "chunk")
    }
    [pair] = res["pairs"]
    assert pair["margin"] == play_pair("greedy", "random", deals=4, seed=7, sample_seed=1)["margin"]
    assert json.loads((out / "arena.json").read_text())["plan"]["sha256"] == rec["sha256"]
    assert (
        (out / "table.md")
        .read_text()
        .startswith(f"Pre-registered: plan `plans/p.json` committed in {plan_commit[:12]}")
    )
    # resuming with the same plan plays nothing more
    r = arena("--plan", str(plan), "--out", str(out))
    assert r.exit_code == 0 and "0 chunks played, 2 done before" in r.stdout, r.output


def test_a_plan_not_committed_unchanged_is_refused_before_any_work(repo, tmp_path):
    out = tmp_path / "out"
    outside = tmp_path / "loose" / "p.json"
    outside.parent.mkdir()
    outside.write_text(json.dumps(PLAN))
    one_line_error(arena("--plan", str(outside), "--out", str(out)), "not in a git repository")
    plan = write_plan(repo)
    one_line_error(arena("--plan", str(plan), "--out", str(out)), "is not committed", "git add plans/p.json")
    commit(repo, "plans/p.json")
    plan.write_text(json.dumps({**PLAN, "deals": 5}))  # changed after the commit
    one_line_error(arena("--plan", str(plan), "--out", str(out)), "changes that are not committed")
    git(repo, "add", "plans/p.json")  # staged is not committed either
    one_line_error(arena("--plan", str(plan), "--out", str(out)), "changes that are not committed")
    git(repo, "restore", "--staged", "--worktree", "plans/p.json")
    one_line_error(arena("--plan", str(repo / "nope.json"), "--out", str(out)), "no such file")
    assert not out.exists()


def test_options_the_plan_sets_are_refused_with_it(repo, tmp_path):
    plan = write_plan(repo)
    commit(repo, "plans/p.json")
    for extra in (["--deals", "9"], ["--agents", "greedy,random"], ["--seed", "7"], ["--chunk", "2", "--pairs", "a/b"]):
        line = one_line_error(arena("--plan", str(plan), *extra, "--out", str(tmp_path / "o")), "the plan sets")
        assert all(x in line for x in extra if x.startswith("--")), line
    one_line_error(arena("--out", str(tmp_path / "o")), "--agents is needed (or --plan")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"deal": 4}, "unknown key 'deal'"),
        ({"claim": " "}, "'claim' must say"),
        ({"stopping": "when ahead"}, "'stopping' must be"),
        ({"deals": 0}, "at least 1"),
        ({"seed": "7"}, "'seed' must be a whole number"),
        ({"pairs": [["greedy", "heuristic"]]}, "'pairs' must be a list of [A, B]"),
    ],
)
def test_a_malformed_plan_is_refused(change, needle):
    with pytest.raises(PasurInputError) as e:
        parse_plan(json.dumps({**PLAN, **change}).encode(), "p.json")
    assert needle in str(e.value)
    missing = {k: v for k, v in PLAN.items() if k != "claim"}
    with pytest.raises(PasurInputError, match="no 'claim'"):
        parse_plan(json.dumps(missing).encode(), "p.json")


def test_a_plan_folder_is_not_reused_by_another_plan_or_without_one(repo, tmp_path):
    plan = write_plan(repo)
    commit(repo, "plans/p.json")
    out = tmp_path / "run"
    assert arena("--plan", str(plan), "--out", str(out)).exit_code == 0
    one_line_error(arena("--agents", "greedy,random", "--deals", "4", "--out", str(out)), "rerun with --plan")
    other = write_plan(repo, {**PLAN, "claim": "another claim"}, "plans/q.json")
    commit(repo, "plans/q.json")
    one_line_error(arena("--plan", str(other), "--out", str(out)), "another plan")
    plain = tmp_path / "plain"
    assert arena("--agents", "greedy,random", "--deals", "2", "--out", str(plain)).exit_code == 0
    one_line_error(arena("--plan", str(plan), "--out", str(plain)), "without a plan")


def test_a_reader_verifies_that_the_plan_commit_precedes_the_result_commit(repo):
    plan = write_plan(repo)
    plan_commit = commit(repo, "plans/p.json", message="plan")
    out = repo / "results" / "run"
    assert arena("--plan", str(plan), "--out", str(out)).exit_code == 0
    # not committed yet: nothing to verify
    with pytest.raises(PasurInputError, match="not committed"):
        verify(out)
    result_commit = commit(repo, "results/run", message="results")
    facts = verify(out)
    assert (facts["plan_commit"], facts["result_commit"]) == (plan_commit, result_commit)
    r = runner.invoke(app, ["arena-verify", str(out)])
    assert r.exit_code == 0 and f"committed in {plan_commit[:12]}" in r.stdout and "precedes" in r.stdout, r.output

    # the reader's git commands of docs/hidden.md, by hand
    rec = json.loads((out / "results.json").read_text())["plan"]
    assert git(repo, "merge-base", "--is-ancestor", rec["commit"], result_commit, check=False).returncode == 0
    shown = subprocess.run(["git", "-C", str(repo), "show", f"{rec['commit']}:{rec['path']}"], capture_output=True)
    assert hashlib.sha256(shown.stdout).hexdigest() == rec["sha256"]

    # a later edit of the plan does not change what the result was checked against
    plan.write_text(json.dumps({**PLAN, "claim": "rewritten afterwards"}))
    commit(repo, "plans/p.json", message="edit")
    assert verify(out)["plan_commit"] == plan_commit


def test_the_check_refuses_a_plan_committed_with_its_result_or_other_parameters(repo, tmp_path, monkeypatch):
    plan = write_plan(repo)
    plan_commit = commit(repo, "plans/p.json")
    out = repo / "results" / "run"
    assert arena("--plan", str(plan), "--out", str(out)).exit_code == 0
    results = out / "results.json"
    res = json.loads(results.read_text())

    def committed_with(doctored: dict, message: str) -> None:
        results.write_text(json.dumps(doctored))
        commit(repo, "results/run", message=message)

    # the result commit being the plan commit itself (a plan and a result committed together): a
    # file cannot name the commit that adds it, so git is made to answer the plan commit as the
    # one that last changed results.json. The commit is its own ancestor, so only the equality
    # check refuses it.
    committed_with(res, "the run's results")
    assert verify(out)["plan_commit"] == plan_commit
    real = plan_module.committed_file
    with monkeypatch.context() as m:
        m.setattr(plan_module, "committed_file", lambda p, what="--plan": {**real(p, what), "commit": plan_commit})
        with pytest.raises(PasurInputError, match="committed with the result, not before it"):
            verify(out)
        r = runner.invoke(app, ["arena-verify", str(out)])
        one_line_error(r, "the plan was committed with the result")

    committed_with({**res, "spec": {**res["spec"], "deals": 8}}, "more deals than planned")
    r = runner.invoke(app, ["arena-verify", str(out)])
    one_line_error(r, "the run played other deals than the plan asks for")

    committed_with({**res, "plan": {**res["plan"], "sha256": "0" * 64}}, "another plan's hash")
    with pytest.raises(PasurInputError, match="SHA-256 differs"):
        verify(out)

    # a plan committed beside the result, not before it: on another branch
    side = tmp_path / "side"
    side.mkdir()
    git(side, "init", "-q", "-b", "main")
    (side / "README").write_text("x\n")
    commit(side, "README")
    git(side, "checkout", "-q", "-b", "plan-branch")
    write_plan(side)
    beside = commit(side, "plans/p.json", message="plan, on a branch")
    git(side, "checkout", "-q", "main")
    run = side / "results" / "run"
    run.mkdir(parents=True)
    (run / "results.json").write_text(json.dumps({**res, "plan": {**res["plan"], "commit": beside}}))
    commit(side, "results", message="results, on main")
    with pytest.raises(PasurInputError, match="does not precede"):
        verify(run)
