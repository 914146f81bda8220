"""The screening tables of docs/hidden.md ("Combining search and the networks") from the arena runs
kept here (NAME/results.json, copied from runs/screen-NAME/): python results/screen-combined/summarize.py"""

import json
from pathlib import Path

HERE = Path(__file__).parent
#: every variant screened, in the order it was run (seeds 90,000 to 90,299)
SCREENED = ["pv03", "popp", "pl05", "k40", "pl1", "pl025", "belief", "popppl05", "k40pl05", "pl005", "pl2", "top3k40", "pv1"]
#: the chosen candidate, once more on other deals (seeds 91,000 to 91,299, then 91,300 to 91,599)
CONFIRM = ["confirm-pl05", "confirm2-pl05"]


def ms(pair: dict, agent: str) -> str:
    t = pair["timing"][agent]
    return " / ".join(f"{1000 * s / n:.1f}" for s, n in zip(t["seconds"], t["decisions"], strict=True))


def pooled(names: list[str]) -> str:
    """One row over the deals of several runs of the same pair."""
    import csv
    import math

    m = [float(r["margin"]) for n in names for r in csv.DictReader((HERE / n / "deals.csv").open())]
    mean = sum(m) / len(m)
    sd = math.sqrt(sum((x - mean) ** 2 for x in m) / (len(m) - 1))
    hw = 1.96 * sd / math.sqrt(len(m))
    return f"| both runs | {len(m)} | {mean:+.3f} | [{mean - hw:+.3f}, {mean + hw:+.3f}] | {hw:.3f} | | |"


def table(names: list[str], first: str) -> list[str]:
    out = [
        f"| {first} | deals | margin per deal | 95 % interval | half-width | its ms per decision, rounds 0..5 "
        "| ispimc:20:infer's ms per decision |",
        "|---|---:|---:|---|---:|---|---|",
    ]
    for name in names:
        f = HERE / name / "results.json"
        if not f.is_file():
            continue
        run = json.loads(f.read_text())
        (p,) = run["pairs"]
        p["spec"] = run["spec"]
        lo, hi = p["ci95"]
        label = p["a"] if first == "candidate" else f"{p['a']}, seeds {p['spec']['seed']:,} on"
        out.append(
            f"| {label} | {p['deals']} | {p['margin']:+.3f} | [{lo:+.3f}, {hi:+.3f}] | {p['half_width']:.3f} "
            f"| {ms(p, p['a'])} | {ms(p, p['b'])} |"
        )
    return out


if __name__ == "__main__":
    lines = ["Against `ispimc:20:infer`, duplicate deals of seeds 90,000 to 90,299 (every variant screened):", ""]
    lines += table(SCREENED, "candidate")
    lines += ["", "The chosen candidate once more, on other deals (seeds 91,000 to 91,599):", ""]
    lines += table(CONFIRM, "confirmed candidate")
    if all((HERE / n / "deals.csv").is_file() for n in CONFIRM):
        lines.append(pooled(CONFIRM))
    (HERE / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
