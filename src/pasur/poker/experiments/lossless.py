"""A two-private-card game (Numeral211 and its small variants) solved without abstraction: CFR on
every suit-isomorphism class of every round, full width, with the kernel's methods (issue 26).

The solver is :class:`pasur.poker.embedding.solver.EmbeddingCFR` with an identity Phi: one
advisor per class, which makes it the core's CFR on the lossless keying (iterate by iterate for
every method and update order, tested) at the class-space traversal's speed (the last round in
chunks of boards). Float32 tables by default (``--dtype float64``: the core's iterates exactly,
for small games and the tests; in float32, regrets that are 0 in exact arithmetic come out as
rounding noise and can move regret matching, so the iterates differ while the measured
exploitability stays exact for the strategy they make). Alternating updates by default (player 0's
rows, then player 1's with player 0's new strategy: OpenSpiel's order, the DCFR paper's);
``--updates simultaneous`` takes both players' regrets from one traversal, as vanilla CFR and
Figure 5 run, so Figure 5's abstractions can be set against the game under the same algorithm.
One folder holds one update order, as one precision. The memory the tables and the
traversal need is estimated from the game alone and a run that would not fit is refused before
anything large is built. Each method is checkpointed as Figure 5's are, so a run resumes and a
larger ``--iterations`` goes on.

At each measurement (powers of two and the last iteration): both players' exact best-response
values ``b0``, ``b1`` against the average strategy. The game's value for player 0 then lies in
``[-b1, b0]`` (each average strategy guarantees its side that much), an interval of width
NashConv ``= b0 + b1``; exploitability is NashConv / 2 (docs/conventions.md).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch

from pasur.common.errors import PasurInputError
from pasur.common.memory import available_bytes, peak_bytes
from pasur.common.outputs import save_png, write_csv, write_text_atomic
from pasur.common.regret import METHODS as PLAIN
from pasur.common.regret import PREDICTIVE, UPDATES
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.phi import Embedding
from pasur.poker.embedding.solver import EmbeddingCFR
from pasur.poker.engine import Engine
from pasur.poker.experiments import ExperimentRun, checkpoints, experiment
from pasur.poker.experiments.checkpoints import CHECKPOINTS, drive, load_checkpoint, powers_of_two, traces_until
from pasur.poker.games import get_game
from pasur.poker.sizes import BASE_BYTES, human_bytes
from pasur.poker.solvers import CFRConfig
from pasur.poker.tree import N_ACTIONS

OUTPUTS = ("lossless.png", "lossless.csv", "lossless.md", "lossless.json", CHECKPOINTS)
DEFAULT_METHODS = ("dcfr",)
DTYPES = ("float32", "float64")
#: bytes of traversal scratch per class of a last-round chunk and betting node (measured on
#: Numeral211: reach, strategies and values of both players at every level, float32)
CHUNK_BYTES_PER_CLASS_NODE = 64


def check_methods(methods: str | None) -> tuple[str, ...]:
    names = tuple(m.strip() for m in methods.split(",")) if methods else DEFAULT_METHODS
    known = (*PLAIN, *PREDICTIVE)
    bad = [m for m in names if m not in known]
    if bad or not names or len(set(names)) != len(names):
        raise PasurInputError(f"--methods: distinct names from {', '.join(known)}, not {methods!r}")
    return names


def _one_of(option: str, choices: tuple[str, ...]):
    """The check of an option that names one of ``choices`` (the first when not given)."""

    def check(value: str | None) -> str:
        if (value or choices[0]) not in choices:
            raise PasurInputError(f"{option} must be one of {', '.join(choices)}, not {value!r}")
        return value or choices[0]

    return check


check_dtype = _one_of("--dtype", DTYPES)
check_updates = _one_of("--updates", UPDATES)


def table_values(space, engine) -> int:
    """Strategy values of the lossless game: one per (decision row, action, class), every round."""
    t = engine.tree
    return sum(int(t.legal[t.round_decisions[r]].size) * rc.n for r, rc in enumerate(space.rounds))


def memory_estimate(space, engine, methods: int = 1, chunk: int = 4096) -> int:
    """Bytes one process needs: per method its three tables (regrets, average numerators, current
    strategy, all ``rows x actions x classes``), one more for a pass's accumulators (the levels of
    one player, at most a table) and one for the average strategy a measurement builds; the
    traversal scratch of one last-round chunk, and the interpreter's base. On Numeral211 3.74 GiB
    against a measured peak of 3.40 GiB (results/lossless-numeral211)."""
    itemsize = torch.finfo(engine.dtype).bits // 8
    entries = sum(engine.n_rows[r] * N_ACTIONS * rc.n for r, rc in enumerate(space.rounds))
    per_method = 5 * entries * itemsize
    nodes = sum(int(lv.nodes.numel()) for lv in engine.levels[-1])
    scratch = chunk * nodes * CHUNK_BYTES_PER_CLASS_NODE
    return methods * per_method + scratch + BASE_BYTES


#: where each method is measured: powers of two and the last iteration
schedule = powers_of_two


def _solver(engine, space, method: str, updates: str = UPDATES[0]) -> EmbeddingCFR:
    w = [torch.as_tensor(rc.weight, dtype=engine.dtype, device=engine.device) for rc in space.rounds]
    return EmbeddingCFR(
        engine, [Embedding.identity(x) for x in w], space=space, config=CFRConfig(method=method, updates=updates)
    )


def advance(
    game: str,
    method: str,
    iterations: int,
    out: Path,
    device: str,
    dtype: str,
    updates: str = UPDATES[0],
    report=None,
    threads: int = 1,
) -> dict:
    """Run (or resume) one method to ``iterations``, measuring at :func:`schedule`."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    began = time.perf_counter()
    try:
        engine = Engine(game, iso=True, device=device, dtype=getattr(torch, dtype))
        space = ClassSpace(engine)
        solver = _solver(engine, space, method, updates)
        ck = load_checkpoint(out, game, method, iterations)
        if ck is None:
            ck = {"game": game, "method": method, "updates": updates, "dtype": dtype, "iteration": 0, "trace": [],
                  "solver_seconds": 0.0, "measure_seconds": 0.0, "state": None}  # fmt: skip
        elif ck.get("dtype") != dtype:
            raise PasurInputError(f"--out {out} holds a {ck.get('dtype')} run of {method}, not {dtype}")
        elif ck.get("updates", UPDATES[0]) != updates:
            raise PasurInputError(f"--out {out} holds {method} with {ck.get('updates')} updates, not {updates}")
        else:
            solver.load_state_dict(ck["state"])
        spent = ck.get("wall_seconds", 0.0)

        def costs() -> dict:
            peak = max(ck.get("peak_mb", 0.0), peak_bytes(engine.device) / 2**20)
            return {"wall_seconds": spent + time.perf_counter() - began, "peak_mb": peak}

        blind = get_game(game).blind

        def measure(point: int) -> dict:
            b0, b1 = solver.best_response_values()
            x = (b0 + b1) / 2
            return {"method": method, "iteration": point, "br0": b0, "br1": b1, "exploitability_chips": x,
                    "exploitability_mbg": 1000 * x / blind, "value_low": -b1, "value_high": b0,
                    "solver_seconds": ck["solver_seconds"]}  # fmt: skip

        drive(ck, schedule(iterations), out, step=solver.iterate, iteration=lambda: solver.iteration,
              state=solver.state_dict, measure=measure, costs=costs, report=report)  # fmt: skip
        return ck
    finally:
        torch.set_num_threads(before)


