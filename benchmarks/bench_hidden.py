"""Time per move of the hidden-hand agents, by round: one decision at a time (the interactive case:
the web app's and the terminal's opponent), and PIMC's decisions batched over many games (the
arena's case).

Positions come from games of the heuristic player against itself (seeds S, S+1, ...): every turn
of every round, so a round's figure mixes a player's first card (the costliest to search) and its
last. Reported: mean and maximum milliseconds per decision.

python benchmarks/bench_hidden.py [--agents greedy,heuristic,pimc:50,...] [--games 2] [--seed 0]
                                  [--threads 1] [--batch 25]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from datetime import date

import torch

from pasur.game.cards import Deck
from pasur.hidden.game import HiddenGame
from pasur.hidden.heuristic import HeuristicAgent
from pasur.hidden.registry import make_agent

DEFAULT = "random,greedy,heuristic,pimc:50,ispimc:50,pimc:10:game,ismcts:100,optimal"


def positions(games: int, seed: int) -> list:
    """(round, info state, game state, moves) of every decision of heuristic self-play games."""
    h = HeuristicAgent()
    out = []
    for g in range(games):
        game = HiddenGame(Deck.from_seed(seed + g))
        while not game.is_terminal:
            info = game.observation(game.mover)
            out.append((game.state.round, info, game.state, game.moves))
            game.apply(h.choose(info))
    return out


def time_single(spec: str, pos: list, per_round: int | None) -> list[tuple[float, float, int]]:
    """Per round: (mean ms, max ms, decisions) of one decision at a time."""
    agent = make_agent(spec)
    rows = []
    for r in range(6):
        mine = [p for p in pos if p[0] == r]
        if per_round is not None:
            step = max(1, len(mine) // per_round)
            mine = mine[::step][:per_round]
        times = []
        for _, info, state, moves in mine:
            t0 = time.perf_counter()
            if getattr(agent, "omniscient", False):
                agent.choose_open(state, moves)
            else:
                agent.choose(info)
            times.append(1000 * (time.perf_counter() - t0))
        rows.append((sum(times) / len(times), max(times), len(times)))
    return rows


def time_batched(spec: str, pos: list, batch: int) -> list[float]:
    """Per round: ms per decision when ``batch`` decisions at the same turn are made in one call."""
    agent = make_agent(spec)
    out = []
    for r in range(6):
        by_turn: dict[int, list] = {}
        for rr, info, _, _ in pos:
            if rr == r:
                by_turn.setdefault(info.turn, []).append(info)
        total, n = 0.0, 0
        for infos in by_turn.values():
            infos = (infos * batch)[:batch]
            t0 = time.perf_counter()
            agent.choose_batch(infos)
            total += time.perf_counter() - t0
            n += len(infos)
        out.append(1000 * total / n)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", default=DEFAULT)
    ap.add_argument("--games", type=int, default=2, help="heuristic self-play games giving the positions")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=25, help="decisions per call in the batched table")
    ap.add_argument("--slow-positions", type=int, default=4, help="positions per round for :game and optimal")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"hidden-hand agents, time per move, {date.today()}, {platform.machine()}, {os.cpu_count()} CPUs "
        f"(load {load:.1f} at start), torch {torch.__version__}, {args.threads} thread(s), "
        f"positions of {args.games} heuristic games from seed {args.seed}\n"
    )
    pos = positions(args.games, args.seed)
    specs = [s.strip() for s in args.agents.split(",") if s.strip()]
    print("one decision at a time: mean / max ms per move, by round\n")
    print("| agent | round 0 | round 1 | round 2 | round 3 | round 4 | round 5 | decisions |")
    print("|---|---|---|---|---|---|---|---:|")
    for spec in specs:
        slow = spec.endswith(":game") or spec.startswith("ismcts") or spec == "optimal"
        rows = time_single(spec, pos, args.slow_positions if slow else None)
        cells = " | ".join(f"{m:.1f} / {x:.1f}" for m, x, _ in rows)
        print(f"| {spec} | {cells} | {sum(n for _, _, n in rows)} |", flush=True)
    searching = [s for s in specs if s.split(":")[0] in ("pimc", "ispimc") and not s.endswith(":game")]
    if searching:
        print(f"\nbatched: ms per decision when {args.batch} decisions at one turn are made in one call\n")
        print("| agent | round 0 | round 1 | round 2 | round 3 | round 4 | round 5 |")
        print("|---|---|---|---|---|---|---|")
        for spec in searching:
            print(
                f"| {spec} | " + " | ".join(f"{x:.1f}" for x in time_batched(spec, pos, args.batch)) + " |", flush=True
            )


if __name__ == "__main__":
    main()
