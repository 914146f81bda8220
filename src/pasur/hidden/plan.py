"""Pre-registered arena runs: a plan file committed before the run, and a reader's check of it.

A plan (``pasur arena --plan PLAN.json``) fixes everything the run plays and what it is meant to
show, before any deal is played::

    {
      "claim": "ispimc:20:infer beats pimc:20: A's margin per deal has a 95 % interval above 0",
      "agents": ["ispimc:20:infer", "pimc:20"],
      "pairs": [["ispimc:20:infer", "pimc:20"]],
      "deals": 6000,
      "seed": 20000,
      "sample_seed": 0,
      "chunk": 50,
      "stopping": "fixed",
      "notes": "optional, free text"
    }

``pairs`` (default: every pair of ``agents``), ``sample_seed`` (0), ``chunk`` (25) and ``notes``
may be left out; any other key is refused (a misspelt key would otherwise be ignored). The one
stopping rule is ``"fixed"``: every deal of every pair is played, in one run (an interrupted run
resumes to the same end), and the result is reported whatever it says.

The run refuses to start unless the plan file is tracked in the git repository it lives in and
has no uncommitted change (its content is the one in ``HEAD``), and writes into ``results.json``
(:func:`plan_record`): the plan's path in that repository, the commit that last changed it, that
commit's date, the SHA-256 of its bytes, its git blob id, and ``HEAD`` when the run was made.
A reader checks a committed result with :func:`verify` (``pasur arena-verify DIR``): the plan's
content at the recorded commit is the one recorded and asks for what was played, and the plan's
commit is an ancestor of (and not the same as) the commit that holds ``results.json``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from pasur.common.errors import PasurInputError

#: the keys a plan may have; those without a default are required
KEYS = ("claim", "agents", "pairs", "deals", "seed", "sample_seed", "chunk", "stopping", "notes")
REQUIRED = ("claim", "agents", "deals", "seed", "stopping")
STOPPING = ("fixed",)
DEFAULTS = {"sample_seed": 0, "chunk": 25}


def _int(plan: dict, key: str, where: str) -> int:
    v = plan[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise PasurInputError(f"{where}: {key!r} must be a whole number at least 0, got {v!r}")
    return v


def parse_plan(data: bytes, where: str) -> dict:
    """The arena parameters of a plan's bytes (``agents``, ``pairs``, ``deals``, ``seed``,
    ``sample_seed``, ``chunk``) and its ``claim`` and ``stopping``; ``where`` names it in errors."""
    try:
        plan = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise PasurInputError(f"{where} is not a JSON plan ({e})") from None
    if not isinstance(plan, dict):
        raise PasurInputError(f"{where}: a plan is a JSON object with {', '.join(REQUIRED)}")
    unknown = sorted(set(plan) - set(KEYS))
    if unknown:
        raise PasurInputError(f"{where}: unknown key {unknown[0]!r} (a plan has {', '.join(KEYS)})")
    missing = [k for k in REQUIRED if k not in plan]
    if missing:
        raise PasurInputError(f"{where}: the plan has no {missing[0]!r} (it needs {', '.join(REQUIRED)})")
    if not isinstance(plan["claim"], str) or not plan["claim"].strip():
        raise PasurInputError(f"{where}: 'claim' must say, in words, what the run is to show")
    if plan["stopping"] not in STOPPING:
        raise PasurInputError(
            f"{where}: 'stopping' must be \"fixed\" (every deal is played, in one run), got {plan['stopping']!r}"
        )
    agents = plan["agents"]
    if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
        raise PasurInputError(f"{where}: 'agents' must be a list of agent names")
    agents = [a.strip() for a in agents]
    if "pairs" in plan:
        pairs = plan["pairs"]
        ok = isinstance(pairs, list) and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) and x.strip() in agents for x in p)
            for p in pairs
        )
        if not ok:
            raise PasurInputError(f"{where}: 'pairs' must be a list of [A, B] with A and B among 'agents'")
        pairs = [[a.strip(), b.strip()] for a, b in pairs]
    else:
        pairs = [[agents[i], agents[j]] for i in range(len(agents)) for j in range(i + 1, len(agents))]
    out = {"agents": agents, "pairs": pairs}
    for key in ("deals", "seed", "sample_seed", "chunk"):
        out[key] = _int(plan, key, where) if key in plan else DEFAULTS[key]
    if out["deals"] < 1 or out["chunk"] < 1:
        raise PasurInputError(f"{where}: 'deals' and 'chunk' must be at least 1")
    out["claim"], out["stopping"] = plan["claim"].strip(), plan["stopping"]
    return out


# ---------------------------------------------------------------- git


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """``git -C repo args`` (bytes out); a missing git is a one-line error."""
    exe = shutil.which("git")
    if exe is None:
        raise PasurInputError("--plan needs git (not found on PATH): a plan is checked against its commit")
    r = subprocess.run([exe, "-C", str(repo), *args], capture_output=True, check=False)
    if check and r.returncode != 0:
        said = r.stderr.decode("utf-8", "replace").strip().splitlines()
        raise PasurInputError(f"git {args[0]} in {repo} failed: {said[0] if said else f'exit {r.returncode}'}")
    return r


def _out(r: subprocess.CompletedProcess) -> str:
    return r.stdout.decode("utf-8", "replace").strip()


def _repo_of(path: Path, what: str) -> Path:
    r = _git(path.parent, "rev-parse", "--show-toplevel", check=False)
    if r.returncode != 0:
        raise PasurInputError(
            f"{what} {path} is not in a git repository: commit it to one before the run (a plan must be "
            "committed unchanged, so that its commit precedes the result's)"
        )
    return Path(_out(r)).resolve()


def committed_file(path: str | Path, what: str = "--plan") -> dict:
    """Where ``path`` stands in its git repository, refusing a file that is not committed
    unchanged: ``repo``, ``path`` (relative to it), ``commit`` (the last commit that changed it),
    ``committed_at``, ``blob``, ``head`` and ``sha256`` of its bytes."""
    path = Path(path).absolute()
    if not path.is_file():
        raise PasurInputError(f"{what} {path}: no such file")
    path = path.resolve()
    repo = _repo_of(path, what)
    rel = path.relative_to(repo).as_posix()
    if _git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False).returncode != 0:
        raise PasurInputError(f"{what} {path} is not committed (the repository {repo} has no commit yet)")
    head = _out(_git(repo, "rev-parse", "HEAD"))
    r = _git(repo, "rev-parse", "--verify", "--quiet", f"HEAD:{rel}", check=False)
    if r.returncode != 0:
        raise PasurInputError(f"{what} {path} is not committed: git add {rel} && git commit, then run again")
    blob = _out(r)
    status = _out(_git(repo, "status", "--porcelain", "--", rel))
    if status or _out(_git(repo, "hash-object", "--", rel)) != blob:
        raise PasurInputError(
            f"{what} {path} has changes that are not committed: commit them (or git restore {rel}) before the run"
        )
    commit = _out(_git(repo, "log", "-1", "--format=%H", "--", rel))
    return {
        "repo": repo,
        "path": rel,
        "commit": commit,
        "committed_at": _out(_git(repo, "show", "-s", "--format=%cI", commit)),
        "blob": blob,
        "head": head,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
    }


def load_plan(path: str | Path) -> tuple[dict, dict]:
    """The plan at ``path`` (:func:`parse_plan`) and its record for ``results.json``
    (:func:`committed_file`, without the local ``repo``, with the claim); refused unless committed
    unchanged."""
    record = committed_file(path)
    plan = parse_plan(Path(path).read_bytes(), f"--plan {path}")
    record.pop("repo")
    return plan, {**record, "claim": plan["claim"], "stopping": plan["stopping"]}


def spec_of(plan: dict) -> dict:
    """The arena parameters a plan fixes, as ``ArenaSpec.to_json`` writes them (no device)."""
    return {k: plan[k] for k in ("agents", "pairs", "deals", "seed", "sample_seed", "chunk")}


# ---------------------------------------------------------------- the reader's check


def verify(results: str | Path) -> dict:
    """A reader's check of a pre-registered arena run whose ``results.json`` is committed:

    - ``results.json`` is committed unchanged (its commit is the *result commit*);
    - the plan's bytes at the recorded plan commit have the recorded SHA-256, and what they ask
      for is what ``results.json`` says was played (agents, pairs, deals, seeds, chunk);
    - the plan commit is an ancestor of the result commit and not the result commit itself
      (``git merge-base --is-ancestor``).

    ``results``: the arena folder or its ``results.json``. Returns the facts checked; a failed
    check is a :class:`PasurInputError` that says which."""
    path = Path(results)
    if path.is_dir():
        path = path / "results.json"
    res_file = committed_file(path, "results")
    repo = res_file["repo"]
    try:
        res = json.loads(path.read_text(encoding="utf-8"))
        plan = res["plan"]
        spec = res["spec"]
    except (OSError, ValueError, KeyError, TypeError):
        raise PasurInputError(f"{path} is not the results of a pre-registered arena run (no 'plan')") from None
    where = f"plan {plan.get('path')} at {str(plan.get('commit'))[:12]}"
    shown = _git(repo, "show", f"{plan['commit']}:{plan['path']}", check=False)
    if shown.returncode != 0:
        said = shown.stderr.decode("utf-8", "replace").strip().splitlines()
        raise PasurInputError(f"{where}: not in this repository ({said[0] if said else 'git show failed'})")
    if hashlib.sha256(shown.stdout).hexdigest() != plan["sha256"]:
        raise PasurInputError(f"{where}: its content is not the one results.json records (SHA-256 differs)")
    asked = spec_of(parse_plan(shown.stdout, where))
    played = {k: spec.get(k) for k in asked}
    if asked != played:
        diff = sorted(k for k in asked if asked[k] != played[k])
        raise PasurInputError(f"{where}: the run played other {', '.join(diff)} than the plan asks for")
    result_commit = res_file["commit"]
    if plan["commit"] == result_commit:
        raise PasurInputError(f"{where}: the plan was committed with the result, not before it ({result_commit[:12]})")
    if _git(repo, "merge-base", "--is-ancestor", plan["commit"], result_commit, check=False).returncode != 0:
        raise PasurInputError(f"{where}: the plan's commit does not precede the result's ({result_commit[:12]})")
    return {
        "results": res_file["path"],
        "result_commit": result_commit,
        "result_committed_at": res_file["committed_at"],
        "plan": plan["path"],
        "plan_commit": plan["commit"],
        "plan_committed_at": plan.get("committed_at"),
        "sha256": plan["sha256"],
        "claim": plan.get("claim"),
    }
