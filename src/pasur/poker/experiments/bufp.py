"""The BUFP paper's experiments: Figure 1 (exploitability), Figure 2 (total exploitability),
Tables 1 and 2 (the strategies against each other, from the start and on a forced first action).

One run per method (CFR, BUFP(X), BUFP(EF), XFP) is advanced to ``--iterations``, measured
exactly (exploitability and total exploitability, :mod:`pasur.poker.total_exploitability`) at log-spaced
iterations, and checkpointed in ``checkpoints/`` under the output folder (at every measurement
and at least once a minute), so an interrupted run resumes where it stopped and the three
experiments share runs when given the same folder. ``--workers K`` runs K methods at once in
processes. Each process uses one torch thread: the games are small, and a second thread on a
shared machine slows small reductions down (measured: 1.4 ms -> 16 ms for one ``max``).
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import torch

from pasur.common.errors import PasurInputError
from pasur.common.outputs import save_png, write_csv, write_text_atomic
from pasur.poker.crossplay import best_reply, claim, winnings
from pasur.poker.engine import Engine
from pasur.poker.experiments import ExperimentRun, checkpoints, experiment
from pasur.poker.experiments.checkpoints import CHECKPOINTS, drive, load_checkpoint, traces_until
from pasur.poker.fictitious import LABELS, FictitiousPlay, local_regret
from pasur.poker.policy import TabularPolicy
from pasur.poker.run import make_solver
from pasur.poker.solvers import CFRConfig
from pasur.poker.total_exploitability import total_exploitability
from pasur.poker.tree import CALL, RAISE

FIGURE_METHODS = ("cfr", "bufp-x", "bufp-ef", "xfp")
#: Figures 1 and 2 with BUFP as its authors' code runs it (issue 30, docs/bufp.md)
AUTHORS_METHODS = (*FIGURE_METHODS, "bufp-authors", "bufp-authors-c10")
TABLE_METHODS = ("cfr", "bufp-ef", "bufp-x")  # the paper's order

#: measurements per decade of iterations
PER_DECADE = 10
#: the paper's numbers (its mb/h: one hand is one game, so mb/g), for the Markdown tables
PAPER_EXPLOITABILITY = {"cfr": 5.15, "bufp-ef": 5.33, "bufp-x": 3.16}
PAPER_ROWS = {
    "1": {"cfr": 19.10, "bufp-ef": 18.36, "bufp-x": 20.06},
    "2": {"cfr": -33.47, "bufp-ef": -6.89, "bufp-x": -1.75},
}
PAPER_COLS = {
    "1": {"cfr": 19.31, "bufp-ef": 19.96, "bufp-x": 18.25},
    "2": {"cfr": -14.63, "bufp-ef": -28.98, "bufp-x": -4.52},
}
#: the tables' short names, for the plot
SHORT = {"1": "from the start", "2": "forced check (Call)", "2b": "forced bet"}
#: the tables: player 1's forced first action (None: free) and a title
FORCED = {
    "1": (None, "from the start"),
    "2": (CALL, "player 1 forced to Call (check) at its first decision, the paper's"),
    "2b": (RAISE, "player 1 forced to bet at its first decision, ours"),
}


def schedule(n: int) -> list[int]:
    """Log-spaced iterations 1..n (``PER_DECADE`` a decade) and n itself."""
    k = math.floor(PER_DECADE * math.log10(n)) if n > 1 else 0
    pts = {max(1, round(10 ** (i / PER_DECADE))) for i in range(k + 1)} | {n}
    return sorted(p for p in pts if p <= n)


# ---------------------------------------------------------------- one method's run


class MethodRun:
    """A solver of ``method`` on ``engine`` with a checkpointable state."""

    def __init__(self, engine: Engine, method: str) -> None:
        self.method = method
        self.engine = engine
        if method == "cfr":
            self.solver = make_solver(engine, CFRConfig(method="cfr"))
        else:
            self.solver = FictitiousPlay(engine, method)

    @property
    def iteration(self) -> int:
        return self.solver.iteration

    def iterate(self, n: int) -> None:
        self.solver.iterate(n)

    def policy(self) -> TabularPolicy:
        return self.solver.average_policy()

    def state(self) -> dict:
        s = self.solver
        if self.method != "cfr":
            return s.state_dict()
        names = [n for n in ("regret", "strategy_sum", "sigma") if isinstance(getattr(s, n, None), torch.Tensor)]
        out = {"iteration": s.iteration, **{n: getattr(s, n).cpu() for n in names}}
        if not names:  # the level-by-level solver keeps lists of tables
            out |= {n: [t.cpu() for t in getattr(s, n)] for n in ("regret", "strategy_sum")}
            out["current"] = [t.cpu() for t in s.current.tables]
        return out

    def load(self, state: dict) -> None:
        s = self.solver
        if self.method != "cfr":
            s.load_state_dict(state)
            return
        s.iteration = int(state["iteration"])
        for name, value in state.items():
            if name == "iteration":
                continue
            if name == "current":
                s.current.tables = [t.to(self.engine.device) for t in value]
            elif isinstance(value, list):
                for dst, src in zip(getattr(s, name), value, strict=True):
                    dst.copy_(src)
            else:
                getattr(s, name).copy_(value)


def measure(engine: Engine, policy: TabularPolicy) -> dict:
    te = total_exploitability(engine, policy)
    return {
        "exploitability": te.exploitability,
        "nash_conv": 2 * te.exploitability,
        "total_exploitability": te.total,
        "total_exploitability_max": te.max,
        "fallback_infosets": te.n_fallback,
        # what the authors' code logs as ``loss`` (on Kuhn their number is twice this)
        "local_regret": local_regret(engine, policy),
    }


def advance(
    game: str, method: str, iterations: int, out: Path, device: str = "cpu", report=None, threads: int = 1
) -> dict:
    """Run (or resume) ``method`` to ``iterations``; returns its checkpoint (trace, state, times).
    ``report(done)`` is called as iterations complete; ``threads``: torch threads for it."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        engine = Engine(game, device=device)
        run = MethodRun(engine, method)
        ck = load_checkpoint(out, game, method, iterations)
        if ck is None:
            ck = {"game": game, "method": method, "iteration": 0, "trace": [], "solver_seconds": 0.0,
                  "measure_seconds": 0.0, "cpu_seconds": 0.0, "state": None}  # fmt: skip
        else:
            run.load(ck["state"])
        cpu0 = time.process_time()
        cpu_base = ck["cpu_seconds"]

        def row(point: int) -> dict:
            return {"method": method, "iteration": point, "solver_seconds": ck["solver_seconds"],
                    **measure(engine, run.policy())}  # fmt: skip

        drive(ck, schedule(iterations), out, step=run.iterate, iteration=lambda: run.iteration, state=run.state,
              measure=row, costs=lambda: {"cpu_seconds": cpu_base + time.process_time() - cpu0}, report=report,
              chunk=200)  # fmt: skip
        if report is not None:
            report(run.iteration)
        return ck
    finally:
        torch.set_num_threads(before)


