"""Table 16's exact columns from ``pasur deck-values`` files: per number of Jacks Alex is dealt,
the decision-stump split on his clubs (:func:`pasur.study.experiments.split_table`, the
experiment's own code), and on each side the share of decks Alex wins under optimal play and
the mean exact value; several deck sets side by side (the paper's 10,000 decks beside the 500
seeded decks of the ``table16`` experiment).

    python -m pasur.study.deck_table16 OUT.md LABEL=values.parquet [LABEL=values.parquet ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from pasur.common.errors import PasurInputError
from pasur.common.outputs import write_text_atomic
from pasur.study.experiments.fair_value import split_table


def records(path: Path) -> list[dict]:
    """The rows of a deck-values file with Table 16's targets: ``exact_value`` and ``exact_win``
    (1 where Alex wins under optimal play, else 0: ties are not won)."""
    import pyarrow.parquet as pq

    rows = pq.read_table(path).to_pylist()
    for r in rows:
        r["exact_value"] = float(r["value"])
        r["exact_win"] = 1.0 if r["value"] > 0 else 0.0
    return rows


def exact_rows(recs: list[dict]) -> list[dict]:
    """Per Jacks and side of the split on clubs (the stump on the win share, the target that
    plays the fair value's part; where Alex wins every deck of a Jacks count or none, the stump
    on the exact value): decks, share Alex wins, and the mean and sd of the exact value."""
    win, value = split_table(recs, "exact_win"), split_table(recs, "exact_value")
    out = []
    for j in sorted({r["alex_jacks"] for r in recs}):
        constant = len({r["exact_win"] for r in recs if r["alex_jacks"] == j}) == 1
        for side in (v for v in (value if constant else win) if v["jacks"] == j):
            sub = [r for r in recs if r["alex_jacks"] == j and _on_side(r["alex_clubs"], side["clubs"])]
            values = np.array([r["exact_value"] for r in sub])
            out.append(
                {
                    "jacks": j,
                    "clubs": side["clubs"],
                    "decks": len(sub),
                    "wins": float(np.mean([r["exact_win"] for r in sub])),
                    "value": float(values.mean()),
                    "value_sd": float(values.std(ddof=1)) if values.size > 1 else None,
                }
            )
    return out


def _on_side(clubs: int, label: str) -> bool:
    if label == "all":
        return True
    op, c = label.split()
    return clubs <= float(c) if op == "≤" else clubs > float(c)


def overall(recs: list[dict]) -> dict:
    v = np.array([r["exact_value"] for r in recs])
    return {"decks": len(recs), "wins": float((v > 0).mean()), "ties": float((v == 0).mean()), "mean": float(v.mean())}


def markdown(sets: dict[str, list[dict]]) -> str:
    """The tables of every set: the win-share split with both exact columns, then the split on
    the exact value itself, and each set's totals."""
    lines = [
        "# Table 16, exact columns\n",
        "Per number of Jacks Alex is dealt (over his six hands), the depth-1 regression tree on his clubs "
        "(`pasur.study.experiments.split_table`) with the share of decks Alex wins under optimal play as "
        "its target (where he wins all or none of a Jacks count's decks, the exact value as its target); "
        "on each side, that share and the mean (sd) of the exact value (Alex's points minus Bob's, both "
        "playing the open-hand game optimally). Ties count as not won.\n",
        "| Jacks | decks set | clubs | decks | share Alex wins | mean exact value (sd) |",
        "|---|---|---|---|---|---|",
    ]
    tables = {name: exact_rows(recs) for name, recs in sets.items()}
    for j in sorted({r["jacks"] for rows in tables.values() for r in rows}):
        for name, rows in tables.items():
            for r in (r for r in rows if r["jacks"] == j):
                sd = "" if r["value_sd"] is None else f" ({r['value_sd']:.2f})"
                lines.append(
                    f"| {j} | {name} | {r['clubs']} | {r['decks']:,} | {r['wins']:.2f} | {r['value']:.2f}{sd} |"
                )
    lines += ["", "The split on the exact value itself (its own stump):", ""]
    lines += ["| Jacks | decks set | clubs | decks | mean exact value (sd) |", "|---|---|---|---|---|"]
    for name, recs in sets.items():
        for r in split_table(recs, "exact_value"):
            sd = "" if r["std"] is None else f" ({r['std']:.2f})"
            lines.append(f"| {r['jacks']} | {name} | {r['clubs']} | {r['decks']:,} | {r['mean']:.2f}{sd} |")
    lines += ["", "| decks set | decks | share Alex wins | share tied | mean exact value |", "|---|---|---|---|---|"]
    for name, recs in sets.items():
        o = overall(recs)
        lines.append(f"| {name} | {o['decks']:,} | {o['wins']:.3f} | {o['ties']:.3f} | {o['mean']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print("error: usage: python -m pasur.study.deck_table16 OUT.md LABEL=values.parquet ...", file=sys.stderr)
        return 2
    try:
        sets = {a.split("=", 1)[0]: records(Path(a.split("=", 1)[1])) for a in argv[1:]}
        write_text_atomic(argv[0], markdown(sets))
    except (OSError, PasurInputError, ValueError, KeyError) as e:  # pyarrow: ArrowInvalid is a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
