"""This arena run (the code of ea1a907, the same 10 decks as ../arena-vs-best-v2): cfr's margin
per deal against best, the mean with a 95 % normal interval, the margins of the session-4 agent
(../arena-vs-best-v2) and of the old K 4 agent (../arena-vs-best) on the same decks, and cfr's
seconds per decision by round as the chunks timed them (wall time at nice -n 19)."""

import csv
import json
import statistics
from pathlib import Path

here = Path(__file__).parent
records, timing = [], {}
for f in sorted((here / "chunks").glob("*/*.json")):
    chunk = json.loads(f.read_text())
    records += chunk["records"]
    for agent, t in chunk["timing"].items():
        acc = timing.setdefault(agent, {"seconds": [0.0] * 6, "decisions": [0] * 6})
        acc["seconds"] = [a + b for a, b in zip(acc["seconds"], t["seconds"], strict=True)]
        acc["decisions"] = [a + b for a, b in zip(acc["decisions"], t["decisions"], strict=True)]
margins = [r["margin"] for r in records]
old = {int(r["seed"]): float(r["margin"]) for r in csv.DictReader(open(here.parent / "arena-vs-best" / "deals.csv"))}
v2 = json.loads((here.parent / "arena-vs-best-v2" / "partial.json").read_text())
v2_by_seed = dict(zip(v2["seeds"], v2["margins"], strict=True))
mean = statistics.fmean(margins)
half = 1.96 * statistics.stdev(margins) / len(margins) ** 0.5
out = {
    "deals": len(margins),
    "seeds": [r["seed"] for r in records],
    "cfr_vs_best_mean": mean,
    "ci95": [mean - half, mean + half],
    "won_lost_tied": [sum(m > 0 for m in margins), sum(m < 0 for m in margins), sum(m == 0 for m in margins)],
    "session4_cfr_same_decks_mean": statistics.fmean(v2_by_seed[r["seed"]] for r in records),
    "old_cfr_same_decks_mean": statistics.fmean(old[r["seed"]] for r in records),
    "seconds_per_decision_by_round": {
        a: [s / max(n, 1) for s, n in zip(t["seconds"], t["decisions"], strict=True)] for a, t in timing.items()
    },
    "margins": margins,
}
(here / "summary.json").write_text(json.dumps(out, indent=1) + "\n")
print(json.dumps({k: v for k, v in out.items() if k not in ("margins", "seeds")}))