def run_methods(run: ExperimentRun, methods: tuple[str, ...]) -> dict[str, dict]:
    """Advance every method (``run.workers`` at once) and return their checkpoints."""
    return checkpoints.run_methods(run, methods, advance, label=", ".join(LABELS[m] for m in methods))


# ---------------------------------------------------------------- outputs


def _plot(path: Path, traces: dict[str, list[dict]], panels: list[tuple[str, str]], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.2), squeeze=False)
    styles = {"cfr": ("-", "o"), "bufp-x": ("-", "s"), "bufp-ef": ("-", "^"), "xfp": ("--", "x"),
              "bufp-authors": (":", "D"), "bufp-authors-c10": (":", "v")}  # fmt: skip
    for ax, (key, ylabel) in zip(axes[0], panels, strict=True):
        for m, rows in traces.items():
            ls, mk = styles.get(m, ("-", "."))
            rows = [r for r in rows if key in r]
            ax.loglog([r["iteration"] for r in rows], [max(r[key], 1e-16) for r in rows], ls, marker=mk,
                      markersize=3, label=LABELS[m])  # fmt: skip
        ax.set_xlabel("iterations")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    save_png(fig, path)


def _decades(rows: list[dict]) -> list[dict]:
    """The trace at powers of ten and at its last iteration."""
    last = rows[-1]["iteration"]
    return [r for r in rows if r["iteration"] == last or math.log10(r["iteration"]).is_integer()]