def _plot(path: Path, traces: dict, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for m, rows in traces.items():
        xs = [r["iteration"] for r in rows]
        ys = [max(r["exploitability_mbg"], 1e-9) for r in rows]
        axes[0].loglog(xs, ys, marker="o", markersize=3, label=m)
        axes[1].loglog([r["solver_seconds"] for r in rows], ys, marker="o", markersize=3, label=m)
    axes[0].set_xlabel("iterations")
    axes[1].set_xlabel("solver seconds")
    for ax in axes:
        ax.set_ylabel("exploitability = NashConv / 2 (mb/g)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    save_png(fig, path)


@experiment(
    "lossless",
    "A two-card game solved without abstraction (every suit-isomorphism class): exploitability (mb/g) against "
    "iterations and seconds per CFR method, and the game's value with the interval the best responses give.",
    tables=("lossless.md",),
    outputs=OUTPUTS,
    options={"methods": check_methods, "dtype": check_dtype, "updates": check_updates},
)
def lossless(run: ExperimentRun) -> dict:
    started = time.perf_counter()
    methods = check_methods(run.options.get("methods"))
    if get_game(run.game).hole_cards != 2:
        raise PasurInputError(f"{run.game}: the class-space solver takes games of two private cards")
    dtype = check_dtype(run.options.get("dtype"))
    updates = check_updates(run.options.get("updates"))
    engine = Engine(run.game, iso=True, device=run.device, dtype=getattr(torch, dtype))
    space = ClassSpace(engine)
    need = memory_estimate(space, engine, 1 if run.workers == 1 else min(run.workers, len(methods)))
    have = available_bytes(engine.device)
    if need > have:
        raise PasurInputError(
            f"{run.game} lossless needs about {human_bytes(need)} and {human_bytes(have)} is available; "
            "run fewer methods at once (--workers) or on a larger machine"
        )
    cks = checkpoints.run_methods(run, methods, advance, dtype, updates, label=f"lossless CFR, {len(methods)} methods")
    traces = traces_until(cks, run.iterations)
    rows = [r for m in methods for r in traces[m]]
    write_csv(run.out / "lossless.csv", rows)
    _plot(run.out / "lossless.png", traces, f"{run.game}, lossless ({table_values(space, engine):,} strategy values)")
    blind = get_game(run.game).blind
    best = min(methods, key=lambda m: traces[m][-1]["exploitability_chips"])
    fin = traces[best][-1]
    lines = [f"### {run.game} without abstraction ({run.iterations:,} iterations)", "",
             f"CFR on every suit-isomorphism class ({', '.join(f'{rc.n:,}' for rc in space.rounds)} per round; "
             f"{table_values(space, engine):,} strategy values), full width, {updates} updates, {dtype}. "
             f"Exploitability = NashConv / 2 of the average strategy, exact, in mb/g (1 big blind = {blind:g} chips).",
             "", "| method | " + " | ".join(f"{p:,}" for p in schedule(run.iterations)) + " | solver s |",
             "|---|" + "---|" * (len(schedule(run.iterations)) + 1)]  # fmt: skip
    for m in methods:
        at = {r["iteration"]: r["exploitability_mbg"] for r in traces[m]}
        lines.append(f"| {m} | " + " | ".join(f"{at[p]:.3f}" if p in at else "" for p in schedule(run.iterations))
                     + f" | {cks[m]['solver_seconds']:.0f} |")  # fmt: skip
    lo, hi = fin["value_low"], fin["value_high"]
    lines += ["", f"The game's value for player 0 lies in [{lo:.6f}, {hi:.6f}] chips per game "
              f"({1000 * lo / blind:.2f} to {1000 * hi / blind:.2f} mb/g; {best}'s average strategy, "
              f"exploitability {fin['exploitability_mbg']:.3f} mb/g)."]  # fmt: skip
    summary = {"game": run.game, "iterations": run.iterations, "updates": updates, "dtype": dtype,
               "big_blind": blind, "classes": [rc.n for rc in space.rounds],
               "strategy_values": table_values(space, engine), "memory_estimate_bytes": need,
               "final_mbg": {m: traces[m][-1]["exploitability_mbg"] for m in methods}, "best": best,
               "value": {"low": lo, "high": hi, "mid": (lo + hi) / 2, "width_nash_conv": hi - lo},
               "solver_seconds": {m: cks[m]["solver_seconds"] for m in methods},
               "measure_seconds": {m: cks[m]["measure_seconds"] for m in methods},
               "wall_seconds": {m: cks[m].get("wall_seconds") for m in methods},
               "peak_mb": {m: cks[m].get("peak_mb") for m in methods},
               "this_run_seconds": time.perf_counter() - started}  # fmt: skip
    write_text_atomic(run.out / "lossless.md", "\n".join(lines) + "\n")
    write_text_atomic(run.out / "lossless.json", json.dumps(summary, indent=1) + "\n")
    return summary
