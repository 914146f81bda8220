"""``pasur variants`` (Pasur's rule variants and the sizes of their hidden-hand games) and
``pasur hidden-solve`` (the exact CFR solve of a small variant's whole hidden-hand game).

Nothing here imports torch at module level: the solver is imported inside the command."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Annotated

import typer

from pasur.cli import app
from pasur.cli.common import DeviceOpt, JsonOpt, OverwriteOpt, QuietOpt, command, note, refuse_unless
from pasur.common import cfr_methods as regret
from pasur.common.errors import PasurInputError
from pasur.game.variants import VARIANTS, get_variant

#: every method of the regret kernel (``pasur.hidden.exact_cfr.ALL_METHODS``)
HIDDEN_METHODS = (*regret.METHODS, *regret.PREDICTIVE, *regret.SCHEDULED)

VariantOpt = Annotated[str, typer.Option("--variant", help=f"A small variant: {', '.join(list(VARIANTS)[1:])}.")]


def variant_rows() -> list[dict]:
    """Each variant's row with its tree's size (``None`` where the tree is too large to list)."""
    from pasur.hidden.history_tree import SIZES

    rows = []
    for v in VARIANTS.values():
        size = SIZES.get(v.name)
        rows.append(
            {
                **v.describe(),
                "deals_count": v.deals_count(),
                "histories": size[0] if size else None,
                "infosets": list(size[1:]) if size else None,
            }
        )
    return rows


@command(app)
def variants(as_json: JsonOpt = False) -> None:
    """The rule variants: deck, hands, deals, pool, scoring, match target, and the size of each
    small one's whole hidden-hand game (histories; information sets of Alex and Bob)."""
    rows = variant_rows()
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    typer.echo(
        f"{'variant':10} {'cards':>5} {'hand':>4} {'deals':>5} {'pool':>4} {'histories':>12} {'infosets (A, B)':>22}"
    )
    for r in rows:
        hist = f"{r['histories']:,}" if r["histories"] is not None else "too many"
        info = f"{r['infosets'][0]:,}, {r['infosets'][1]:,}" if r["infosets"] else "-"
        shape = f"{r['cards']:>5} {r['hand_size']:>4} {r['deals']:>5} {r['pool_size']:>4}"
        typer.echo(f"{r['name']:10} {shape} {hist:>12} {info:>22}")


def _check_solve(variant: str, method: str, iterations, target, out, overwrite) -> None:
    """Every refusal of ``hidden-solve``, before any work."""
    from pasur.common.outputs import check_output_dir
    from pasur.hidden.history_tree import SIZES

    v = get_variant(variant)
    if v.name not in SIZES:
        raise PasurInputError(
            f"--variant {v.name}: its hidden-hand game is far too large to solve exactly; "
            f"choose a small variant ({', '.join(SIZES)})"
        )
    if method not in HIDDEN_METHODS:
        raise PasurInputError(f"unknown method {method!r} (choose from {', '.join(HIDDEN_METHODS)})")
    takes = regret.PARAMETER_METHODS
    for name in ("alpha", "beta", "gamma"):
        refuse_unless(method in takes[name], [name], f"to --method {' or '.join(takes[name])}")
    refuse_unless(out is not None, ["overwrite"], "with --out")
    if iterations is None and target is None:
        raise PasurInputError("give --iterations N, --target-exploitability E, or both")
    if target is not None and not (target > 0 and math.isfinite(target)):
        raise PasurInputError(f"--target-exploitability must be a positive number, got {target}")
    if method in regret.SCHEDULED and iterations is None:
        raise PasurInputError(f"{method} schedules its parameters over the run's length: give --iterations")
    if out is not None:
        check_output_dir(out, overwrite=overwrite)


