"""``pasur selfplay``: many games of one deck at once between batch agents, with measures."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from pasur.cli import app
from pasur.cli.common import DECK, DeckChoice, DeviceOpt, GamesOpt, JsonOpt, SampleSeedOpt, command, err
from pasur.common.errors import PasurInputError
from pasur.study.agents import AGENT_SPECS


@command(app)
def selfplay(
    deck: DeckChoice = DECK,
    alex: Annotated[str, typer.Option("--alex", help=f"Alex's agent: {AGENT_SPECS}.")] = "greedy",
    bob: Annotated[str, typer.Option("--bob", help=f"Bob's agent: {AGENT_SPECS}.")] = "random",
    model: Annotated[
        Path | None, typer.Option("--model", help="The XGBoost model a bare 'model' agent plays (pasur fit).")
    ] = None,
    table: Annotated[
        Path | None, typer.Option("--table", help="The strategy table a bare 'table' agent plays (pasur solve).")
    ] = None,
    games: GamesOpt = 1000,
    sample_seed: SampleSeedOpt = 0,
    device: DeviceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Play many games of one deck at once between two agents; print the distribution of Alex's
    points minus Bob's, its mean with a 95 % interval, and win, tie and loss rates."""
    from pasur.common.device import resolve_device
    from pasur.play.measures import matchup_measures
    from pasur.play.selfplay import play_batch
    from pasur.study.agents import batch_agent

    dev = resolve_device(device or "cpu")
    alex, bob = (_agent_spec(x, model, table) for x in (alex, bob))
    for flag, path, name in (("--model", model, "model"), ("--table", table, "table")):
        if path is not None and f"{name}:{path}" not in (alex, bob):
            raise PasurInputError(f"{flag} names the file of a bare '{name}' agent; neither --alex nor --bob is one")
    nd = deck.one("selfplay")
    trees: dict = {}
    a, tree_a = batch_agent(alex, nd, sample_seed, dev, trees)
    b, tree_b = batch_agent(bob, nd, sample_seed + 1, dev, trees)
    if tree_a is not None and tree_b is not None and tree_a is not tree_b:
        raise PasurInputError("both strategy tables must come from the same tree mode")
    t0 = time.perf_counter()
    with err.status(f"playing {games:,} games of {nd.id}"):
        batch = play_batch(nd.deck, a, b, games, dev, tree=tree_a or tree_b)
    seconds = time.perf_counter() - t0
    m = matchup_measures(batch.utility())
    info = {
        "deck_id": nd.id,
        "deck": str(nd.deck),
        "alex": alex,
        "bob": bob,
        "device": str(dev),
        "seconds": round(seconds, 4),
        "games_per_second": round(games / seconds, 1),
        **m,
    }
    if as_json:
        typer.echo(json.dumps(info, indent=1))
        return
    typer.echo(f"deck {nd.id}: Alex {alex} vs Bob {bob}, {games:,} games in {seconds:.2f} s")
    typer.echo(
        f"Alex - Bob (points): mean {m['mean']:+.3f}, 95% interval [{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}], "
        f"sd {m['std']:.3f}"
    )
    typer.echo(
        f"Alex wins {m['win_rate']:.1%}, ties {m['tie_rate']:.1%}, loses {m['loss_rate']:.1%} "
        f"(wins with ties counted for Alex, as the paper's code does: {m['win_rate_ties_to_alex']:.1%})"
    )
    dist = "  ".join(f"{v:+d}:{c}" for v, c in sorted(m["distribution"].items()))
    typer.echo(f"distribution (points: games): {dist}")


def _agent_spec(spec: str, model: Path | None, table: Path | None) -> str:
    """``model`` and ``table`` name the file given with --model / --table."""
    for name, path, flag in (("model", model, "--model"), ("table", table, "--table")):
        if spec == name:
            if path is None:
                raise PasurInputError(f"the {name} agent needs {flag} PATH (or write {name}:PATH)")
            return f"{name}:{path}"
    return spec
