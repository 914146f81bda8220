"""The LBR results as markdown tables (results/lbr/table.md): on the small variants next to the
exact exploitability of results/hidden-exploitability/, and on the full game with intervals.
Usage: python results/lbr/table.py > results/lbr/table.md"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
EXPLOIT = HERE.parent / "hidden-exploitability"
SMALL = ("micro", "duo", "tiny", "mini")
AGENTS = ("greedy", "heuristic", "random", "pimc:8")


def exploitability(variant: str, agent: str) -> float | None:
    for name in (f"{variant}.json", f"{variant}-heuristic.json", f"{variant}-pimc.json"):
        path = EXPLOIT / name
        if not path.exists():
            continue
        rows = json.loads(path.read_text())
        for row in rows if isinstance(rows, list) else [rows]:
            if row["agent"] == agent:
                return row["exploitability"]
    return None


def small_rows() -> list[str]:
    out = [
        "| agent on variant | LBR gain | how | exact exploitability | LBR / exploitability |",
        "|---|---|---|---|---|",
    ]
    for v in SMALL:
        for a, suffix in ((a, s) for a in AGENTS for s in ("", "-200deals", "-1000deals", "-model-greedy")):
            path = HERE / f"{v}-{a.replace(':', '-')}{suffix}" / "lbr.json"
            if not path.exists():
                continue
            r = json.loads(path.read_text())
            e = exploitability(v, a)
            if r["every_deal"]:
                how, gain = f"every deal ({r['deals']:,})", f"{r['gain']:+.4f}"
            else:
                lo, hi = r["ci95"]
                how, gain = f"{r['deals']:,} deals, 95 % [{lo:+.3f}, {hi:+.3f}]", f"{r['gain']:+.3f}"
            ratio = f"{r['gain'] / e:.2f}" if e and e > 1e-3 else "-"
            model = r.get("model", a)
            name = f"`{a}` on `{v}`" + ("" if model == a else f", posterior by `{model}` (eps {r['model_eps']:g})")
            out.append(f"| {name} | {gain} | {how} | {e:.4f} | {ratio} |")
    return out


def full_rows() -> list[str]:
    out = [
        "| agent | posterior from | deals (games) | LBR gain per game | 95 % interval "
        "| decisions: exact / sampled / fallback |"
    ]
    out.append("|---|---|---|---|---|---|")
    for path in sorted(HERE.glob("standard-*.json")):
        r = json.loads(path.read_text())
        lo, hi = r["ci95"]
        p = r["posterior"]
        model = r.get("model", r["agent"])
        own = model == r["agent"] and r.get("model_probs", "choice") != "network"  # else its network's probabilities
        source = "the agent" if own else f"model `{model}` (eps {r['model_eps']:g})"
        out.append(
            f"| `{r['agent']}` | {source} | {r['deals']} ({r['games']}) | {r['gain']:+.3f} | [{lo:+.3f}, {hi:+.3f}] "
            f"| {p['exact']:,} / {p['sampled']:,} / {p['fallback']:,} |"
        )
    return out


if __name__ == "__main__":
    print("## The small variants\n")
    print("\n".join(small_rows()))
    print("\n## The full game (CPU)\n")
    print("\n".join(full_rows()))
