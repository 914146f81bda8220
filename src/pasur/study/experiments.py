"""The paper's experiments (section 3), one function each, over decks swept with
:mod:`pasur.study.sweep` (so they resume, and run on Ray workers or a cluster), written as PNG plots
and CSV + Markdown tables into one folder:

* Figure 12: the distribution of tree sizes, both tree modes;
* Figure 14: equilibrium vs equilibrium, vs random, and random vs equilibrium;
* Figure 15: CFR convergence per round, mean and standard-deviation bands over decks;
* Figure 16 and Table 15: the first-turn strategy of one deck;
* Table 16: fair value against the Jacks and clubs Alex is dealt, with the decision-stump split
  on clubs per number of Jacks, beside the same table from the decks' exact values.

Each function returns a dict of headline numbers (also written as ``summary.json``). Each is
registered in :data:`REGISTRY` (a :class:`pasur.common.registry.Registry`) through a small runner
that takes a :class:`StudyRun`, declaring what it takes: whether it solves by CFR (and so takes
the CFR options and ``tree``, and runs on a :class:`DeckJob`), whether it plays games (``games``,
``fit``, ``model_params``), how many decks, and options of its own (figure12's
``paper_memory_limit``). ``pasur experiment NAME`` looks the experiment up, refuses any other
option before a folder is made, and runs it.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from pasur.common.errors import PasurInputError
from pasur.common.outputs import prepare_resumable_dir, save_png, write_csv, write_text_atomic
from pasur.common.registry import Experiment, Registry
from pasur.game.cards import NamedDeck
from pasur.study.pipeline import DeckJob

#: the CFR options and the tree mode: taken by the experiments that solve by CFR
CFR_OPTIONS: tuple[str, ...] = (
    "method",
    "iterations",
    "target_exploitability",
    "check_every",
    "alpha",
    "beta",
    "gamma",
    "updates",
    "sample_seed",
    "max_iterations",
    "tremble",
    "tree",
)
#: the options of self-play: taken by the experiments that play games
PLAY_OPTIONS: tuple[str, ...] = ("games", "fit", "model_params")
#: figure12's default limit on a paper tree (GiB)
PAPER_MEMORY_LIMIT_GIB = 4.0


@dataclass(frozen=True)
class StudyExperiment(Experiment):
    """A Pasur experiment and what it takes: ``cfr``, it solves by CFR (takes the CFR options and
    ``tree``; runs on a job whose method is a CFR one); ``plays``, it plays games (takes
    ``games``, ``fit``, ``model_params``); ``decks``, how many decks it takes (None: any)."""

    cfr: bool = False
    plays: bool = False
    decks: int | None = None

    def __post_init__(self) -> None:
        implied = (CFR_OPTIONS if self.cfr else ()) + (PLAY_OPTIONS if self.plays else ())
        object.__setattr__(self, "options", {**dict.fromkeys(implied), **self.options})

    def check_decks(self, decks: list[NamedDeck]) -> None:
        """Refuse another number of decks than the experiment takes."""
        if self.decks is None or len(decks) == self.decks:
            return
        if self.decks == 1:
            raise PasurInputError(f"{self.name} takes one deck: --seed S, --deck, or --deck-file F --deck-id ID")
        raise PasurInputError(f"{self.name} takes {self.decks} decks; {len(decks)} were given")


@dataclass(frozen=True)
class StudyRun:
    """What the user asked for: the decks, the experiment's folder, the per-deck job (None for an
    experiment that does not solve by CFR), the sweep's options (:func:`pasur.study.sweep.run_sweep`'s
    keywords: engine, workers, address, memory_limit, progress, retry_failed) and the values of
    the experiment's own options (given or defaults)."""

    decks: list[NamedDeck]
    out: Path
    job: DeckJob | None = None
    sweep: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)


#: the paper's experiments, by name
REGISTRY = Registry(__name__, record=StudyExperiment)
experiment = REGISTRY.experiment
names = REGISTRY.names
get = REGISTRY.get


def _folder(out: Path, name: str) -> Path:
    """The experiment's folder: created, or reopened to resume, holding only the entries it
    declares (another's files are refused)."""
    return prepare_resumable_dir(out, list(REGISTRY.get(name).outputs))


