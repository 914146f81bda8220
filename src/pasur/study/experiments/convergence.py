"""Figure 15: CFR convergence per round, mean and standard-deviation bands over decks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from pasur.common.errors import PasurInputError
from pasur.common.outputs import save_png, write_csv
from pasur.game.cards import NamedDeck
from pasur.study.experiments.registry import StudyRun, experiment, folder
from pasur.study.experiments.writers import deck_span, finish, method_label, pyplot, sweep_decks
from pasur.study.pipeline import DeckJob


def figure15(decks: list[NamedDeck], out: Path, job: DeckJob, sweep_opts: dict) -> dict:
    """Per round, the mean and standard deviation over decks of log10 of the average strategy's
    MSE to the final one, and of the round's exploitability (NashConv / 2; NashConv too in the
    CSV), against the iteration. Needs a fixed number of iterations so the curves line up."""
    from pasur.solve.strategy_io import read_traces
    from pasur.study.sweep import DECKS_DIR

    if job.cfr is None or job.cfr.iterations is None:
        raise PasurInputError("figure15 needs a CFR method and a fixed --iterations (the curves of all decks line up)")
    job = replace(job, cfr=replace(job.cfr, target_exploitability=None), keep_table=False, games=0, matchups=())
    out = folder(out, "figure15")
    recs = sweep_decks(decks, job, out / "sweep", sweep_opts)
    curves: dict[tuple[int, str], list[np.ndarray]] = {}
    iters: dict[int, np.ndarray] = {}
    for r in recs:
        t = read_traces(out / "sweep" / DECKS_DIR / r["deck_id"] / "traces.parquet")  # old ones relabelled
        rnd = np.array(t["round"])
        for k in sorted(set(rnd.tolist())):
            sel = rnd == k
            iters[k] = np.array(t["iteration"])[sel]
            for col in ("mse_to_final", "exploitability", "nash_conv"):
                v = np.maximum(np.array(t[col], dtype=float)[sel], 1e-12)
                curves.setdefault((k, col), []).append(np.log10(v))
    rows = []
    for (k, col), cs in sorted(curves.items()):
        n = min(len(c) for c in cs)
        arr = np.stack([c[:n] for c in cs])
        for i in range(n):
            rows.append(
                {
                    "round": k,
                    "measure": col,
                    "iteration": int(iters[k][i]),
                    "mean_log10": float(arr[:, i].mean()),
                    "std_log10": float(arr[:, i].std()),
                    "decks": int(arr.shape[0]),
                }
            )
    write_csv(out / "figure15.csv", rows)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for j, col in enumerate(("mse_to_final", "exploitability")):
        ax = axes[j]
        for k in sorted(iters):
            sel = [r for r in rows if r["round"] == k and r["measure"] == col]
            x = np.array([r["iteration"] for r in sel])
            m = np.array([r["mean_log10"] for r in sel])
            s = np.array([r["std_log10"] for r in sel])
            ax.plot(x, 10**m, label=f"round {k}")
            ax.fill_between(x, 10 ** (m - s), 10 ** (m + s), alpha=0.2)
        ax.set(yscale="log", xlabel="iteration")
        ax.set_ylabel(
            "MSE to the final average strategy" if j == 0 else "exploitability = NashConv / 2 (points, worst root)"
        )
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"Figure 15: {method_label(job)} over {len(recs)} decks ({deck_span(decks)}; geometric mean, ±1 sd band)"
    )
    save_png(fig, out / "figure15.png", dpi=110)
    final = {}
    for k in sorted(iters):
        for col in ("exploitability", "nash_conv"):
            last = [r for r in rows if r["round"] == k and r["measure"] == col][-1]
            final[f"round_{k}_final_{col}_geomean"] = float(10 ** last["mean_log10"])
    return finish(out, {"experiment": "figure15", "decks": len(recs), "iterations": job.cfr.iterations, **final})


@experiment(
    "figure15",
    "Figure 15: CFR convergence per round (MSE to the final strategy, exploitability), bands over decks.",
    outputs=("sweep", "figure15.csv", "figure15.png", "summary.json"),
    cfr=True,
)
def _run_figure15(run: StudyRun) -> dict:
    return figure15(run.decks, run.out, run.job, run.sweep)