def _times(cks: dict[str, dict], started: float, load0: tuple) -> dict:
    return {
        "elapsed_seconds_this_run": time.perf_counter() - started,
        "solver_seconds": {m: ck["solver_seconds"] for m, ck in cks.items()},
        "measure_seconds": {m: ck["measure_seconds"] for m, ck in cks.items()},
        "cpu_seconds": {m: ck["cpu_seconds"] for m, ck in cks.items()},
        "load_average_start": list(load0),
        "load_average_end": list(os.getloadavg()),
    }


def _trace_experiment(
    run: ExperimentRun, stem: str, panels, title: str, intro: str, methods: tuple[str, ...] = FIGURE_METHODS
) -> dict:
    started, load0 = time.perf_counter(), os.getloadavg()
    cks = run_methods(run, methods)
    traces = traces_until(cks, run.iterations)
    rows = [r for m in methods for r in traces[m]]
    write_csv(run.out / f"{stem}.csv", rows)
    _plot(run.out / f"{stem}.png", traces, panels, f"{title}: {run.game}")
    cols = [k for k, _ in panels]
    head = "| method | iterations | " + " | ".join(c.replace("_", " ") + " (chips)" for c in cols) + " |"
    lines = [f"### {title} on {run.game} ({run.iterations:,} iterations)", "", intro, "", head,
             "|" + "---|" * (2 + len(cols))]  # fmt: skip
    for m in methods:
        for r in _decades(traces[m]):
            cells = " | ".join(f"{r.get(c, math.nan):.6g}" for c in cols)
            lines.append(f"| {LABELS[m]} | {r['iteration']:,} | {cells} |")
    times = _times(cks, started, load0)
    lines += ["", "Solver seconds: " + ", ".join(f"{LABELS[m]} {s:.1f}" for m, s in times["solver_seconds"].items())
              + f"; load average {load0[0]:.2f} at start, {times['load_average_end'][0]:.2f} at end."]  # fmt: skip
    write_text_atomic(run.out / f"{stem}.md", "\n".join(lines) + "\n")
    final = {m: traces[m][-1] for m in methods}
    return {"game": run.game, "iterations": run.iterations, "final": final, **times}


def figure_methods(value: str | None, default: tuple[str, ...] = FIGURE_METHODS) -> tuple[str, ...]:
    """``--methods`` of Figures 1 and 2: a comma-separated list from :data:`AUTHORS_METHODS`
    (default: the paper's four, :data:`FIGURE_METHODS`)."""
    if value is None:
        return default
    names = tuple(m.strip() for m in value.split(",") if m.strip())
    unknown = [m for m in names if m not in AUTHORS_METHODS]
    if unknown or not names or len(set(names)) != len(names):
        raise PasurInputError(f"--methods takes distinct names from {', '.join(AUTHORS_METHODS)}, got {value!r}")
    return names


def table_methods(value: str | None) -> tuple[str, ...]:
    """``--methods`` of Tables 1 and 2: as :func:`figure_methods` (default the paper's three,
    :data:`TABLE_METHODS`), and CFR and BUFP(EF) among them (the paper's comparison is theirs)."""
    names = figure_methods(value, TABLE_METHODS)
    if not {"cfr", "bufp-ef"} <= set(names):
        raise PasurInputError(f"--methods of bufp-crossplay must include cfr and bufp-ef, got {value!r}")
    return names


@experiment(
    "bufp-convergence",
    "BUFP Figure 1: exploitability of CFR, BUFP(X), BUFP(EF), XFP (--methods: also bufp-authors, "
    "bufp-authors-c10) against iterations (log axes).",
    tables=("exploitability.md",),
    outputs=("exploitability.png", "exploitability.csv", "exploitability.md", CHECKPOINTS),
    options={"methods": figure_methods},
)
def convergence(run: ExperimentRun) -> dict:
    return _trace_experiment(
        run, "exploitability", [("exploitability", "exploitability = NashConv / 2 (chips per game)")],
        "Exploitability (Figure 1)",
        "Exploitability = NashConv / 2 (OpenSpiel's), exact, in chips per game; BUFP(X) and XFP are the same "
        "algorithm in our reading (docs/bufp.md), computed by two code paths.",
        figure_methods(run.options.get("methods")),
    )  # fmt: skip


