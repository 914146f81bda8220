"""Figure 14: the equilibrium agent against itself and random, per deck; with the paper's recorded
self-play (its ``MM.csv``), ours beside it (:func:`compare_with_paper`)."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from pasur.common.errors import PasurInputError
from pasur.common.outputs import save_png, write_csv, write_text_atomic
from pasur.game.cards import NamedDeck
from pasur.study.experiments.registry import StudyRun, experiment, folder
from pasur.study.experiments.writers import deck_span, finish, method_label, pyplot, sweep_decks
from pasur.study.pipeline import DeckJob

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
    rows = _paper_rows(records, paper, folder)
    if not rows:
        raise PasurInputError("no deck of this run is in the paper's results (read the decks from its decks_10000.pt)")
    write_csv(write_to / "figure14-paper.csv", rows)
    avg = _paper_averages(rows)
    write_text_atomic(write_to / "figure14-paper.md", _paper_markdown(avg, len(rows)))
    return avg


def _paper_rows(records: list[dict], paper: dict[int, dict[str, float]], folder: Path) -> list[dict]:
    """Per deck of ``records`` that the paper played, our mean and 95 % half-width of each matchup
    (read from the deck's ``matchups.json`` under ``folder``) beside the paper's mean."""
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
    return rows


def _paper_averages(rows: list[dict]) -> dict:
    """The averages over the decks of :func:`_paper_rows`, MM's distance to the exact value and
    the sign of its misses, and the checks of issue 29."""
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
    return avg


def _paper_markdown(avg: dict, n_decks: int) -> str:
    """``figure14-paper.md``: the averages of :func:`_paper_averages` as a table, and the checks."""
    exact, mm_gap = avg["exact_value"], avg["MM_distance_to_exact"]
    md = [
        f"Our self-play beside the paper's recorded self-play (its MM.csv), {n_decks} "
        f"{'deck' if n_decks == 1 else 'decks'}: mean points "
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
    return "\n".join(md) + "\n"


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
    out = folder(out, "figure14")
    recs = sweep_decks(decks, job, out / "sweep", sweep_opts)
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
    plt = pyplot()
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
        f"Figure 14: {agent} agent of {method_label(job)}, {len(recs)} decks ({deck_span(decks)}), "
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
    return finish(out, summary)


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
