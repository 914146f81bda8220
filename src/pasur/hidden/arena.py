"""The arena: every pair of agents on the same duplicate deals, with intervals, resumable.

Deals are the decks of seeds ``seed .. seed + deals - 1``, the same for every pair. A pair's
deals are played in chunks (:func:`~pasur.hidden.duplicate.play_duplicates`, lockstep batches), as
Ray tasks (``engine="ray"``) or in this process (``"inline"``). The driver alone writes the output
folder: ``arena.json`` (what is played), ``chunks/<pair>/<start>.json`` (one finished chunk each,
written atomically; a rerun skips them, so an interrupted run resumes), and at the end
``results.json``, ``table.md`` and ``deals.csv``. Ray is a local instance of its own, or the
cluster at ``address`` (:func:`pasur.common.raytasks.start_ray`, as sweeps join one).

A pre-registered run (``plan``, :mod:`pasur.hidden.plan`) plays exactly what its committed plan
file asks for; the plan's record (path, commit, SHA-256) goes into ``arena.json`` and
``results.json``, and its folder cannot be reused by another plan or by a run without one.

Agents: each pair gets its own instances, and each agent of a pair one instance per seat
(:class:`SeatAgents`): in duplicate play the same deal is played with A as Alex and with A as
Bob, so an agent instance that played both seats could carry what it saw as one seat (its
cards) into the other game of the deal. Only the open-hand player, who sees every card anyway,
is one instance shared by its pairs (it solves each deck once).

Measures of a pair (A against B): A's mean margin per deal (points per game, the mean of the two
seatings) with a 95 % interval over deals, and A's win, tie and loss rates over games.

>>> r = play_pair("greedy", "random", deals=4, seed=0)
>>> r["deals"], r["a"], r["b"], r["games"]
(4, 'greedy', 'random', 8)
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pasur.common import raytasks
from pasur.common.errors import PasurInputError
from pasur.common.outputs import folder_lock, prepare_resumable_dir, write_csv, write_text_atomic
from pasur.game.cards import Deck
from pasur.hidden.duplicate import play_duplicates
from pasur.hidden.game import sees_everything
from pasur.hidden.registry import make_agent
from pasur.play.measures import Z95

SPEC_FILE = "arena.json"
CHUNKS = "chunks"
FORMAT = 1
ENGINES = ("ray", "inline")


@dataclass(frozen=True)
class ArenaSpec:
    """What an arena plays: ``pairs`` of agent specs on ``deals`` seeded decks from ``seed``;
    ``sample_seed`` seeds the agents' sampling; ``chunk`` deals per task."""

    agents: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    deals: int
    seed: int = 0
    sample_seed: int = 0
    chunk: int = 25
    device: str = "cpu"

    @classmethod
    def all_pairs(cls, agents: Sequence[str], **kw) -> ArenaSpec:
        agents = tuple(agents)
        pairs = tuple((agents[i], agents[j]) for i in range(len(agents)) for j in range(i + 1, len(agents)))
        return cls(agents, pairs, **kw)

    def check(self) -> ArenaSpec:
        if any(not a.strip() for a in self.agents):
            raise PasurInputError("an agent's name is empty")
        if len(set(self.agents)) != len(self.agents):
            raise PasurInputError("an agent is named twice")
        if not self.pairs:
            raise PasurInputError("the arena needs at least two agents")
        for a, b in self.pairs:
            if a == b:
                raise PasurInputError(f"agent {a!r} cannot play itself in the arena")
        for a in self.agents:
            make_agent(a, seed=self.sample_seed)  # refuses unknown agents before any work
        if not 1 <= self.deals <= 10_000_000:
            raise PasurInputError(f"--deals must be between 1 and 10,000,000, got {self.deals}")
        if not 1 <= self.chunk <= 100_000:
            raise PasurInputError(f"--chunk must be between 1 and 100,000, got {self.chunk}")
        return self

    def to_json(self) -> dict:
        d = asdict(self)
        d["agents"], d["pairs"] = list(self.agents), [list(p) for p in self.pairs]
        return d


