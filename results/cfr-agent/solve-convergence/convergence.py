"""How far the CFR agent's solves from a round's start are from an equilibrium of their own
round after N iterations: the subgame's exploitability (NashConv / 2 of the range solve's tree,
points per game) and the change of the agent's move probabilities, per solve, for the two games
of ``bench_cfr_agent.py`` (seeds 420200 and 420201 against ``greedy``, the agent Alex then Bob).

    python results/cfr-agent/solve-convergence/convergence.py --out results/cfr-agent/solve-convergence
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

import pasur.hidden.cfr_agent as cfr_agent
from pasur.game.cards import Deck
from pasur.hidden.exact_cfr import HiddenCFR, HiddenCFRConfig
from pasur.hidden.game import HiddenGame
from pasur.hidden.registry import make_agent

CHECKS = (4, 8, 12, 16, 20, 24, 32, 48, 64)


def round_start_trees(seed: int, games: int) -> list[dict]:
    """Every solve from a round's start the default agent makes in the games: its tree, and
    where the agent's decision lies in it."""
    trees: list[dict] = []
    real = cfr_agent.RangeSolve

    class Recording(real):
        def __init__(self, rt, iterations, method="dcfr", device="cpu"):
            super().__init__(rt, iterations, method, device)
            if rt.level == 0 and not rt.gadget:
                trees.append({"rt": rt, "solve": self})

    cfr_agent.RangeSolve = Recording
    try:
        for g in range(games):
            seat = g % 2
            agent, opp = make_agent("cfr", seed=seed + g), make_agent("greedy", seed=seed + g)
            game = HiddenGame(Deck.from_seed(seed + g))
            while not game.is_terminal:
                info = game.observation(game.mover)
                before = len(trees)
                action = (agent if game.mover == seat else opp).choose(info)
                for t in trees[before:]:
                    t |= {"game": g, "round": info.round, "turn": info.turn, "info": info}
                game.apply(action)
    finally:
        cfr_agent.RangeSolve = real
    return trees


def convergence(entry: dict) -> dict:
    """The subgame exploitability and the decision's probabilities after each of :data:`CHECKS`."""
    rt, solve, info = entry["rt"], entry["solve"], entry["info"]
    _, moves = cfr_agent.round_start(info)
    level, pub = rt.expansion.public_node(list(moves))
    row = solve.row(level, pub, 0)
    cfr = HiddenCFR(rt.tree, HiddenCFRConfig("dcfr"))
    out = {k: entry[k] for k in ("game", "round", "turn")} | {"nodes": rt.tree.n_histories, "checks": []}
    for n in CHECKS:
        c0 = time.process_time()
        cfr.iterate(n - cfr.iteration)
        policy = cfr.average_policy()
        probs = policy[row].tolist() if row is not None else []
        out["checks"].append(
            {
                "iterations": n,
                "exploitability": cfr.exploitability(policy),
                "decision": probs,
                "cpu_s_step": time.process_time() - c0,
            }
        )
    final = np.array(out["checks"][-1]["decision"])
    for c in out["checks"]:
        c["decision_tv_to_64"] = float(0.5 * np.abs(np.array(c["decision"]) - final).sum()) if len(final) else None
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=420200)
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = [convergence(e) for e in round_start_trees(args.seed, args.games)]
    summary = {
        "command": "python " + " ".join(sys.argv),
        "load_average": list(os.getloadavg()),
        "solves": rows,
    }
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "convergence.json").write_text(json.dumps(summary, indent=1) + "\n")
    for r in rows:
        line = " ".join(
            f"{c['iterations']}:{c['exploitability']:.3f}/{c['decision_tv_to_64']:.3f}" for c in r["checks"]
        )
        print(r["game"], r["round"], r["turn"], r["nodes"], line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
