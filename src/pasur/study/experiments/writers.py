"""What the experiments' writers share: the plotting module, Markdown tables, the summary file,
the sweep of their decks, and the words that name a plot's decks and solve."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pasur.common.outputs import write_text_atomic
from pasur.game.cards import NamedDeck
from pasur.study.pipeline import DeckJob


def pyplot():
    """matplotlib's pyplot on the Agg backend (files only, no display), imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def markdown_table(rows: list[dict], columns: list[str], fmt: dict | None = None) -> str:
    """``rows`` as a Markdown table of ``columns``; ``fmt``: a format per column; None is an empty cell."""
    fmt = fmt or {}
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        cells = []
        for c in columns:
            v = r.get(c)
            cells.append("" if v is None else (fmt[c].format(v) if c in fmt else str(v)))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def finish(out: Path, summary: dict) -> dict:
    """Write the headline numbers as ``summary.json`` and return them."""
    write_text_atomic(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    return summary


def sweep_decks(decks: list[NamedDeck], job: DeckJob, out: Path, sweep_opts: dict) -> list[dict]:
    """The per-deck records of ``job`` over ``decks``, swept (resumably) into ``out``."""
    from pasur.study.sweep import run_sweep

    return run_sweep(decks, job, out, **sweep_opts)


def deck_span(decks: list[NamedDeck]) -> str:
    """The decks of a plot in a few words: ``seed-0 .. seed-499`` or the one deck's id."""
    return decks[0].id if len(decks) == 1 else f"{decks[0].id} .. {decks[-1].id}"


def method_label(job: DeckJob) -> str:
    """The solve behind a plot: method, tree and stopping rule."""
    p = job.cfr
    if p is None:
        return f"exact, {job.tree} tree"
    stop = (
        f"{p.iterations} iterations"
        if p.target_exploitability is None
        else f"whole-game exploitability target {p.target_exploitability:g}"
    )
    return f"{p.method} ({stop}, {job.tree} tree)"


def quantiles(x: np.ndarray) -> dict:
    """The count, median, 90th and 99th percentiles, maximum and mean of ``x``."""
    return {
        "decks": int(x.size),
        "median": float(np.median(x)),
        "p90": float(np.percentile(x, 90)),
        "p99": float(np.percentile(x, 99)),
        "max": float(x.max()),
        "mean": float(x.mean()),
    }