def _paper_memory_limit(gib: float) -> int:
    """figure12's ``paper_memory_limit`` (GiB), checked, in bytes."""
    if not (isinstance(gib, int | float) and 0 < gib <= 1e6 and math.isfinite(gib)):
        raise PasurInputError(f"--paper-memory-limit must be a positive number of GiB, got {gib}")
    return int(gib * 2**30)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _markdown(rows: list[dict], columns: list[str], fmt: dict | None = None) -> str:
    fmt = fmt or {}
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        cells = []
        for c in columns:
            v = r.get(c)
            cells.append("" if v is None else (fmt[c].format(v) if c in fmt else str(v)))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _finish(out: Path, summary: dict) -> dict:
    write_text_atomic(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    return summary


def _sweep(decks: list[NamedDeck], job: DeckJob, out: Path, sweep_opts: dict) -> list[dict]:
    from pasur.study.sweep import run_sweep

    return run_sweep(decks, job, out, **sweep_opts)


def _deck_span(decks: list[NamedDeck]) -> str:
    """The decks of a plot in a few words: ``seed-0 .. seed-499`` or the one deck's id."""
    return decks[0].id if len(decks) == 1 else f"{decks[0].id} .. {decks[-1].id}"


def _method(job: DeckJob) -> str:
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


def _quantiles(x: np.ndarray) -> dict:
    return {
        "decks": int(x.size),
        "median": float(np.median(x)),
        "p90": float(np.percentile(x, 90)),
        "p99": float(np.percentile(x, 99)),
        "max": float(x.max()),
        "mean": float(x.mean()),
    }


# -- Figure 12 --------------------------------------------------------------------------------
def figure12(decks: list[NamedDeck], out: Path, sweep_opts: dict, paper_memory_limit: int | None) -> dict:
    """Tree sizes (nodes = strategy-table rows + roots) per deck for the compact and paper trees.
    A paper tree over ``paper_memory_limit`` is not built; it is counted as over the limit."""
    out = _folder(out, "figure12")
    sizes: dict[str, dict[str, float]] = {}
    failed: dict[str, int] = {}
    for mode in ("compact", "paper"):
        opts = dict(sweep_opts)
        if mode == "paper" and paper_memory_limit is not None:
            opts["memory_limit"] = paper_memory_limit
        recs = _sweep(decks, DeckJob.exact(tree=mode), out / f"sweep-{mode}", opts)
        sizes[mode] = {r["deck_id"]: r["nodes"] for r in recs}
        failed[mode] = len(decks) - len(recs)
    rows = [
        {"deck_id": nd.id, "compact_nodes": sizes["compact"].get(nd.id), "paper_nodes": sizes["paper"].get(nd.id)}
        for nd in decks
    ]
    write_csv(out / "figure12.csv", rows)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    summary: dict = {"experiment": "figure12", "decks": len(decks)}
    all_sizes = [v for m in sizes.values() for v in m.values()]
    if all_sizes:
        bins = np.logspace(math.log10(max(1, min(all_sizes))), math.log10(max(all_sizes)) + 0.01, 40)
        for mode, color in (("compact", "tab:blue"), ("paper", "tab:orange")):
            x = np.array(list(sizes[mode].values()), dtype=float)
            if x.size:
                ax.hist(x, bins=bins, alpha=0.6, color=color, label=f"{mode} ({x.size} decks)")
                summary[mode] = _quantiles(x)
            summary[mode + "_not_built"] = failed[mode]
    ax.set(xscale="log", xlabel="nodes in the tree (strategy-table rows)", ylabel="decks")
    ax.set_title(f"Figure 12: tree sizes over {len(decks)} decks ({_deck_span(decks)}), both tree modes")
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
    return _finish(out, summary)


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


# -- Figure 14 --------------------------------------------------------------------------------
FIG14_MATCHUPS = ("vs", "vs-random", "random-vs")
#: the paper's recorded self-play (sinabaghal/Pasur's ``MM.csv``): its matchup codes, ours, and
#: what each means (Alex's agent first; M the per-deck model, R the uniform random player)
PAPER_MATCHUPS = {
    "MM": "model-vs-model",
    "MR": "model-vs-random",
    "RM": "random-vs-model",
    "RR": "random-vs-random",
}
#: beside the model's matchups: the strategy table's, which the models are measured against
TABLE_MATCHUPS = ("table-vs-random", "random-vs-table")


def read_paper_results(path: Path) -> dict[int, dict[str, float]]:
    """The paper's ``MM.csv``: per deck index, the mean score (Alex minus Bob) of each matchup
    (``MM``, ``MR``, ``RM``, ``RR``) and its win percentage (``MM_wins``, ...). Refused in one
    line when it is not that file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PasurInputError(f"paper results not found: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PasurInputError(f"cannot read paper results {path}: {e}") from None
    rows = list(csv.DictReader(io.StringIO(text)))
    need = ["Deck"] + [f"{k}_{w}" for k in PAPER_MATCHUPS for w in ("WINS", "SCORES")]
    if not rows or any(c not in rows[0] for c in need):
        missing = next((c for c in need if not rows or c not in rows[0]), "Deck")
        raise PasurInputError(f"{path}: not the paper's MM.csv (no column {missing!r})")
    out: dict[int, dict[str, float]] = {}
    for i, r in enumerate(rows, start=2):
        try:
            deck = int(r["Deck"])
            out[deck] = {k: float(r[f"{k}_SCORES"]) for k in PAPER_MATCHUPS}
            out[deck].update({f"{k}_wins": float(r[f"{k}_WINS"]) / 100 for k in PAPER_MATCHUPS})
        except (TypeError, ValueError):
            raise PasurInputError(f"{path}:{i}: not a number in the paper's results") from None
    return out


def _paper_results(path) -> None:
    """figure14's ``paper_results`` check: the file is read (and refused) before any work."""
    read_paper_results(Path(path))


def _deck_index(deck_id: str) -> int | None:
    """The paper's index of a deck read from its deck file (``decks_10000-7`` -> 7)."""
    head, _, tail = deck_id.rpartition("-")
    return int(tail) if head and tail.isdigit() else None


def _mean_interval(means: list[float], halves: list[float]) -> tuple[float, float]:
    """The mean over decks of per-deck means and the 95 % half-width of that mean (the decks
    fixed, the games' noise independent between decks)."""
    n = len(means)
    return float(np.mean(means)), float(math.sqrt(sum(h * h for h in halves)) / n)


#: a deck's MM counts as below or above the exact value when it misses it by more than this
#: (points; 1,000 games give a 95 % half-width of about 0.1 to 0.5)
MM_MISS = 0.5


def compare_with_paper(
    records: list[dict], paper: dict[int, dict[str, float]], folder: Path, write_to: Path | None = None
) -> dict:
    """Per deck and on average, our MM, MR, RM, RR (and the table's TR, RT) beside the paper's
    recorded ones, with 95 % intervals, as ``figure14-paper.csv``/``.md`` (in ``write_to``,
    default ``folder``: a subset of a run's decks can be reported apart); returns the averages
    and the checks of issue 29 (our model within 1 point of our table against random, at least
    as strong as the paper's, and model against model within 1.5 points of the exact value)."""
    write_to = folder if write_to is None else write_to
    rows = []
    for r in records:
        k = _deck_index(r["deck_id"])
        if k is None or k not in paper:
            continue
        details = json.loads((folder / "sweep" / "decks" / r["deck_id"] / "matchups.json").read_text())
        row: dict = {"deck_id": r["deck_id"], "paper_deck": k, "exact_value": r["exact_value"]}
        for code, name in PAPER_MATCHUPS.items():
            m = details[name]
            row[f"{code}_ours"] = m["mean"]
            row[f"{code}_half"] = (m["ci95"][1] - m["ci95"][0]) / 2
            row[f"{code}_paper"] = paper[k][code]
        for code, name in zip(("TR", "RT"), TABLE_MATCHUPS, strict=True):
            m = details[name]
            row[f"{code}_ours"] = m["mean"]
            row[f"{code}_half"] = (m["ci95"][1] - m["ci95"][0]) / 2
        rows.append(row)
    if not rows:
        raise PasurInputError("no deck of this run is in the paper's results (read the decks from its decks_10000.pt)")
    write_csv(write_to / "figure14-paper.csv", rows)
    avg: dict = {"decks": len(rows)}
    for code in (*PAPER_MATCHUPS, "TR", "RT"):
        mean, half = _mean_interval([r[f"{code}_ours"] for r in rows], [r[f"{code}_half"] for r in rows])
        avg[code] = {"ours": mean, "ours_half95": half}
        if code in PAPER_MATCHUPS:
            avg[code]["paper"] = float(np.mean([r[f"{code}_paper"] for r in rows]))
    exact = float(np.mean([r["exact_value"] for r in rows]))
    mm_gap = float(np.mean([abs(r["MM_ours"] - r["exact_value"]) for r in rows]))
    avg["exact_value"] = exact
    avg["MM_distance_to_exact"] = mm_gap
    avg["MM_paper_distance_to_exact"] = float(np.mean([abs(r["MM_paper"] - r["exact_value"]) for r in rows]))
    # the sign of MM's miss: a seat's model that errs more shows as misses of one sign
    for who in ("ours", "paper"):
        miss = np.array([r[f"MM_{who}"] - r["exact_value"] for r in rows])
        avg[f"MM_{who}_minus_exact"] = {
            "mean": float(miss.mean()),
            "decks_below": int((miss < -MM_MISS).sum()),
            "decks_above": int((miss > MM_MISS).sum()),
        }
    avg["checks"] = {
        "MR within 1 point of TR": abs(avg["MR"]["ours"] - avg["TR"]["ours"]) <= 1,
        "RM within 1 point of RT": abs(avg["RM"]["ours"] - avg["RT"]["ours"]) <= 1,
        "MR at least the paper's": avg["MR"]["ours"] >= avg["MR"]["paper"],
        "RM at most the paper's": avg["RM"]["ours"] <= avg["RM"]["paper"],
        "MM within 1.5 points of the exact value": mm_gap <= 1.5,
    }
    md = [
        f"Our self-play beside the paper's recorded self-play (its MM.csv), {len(rows)} "
        f"{'deck' if len(rows) == 1 else 'decks'}: mean points "
        "(Alex minus Bob) with our 95 % interval.",
        "",
        "| matchup | ours | paper |",
        "|---|---|---|",
    ]
    labels = {
        "MR": "model vs random (MR)",
        "RM": "random vs model (RM)",
        "MM": "model vs model (MM)",
        "RR": "random vs random (RR)",
        "TR": "table vs random",
        "RT": "random vs table",
    }
    for code, label in labels.items():
        a = avg[code]
        paper_cell = f"{a['paper']:+.2f}" if "paper" in a else ""
        md.append(f"| {label} | {a['ours']:+.2f} ± {a['ours_half95']:.2f} | {paper_cell} |")
    md.append(f"| exact value (mean) | {exact:+.2f} | |")
    md.append(f"| MM's mean distance to the exact value | {mm_gap:.2f} | {avg['MM_paper_distance_to_exact']:.2f} |")
    signed = {w: avg[f"MM_{w}_minus_exact"] for w in ("ours", "paper")}
    md.append(
        f"| MM minus the exact value (mean; decks below / above by more than {MM_MISS}) | "
        f"{signed['ours']['mean']:+.2f} ({signed['ours']['decks_below']} / {signed['ours']['decks_above']}) | "
        f"{signed['paper']['mean']:+.2f} ({signed['paper']['decks_below']} / {signed['paper']['decks_above']}) |"
    )
    md += ["", "| check | holds |", "|---|---|"]
    md += [f"| {c} | {'yes' if ok else 'no'} |" for c, ok in avg["checks"].items()]
    write_text_atomic(write_to / "figure14-paper.md", "\n".join(md) + "\n")
    return avg


def figure14(
    decks: list[NamedDeck], out: Path, job: DeckJob, sweep_opts: dict, paper_results: Path | None = None
) -> dict:
    """Per deck, Alex's win rate and mean point difference in three matchups of the
    equilibrium agent (the model if ``job.fit``, else the strategy table) and random. With
    ``paper_results`` (the paper's ``MM.csv``; the decks read from its ``decks_10000.pt``), also
    random against random and the table's matchups, beside the paper's (:func:`compare_with_paper`)."""
    agent = "model" if job.fit else "table"
    names = (f"{agent}-vs-{agent}", f"{agent}-vs-random", f"random-vs-{agent}")
    paper = None
    if paper_results is not None:
        if not job.fit:
            raise PasurInputError("figure14 --paper-results compares the paper's models with ours: add --fit")
        paper = read_paper_results(Path(paper_results))
        names = (*names, "random-vs-random", *TABLE_MATCHUPS)
    job = replace(job, matchups=names)
    if job.games < 1:
        raise PasurInputError("figure14 plays games: give --games")
    out = _folder(out, "figure14")
    recs = _sweep(decks, job, out / "sweep", sweep_opts)
    rows = []
    for r in recs:
        row = {"deck_id": r["deck_id"], "exact_value": r["exact_value"], "value": r["value"]}
        for n in names[:3]:
            k = n.replace("-", "_")
            row[f"{k}_mean"] = r[f"{k}_mean"]
            row[f"{k}_win"] = r[f"{k}_win"]
            row[f"{k}_tie"] = r[f"{k}_tie"]
        rows.append(row)
    write_csv(out / "figure14.csv", rows)
    plt = _plt()
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    summary: dict = {"experiment": "figure14", "agent": agent, "decks": len(recs), "games_per_matchup": job.games}
    titles = ("equilibrium vs equilibrium", "equilibrium vs random", "random vs equilibrium")
    for j, (n, title) in enumerate(zip(names[:3], titles, strict=True)):
        k = n.replace("-", "_")
        win = np.array([r[f"{k}_win"] for r in rows], dtype=float)
        mean = np.array([r[f"{k}_mean"] for r in rows], dtype=float)
        axes[0, j].hist(win, bins=np.linspace(0, 1, 21), color="tab:blue")
        axes[0, j].set(title=title, xlabel="Alex's win rate", ylabel="decks")
        axes[1, j].hist(mean, bins=30, color="tab:green")
        axes[1, j].set(xlabel="Alex's mean points minus Bob's", ylabel="decks")
        summary[n] = {
            "mean_win_rate": float(win.mean()) if win.size else None,
            "mean_points": float(mean.mean()) if mean.size else None,
        }
    fig.suptitle(
        f"Figure 14: {agent} agent of {_method(job)}, {len(recs)} decks ({_deck_span(decks)}), "
        f"{job.games:,} games per matchup"
    )
    save_png(fig, out / "figure14.png", dpi=110)
    md = ["| matchup | decks | Alex's mean win rate | Alex's mean points |", "|---|---|---|---|"]
    for n in names[:3]:
        s = summary[n]
        if s["mean_win_rate"] is not None:
            md.append(f"| {n} | {len(recs)} | {s['mean_win_rate']:.3f} | {s['mean_points']:+.2f} |")
    write_text_atomic(out / "figure14.md", "\n".join(md) + "\n")
    if paper is not None and recs:
        summary["paper"] = compare_with_paper(recs, paper, out)
    return _finish(out, summary)


@experiment(
    "figure14",
    "Figure 14: win rates and points of the equilibrium agent against itself and random, per deck "
    "(with --paper-results MM.csv: beside the paper's recorded self-play).",
    tables=("figure14.md", "figure14-paper.md"),
    outputs=(
        "sweep",
        "figure14.csv",
        "figure14.md",
        "figure14.png",
        "figure14-paper.csv",
        "figure14-paper.md",
        "summary.json",
    ),
    cfr=True,
    plays=True,
    options={"paper_results": _paper_results},
)
def _run_figure14(run: StudyRun) -> dict:
    return figure14(run.decks, run.out, run.job, run.sweep, run.options.get("paper_results"))


# -- Figure 15 --------------------------------------------------------------------------------
def figure15(decks: list[NamedDeck], out: Path, job: DeckJob, sweep_opts: dict) -> dict:
    """Per round, the mean and standard deviation over decks of log10 of the average strategy's
    MSE to the final one, and of the round's exploitability (NashConv / 2; NashConv too in the
    CSV), against the iteration. Needs a fixed number of iterations so the curves line up."""
    from pasur.solve.strategy_io import read_traces
    from pasur.study.sweep import DECKS_DIR

    if job.cfr is None or job.cfr.iterations is None:
        raise PasurInputError("figure15 needs a CFR method and a fixed --iterations (the curves of all decks line up)")
    job = replace(job, cfr=replace(job.cfr, target_exploitability=None), keep_table=False, games=0, matchups=())
    out = _folder(out, "figure15")
    recs = _sweep(decks, job, out / "sweep", sweep_opts)
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
    plt = _plt()
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
    fig.suptitle(f"Figure 15: {_method(job)} over {len(recs)} decks ({_deck_span(decks)}; geometric mean, ±1 sd band)")
    save_png(fig, out / "figure15.png", dpi=110)
    final = {}
    for k in sorted(iters):
        for col in ("exploitability", "nash_conv"):
            last = [r for r in rows if r["round"] == k and r["measure"] == col][-1]
            final[f"round_{k}_final_{col}_geomean"] = float(10 ** last["mean_log10"])
    return _finish(out, {"experiment": "figure15", "decks": len(recs), "iterations": job.cfr.iterations, **final})


@experiment(
    "figure15",
    "Figure 15: CFR convergence per round (MSE to the final strategy, exploitability), bands over decks.",
    outputs=("sweep", "figure15.csv", "figure15.png", "summary.json"),
    cfr=True,
)
def _run_figure15(run: StudyRun) -> dict:
    return figure15(run.decks, run.out, run.job, run.sweep)


# -- Figure 16 and Table 15 -------------------------------------------------------------------
def figure16(deck: NamedDeck, out: Path, job: DeckJob) -> dict:
    """The first-turn strategy of Alex on one deck: Table 15 (the in-play cards' codes of the
    infoset after each first move, and σ) and Figure 16 (σ per move)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from pasur.game.cards import format_card
    from pasur.study.pipeline import run_deck

    if not job.needs_table:
        raise PasurInputError("figure16 needs a CFR method")
    out = _folder(out, "figure16")
    rec = run_deck(deck, replace(job, games=0, matchups=(), fit=False, keep_table=True), out / "solve")
    table = pq.read_table(out / "solve" / "strategy.parquet")
    is_first = pc.and_(pc.equal(table["round"], 0), pc.equal(table["turn"], 0))
    first = table.filter(pc.and_(is_first, pc.equal(table["player"], 0)))
    d = first.to_pydict()
    in_play = sorted(set(deck.deck.hand(0, 0)) | set(deck.deck.hand(1, 0)) | set(deck.deck.pool))
    rows = []
    for i in range(first.num_rows):
        row = {format_card(c): d[f"card_{format_card(c)}"][i] for c in in_play}
        cap = d["action_captured"][i]
        row["move"] = format_card(d["action_card"][i]) + (
            " takes " + " ".join(format_card(c) for c in range(52) if (cap >> c) & 1) if cap else " laid"
        )
        row["sigma"] = round(float(d["probability"][i]), 4)
        rows.append(row)
    write_csv(out / "table15.csv", rows)
    cols = [format_card(c) for c in in_play]
    write_text_atomic(out / "table15.md", _markdown(rows, ["move", *cols, "sigma"], {"sigma": "{:.2f}"}))
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(rows) + 2), 4))
    ax.bar(range(len(rows)), [r["sigma"] for r in rows], color="tab:purple")
    ax.set_xticks(range(len(rows)), [r["move"] for r in rows], rotation=60, ha="right", fontsize=8)
    ax.set(ylabel="σ", ylim=(0, 1.05), title=f"Figure 16: Alex's first-turn strategy, deck {deck.id}, {_method(job)}")
    save_png(fig, out / "figure16.png", dpi=110)
    return _finish(
        out,
        {
            "experiment": "figure16",
            "deck_id": deck.id,
            "moves": len(rows),
            "exact_value": rec["exact_value"],
            "value": rec["value"],
            "nash_conv": rec.get("nash_conv"),
            "exploitability": rec.get("exploitability"),
        },
    )


@experiment(
    "figure16",
    "Figure 16 and Table 15: Alex's first-turn strategy on one deck.",
    tables=("table15.md",),
    outputs=("solve", "table15.csv", "table15.md", "figure16.png", "summary.json"),
    cfr=True,
    decks=1,
)
def _run_figure16(run: StudyRun) -> dict:
    return figure16(run.decks[0], run.out, run.job)


# -- Table 16 ---------------------------------------------------------------------------------
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
    out = _folder(out, "table16")
    recs = _sweep(decks, job, out / "sweep", sweep_opts)
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
        "(ties count as not won).\n\n" + _markdown(fair, cols, fmt) + "\n"
        "From exact values: the share of decks Alex wins under optimal play.\n\n"
        + _markdown(exact_win, cols, fmt)
        + "\nFrom exact values: the mean exact value (Alex's points minus Bob's).\n\n"
        + _markdown(exact_value, cols, fmt)
    )
    write_text_atomic(out / "table16.md", md)
    fv = np.array([r["fair_value"] for r in recs], dtype=float)
    ev = np.array([r["exact_value"] for r in recs], dtype=float)
    corr = float(np.corrcoef(fv, ev)[0, 1]) if len(recs) > 2 and fv.std() > 0 and ev.std() > 0 else None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.scatter(ev, fv, s=8, alpha=0.6)
    ax.set(
        xlabel="exact value (points)",
        ylabel="fair value (Alex's win rate)",
        title=f"Table 16: {len(recs)} decks ({_deck_span(decks)}), {_method(job)}",
    )
    save_png(fig, out / "table16-fair-vs-exact.png", dpi=110)
    return _finish(
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