@experiment(
    "bufp-total",
    "BUFP Figure 2: total exploitability (sum and max over information sets) against iterations.",
    tables=("total-exploitability.md",),
    outputs=("total-exploitability.png", "total-exploitability.csv", "total-exploitability.md", CHECKPOINTS),
    options={"methods": figure_methods},
)
def total(run: ExperimentRun) -> dict:
    return _trace_experiment(
        run, "total-exploitability",
        [("total_exploitability", "total exploitability, sum (chips)"),
         ("total_exploitability_max", "total exploitability, max (chips)")],
        "Total exploitability (Figure 2)",
        "Total exploitability: the gain of a best response in the subgame below each information set, given "
        "its beliefs, summed (and maximized) over every information set of both players (docs/bufp.md).",
        figure_methods(run.options.get("methods")),
    )  # fmt: skip


@experiment(
    "bufp-authors",
    "BUFP Figures 1 and 2 with BUFP as its authors' code runs it (issue 30): exploitability, total "
    "exploitability and the authors' loss (local regret) of CFR, BUFP(X), BUFP(EF), XFP and the authors' BUFP.",
    tables=("authors.md",),
    outputs=("authors.png", "authors.csv", "authors.md", CHECKPOINTS),
)
def authors(run: ExperimentRun) -> dict:
    return _trace_experiment(
        run, "authors",
        [("exploitability", "exploitability = NashConv / 2 (chips per game)"),
         ("total_exploitability", "total exploitability, sum (chips)"),
         ("local_regret", "the authors' loss: local regret, sum (chips)")],
        "Figures 1 and 2 with the authors' BUFP",
        "BUFP (authors' code) is `SPFP.py`'s update: every information set toward its local best response "
        "(the best one-step deviation, the policy below), step 1/t; BUFP (authors' Kuhn script) adds "
        "`SPFPKuhn.py`'s step of 10/t at player 0's first decision for hands whose best response checks. "
        "Local regret: the sum over every information set of the counterfactual immediate regret, what their "
        "code logs as `loss` (on Kuhn their number is twice ours). Exploitability = NashConv / 2, exact, in "
        "chips per game; total exploitability as in docs/bufp.md.",
        methods=AUTHORS_METHODS,
    )  # fmt: skip


# ---------------------------------------------------------------- Tables 1 and 2


def _table(engine, pols: dict, forced: int | None) -> dict:
    names = list(pols)
    g = engine.game  # amounts in mb/g: 1000 x chips per game / its big blind (docs/conventions.md)
    cells = {a: {b: g.mbg(winnings(engine, pols[a], pols[b], forced)) for b in names} for a in names}
    rows = {a: sum(cells[a].values()) / len(names) for a in names}
    cols = {b: sum(cells[a][b] for a in names) / len(names) for b in names}
    best_row = {b: g.mbg(best_reply(engine, pols[b], forced)) for b in names}
    return {"cells": cells, "rows": rows, "cols": cols, "best_reply_p1": best_row}


def _paper(numbers: dict | None, m: str) -> str:
    """The paper's number for method ``m`` (blank for a method the paper does not have)."""
    return f"{numbers[m]:.2f}" if numbers and m in numbers else ""


