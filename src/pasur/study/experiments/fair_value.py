"""Table 16: fair value against the Jacks and clubs Alex is dealt, with the decision-stump split on
clubs per number of Jacks, beside the same table from the decks' exact values."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from pasur.common.errors import PasurInputError
from pasur.common.outputs import save_png, write_csv, write_text_atomic
from pasur.game.cards import NamedDeck
from pasur.study.experiments.registry import StudyRun, experiment, folder
from pasur.study.experiments.writers import deck_span, finish, markdown_table, method_label, pyplot, sweep_decks
from pasur.study.pipeline import DeckJob


def stump_split(x: np.ndarray, y: np.ndarray) -> float | None:
    """The threshold ``c`` of the depth-1 regression tree on ``x`` (``x <= c`` vs ``x > c``)
    with the least squared error; None if ``x`` takes one value. Thresholds are values of x.

    >>> stump_split(np.array([1, 2, 3, 4]), np.array([0.0, 0.0, 1.0, 1.0]))
    2.0
    """
    values = np.unique(x)
    if values.size < 2:
        return None
    best, best_sse = None, math.inf
    for c in values[:-1]:
        lo, hi = y[x <= c], y[x > c]
        sse = float(((lo - lo.mean()) ** 2).sum() + ((hi - hi.mean()) ** 2).sum())
        if sse < best_sse - 1e-12:
            best, best_sse = float(c), sse
    return best


def split_table(records: list[dict], target: str, by: str = "alex_jacks", on: str = "alex_clubs") -> list[dict]:
    """Table 16's rows: per value of ``by``, the stump split on ``on`` and the mean and standard
    deviation of ``target`` on each side."""
    rows = []
    for j in sorted({r[by] for r in records}):
        sub = [r for r in records if r[by] == j and r.get(target) is not None]
        x = np.array([r[on] for r in sub], dtype=float)
        y = np.array([r[target] for r in sub], dtype=float)
        c = stump_split(x, y)
        sides = [("all", np.ones_like(x, dtype=bool))] if c is None else [(f"≤ {c:g}", x <= c), (f"> {c:g}", x > c)]
        for label, sel in sides:
            rows.append(
                {
                    "jacks": j,
                    "clubs": label,
                    "decks": int(sel.sum()),
                    "mean": float(y[sel].mean()),
                    "std": float(y[sel].std(ddof=1)) if sel.sum() > 1 else None,
                }
            )
    return rows


def table16(decks: list[NamedDeck], out: Path, job: DeckJob, sweep_opts: dict) -> dict:
    """Fair value (Alex's win rate, equilibrium vs equilibrium) against Alex's Jacks and clubs,
    split like the paper's Table 16; beside it the same from exact values (Alex wins under
    optimal play: 1, else 0; and the mean exact value)."""
    agent = "model" if job.fit else "table"
    if job.games < 1:
        raise PasurInputError("table16 plays games: give --games")
    job = replace(job, matchups=(f"{agent}-vs-{agent}",), keep_table=False)
    out = folder(out, "table16")
    recs = sweep_decks(decks, job, out / "sweep", sweep_opts)
    for r in recs:
        r["exact_win"] = 1.0 if r["exact_value"] > 0 else 0.0
    per_deck = [
        {
            k: r.get(k)
            for k in (
                "deck_id",
                "alex_jacks",
                "alex_clubs",
                "bob_jacks",
                "bob_clubs",
                "exact_value",
                "value",
                "nash_conv",
                "exploitability",
                "fair_value",
                "fair_value_ties_to_alex",
                "exact_win",
            )
        }
        for r in recs
    ]
    write_csv(out / "table16-decks.csv", per_deck)
    fair = split_table(recs, "fair_value")
    exact_win = split_table(recs, "exact_win")
    exact_value = split_table(recs, "exact_value")
    for name, rows in (("fair-value", fair), ("exact-win", exact_win), ("exact-value", exact_value)):
        write_csv(out / f"table16-{name}.csv", rows)
    cols = ["jacks", "clubs", "decks", "mean", "std"]
    fmt = {"mean": "{:.2f}", "std": "{:.2f}"}
    md = (
        f"# Table 16 over {len(recs)} decks\n\n"
        f"Fair value: Alex's win rate, {agent} vs {agent}, {job.games:,} games per deck "
        "(ties count as not won).\n\n" + markdown_table(fair, cols, fmt) + "\n"
        "From exact values: the share of decks Alex wins under optimal play.\n\n"
        + markdown_table(exact_win, cols, fmt)
        + "\nFrom exact values: the mean exact value (Alex's points minus Bob's).\n\n"
        + markdown_table(exact_value, cols, fmt)
    )
    write_text_atomic(out / "table16.md", md)
    fv = np.array([r["fair_value"] for r in recs], dtype=float)
    ev = np.array([r["exact_value"] for r in recs], dtype=float)
    corr = float(np.corrcoef(fv, ev)[0, 1]) if len(recs) > 2 and fv.std() > 0 and ev.std() > 0 else None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.scatter(ev, fv, s=8, alpha=0.6)
    ax.set(
        xlabel="exact value (points)",
        ylabel="fair value (Alex's win rate)",
        title=f"Table 16: {len(recs)} decks ({deck_span(decks)}), {method_label(job)}",
    )
    save_png(fig, out / "table16-fair-vs-exact.png", dpi=110)
    return finish(
        out,
        {
            "experiment": "table16",
            "agent": agent,
            "decks": len(recs),
            "games_per_deck": job.games,
            "mean_fair_value": float(fv.mean()) if fv.size else None,
            "share_exact_wins": float((ev > 0).mean()) if ev.size else None,
            "correlation_fair_vs_exact": corr,
            "fair_value": fair,
            "exact_win": exact_win,
        },
    )


@experiment(
    "table16",
    "Table 16: fair value against the Jacks and clubs Alex is dealt, beside the exact values.",
    tables=("table16.md",),
    outputs=(
        "sweep",
        "table16-decks.csv",
        "table16-fair-value.csv",
        "table16-exact-win.csv",
        "table16-exact-value.csv",
        "table16.md",
        "table16-fair-vs-exact.png",
        "summary.json",
    ),
    cfr=True,
    plays=True,
)
def _run_table16(run: StudyRun) -> dict:
    return table16(run.decks, run.out, run.job, run.sweep)
