"""The arena's results as text: the pairwise table and each pair's line.

>>> res = {"spec": {"agents": ["a", "b"]}, "pairs": [{"a": "a", "b": "b", "deals": 9, "margin": 1.5,
...        "half_width": 0.5, "ci95": [1.0, 2.0], "win_rate": 0.5, "tie_rate": 0.1, "loss_rate": 0.4, "timing": {}}]}
>>> print(markdown_table(res).splitlines()[2])
| a | · | +1.50 ± 0.50 |
"""

from __future__ import annotations


def _cell(p: dict, flip: bool) -> str:
    m = -p["margin"] if flip else p["margin"]
    return f"{m:+.2f} ± {p['half_width']:.2f}"


def markdown_table(results: dict) -> str:
    """Row agent's margin per deal over the column agent (points per game, ± the 95 % half-width),
    then one line per pair with deals, interval and win/tie/loss rates, then time per decision;
    a pre-registered run's plan (its path, commit and claim) first."""
    agents = list(results["spec"]["agents"])
    by_pair = {(p["a"], p["b"]): p for p in results["pairs"]}
    lines = []
    plan = results.get("plan")
    if plan:
        lines += [
            f"Pre-registered: plan `{plan['path']}` committed in {plan['commit'][:12]} "
            f"({plan.get('committed_at', '')}), sha256 {plan['sha256'][:16]}; claim: {plan.get('claim', '')}",
            "",
        ]
    lines += ["| row vs column | " + " | ".join(agents) + " |", "|---" * (len(agents) + 1) + "|"]
    for r in agents:
        cells = []
        for c in agents:
            if r == c:
                cells.append("·")
            elif (r, c) in by_pair:
                cells.append(_cell(by_pair[(r, c)], False))
            elif (c, r) in by_pair:
                cells.append(_cell(by_pair[(c, r)], True))
            else:
                cells.append("")
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| A | B | deals | A's margin per deal | 95 % interval | half-width | A wins | ties | A loses |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for p in results["pairs"]:
        lo, hi = p["ci95"]
        lines.append(
            f"| {p['a']} | {p['b']} | {p['deals']} | {p['margin']:+.3f} | [{lo:+.3f}, {hi:+.3f}] | "
            f"{p['half_width']:.3f} | {p['win_rate']:.1%} | {p['tie_rate']:.1%} | {p['loss_rate']:.1%} |"
        )
    timing = _timing(results)
    if timing:
        lines += ["", "| agent | ms per decision, rounds 0..5 | decisions |", "|---|---|---:|"]
        for name, (ms, n) in timing.items():
            lines.append(f"| {name} | " + " / ".join(f"{x:.1f}" for x in ms) + f" | {n} |")
    return "\n".join(lines)


def _timing(results: dict) -> dict[str, tuple[list[float], int]]:
    """Per agent, over all pairs: milliseconds per decision in each round (batched decisions share
    the batch's time)."""
    acc: dict[str, list[list[float]]] = {}
    for p in results["pairs"]:
        for name, t in p.get("timing", {}).items():
            a = acc.setdefault(name, [[0.0] * 6, [0] * 6])
            a[0] = [x + y for x, y in zip(a[0], t["seconds"], strict=True)]
            a[1] = [x + y for x, y in zip(a[1], t["decisions"], strict=True)]
    return {
        name: ([1000 * s / d if d else 0.0 for s, d in zip(sec, dec, strict=True)], sum(dec))
        for name, (sec, dec) in acc.items()
    }
