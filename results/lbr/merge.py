"""Merge the chunks of a full-game LBR run (results/lbr/standard-AGENT[-model-MODEL]/seed-S/, a
few deals each) into one report: the responder's gain per game with its 95 % interval over all
the deals, and the posterior's counts summed. Every chunk must be of the same run (agent, model
and its eps, hands): a mixed folder is refused. Usage: python results/lbr/merge.py
standard-heuristic (writes results/lbr/standard-heuristic.json and prints it)."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from pasur.hidden.arena import pair_measures

HERE = Path(__file__).parent


def merge(name: str) -> dict:
    chunks = sorted((HERE / name).glob("seed-*/lbr.json"), key=lambda p: int(p.parent.name.split("-")[1]))
    records, posterior, seconds, first = [], {}, 0.0, None
    for path in chunks:
        report = json.loads(path.read_text())
        first = first or report
        if _run_of(report) != _run_of(first):
            raise SystemExit(f"{path}: a different run ({_run_of(report)}) from the first chunk's ({_run_of(first)})")
        seconds += report["seconds"]
        for key, value in report["posterior"].items():
            posterior[key] = posterior.get(key, 0) + value
        with (path.parent / "deals.csv").open() as f:
            for row in csv.DictReader(f):
                a, b = int(row["lbr_as_alex"]), int(row["agent_as_alex"])
                records.append({"a_as_alex": a, "b_as_alex": b, "margin": (a - b) / 2, "seed": int(row["seed"])})
    m = pair_measures("lbr", first["agent"], records)
    seeds = [r["seed"] for r in records]
    return {
        "agent": first["agent"],
        "variant": first["variant"],
        "hands": first["hands"],
        "exact_cap": first["exact_cap"],
        "model": first.get("model", first["agent"]),  # chunks from before --model: the agent itself
        "model_eps": first.get("model_eps", 0.0),
        "model_probs": first.get("model_probs", "choice"),
        "chunks": len(chunks),
        "seeds": [min(seeds), max(seeds)],
        "gain": m["margin"],
        **{k: m[k] for k in ("deals", "games", "half_width", "ci95", "sd", "win_rate", "tie_rate", "loss_rate")},
        "posterior": posterior,
        "seconds_wall_sum": round(seconds, 1),
    }


def _run_of(report: dict) -> tuple:
    """What makes two chunks one run."""
    keys = ("agent", "variant", "hands", "exact_cap")
    return (*(report[k] for k in keys), report.get("model", report["agent"]), report.get("model_eps", 0.0))


if __name__ == "__main__":
    out = merge(sys.argv[1])
    (HERE / f"{sys.argv[1]}.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