def _md_table(t: dict, names: list[str], paper: str | None) -> list[str]:
    """One table in Markdown; ``paper``: the key of the paper's averages to show beside ours."""
    rows, cols = PAPER_ROWS.get(paper), PAPER_COLS.get(paper)
    head = (
        "| P1 \\ P2 | "
        + " | ".join(f"{LABELS[b]} P2" for b in names)
        + " | P1 average |"
        + (" paper |" if rows else "")
    )
    out = [head, "|" + "---|" * (len(names) + 2 + bool(rows))]
    for a in names:
        cells = " | ".join(f"{t['cells'][a][b]:.2f}" for b in names)
        out.append(f"| {LABELS[a]} P1 | {cells} | **{t['rows'][a]:.2f}** |" + (f" {_paper(rows, a)} |" if rows else ""))
    out.append(
        "| P2 average | " + " | ".join(f"**{t['cols'][b]:.2f}**" for b in names) + " | |" + (" |" if rows else "")
    )
    if cols:
        out.append("| paper P2 average | " + " | ".join(_paper(cols, b) for b in names) + " | | |")
    out.append(
        "| best reply P1 | "
        + " | ".join(f"{t['best_reply_p1'][b]:.2f}" for b in names)
        + " | |"
        + (" |" if rows else "")
    )
    return out


@experiment(
    "bufp-crossplay",
    "BUFP Tables 1 and 2: CFR, BUFP(EF), BUFP(X) (--methods: also bufp-authors, ...) against each other "
    "(mb/g), from the start, with player 1 forced to Call (check) at its first decision, and (2b) forced to bet there.",
    tables=("crossplay.md",),
    outputs=("crossplay.md", "crossplay.csv", "crossplay.png", CHECKPOINTS),
    options={"methods": table_methods},
)
def crossplay(run: ExperimentRun) -> dict:
    started, load0 = time.perf_counter(), os.getloadavg()
    methods = table_methods(run.options.get("methods"))
    cks = run_methods(run, methods)
    engine = Engine(run.game, device=run.device)
    pols = {}
    for m, ck in cks.items():
        r = MethodRun(engine, m)
        r.load(ck["state"])
        pols[m] = r.policy()
    names = list(methods)
    tables = {key: _table(engine, pols, action) for key, (action, _) in FORCED.items()}
    t1 = tables["1"]
    expl = {m: engine.game.mbg(cks[m]["trace"][-1]["exploitability"]) for m in names}
    nash = {m: engine.game.mbg(cks[m]["trace"][-1]["nash_conv"]) for m in names if "nash_conv" in cks[m]["trace"][-1]}
    te = {m: cks[m]["trace"][-1]["total_exploitability"] for m in names}
    # the authors' loss (issue 30); a checkpoint of an older version lacks it
    lr = {m: cks[m]["trace"][-1].get("local_regret", math.nan) for m in names}
    claims = {key: claim(t1, tables[key], "cfr", "bufp-ef") for key in ("2", "2b")}
    first = {key: {m: root_share(engine, pols[m], FORCED[key][0]) for m in names} for key in ("2", "2b")}
    times = _times(cks, started, load0)
    rows = [{"table": k, "p1": a, "p2": b, "mbg": t["cells"][a][b]} for k, t in tables.items()
            for a in names for b in names]  # fmt: skip
    write_csv(run.out / "crossplay.csv", rows)
    _plot_tables(run.out / "crossplay.png", tables, names, run.game)
    md = [
        f"### Tables 1 and 2 on {run.game} ({run.iterations:,} iterations each)",
        "",
        f"Player 1's expected winnings in milli-big-blinds per game (mb/g = 1000 x chips per game / the big "
        f"blind, {engine.game.blind:g} chip(s) = the ante; the paper's mb/h, one hand being one game), exact "
        "(every deal, no sampling); exploitability = NashConv / 2 (docs/conventions.md). Rows: player 1's "
        "strategy; columns: player 2's. Table 2: player 1 must Call (check) at its first decision with every "
        "hand, the paper's forced action; Table 2b (ours): player 1 must bet there with every hand (docs/bufp.md).",
        "",
        "| | " + " | ".join(LABELS[m] for m in names) + " |",
        "|" + "---|" * (len(names) + 1),
        "| exploitability (mb/g) | " + " | ".join(f"{expl[m]:.2f}" for m in names) + " |",
        *(["| NashConv (mb/g) | " + " | ".join(f"{nash[m]:.2f}" for m in names) + " |"] if len(nash) == len(names)
          else []),
        "| paper exploitability (mb/g) | " + " | ".join(_paper(PAPER_EXPLOITABILITY, m) for m in names) + " |",
        "| total exploitability (chips, sum) | " + " | ".join(f"{te[m]:.4g}" for m in names) + " |",
        "| local regret, the authors' loss (chips) | " + " | ".join(f"{lr[m]:.4g}" for m in names) + " |",
    ]  # fmt: skip
    for key in ("2", "2b"):
        md.append(f"| P1 plays the Table {key} action first (cards that never do, < 1 %) | "
                  + " | ".join(_share_text(first[key][m]) for m in names) + " |")  # fmt: skip
    for key, (_, title) in FORCED.items():
        md += ["", f"**Table {key}** ({title})", "", *_md_table(tables[key], names, key), ""]
        if key != "1":
            md.append(_claim_text(claims[key], key == "2"))
    md += ["", "Solver seconds: " + ", ".join(f"{LABELS[m]} {s:.1f}" for m, s in times["solver_seconds"].items())
           + f"; this run {times['elapsed_seconds_this_run']:.1f} s wall; load average {load0[0]:.2f} at start, "
           f"{times['load_average_end'][0]:.2f} at end."]  # fmt: skip
    write_text_atomic(run.out / "crossplay.md", "\n".join(md) + "\n")
    return {
        "game": run.game,
        "iterations": run.iterations,
        "units": f"mb/g (1000 x chips per game / big blind; big blind {engine.game.blind:g} chip(s), the ante)",
        "big_blind": engine.game.blind,
        "exploitability_mbg": expl,
        "nash_conv_mbg": nash,
        "total_exploitability": te,
        "local_regret": lr,
        "table1": t1,
        "table2": tables["2"],
        "table2b": tables["2b"],
        "claim": claims["2"],
        "claim2b": claims["2b"],
        "first_action": first,
        **times,
    }


