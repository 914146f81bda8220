"""Improving the policy-value network by self-play, the search as the improvement operator
(issue 27, item 2).

Generation ``g`` (1, 2, ...) starts from the incumbent network (before generation 1: the weights
given, by default the shipped ones):

1. **Games**: the decks of seeds ``seed + (g - 1) * games`` on, each seat drawn from :data:`MIX`:
   mostly the search with the incumbent as its prior (:data:`SEARCH`, ``best``'s recipe with the
   incumbent in place of the shipped network), and the heuristic and greedy players so that the
   positions stay varied. For every decision of the search the margins it gave every legal
   action are kept (the targets) with the action it played (chosen with the prior).
2. **Training**: from the incumbent's weights, on the positions of this generation's games and of
   the :data:`WINDOW` - 1 generations before it (their search was a good teacher whether or not
   their candidate was kept), :data:`EPOCHS` epochs at learning rate :data:`LR` (a tenth of the
   games held out, the epoch of lowest held-out cross-entropy kept), as
   :func:`pasur.hidden.policy_train.train` does.
3. **Gate**: the candidate against the incumbent, each playing alone (the agent ``policy``), on
   duplicate deals of seeds ``gate_seed + (g - 1) * gate_deals`` on. The candidate becomes the
   incumbent only if its margin per deal is above 0 with one-sided confidence 90 %: at least
   :data:`GATE_Z` standard errors.

A generation's folder (``gen-01``, ...) keeps its games in chunks, its training checkpoint, the
candidate's weights with their card and ``gate.json``, so a rerun of the same command resumes
where it stopped. ``policy-weights.pt`` (with its card) is the last incumbent and
``generations.json`` / ``table.md`` the history.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pasur.game.cards import Deck
from pasur.hidden.gamechunks import load_games, play_in_chunks
from pasur.hidden.policy import DEFAULT_WEIGHTS, PolicyAgent, PolicyModel
from pasur.hidden.policy_train import TEMPERATURE, play_games, samples, train

#: the search that improves the network: ``best``'s recipe (IS-PIMC, 20 worlds, soft-greedy
#: inference, 0.5 x log-probability prior), with the incumbent network as the prior
SEARCH = "ispimc:20:infer:pl0.5"
#: who takes a seat in self-play games, and how often ("selfplay": :data:`SEARCH` with the incumbent)
MIX: tuple[tuple[str, float], ...] = (("selfplay", 0.8), ("heuristic", 0.1), ("greedy", 0.1))
#: generations whose games train a candidate (this one and the ones before it)
WINDOW = 3
#: training of a candidate: epochs and learning rate (lower than from scratch: it starts trained)
EPOCHS, LR = 4, 3e-4
#: the gate: a candidate is kept when its margin is at least this many standard errors above 0
GATE_Z = 1.2816
#: default first seeds of the games and of the gate's deals (no other run of the project uses them)
SEED, GATE_SEED = 200_000, 300_000
#: what a self-play folder holds (a rerun resumes it)
OWNED = ["selfplay.json", "generations.json", "table.md", "policy-weights.pt", "policy-weights.card.json"]


def search_agent(model: PolicyModel, sample_seed: int, device: str = "cpu"):
    """:data:`SEARCH` with ``model`` as its prior, named ``selfplay``."""
    from pasur.hidden.registry import make_agent

    agent = make_agent(SEARCH, seed=sample_seed, device=device)
    agent.policy = model
    agent.name = "selfplay"
    return agent


def gate(candidate: PolicyModel, incumbent: PolicyModel, deals: int, seed: int) -> dict:
    """The candidate against the incumbent, each playing alone, on ``deals`` duplicate deals of
    seeds ``seed`` on: the arena's measures of the pair, its z (margin over its standard error)
    and whether it is kept."""
    from pasur.hidden.arena import pair_measures
    from pasur.hidden.duplicate import play_duplicates

    decks = [Deck.from_seed(seed + i) for i in range(deals)]
    a, b = PolicyAgent(candidate, name="candidate"), PolicyAgent(incumbent, name="incumbent")
    records = play_duplicates(decks, a, b)
    m = pair_measures("candidate", "incumbent", records)
    se = m["sd"] / math.sqrt(m["deals"])
    z = m["margin"] / se if se > 0 else (math.inf if m["margin"] > 0 else 0.0)
    return {**m, "seeds": f"{seed}..{seed + deals - 1}", "z": round(z, 3), "kept": bool(z >= GATE_Z)}


def _generation_games(folder: Path, g: int, games: int, seed: int, sample_seed: int, model: PolicyModel,
                      device: str, on_games: Callable[[int, int], None] | None) -> list[Path]:  # fmt: skip
    made = {"selfplay": search_agent(model, sample_seed, device)}
    return play_in_chunks(folder / "games", "selfplay", games, seed + (g - 1) * games, sample_seed, MIX,
                          lambda seeds, seats: play_games(seeds, seats, sample_seed, made), on_games)  # fmt: skip


def run_selfplay(
    out: Path,
    generations: int = 3,
    games: int = 2000,
    gate_deals: int = 2000,
    start: Path = DEFAULT_WEIGHTS,
    seed: int = SEED,
    gate_seed: int = GATE_SEED,
    sample_seed: int = 0,
    device: str = "cpu",
    on_step: Callable[[str], None] | None = None,
    on_games: Callable[[int, int, int], None] | None = None,
    on_epoch: Callable[[int, int, dict], None] | None = None,
) -> list[dict]:
    """Run (or resume) ``generations`` generations in ``out``; returns each generation's row
    (also in ``generations.json``). ``start``: the weights of the first incumbent."""
    from pasur.common.outputs import prepare_resumable_dir, write_text_atomic
    from pasur.hidden.epochs import keep_run_spec
    from pasur.hidden.weights import sha256

    say = on_step or (lambda _: None)
    incumbent = PolicyModel.load(start, device)
    spec = {"games": games, "gate_deals": gate_deals, "start": str(start), "start_sha256": sha256(Path(start)),
            "seed": seed, "gate_seed": gate_seed, "sample_seed": sample_seed, "search": SEARCH,
            "mix": [list(m) for m in MIX], "window": WINDOW, "epochs": EPOCHS, "lr": LR, "gate_z": GATE_Z,
            "temperature": TEMPERATURE}  # fmt: skip
    prepare_resumable_dir(out, OWNED + [f"gen-{g:02d}" for g in range(1, generations + 1)])
    keep_run_spec(out / "selfplay.json", spec)  # the same games; more generations go on
    rows: list[dict] = []
    incumbent_gen = 0
    for g in range(1, generations + 1):
        folder = out / f"gen-{g:02d}"
        folder.mkdir(exist_ok=True)
        done = folder / "gate.json"
        if done.exists():  # a generation finished by an earlier run
            row = json.loads(done.read_text(encoding="utf-8"))
            rows.append(row)
            if row["gate"]["kept"]:
                incumbent, incumbent_gen = PolicyModel.load(folder / "candidate.pt", device), g
            continue
        say(f"generation {g}: {games:,} games of the search with generation {incumbent_gen}'s network as its prior")
        t0 = time.perf_counter()
        mine = _generation_games(folder, g, games, seed, sample_seed, incumbent, device,
                                 (lambda d, t, g=g: on_games(g, d, t)) if on_games else None)  # fmt: skip
        window = [out / f"gen-{h:02d}" for h in range(max(1, g - WINDOW + 1), g + 1)]
        played = load_games([p for w in window for p in sorted((w / "games").glob("selfplay-*.npz"))])
        say(f"generation {g}: training on the games of generations {max(1, g - WINDOW + 1)} to {g}")
        data = samples(played)
        model, report = train(data, EPOCHS, sample_seed + g, checkpoint=folder / "checkpoint.pt", device=device,
                              lr=LR, start=incumbent.net,
                              on_epoch=(lambda e, r, g=g: on_epoch(g, e, r)) if on_epoch else None)  # fmt: skip
        say(f"generation {g}: the candidate against generation {incumbent_gen}'s network, {gate_deals:,} deals")
        result = gate(model, incumbent, gate_deals, gate_seed + (g - 1) * gate_deals)
        games_seconds = sum(float(np.load(p)["seconds"]) for p in mine)  # one member of each chunk, not its games
        row = {
            "generation": g,
            "against_generation": incumbent_gen,
            "games": f"seeds {seed + (g - 1) * games}..{seed + g * games - 1}",
            "train_games": len(played["decks"]),
            "train_positions": report["train_positions"],
            "train_searched": report["train_searched"],
            "best_epoch": report["best_epoch"],
            "held_out": report["held_out"],
            "games_seconds": round(games_seconds, 1),
            "train_seconds": report["train_seconds"],
            "gate": result,
            "wall_seconds_this_run": round(time.perf_counter() - t0, 1),
        }
        model.save(folder / "candidate.pt", {**spec, **row, "history": report["history"]})
        write_text_atomic(done, json.dumps(row, indent=1) + "\n")
        rows.append(row)
        if result["kept"]:
            incumbent, incumbent_gen = model, g
    incumbent.save(out / "policy-weights.pt", {**spec, "generation": incumbent_gen, "generations": rows})
    write_text_atomic(out / "generations.json", json.dumps(rows, indent=1) + "\n")
    write_text_atomic(out / "table.md", table(rows))
    return rows


def table(rows: list[dict]) -> str:
    """The generations as a Markdown table: training, the gate's result, kept or not."""
    lines = [
        "| generation | against | training games | held-out cross-entropy | agreement with the search "
        "| gate deals | candidate's margin per deal | 95 % interval | z | kept |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in rows:
        gt, h = r["gate"], r["held_out"]
        lo, hi = gt["ci95"]
        lines.append(
            f"| {r['generation']} | {r['against_generation']} | {r['train_games']:,} | {h['ce']:.4f} | "
            f"{h['agree']:.1%} | {gt['deals']:,} | {gt['margin']:+.3f} | [{lo:+.3f}, {hi:+.3f}] | "
            f"{gt['z']:.2f} | {'yes' if gt['kept'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def summary(rows: list[dict]) -> dict:
    """The generation of the final network and how many candidates were kept."""
    kept = [r["generation"] for r in rows if r["gate"]["kept"]]
    return {"generations": len(rows), "kept": kept, "final_generation": kept[-1] if kept else 0,
            "mean_gate_margin": float(np.mean([r["gate"]["margin"] for r in rows])) if rows else 0.0}  # fmt: skip
