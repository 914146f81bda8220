"""Time per move of the CFR agent (issue 42, items 2 and 4), by round, and optionally its exact
exploitability on small variants.

Plays ``--games`` standard games of ``--spec`` against ``--opponent`` (the agent's seat
alternating), times each of the agent's decisions (``torch.cuda.synchronize()`` around each on
a GPU) and writes under ``--out``: ``moves.csv`` (game, seat, round, turn, seconds, what the
decision did: a fresh solve of the round, a re-solve, or a look-up) and ``summary.json`` (median,
99th percentile and maximum per round and overall, the machine, torch's threads, the command).
No move is timed after ``--budget-s`` seconds (the game in progress stops there).
``--exploit micro,duo`` adds each variant's exact exploitability of the agent's mixed strategy
(every information set asked, its solved probabilities taken as they are) to ``exploit.json``.

    python benchmarks/bench_cfr_agent.py --spec cfr --games 4 --threads 1 --out results/cfr-agent/cpu
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

from pasur.game.cards import Deck
from pasur.hidden.game import HiddenGame
from pasur.hidden.registry import make_agent


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _what(agent, before: int, before_solve) -> str:
    """What the last decision did: a fresh solve of its round, a re-solve, or a look-up."""
    if len(agent._rounds) != before or not agent._rounds:
        return "fresh"
    latest = agent._rounds[next(reversed(agent._rounds))]
    if latest.solve is before_solve:
        return "lookup"
    return "fresh" if latest.solve is latest.base else "resolve"


def play_timed(spec: str, opponent: str, games: int, seed: int, device: str, budget_s: float) -> list[dict]:
    """Every decision of the agent in up to ``games`` games, timed."""
    rows: list[dict] = []
    start = time.perf_counter()
    for g in range(games):
        if time.perf_counter() - start > budget_s:
            break
        seat = g % 2
        agents = [None, None]
        agents[seat] = make_agent(spec, seed=seed + g, device=device)
        agents[1 - seat] = make_agent(opponent, seed=seed + g, device=device)
        game = HiddenGame(Deck.from_seed(seed + g))
        while not game.is_terminal:
            p = game.mover
            info = game.observation(p)
            if p != seat:
                game.apply(agents[p].choose(info))
                continue
            if time.perf_counter() - start > budget_s:
                break  # the budget is spent: the game stops here, its timed moves kept
            agent = agents[p]
            latest = agent._rounds[next(reversed(agent._rounds))].solve if agent._rounds else None
            n_before = len(agent._rounds)
            _sync(device)
            t0, c0 = time.perf_counter(), time.process_time()
            action = agent.choose(info)
            _sync(device)
            rows.append(
                {
                    "game": g,
                    "seat": seat,
                    "round": info.round,
                    "turn": info.turn,
                    "seconds": time.perf_counter() - t0,
                    "cpu_s": time.process_time() - c0,
                    "did": _what(agent, n_before, latest),
                }
            )
            game.apply(action)
    return rows


def _stats(xs: list[float]) -> dict:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, round(0.99 * (len(xs) - 1)))]
    return {"moves": len(xs), "median_s": statistics.median(xs), "p99_s": p99, "max_s": xs[-1]}


def summarize(rows: list[dict], key: str = "seconds") -> dict:
    """Median, p99 and maximum of ``key`` (wall ``seconds`` or the process's ``cpu_s``: on a
    shared machine the CPU time is what one core would take) per round, per kind and overall."""
    by_round = {r: _stats([x[key] for x in rows if x["round"] == r]) for r in sorted({x["round"] for x in rows})}
    by_kind = {k: _stats([x[key] for x in rows if x["did"] == k]) for k in sorted({x["did"] for x in rows})}
    return {"all": _stats([x[key] for x in rows]), "by_round": by_round, "by_decision": by_kind}


def head_to_head(spec: str, versus: str, variant: str, deals: int, seed: int, device: str) -> dict:
    """``spec`` against ``versus`` on ``deals`` duplicate deals of a small variant (each deck
    twice, seats swapped): ``spec``'s margin per deal, its mean and a 95 % normal interval."""
    from pasur.game.variants import get_variant
    from pasur.hidden.game import play_hidden

    v = get_variant(variant)
    margins = []
    for d in range(deals):
        deck = Deck.from_seed(seed + d, v)
        a, b = make_agent(spec, seed=seed + d, device=device), make_agent(versus, seed=seed + d, device=device)
        first = play_hidden(deck, (a, b)).utility
        a, b = make_agent(spec, seed=seed + d, device=device), make_agent(versus, seed=seed + d, device=device)
        second = play_hidden(deck, (b, a)).utility
        margins.append((first - second) / 2)
    mean = statistics.fmean(margins)
    half = 1.96 * statistics.stdev(margins) / len(margins) ** 0.5 if len(margins) > 1 else float("nan")
    head = {"agent": spec, "versus": versus, "variant": variant, "deals": deals, "seed": seed, "mean": mean}
    return head | {"ci95": [mean - half, mean + half], "margins": margins}