class SeatAgents:
    """One agent of a pair in duplicate games: a fresh instance (``make()``) for each seat, so
    that no state carries from the games it plays as Alex to those it plays as Bob (the same
    deals, seats swapped). Decisions go to the seat's instance, in batches as they come."""

    def __init__(self, make: Callable[[], object]) -> None:
        self.by_seat = (make(), make())
        self.name = self.by_seat[0].name

    def choose(self, info):
        return self.by_seat[info.player].choose(info)

    def choose_batch(self, infos: Sequence) -> list:
        out: list = [None] * len(infos)
        for seat, agent in enumerate(self.by_seat):
            idx = [i for i, info in enumerate(infos) if info.player == seat]
            if idx:
                for i, act in zip(idx, agent.choose_batch([infos[i] for i in idx]), strict=True):
                    out[i] = act
        return out

    def forget(self) -> None:
        for agent in self.by_seat:
            if hasattr(agent, "forget"):
                agent.forget()

    def __repr__(self) -> str:
        return f"<SeatAgents {self.name}>"


def seated_agent(name: str, sample_seed: int, device: str, shared: dict[str, object] | None = None):
    """The agent ``name`` for one pair: :class:`SeatAgents` (an instance per seat, never shared
    with another pair), or the open-hand player, one instance in ``shared`` for all its pairs."""
    first = make_agent(name, seed=sample_seed, device=device)
    if sees_everything(first):
        if shared is None:
            return first
        return shared.setdefault(name, first)
    made = iter([first])
    return SeatAgents(lambda: next(made, None) or make_agent(name, seed=sample_seed, device=device))


def pair_slug(a: str, b: str) -> str:
    """A pair's folder name: the specs with ``:`` and any other character a file name should
    not hold (``/`` and ``@`` of a weights file) as ``-``."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", f"{a}__vs__{b}")


def deck_of(seed: int) -> Deck:
    return Deck.from_seed(seed)


# ---------------------------------------------------------------- measures


def pair_measures(a: str, b: str, records: Sequence[dict]) -> dict:
    """A's margin per deal (mean, 95 % interval and its half-width) and per-game rates."""
    n = len(records)
    if n == 0:
        raise ValueError("no deals to measure")
    m = [r["margin"] for r in records]
    mean = sum(m) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in m) / (n - 1)) if n > 1 else 0.0
    half = Z95 * sd / math.sqrt(n)
    per_game = [g for r in records for g in (r["a_as_alex"], -r["b_as_alex"])]
    wins, ties = sum(g > 0 for g in per_game), sum(g == 0 for g in per_game)
    return {
        "a": a,
        "b": b,
        "deals": n,
        "games": len(per_game),
        "margin": round(mean, 4),
        "half_width": round(half, 4),
        "ci95": [round(mean - half, 4), round(mean + half, 4)],
        "sd": round(sd, 4),
        "win_rate": round(wins / len(per_game), 4),
        "tie_rate": round(ties / len(per_game), 4),
        "loss_rate": round((len(per_game) - wins - ties) / len(per_game), 4),
    }


def play_pair(a: str, b: str, deals: int, seed: int = 0, sample_seed: int = 0, device: str = "cpu") -> dict:
    """One pair in this process, nothing written: the measures and the per-agent timing."""
    decks = [deck_of(seed + i) for i in range(deals)]
    timing: dict = {}
    records = play_duplicates(decks, seated_agent(a, sample_seed, device), seated_agent(b, sample_seed, device), timing)
    return {**pair_measures(a, b, records), "timing": timing}


# ---------------------------------------------------------------- one chunk (in a worker)


def run_chunk(spec: dict, pairs: list[tuple[str, str]], start: int, stop: int, threads: int = 1) -> list[dict]:
    """Play deals ``start .. stop - 1`` of each pair; per pair the records and the timing. Each
    pair has its own agents, one instance per seat (:func:`seated_agent`); the open-hand player
    is shared by the pairs of a task (it solves each deck once for all of them)."""
    import torch

    torch.set_num_threads(threads)
    decks = [deck_of(spec["seed"] + i) for i in range(start, stop)]
    shared: dict[str, object] = {}
    out = []
    for a, b in pairs:
        t0 = time.time()
        agent_a, agent_b = (seated_agent(x, spec["sample_seed"], spec["device"], shared) for x in (a, b))
        timing: dict = {}
        records = play_duplicates(decks, agent_a, agent_b, timing, keep=True)
        for i, rec in enumerate(records):
            rec["deal"] = start + i
            rec["seed"] = spec["seed"] + start + i
        out.append({"a": a, "b": b, "start": start, "records": records, "timing": timing, "seconds": time.time() - t0})
    return out


