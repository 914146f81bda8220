"""The finished chunks of this stopped arena run: cfr's margin per deal against best, the mean
with a 95 % normal interval, and the old agent's margin on the same decks (../arena-vs-best)."""

import csv
import json
import statistics
from pathlib import Path

here = Path(__file__).parent
records = []
for f in sorted((here / "chunks").glob("*/*.json")):
    records += json.loads(f.read_text())["records"]
margins = [r["margin"] for r in records]
old = {int(r["seed"]): float(r["margin"]) for r in csv.DictReader(open(here.parent / "arena-vs-best" / "deals.csv"))}
mean = statistics.fmean(margins)
half = 1.96 * statistics.stdev(margins) / len(margins) ** 0.5
same = [old[r["seed"]] for r in records]
out = {
    "deals": len(margins),
    "seeds": [r["seed"] for r in records],
    "cfr_vs_best_mean": mean,
    "ci95": [mean - half, mean + half],
    "won_lost_tied": [sum(m > 0 for m in margins), sum(m < 0 for m in margins), sum(m == 0 for m in margins)],
    "old_cfr_same_decks_mean": statistics.fmean(same),
    "paired_difference_new_minus_old": statistics.fmean(m - o for m, o in zip(margins, same, strict=True)),
    "margins": margins,
}
(here / "partial.json").write_text(json.dumps(out, indent=1) + "\n")
print(json.dumps({k: v for k, v in out.items() if k not in ("margins", "seeds")}))