@command(app, "hidden-solve")
def hidden_solve(
    variant: VariantOpt,
    method: Annotated[str, typer.Option("--method", help=f"{', '.join(HIDDEN_METHODS)}.")] = "dcfr",
    iterations: Annotated[
        int | None, typer.Option("--iterations", min=1, max=1_000_000, help="Iterations (with a target: the cap).")
    ] = None,
    target_exploitability: Annotated[
        float | None,
        typer.Option(
            "--target-exploitability",
            help="Stop once the average strategy's exploitability (points per game; NashConv / 2, exact best "
            "responses: docs/conventions.md) is at most this.",
        ),
    ] = None,
    check_every: Annotated[
        int, typer.Option("--check-every", min=1, max=1_000_000, help="Measure exploitability every K iterations.")
    ] = 10,
    updates: Annotated[
        str, typer.Option("--updates", help="alternating (OpenSpiel's) or simultaneous.")
    ] = "alternating",
    alpha: Annotated[
        float | None, typer.Option("--alpha", help="DCFR, PDCFR+: positive regret discount exponent.")
    ] = None,
    beta: Annotated[float, typer.Option("--beta", help="DCFR: negative regret discount exponent.")] = 0.0,
    gamma: Annotated[float | None, typer.Option("--gamma", help="DCFR and the predictive variants: t^gamma.")] = None,
    device: DeviceOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Folder for strategy.parquet and summary.json.")] = None,
    overwrite: OverwriteOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Solve a small variant's whole hidden-hand game exactly with a CFR method (chance over every
    deal, information sets as each player has seen the game); report the average strategy's
    value, NashConv and exploitability = NashConv / 2 in points per game."""
    _check_solve(variant, method, iterations, target_exploitability, out, overwrite)
    from pasur.common.device import resolve_device
    from pasur.hidden.exact_cfr import HiddenCFR, HiddenCFRConfig, solve
    from pasur.hidden.history_tree import build_tree

    dev = resolve_device(device or "cpu")
    cfg = HiddenCFRConfig(
        method, updates, alpha, beta, gamma, horizon=iterations if method in regret.SCHEDULED else None
    )
    v = get_variant(variant)
    if not quiet:
        note(f"building the {v.name} tree")
    started = time.perf_counter()
    tree = build_tree(v)
    build_seconds = time.perf_counter() - started
    solver = HiddenCFR(tree, cfg, dev)

    def progress(done: int, expl: float | None) -> None:
        if not quiet and expl is not None:
            note(f"{method} on {v.name}: iteration {done:,}, exploitability {expl:.3e}")

    cap = iterations if iterations is not None else 100_000
    result = solve(solver, cap, target_exploitability=target_exploitability, check_every=check_every, progress=progress)
    summary = _summary(v.name, cfg, tree, result, target_exploitability, build_seconds, dev)
    if out is not None:
        _write(out, overwrite, tree, result, summary)
    if as_json:
        typer.echo(json.dumps(summary, indent=1))
        return
    typer.echo(f"{v.name}: {method}, {result.iterations:,} iterations in {result.seconds:.1f} s")
    typer.echo(
        f"value (Alex): {result.value:+.6f}   exploitability: {result.exploitability:.3e}   "
        f"NashConv: {result.nash_conv:.3e}  (points per game)"
    )


def _summary(name: str, cfg, tree, result, target: float | None, build_seconds: float, dev) -> dict:
    """What ``summary.json`` holds (and ``--json`` prints)."""
    return {
        "variant": name,
        "method": cfg.method,
        "parameters": {"updates": cfg.updates, "alpha": cfg.alpha, "beta": cfg.beta, "gamma": cfg.gamma},
        "iterations": result.iterations,
        "value": result.value,
        "nash_conv": result.nash_conv,
        "exploitability": result.exploitability,
        "target_exploitability": target,
        "target_met": result.target_met,
        "seconds": result.seconds,
        "build_seconds": build_seconds,
        "histories": tree.n_histories,
        "infosets": list(tree.n_infosets),
        "device": str(dev),
        "units": "points per game (Alex's minus Bob's); exploitability = nash_conv / 2",
        "trace": result.trace,
    }


def _write(out: Path, overwrite: bool, tree, result, summary: dict) -> None:
    from pasur.common.outputs import output_dir, write_text_atomic
    from pasur.hidden.exact_cfr import write_strategy

    with output_dir(out, overwrite=overwrite) as tmp:
        summary["strategy_rows"] = write_strategy(tmp / "strategy.parquet", tree, result.policy)
        write_text_atomic(tmp / "summary.json", json.dumps(summary, indent=1) + "\n")
    summary["out"] = str(out)


#: the solved strategy itself, and its most probable action at every information set (ties: the
#: first legal one): what playing the equilibrium deterministically costs
EQUILIBRIA = ("equilibrium", "equilibrium:pure")


@command(app, "hidden-exploit")
def hidden_exploit(
    variant: VariantOpt,
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help="Agents, comma-separated: of pasur arena (random, greedy, heuristic, ismcts:N:game, and pimc:K, "
            "ispimc:K, ispimc2:K with :game, :exact, :infer or :iid apply; not a network of the standard game: "
            ":belief, :pvL, :plL, :topN, :popp, best), or equilibrium (the solved strategy) and equilibrium:pure "
            "(its most probable action everywhere).",
        ),
    ],
    equilibrium_target: Annotated[
        float,
        typer.Option(
            "--equilibrium-target",
            help="The exploitability (points) to which the equilibrium the agent is compared with is solved (DCFR).",
        ),
    ] = 1e-3,
    device: DeviceOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """The exact exploitability of an agent on a small variant: its policy at every information
    set, the best responses against it in each seat (exploitability = NashConv / 2, points per
    game), and its margins against a solved equilibrium. Several agents share one tree and one
    equilibrium; ``--json`` prints one object per agent (a list when there are several)."""
    from pasur.hidden.exact_exploit import not_applicable
    from pasur.hidden.registry import make_agent

    _check_solve(variant, "dcfr", None, equilibrium_target, None, False)
    specs = [x.strip() for x in agent.split(",")]
    for spec in specs:
        if spec in EQUILIBRIA:
            continue
        why = not_applicable(spec) if spec else "an empty name"
        if why is not None:
            raise PasurInputError(f"--agent {spec!r} does not apply to a small variant yet: {why}")
    players = [None if spec in EQUILIBRIA else make_agent(spec) for spec in specs]
    reports = _exploit(get_variant(variant), specs, players, equilibrium_target, device, quiet)
    if as_json:
        typer.echo(json.dumps(reports[0] if len(reports) == 1 else reports, indent=1))
        return
    for r in reports:
        typer.echo(
            f"{r['agent']} on {r['variant']}: exploitability {r['exploitability']:.4f} points per game "
            f"(NashConv {r['nash_conv']:.4f}); against the equilibrium {r['margin_vs_equilibrium']:+.4f}"
        )


def _exploit(v, specs: list[str], players: list, target: float, device: str | None, quiet: bool) -> list[dict]:
    """Each agent's report (:func:`pasur.hidden.exact_exploit.exploit_report`) on ``v``'s tree."""
    import torch

    from pasur.common.device import resolve_device
    from pasur.hidden.exact_cfr import HiddenCFR, HiddenCFRConfig, solve
    from pasur.hidden.exact_exploit import agent_table, exploit_report
    from pasur.hidden.history_tree import build_tree

    if not quiet:
        note(f"building the {v.name} tree")
    solver = HiddenCFR(build_tree(v), HiddenCFRConfig("dcfr"), resolve_device(device or "cpu"))
    tables = [
        None if p is None else agent_table(solver, p, distribution=s.split(":")[0] == "random")
        for s, p in zip(specs, players, strict=True)
    ]
    if not quiet:
        note(f"solving {v.name} to exploitability {target:g}")
    eq = solve(solver, 100_000, target_exploitability=target, check_every=10)
    pure = torch.nn.functional.one_hot(eq.policy.masked_fill(solver.legal == 0, -1.0).argmax(1), solver.A)
    equilibria = {"equilibrium": eq.policy, "equilibrium:pure": pure.to(eq.policy.dtype)}
    tables = [equilibria[s] if t is None else t for s, t in zip(specs, tables, strict=True)]
    units = "points per game; exploitability = nash_conv / 2; margins are the agent's"
    return [
        {"variant": v.name, "agent": s, **exploit_report(solver, t, eq.policy), "units": units}
        for s, t in zip(specs, tables, strict=True)
    ]
