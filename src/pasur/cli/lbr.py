"""``pasur lbr``: a best-response bound (local best response, :mod:`pasur.hidden.lbr`) for an agent
of the hidden-hand game: the responder's mean gain per game over duplicate deals, both seats,
with a 95 % interval; on a small variant, with ``--every-deal``, its exact expectation instead.

Nothing here imports torch at module level: the responder is imported inside the command."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path
from typing import Annotated

import typer

from pasur.cli import app
from pasur.cli.common import DeviceOpt, JsonOpt, QuietOpt, command, given
from pasur.common.console import note, progress_display
from pasur.common.errors import PasurInputError
from pasur.game.variants import VARIANTS, get_variant

_AgentOpt = Annotated[str, typer.Option("--agent", help="The agent to respond to, as pasur arena names it.")]
_DealsOpt = Annotated[int, typer.Option("--deals", min=1, max=1_000_000, help="Duplicate deals (each played twice).")]
_SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="The first deck's seed (seeds S..S+N-1).")]
_VariantOpt = Annotated[str, typer.Option("--variant", help=f"The rules: {', '.join(VARIANTS)}.")]
_HandsOpt = Annotated[
    int,
    typer.Option("--hands", min=1, max=100_000, help="The posterior's sample of the agent's hands, where sampled."),
]
_EveryOpt = Annotated[
    bool,
    typer.Option("--every-deal", help="A small variant: every deal chance can make, exactly (no --deals, --seed)."),
]
_ModelOpt = Annotated[
    str | None,
    typer.Option("--model", help="The posterior's model of the agent (default: the agent itself), as arena names it."),
]
_EpsOpt = Annotated[
    float | None,
    typer.Option("--model-eps", min=0.0, max=1.0, help="A deterministic model's weight spread over the legal actions "
                 "(default 0.1; a network's probabilities: 0)."),
]  # fmt: skip
_OutOpt = Annotated[Path | None, typer.Option("--out", help="Write lbr.json and deals.csv into this folder.")]


def _check_player(flag: str, spec: str, v) -> None:
    """Refuse an agent (or model) that sees every card or does not apply to the variant."""
    from pasur.hidden.exact_exploit import not_applicable

    if spec.strip().split(":")[0].lower() == "optimal":
        raise PasurInputError(f"{flag} optimal sees every card: it has no hidden hand to respond to")
    if not v.is_standard:
        why = not_applicable(spec) if spec.strip() else "an empty name"
        if why is not None:
            raise PasurInputError(f"{flag} {spec!r} does not apply to the {v.name} variant: {why}")


def _check(agent: str, model: str | None, eps: float | None, variant: str, every_deal: bool, out: Path | None) -> None:
    """Refuse, in one line, what cannot run (before any work)."""
    v = get_variant(variant)
    _check_player("--agent", agent, v)
    if model is not None:
        _check_player("--model", model, v)
    elif eps is not None:
        raise PasurInputError("--model-eps applies to a --model (the agent itself is its own exact model)")
    if every_deal and v.is_standard:
        raise PasurInputError("--every-deal applies only to a small variant (the standard game has too many deals)")
    if every_deal and given("deals", "seed"):
        raise PasurInputError("--every-deal plays every deal: give no --deals or --seed")
    if out is not None and out.exists() and not out.is_dir():
        raise PasurInputError(f"--out {out}: not a folder")


@command(app, "lbr")
def lbr(
    agent: _AgentOpt,
    deals: _DealsOpt = 100,
    seed: _SeedOpt = 0,
    variant: _VariantOpt = "standard",
    hands: _HandsOpt = 200,
    every_deal: _EveryOpt = False,
    model: _ModelOpt = None,
    model_eps: _EpsOpt = None,
    out: _OutOpt = None,
    device: DeviceOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """A best-response bound for an agent (LBR): a responder that infers the agent's hand from
    its moves (asking the agent what it would have played with each hand it could hold) and plays
    the best action under that posterior, valued by the rest of the round solved and the boundary
    value beyond. Its mean gain per game, both seats, is a lower bound on the agent's
    exploitability (docs/hidden.md)."""
    _check(agent, model, model_eps, variant, every_deal, out)
    from pasur.common.device import resolve_device
    from pasur.hidden.lbr import LBRResponder
    from pasur.hidden.registry import make_agent

    dev = str(resolve_device(device or "cpu"))
    player = make_agent(agent, device=dev)
    model_player = None if model is None else make_agent(model, device=dev)
    responder = LBRResponder(player, model=model_player, model_eps=model_eps, hands=hands, device=dev)
    names = (agent.strip(), (model or agent).strip())
    report = _run(responder, names, get_variant(variant), deals, seed, every_deal, quiet or as_json)
    if out is not None:
        _write(out, report)
    if as_json:
        typer.echo(json.dumps({k: v for k, v in report.items() if k != "records"}, indent=1))
        return
    typer.echo(_sentence(report))


def _run(responder, names: tuple[str, str], v, deals: int, seed: int, every: bool, silent: bool) -> dict:
    """Play ``responder`` against its agent (``names``: the agent's and the model's specs); the
    report (with the per-deal ``records``)."""
    from rich.progress import BarColumn, MofNCompleteColumn

    from pasur.game.cards import Deck
    from pasur.hidden.arena import pair_measures
    from pasur.hidden.lbr import exact_gain, lbr_duplicates

    player, spec, m = responder.agent, names[0], responder.model
    t0 = time.perf_counter()
    base = {"agent": spec, "variant": v.name, "hands": responder.hands, "exact_cap": responder.cap,
            "device": str(responder.search.device), "model": names[1], "model_eps": m.eps,
            "model_probs": _probs_kind(m)}  # fmt: skip
    if every:
        with progress_display(silent) as progress:
            progress.add_task(f"lbr: every deal of {v.name} against {spec}", total=None)
            gain = exact_gain(v, player, responder)
        n = v.deals_count()
        seconds = round(time.perf_counter() - t0, 1)
        return {**base, "every_deal": True, "deals": n, "gain": round(gain, 4), "posterior": responder.stats,
                "seconds": seconds, "records": []}  # fmt: skip
    decks = [Deck.from_seed(seed + i, v) for i in range(deals)]
    with progress_display(silent, BarColumn(), MofNCompleteColumn()) as progress:
        task = progress.add_task(f"lbr against {spec}: deals", total=deals)
        records = lbr_duplicates(decks, player, responder, lambda _: progress.update(task, advance=1))
    m = pair_measures("lbr", spec, records)
    measures = {k: m[k] for k in ("deals", "games", "half_width", "ci95", "sd", "win_rate", "tie_rate", "loss_rate")}
    for r, deck_seed in zip(records, range(seed, seed + deals), strict=True):
        r["seed"] = deck_seed
    seconds = round(time.perf_counter() - t0, 1)
    return {**base, "every_deal": False, "seed": seed, "gain": m["margin"], **measures, "posterior": responder.stats,
            "seconds": seconds, "records": records}  # fmt: skip


def _probs_kind(model) -> str:
    """How the model's likelihoods are read: a network's probabilities, uniform, or its choice."""
    from pasur.hidden.lbr_posterior import is_uniform

    return "network" if model.distribution else "uniform" if is_uniform(model.player) else "choice"


def _write(out: Path, report: dict) -> None:
    """``lbr.json`` (the report) and ``deals.csv`` (one row per deal) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "lbr.json").write_text(json.dumps({k: v for k, v in report.items() if k != "records"}, indent=1) + "\n")
    with (out / "deals.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["seed", "lbr_as_alex", "agent_as_alex", "lbr_margin"])
        for r in report["records"]:
            w.writerow([r["seed"], r["a_as_alex"], r["b_as_alex"], r["margin"]])
    if not report["records"]:
        note(f"lbr: --every-deal has no per-deal rows; wrote {out / 'lbr.json'}")


def _sentence(r: dict) -> str:
    model = f"the posterior by model {r['model']} (eps {r['model_eps']:g}, its {r['model_probs']} probabilities)"
    if r["every_deal"]:
        return (
            f"lbr against {r['agent']} on {r['variant']}: gain {r['gain']:+.4f} points per game, "
            f"exact over all {r['deals']:,} deals, both seats; {model}"
        )
    lo, hi = r["ci95"]
    return (
        f"lbr against {r['agent']} on {r['variant']}: gain {r['gain']:+.3f} points per game, "
        f"95 % interval [{lo:+.3f}, {hi:+.3f}] over {r['deals']:,} duplicate deals ({r['games']:,} games); {model}"
    )