def exploit(spec: str, variant: str, device: str) -> dict:
    """The exact exploitability of the agent's mixed strategy on a small variant."""
    from pasur.hidden.cfr_agent import _round_key
    from pasur.hidden.exact_cfr import HiddenCFR, HiddenCFRConfig, solve
    from pasur.hidden.exact_exploit import exploit_report, info_state
    from pasur.hidden.history_tree import build_tree

    tree = build_tree(variant)
    solver = HiddenCFR(tree, HiddenCFRConfig("dcfr"), device)
    agent = make_agent(spec, seed=0, device=device)
    table = torch.zeros(solver.n_rows, solver.A, dtype=solver.dtype, device=solver.device)
    t0 = time.perf_counter()
    for p in (0, 1):
        infos = [info_state(tree, p, i) for i in range(tree.n_infosets[p])]
        # a round's information sets one after the other, so each round is solved once and kept
        order = sorted(range(len(infos)), key=lambda i: (_round_key(infos[i]), infos[i].turn, i))
        for i in order:
            acts = tree.actions[p][i]
            legal, probs = agent.strategy(infos[i])
            for a, q in zip(legal, probs.tolist(), strict=True):
                table[solver.row_offset[p] + i, acts.index(a)] = q
    seconds = time.perf_counter() - t0
    equilibrium = solve(HiddenCFR(tree, HiddenCFRConfig("dcfr"), device), 10_000, target_exploitability=1e-3).policy
    report = exploit_report(solver, table, equilibrium)
    return {"variant": variant, "agent": spec, "table_seconds": seconds, **report}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="cfr")
    ap.add_argument("--opponent", default="greedy")
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--seed", type=int, default=420200)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1, help="torch's CPU threads (1: one core)")
    ap.add_argument("--budget-s", type=float, default=600.0, help="no new game after this many seconds")
    ap.add_argument("--exploit", default="", help="small variants to measure exactly, e.g. micro,duo")
    ap.add_argument("--versus", default="", help="head-to-head opponents on --variant, e.g. pimc:8,best")
    ap.add_argument("--variant", default="tiny")
    ap.add_argument("--deals", type=int, default=100, help="duplicate deals of each head-to-head")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if args.games < 0 or args.threads < 1 or args.budget_s <= 0:
        print("error: --games >= 0, --threads >= 1 and --budget-s > 0", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    machine = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(),
        "device": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "cpu",
    }
    command = "python " + " ".join(sys.argv)
    if args.games:
        t0 = time.perf_counter()
        rows = play_timed(args.spec, args.opponent, args.games, args.seed, args.device, args.budget_s)
        with open(out / "moves.csv", "w") as f:
            f.write("game,seat,round,turn,seconds,cpu_s,did\n")
            for r in rows:
                f.write(
                    f"{r['game']},{r['seat']},{r['round']},{r['turn']},{r['seconds']:.6f},{r['cpu_s']:.6f},{r['did']}\n"
                )
        summary = {
            "spec": args.spec,
            "opponent": args.opponent,
            "seed": args.seed,
            "games": len({r["game"] for r in rows}),
        }
        summary |= {"wall_s": time.perf_counter() - t0, "machine": machine, "command": command, **summarize(rows)}
        summary["cpu_s"] = summarize(rows, "cpu_s")
        summary["load_average"] = list(os.getloadavg())
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        print(json.dumps(summary["all"]), json.dumps(summary["by_round"]))
    if args.exploit:
        reports = [exploit(args.spec, v.strip(), args.device) for v in args.exploit.split(",") if v.strip()]
        (out / "exploit.json").write_text(
            json.dumps({"command": command, "machine": machine, "reports": reports}, indent=2) + "\n"
        )
        for r in reports:
            print(r["variant"], r["agent"], f"exploitability {r['exploitability']:.4f}")
    if args.versus:
        h2h = [
            head_to_head(args.spec, x.strip(), args.variant, args.deals, args.seed, args.device)
            for x in args.versus.split(",")
        ]
        (out / "h2h.json").write_text(
            json.dumps({"command": command, "machine": machine, "runs": h2h}, indent=2) + "\n"
        )
        for r in h2h:
            print(r["agent"], "vs", r["versus"], r["variant"], f"{r['mean']:+.3f}", r["ci95"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