def _tasks(todo: list[tuple[str, str, int, int]]) -> list[tuple[list[tuple[str, str]], int, int]]:
    """Chunks grouped into tasks: the pairs of the open-hand player on the same deals go together."""
    tasks: dict[tuple, list] = {}
    for a, b, start, stop in todo:
        key = (start, stop, "optimal") if "optimal" in (a, b) else (start, stop, a, b)
        tasks.setdefault(key, []).append((a, b))
    return [(pairs, key[0], key[1]) for key, pairs in tasks.items()]


# ---------------------------------------------------------------- the output folder


def _merge_spec(out: Path, spec: ArenaSpec, plan: dict | None = None) -> ArenaSpec:
    """Reopen ``out``: the same seeds and chunking are required; agents, pairs and deals may grow.
    A folder of a pre-registered run reopens only for the same plan, and such a run only in its
    own folder."""
    path = out / SPEC_FILE
    if not path.exists():
        return spec
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        old = saved["spec"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PasurInputError(f"{path} is not a readable arena description ({e})") from None
    old_plan = saved.get("plan")
    if old_plan is None and plan is not None:
        raise PasurInputError(f"{out} holds an arena run without a plan; a pre-registered run needs a new --out")
    if old_plan is not None and plan is None:
        raise PasurInputError(
            f"{out} holds the pre-registered run of {old_plan['path']}: rerun with --plan to resume it, "
            "or use another --out"
        )
    if old_plan is not None and plan is not None and old_plan["sha256"] != plan["sha256"]:
        raise PasurInputError(
            f"{out} holds the pre-registered run of another plan ({old_plan['path']} at "
            f"{old_plan['commit'][:12]}); use another --out"
        )
    for k in ("seed", "sample_seed", "chunk", "device"):
        if old.get(k) != getattr(spec, k):
            raise PasurInputError(
                f"{out} holds an arena with {k} {old.get(k)!r}, not {getattr(spec, k)!r}; use another --out"
            )
    agents = tuple(dict.fromkeys([*old["agents"], *spec.agents]))
    pairs = tuple(dict.fromkeys([*(tuple(p) for p in old["pairs"]), *spec.pairs]))
    return ArenaSpec(agents, pairs, max(old["deals"], spec.deals), spec.seed, spec.sample_seed, spec.chunk, spec.device)


def _chunk_path(out: Path, a: str, b: str, start: int) -> Path:
    return out / CHUNKS / pair_slug(a, b) / f"{start:08d}.json"


def _work(out: Path, spec: ArenaSpec, requested: ArenaSpec) -> list[tuple[str, str, int, int]]:
    """Chunks of the requested pairs and deals not done yet, chunk by chunk across pairs."""
    todo = []
    for start in range(0, requested.deals, spec.chunk):
        stop = min(start + spec.chunk, requested.deals)
        for a, b in requested.pairs:
            p = _chunk_path(out, a, b, start)
            done = False
            if p.exists():
                with contextlib.suppress(OSError, ValueError, KeyError):
                    done = len(json.loads(p.read_text(encoding="utf-8"))["records"]) >= stop - start
            if not done:
                todo.append((a, b, start, stop))
    return todo


def read_results(out: Path, spec: ArenaSpec | None = None) -> dict:
    """Every pair's records so far (all chunks on disk), its measures and the timing summed."""
    out = Path(out)
    if spec is None:
        spec = ArenaSpec(**_load_spec(out))
    pairs = []
    for a, b in spec.pairs:
        folder = out / CHUNKS / pair_slug(a, b)
        records: list[dict] = []
        timing: dict = {}
        for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            chunk = json.loads(p.read_text(encoding="utf-8"))
            records += [r for r in chunk["records"] if r["deal"] < spec.deals]
            for name, t in chunk["timing"].items():
                acc = timing.setdefault(name, {"seconds": [0.0] * 6, "decisions": [0] * 6})
                acc["seconds"] = [x + y for x, y in zip(acc["seconds"], t["seconds"], strict=True)]
                acc["decisions"] = [x + y for x, y in zip(acc["decisions"], t["decisions"], strict=True)]
        if records:
            records.sort(key=lambda r: r["deal"])
            pairs.append({**pair_measures(a, b, records), "timing": timing, "records": records})
    return {"spec": spec.to_json(), "pairs": pairs}


def _load_spec(out: Path) -> dict:
    d = json.loads((out / SPEC_FILE).read_text(encoding="utf-8"))["spec"]
    return {**d, "agents": tuple(d["agents"]), "pairs": tuple(tuple(p) for p in d["pairs"])}


def write_summary(out: Path, results: dict) -> None:
    """``results.json`` (measures and timing per pair, and the plan of a pre-registered run),
    ``table.md`` and ``deals.csv``."""
    from pasur.hidden.report import markdown_table

    light = {**results, "pairs": [{k: v for k, v in p.items() if k != "records"} for p in results["pairs"]]}
    write_text_atomic(out / "results.json", json.dumps(light, indent=1) + "\n")
    write_text_atomic(out / "table.md", markdown_table(light) + "\n")
    per_deal = ("deal", "seed", "a_as_alex", "b_as_alex", "margin")
    rows = [{"a": p["a"], "b": p["b"], **{k: r[k] for k in per_deal}} for p in results["pairs"] for r in p["records"]]
    write_csv(out / "deals.csv", rows, columns=("a", "b", *per_deal))


# ---------------------------------------------------------------- the driver


@dataclass
class ArenaRun:
    """What a run did: chunks run now, chunks skipped (done before), wall seconds, the results."""

    ran: int = 0
    skipped: int = 0
    seconds: float = 0.0
    results: dict = field(default_factory=dict)


def run_arena(
    spec: ArenaSpec,
    out: str | Path,
    *,
    engine: str = "ray",
    workers: int | None = None,
    address: str | None = None,
    plan: dict | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_chunk: Callable[[dict], None] | None = None,
) -> ArenaRun:
    """Play every requested chunk not done yet into ``out``, then write the summary.
    ``address``: the Ray cluster to join (default: a Ray instance of its own here). ``plan``: the
    record of a pre-registered run's plan (:func:`pasur.hidden.plan.load_plan`), whose parameters
    ``spec`` must be; it is written into ``arena.json`` and ``results.json``.
    ``on_start(chunks to run, chunks skipped)``, ``on_chunk(chunk result)`` report progress."""
    spec.check()
    raytasks.check_engine(engine, address, ENGINES)
    if workers is not None and workers < 1:
        raise PasurInputError(f"--workers must be at least 1, got {workers}")
    out = prepare_resumable_dir(out, marker=SPEC_FILE)
    t0 = time.perf_counter()
    with folder_lock(out, "arena"):
        merged = _merge_spec(out, spec, plan)
        saved = {"format": FORMAT, "spec": merged.to_json(), **({"plan": plan} if plan is not None else {})}
        write_text_atomic(out / SPEC_FILE, json.dumps(saved, indent=1) + "\n")
        todo = _work(out, merged, spec)
        run = ArenaRun(skipped=max(0, _n_chunks(spec) - len(todo)))
        if on_start is not None:
            on_start(len(todo), run.skipped)
        job = merged.to_json()

        def settle(res: dict) -> None:
            write_text_atomic(_chunk_path(out, res["a"], res["b"], res["start"]), json.dumps(res) + "\n")
            run.ran += 1
            if on_chunk is not None:
                on_chunk(res)

        for a, b, _, _ in todo:
            _chunk_dir(out, a, b)
        tasks = _tasks(todo)
        if engine == "inline" or not todo:
            for pairs, start, stop in tasks:
                for res in run_chunk(job, pairs, start, stop):
                    settle(res)
        else:
            _run_ray(job, tasks, workers, address, settle)
        results = read_results(
            out,
            ArenaSpec(
                spec.agents, spec.pairs, spec.deals, merged.seed, merged.sample_seed, merged.chunk, merged.device
            ),
        )
        if plan is not None:
            results["plan"] = plan
        write_summary(out, results)
    run.seconds = time.perf_counter() - t0
    run.results = results
    return run


def _n_chunks(spec: ArenaSpec) -> int:
    return len(spec.pairs) * math.ceil(spec.deals / spec.chunk)


def _chunk_dir(out: Path, a: str, b: str) -> None:
    (out / CHUNKS / pair_slug(a, b)).mkdir(parents=True, exist_ok=True)


def _run_ray(job: dict, tasks: list, workers: int | None, address: str | None, settle: Callable[[dict], None]) -> None:
    """The tasks on Ray (a local instance of our own, its workers importing this source tree, or
    the cluster at ``address``), at most ``workers`` in flight (default: what Ray can run at once);
    the driver writes each chunk as it ends."""
    import ray

    def settle_all(_, results: list[dict]) -> None:
        for res in results:
            settle(res)

    with raytasks.session(address, workers):
        task = ray.remote(run_chunk).options(num_cpus=1, max_retries=0)
        raytasks.run_bounded(
            lambda t: task.remote(job, *t),
            tasks,
            workers or raytasks.capacity(),
            settle_all,
            poll=1.0,
        )