def _claim_text(c: dict, paper: bool) -> str:
    ref = (
        (" (paper: drops 53.57 and 25.25, recovers 52.87 %)", " (paper 44.20 %)", " (paper 48.53 %)")
        if paper
        else ("",) * 3
    )
    return (
        f"From Table 1 to this table, player 1's row average drops by {c['p1_drop']['cfr']:.2f} mb/g with CFR and "
        f"{c['p1_drop']['bufp-ef']:.2f} with BUFP(EF): it recovers {c['p1_recovered_percent']:.2f} % more{ref[0]}; "
        f"player 2's column average gains {c['p2_gain']['cfr']:.2f} with CFR and {c['p2_gain']['bufp-ef']:.2f} with "
        f"BUFP(EF): {c['p2_excess_percent']:.2f} % more{ref[1]}; mean {c['mean_percent']:.2f} %{ref[2]}. A percentage "
        "of a drop near 0 means nothing: read the drops."
    )  # fmt: skip


def _share_text(share: dict) -> str:
    return f"{share['probability']:.3f} ({', '.join(share['never']) or 'none'})"


def root_share(engine, policy: TabularPolicy, action: int) -> dict:
    """Player 1's probability of ``action`` at its first decision, over the deal, and the hands
    that take it with probability below 1 %: where forcing it leaves the strategy's own path."""
    p = policy.tables[0][0, action].reshape(engine.n_boards[0], engine.Hr[0])[0]
    hands = [engine.game.cards_text(engine.boards.hands[int(h)]) for h in engine.hand_ids[0][0]]
    return {"probability": float(p.mean()), "never": [h for h, x in zip(hands, p.tolist(), strict=True) if x < 0.01]}


def _plot_tables(path: Path, tables: dict, names: list[str], game: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    panels = (("rows", "as player 1 (row average)"), ("cols", "against as player 2 (column average)"))
    width = 0.8 / len(tables)
    for ax, (key, label) in zip(axes, panels, strict=True):
        for j, (tk, t) in enumerate(tables.items()):
            x = [i - 0.4 + width * (j + 0.5) for i in range(len(names))]
            ax.bar(x, [t[key][n] for n in names], width, label=f"Table {tk}: {SHORT[tk]}")
        ax.set_xticks(list(range(len(names))), [LABELS[n] for n in names])
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_ylabel("player 1's winnings (mb/g)")
        ax.set_title(label)
        ax.legend(fontsize=8, loc="lower left")
    fig.suptitle(f"Tables 1 and 2: {game}")
    save_png(fig, path)
