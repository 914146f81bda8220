"""Figure 12: the distribution of tree sizes over decks, both tree modes (exact solves, no CFR)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from pasur.common.errors import PasurInputError
from pasur.common.outputs import save_png, write_csv, write_text_atomic
from pasur.game.cards import NamedDeck
from pasur.study.experiments.registry import PAPER_MEMORY_LIMIT_GIB, StudyRun, experiment, folder
from pasur.study.experiments.writers import deck_span, finish, pyplot, quantiles, sweep_decks
from pasur.study.pipeline import DeckJob


def _paper_memory_limit(gib: float) -> int:
    """figure12's ``paper_memory_limit`` (GiB), checked, in bytes."""
    if not (isinstance(gib, int | float) and 0 < gib <= 1e6 and math.isfinite(gib)):
        raise PasurInputError(f"--paper-memory-limit must be a positive number of GiB, got {gib}")
    return int(gib * 2**30)


def figure12(decks: list[NamedDeck], out: Path, sweep_opts: dict, paper_memory_limit: int | None) -> dict:
    """Tree sizes (nodes = strategy-table rows + roots) per deck for the compact and paper trees.
    A paper tree over ``paper_memory_limit`` is not built; it is counted as over the limit."""
    out = folder(out, "figure12")
    sizes: dict[str, dict[str, float]] = {}
    failed: dict[str, int] = {}
    for mode in ("compact", "paper"):
        opts = dict(sweep_opts)
        if mode == "paper" and paper_memory_limit is not None:
            opts["memory_limit"] = paper_memory_limit
        recs = sweep_decks(decks, DeckJob.exact(tree=mode), out / f"sweep-{mode}", opts)
        sizes[mode] = {r["deck_id"]: r["nodes"] for r in recs}
        failed[mode] = len(decks) - len(recs)
    rows = [
        {"deck_id": nd.id, "compact_nodes": sizes["compact"].get(nd.id), "paper_nodes": sizes["paper"].get(nd.id)}
        for nd in decks
    ]
    write_csv(out / "figure12.csv", rows)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    summary: dict = {"experiment": "figure12", "decks": len(decks)}
    all_sizes = [v for m in sizes.values() for v in m.values()]
    if all_sizes:
        bins = np.logspace(math.log10(max(1, min(all_sizes))), math.log10(max(all_sizes)) + 0.01, 40)
        for mode, color in (("compact", "tab:blue"), ("paper", "tab:orange")):
            x = np.array(list(sizes[mode].values()), dtype=float)
            if x.size:
                ax.hist(x, bins=bins, alpha=0.6, color=color, label=f"{mode} ({x.size} decks)")
                summary[mode] = quantiles(x)
            summary[mode + "_not_built"] = failed[mode]
    ax.set(xscale="log", xlabel="nodes in the tree (strategy-table rows)", ylabel="decks")
    ax.set_title(f"Figure 12: tree sizes over {len(decks)} decks ({deck_span(decks)}), both tree modes")
    ax.legend()
    save_png(fig, out / "figure12.png", dpi=110)
    md = ["| tree | decks | median | p90 | p99 | max | not built |", "|---|---|---|---|---|---|---|"]
    for mode in ("compact", "paper"):
        q = summary.get(mode)
        if q:
            md.append(
                f"| {mode} | {q['decks']} | {q['median']:,.0f} | {q['p90']:,.0f} | {q['p99']:,.0f} | "
                f"{q['max']:,.0f} | {failed[mode]} |"
            )
    write_text_atomic(out / "figure12.md", "\n".join(md) + "\n")
    return finish(out, summary)


@experiment(
    "figure12",
    "Figure 12: tree sizes per deck, compact and paper trees (exact solves, no CFR).",
    tables=("figure12.md",),
    outputs=("sweep-compact", "sweep-paper", "figure12.csv", "figure12.md", "figure12.png", "summary.json"),
    options={"paper_memory_limit": _paper_memory_limit},
)
def _run_figure12(run: StudyRun) -> dict:
    limit = run.options.get("paper_memory_limit", PAPER_MEMORY_LIMIT_GIB)
    return figure12(run.decks, run.out, run.sweep, _paper_memory_limit(limit))
