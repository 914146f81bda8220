"""``pasur arena`` (agents of the hidden-hand game on duplicate deals) and ``pasur hidden-train``
(the boundary value their round-horizon search uses, the learned belief over the opponent's
hand, and the policy-value network)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from pasur.cli import app
from pasur.cli.common import AddressOpt, DeviceOpt, JsonOpt, OverwriteOpt, QuietOpt, SampleSeedOpt, command, given, note
from pasur.common.errors import PasurInputError
from pasur.hidden.registry import AGENT_HELP

DeckSeedOpt = Annotated[
    int, typer.Option("--seed", min=0, help="The deck seed: deals are the decks of seeds S..S+N-1.")
]


PlanOpt = Annotated[
    Path | None,
    typer.Option(
        "--plan",
        help="A pre-registered plan (JSON: claim, agents, pairs, deals, seed, sample_seed, chunk, stopping), "
        "committed unchanged in its git repository; it sets the run, and its commit goes into results.json.",
    ),
]
#: the options a plan sets (given with --plan, they are refused)
PLAN_SETS = ("agents", "pairs", "deals", "seed", "sample_seed", "chunk")


def _names(text: str, option: str, sep: str = ",") -> list[str]:
    """The names of a ``sep``-separated list; an empty one (two separators in a row, one at an
    end) is refused rather than dropped."""
    names = [x.strip() for x in text.split(sep)]
    if any(not x for x in names):
        raise PasurInputError(f"{option}: an empty name in {text!r} (two {sep!r} in a row, or one at an end)")
    return names


def _count(n: int, word: str) -> str:
    """``1 chunk``, ``2 chunks``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


_ArenaOutOpt = Annotated[Path, typer.Option("--out", help="Folder of the arena (created; rerun to resume or extend).")]
_ArenaAgentsOpt = Annotated[
    str | None,
    typer.Option(
        "--agents",
        help=f"Comma-separated agents (needed without --plan): {AGENT_HELP}; or module:Class, your own "
        "agent (a HiddenAgent class of an importable module, made with seed= or no arguments).",
    ),
]
_ArenaDealsOpt = Annotated[int, typer.Option("--deals", min=1, max=10_000_000, help="Duplicate deals per pair.")]
_ArenaPairsOpt = Annotated[
    str | None,
    typer.Option("--pairs", help="Only these pairs, comma-separated A/B (default: every pair of --agents)."),
]
_ArenaChunkOpt = Annotated[
    int, typer.Option("--chunk", min=1, max=100_000, help="Deals per task (played in lockstep).")
]
_ArenaWorkersOpt = Annotated[
    int | None, typer.Option("--workers", min=1, max=4096, help="Tasks at once (default: CPUs).")
]
_ArenaEngineOpt = Annotated[str, typer.Option("--engine", help="ray, or inline: one task at a time in this process.")]


@command(app)
def arena(
    out: _ArenaOutOpt,
    agents: _ArenaAgentsOpt = None,
    plan: PlanOpt = None,
    deals: _ArenaDealsOpt = 500,
    seed: DeckSeedOpt = 0,
    pairs: _ArenaPairsOpt = None,
    sample_seed: SampleSeedOpt = 0,
    chunk: _ArenaChunkOpt = 25,
    workers: _ArenaWorkersOpt = None,
    engine: _ArenaEngineOpt = "ray",
    address: AddressOpt = None,
    device: DeviceOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Play agents of the hidden-hand game against each other on duplicate deals (each deck twice,
    seats swapped): A's margin per deal with a 95 % interval, win/tie/loss rates, a pairwise table.
    Results in DIR/results.json, DIR/table.md, DIR/deals.csv; rerun to resume. With --plan, a
    pre-registered run: refused unless the plan file is committed unchanged (docs/hidden.md)."""
    from rich.progress import BarColumn, MofNCompleteColumn

    from pasur.common.console import progress_display
    from pasur.common.device import resolve_device
    from pasur.hidden.arena import run_arena

    dev = str(resolve_device(device or "cpu"))
    spec, record = _arena_spec(plan, agents, pairs, deals, seed, sample_seed, chunk, dev)
    deals, chunk = spec.deals, spec.chunk  # (a plan sets them)
    with progress_display(quiet or as_json, BarColumn(), MofNCompleteColumn()) as progress:
        task = progress.add_task("arena: chunks", total=None)

        def started(n_todo: int, n_skipped: int) -> None:
            progress.update(task, total=n_todo)
            if not quiet and not as_json:
                size = min(chunk, deals)
                each = f"{'up to ' if n_todo > 1 and deals % size else ''}{_count(size, 'deal')}"
                note(f"arena into {out}: {_count(n_todo, 'chunk')} of {each} to play, {n_skipped:,} done before")

        def chunk_done(res: dict) -> None:
            progress.update(task, advance=1, description=f"arena: {res['a']} vs {res['b']}")

        try:
            run = run_arena(
                spec,
                out,
                engine=engine,
                workers=workers,
                address=address,
                plan=record,
                on_start=started,
                on_chunk=chunk_done,
            )
        except KeyboardInterrupt:
            note("interrupted: finished chunks are kept; rerun the same command to go on")
            raise typer.Exit(130) from None
    results = run.results
    if as_json:
        light = [{k: v for k, v in p.items() if k != "records"} for p in results["pairs"]]
        shown = {"out": str(out), "seconds": round(run.seconds, 1), "pairs": light}
        if record is not None:
            shown["plan"] = record
        typer.echo(json.dumps(shown, indent=1))
        return
    from pasur.hidden.report import markdown_table

    light = {**results, "pairs": [{k: v for k, v in p.items() if k != "records"} for p in results["pairs"]]}
    typer.echo(markdown_table(light))
    typer.echo(
        f"\n{_count(run.ran, 'chunk')} played, {run.skipped:,} done before; {run.seconds:.1f} s; outputs in {out}"
    )


def _arena_spec(
    plan: Path | None,
    agents: str | None,
    pairs: str | None,
    deals: int,
    seed: int,
    sample_seed: int,
    chunk: int,
    dev: str,
):
    """The arena's spec: the plan's (refusing the options it sets), or the agents and pairs given;
    and the plan's record (None without one)."""
    from pasur.hidden.arena import ArenaSpec

    record = None
    if plan is not None:
        conflicting = sorted(given(*PLAN_SETS))
        if conflicting:
            opts = ", ".join("--" + n.replace("_", "-") for n in conflicting)
            raise PasurInputError(
                f"{opts}: the plan sets {'this' if len(conflicting) == 1 else 'these'}; drop with --plan"
            )
        from pasur.hidden.plan import load_plan

        planned, record = load_plan(plan)
        deals, seed, sample_seed, chunk = (planned[k] for k in ("deals", "seed", "sample_seed", "chunk"))
        pairs_of = tuple((a, b) for a, b in planned["pairs"])
        spec = ArenaSpec(tuple(planned["agents"]), pairs_of, deals, seed, sample_seed, chunk, dev)
    else:
        if agents is None:
            raise PasurInputError("--agents is needed (or --plan PLAN.json)")
        names = _names(agents, "--agents")
        if len(names) < 2:
            raise PasurInputError("--agents needs at least two agents, comma-separated")
        if pairs is None:
            spec = ArenaSpec.all_pairs(names, deals=deals, seed=seed, sample_seed=sample_seed, chunk=chunk, device=dev)
        else:
            chosen = []
            for p in _names(pairs, "--pairs"):
                ab = _names(p, "--pairs", "/")
                if len(ab) != 2 or any(x not in names for x in ab):
                    raise PasurInputError(f"--pairs: {p!r} is not A/B with A and B among --agents")
                chosen.append((ab[0], ab[1]))
            spec = ArenaSpec(tuple(names), tuple(chosen), deals, seed, sample_seed, chunk, dev)
    return spec, record


@command(app, name="arena-verify")
def arena_verify(
    results: Annotated[Path, typer.Argument(help="The folder of a pre-registered arena run, or its results.json.")],
    as_json: JsonOpt = False,
) -> None:
    """Check a committed, pre-registered arena run as a reader would: results.json is committed
    unchanged, the plan at the commit it records has the SHA-256 it records and asks for what was
    played, and the plan's commit precedes (is an ancestor of) the result's. Exit 2 naming the
    first check that fails."""
    from pasur.hidden.plan import verify

    facts = verify(results)
    if as_json:
        typer.echo(json.dumps(facts, indent=1))
        return
    typer.echo(
        f"plan {facts['plan']} committed in {facts['plan_commit'][:12]} ({facts['plan_committed_at']}) precedes "
        f"{facts['results']} committed in {facts['result_commit'][:12]} ({facts['result_committed_at']}); "
        f"the plan's content is the one recorded and asks for what was played.\nclaim: {facts['claim']}"
    )


#: the networks ``pasur hidden-train`` fits
NETWORKS = ("boundary", "belief", "policy", "selfplay")
#: options of some networks only, and those networks
ONLY = {
    "deals": ("boundary",),
    "overwrite": ("boundary",),
    "seed": ("belief", "policy", "selfplay"),
    "test_games": ("belief",),
    "self_play": ("belief",),
    "device": ("belief", "policy", "selfplay"),
    "quiet": ("belief", "policy", "selfplay"),
    "generations": ("selfplay",),
    "gate_deals": ("selfplay",),
    "start": ("selfplay",),
    "epochs": ("boundary", "belief", "policy"),
}


_TrainOutOpt = Annotated[
    Path,
    typer.Option(
        "--out", help="boundary: the weights file to write (.pt); belief, policy: a folder (rerun to resume)."
    ),
]
_TrainNetworkOpt = Annotated[
    str,
    typer.Argument(
        help="The network: boundary (the value at a deal's boundary), belief (the opponent's hand), "
        "policy (a policy-value network that plays without search) or selfplay (the policy network "
        "improved by self-play, the search as the improvement operator)."
    ),
]
_TrainGamesOpt = Annotated[
    int | None,
    typer.Option(
        "--games",
        min=10,
        max=10_000_000,
        help="Games played (boundary: 12,000; belief: 1,600; policy: 8,000; selfplay: 2,000 per generation).",
    ),
]
_TrainDealsOpt = Annotated[
    int, typer.Option("--deals", min=1, max=100, help="boundary: random next deals per position.")
]
_TrainEpochsOpt = Annotated[
    int | None,
    typer.Option(
        "--epochs", min=1, max=10_000, help="Training epochs (boundary: 40 per round; belief: 10; policy: 12)."
    ),
]
_TrainSeedOpt = Annotated[
    int,
    typer.Option(
        "--seed",
        min=0,
        help="belief, policy: the training games are the decks of seeds S..S+N-1 (default 0); selfplay: "
        "generation g's games the decks of seeds S+(g-1)N on (default 200,000).",
    ),
]
_TrainTestGamesOpt = Annotated[
    int,
    typer.Option("--test-games", min=10, max=100_000, help="belief: held-out games (decks of seeds 900,000 on)."),
]
_TrainSelfPlayOpt = Annotated[
    int,
    typer.Option(
        "--self-play",
        min=0,
        max=1_000_000,
        help="belief: games of the first model's belief agents, then a second model trained on all "
        "(default 0: one model, the shipped weights; 400 gained nothing on the held-out games).",
    ),
]
_TrainGenerationsOpt = Annotated[
    int,
    typer.Option("--generations", min=1, max=1000, help="selfplay: generations (rerun with more to go on)."),
]
_TrainGateDealsOpt = Annotated[
    int,
    typer.Option(
        "--gate-deals",
        min=10,
        max=1_000_000,
        help="selfplay: duplicate deals of each candidate against the incumbent (seeds 300,000 on).",
    ),
]
_TrainStartOpt = Annotated[
    Path | None,
    typer.Option("--start", help="selfplay: the first incumbent's weights (default: the shipped policy)."),
]


@command(app, name="hidden-train")
def hidden_train(
    out: _TrainOutOpt,
    network: _TrainNetworkOpt = "boundary",
    games: _TrainGamesOpt = None,
    deals: _TrainDealsOpt = 2,
    epochs: _TrainEpochsOpt = None,
    seed: _TrainSeedOpt = 0,
    test_games: _TrainTestGamesOpt = 300,
    self_play: _TrainSelfPlayOpt = 0,
    generations: _TrainGenerationsOpt = 3,
    gate_deals: _TrainGateDealsOpt = 2000,
    start: _TrainStartOpt = None,
    sample_seed: SampleSeedOpt = 0,
    device: DeviceOpt = None,
    overwrite: OverwriteOpt = False,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Fit a network of the hidden-hand agents from scratch. boundary: the value of the round-horizon
    search at the end of a round, before the next deal, backwards from round 5. belief: the learned
    belief over the opponent's hand (agents' :belief), trained on games of the project's agents and
    evaluated on held-out games against the soft-greedy and uniform beliefs. policy: the
    policy-value network (agent policy), trained on the searching agents' decisions and the games'
    final margins. selfplay: generations of the policy network, each trained on games of the search
    with the previous network as its prior and kept only if it beats that network on duplicate
    deals. The shipped weights came from the defaults."""
    if network not in NETWORKS:
        raise PasurInputError(f"unknown network {network!r} (choose from {', '.join(NETWORKS)})")
    wrong: dict[tuple[str, ...], list[str]] = {}
    for name in sorted(given(*ONLY)):
        if network not in ONLY[name]:
            wrong.setdefault(ONLY[name], []).append(name)
    for nets, names in wrong.items():
        opts = ", ".join("--" + n.replace("_", "-") for n in names)
        raise PasurInputError(f"{opts}: only for hidden-train {' or '.join(nets)}")
    if network == "selfplay":
        _train_selfplay(out, games or 2000, generations, gate_deals, start, seed if given("seed") else None,
                        sample_seed, device, quiet, as_json)  # fmt: skip
        return
    if network == "policy":
        _train_policy(out, games or 8000, epochs or 12, seed, sample_seed, device, quiet, as_json)
        return
    if network == "belief":
        _train_belief(
            out, games or 1600, test_games, epochs or 10, seed, sample_seed, self_play, device, quiet, as_json
        )
        return
    _train_boundary(out, games or 12_000, deals, epochs or 40, sample_seed, overwrite, as_json)


def _train_boundary(out: Path, games: int, deals: int, epochs: int, seed: int, overwrite: bool, as_json: bool) -> None:
    """``hidden-train boundary``: fit the boundary value, write it with its card, report each round's fit."""
    from pasur.common.outputs import check_output_file
    from pasur.hidden.train import train_boundary

    path = check_output_file(out, overwrite=overwrite)
    learned, report = train_boundary(games, deals, epochs, seed=seed, on_step=None if as_json else note)
    learned.save(path, report)
    if as_json:
        typer.echo(json.dumps({"out": str(path), **report}, indent=1))
    else:
        typer.echo(f"boundary value written to {path} in {report['seconds']:.0f} s")
        for r, rep in sorted(report["rounds"].items()):
            typer.echo(
                f"  after round {r}: held-out RMSE {rep['val_rmse']} (predicting the mean: "
                f"{rep['val_rmse_of_mean']}), {rep['samples']:,} samples"
            )


@contextmanager
def _training_display(silent: bool) -> Iterator[tuple[Callable[[str, int, int], None], Callable[[str], None]]]:
    """A progress display for a network's training: ``bar(name, done, total)`` moves the bar of
    that name (made on first use), ``say(text)`` prints a note; both silent with ``silent``."""
    from rich.progress import BarColumn, MofNCompleteColumn

    from pasur.common.console import progress_display

    with progress_display(silent, BarColumn(), MofNCompleteColumn()) as progress:
        tasks: dict[str, int] = {}

        def bar(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = progress.add_task(name, total=total)
            progress.update(tasks[name], completed=done)

        yield bar, ((lambda _: None) if silent else note)


def _train_belief(out, games, test_games, epochs, seed, sample_seed, self_play, device, quiet, as_json) -> None:
    """``pasur hidden-train belief``: games, training and evaluation, with a progress display."""
    from pasur.common.device import resolve_device
    from pasur.hidden.belief_train import run_belief

    dev = str(resolve_device(device or "cpu"))
    with _training_display(quiet or as_json) as (bar, say):
        try:
            fit = run_belief(
                out, games, test_games, epochs, seed, sample_seed, dev, self_play,
                on_step=say,
                on_games=lambda kind, done, total: bar(f"{kind} games", done, total),
                on_epoch=lambda e, row: (bar("epochs", e, epochs), say(f"epoch {e}: held-out NLL {row['val_nll']}")),
            )  # fmt: skip
        except KeyboardInterrupt:
            note("interrupted: the games played and the last epoch are kept; rerun the same command to go on")
            raise typer.Exit(130) from None
    if as_json:
        typer.echo(json.dumps({"out": str(out), **{k: v for k, v in fit.items() if k != "history"}}, indent=1))
        return
    typer.echo((Path(out) / "table.md").read_text(encoding="utf-8").rstrip())
    typer.echo(f"belief weights in {out}/belief-weights.pt (best epoch {fit['best_epoch']} of {epochs}); "
               "mean log-likelihood of the true hand per position (nats), held-out games")  # fmt: skip


def _train_policy(out, games, epochs, seed, sample_seed, device, quiet, as_json) -> None:
    """``pasur hidden-train policy``: games, positions and training, with a progress display."""
    from pasur.common.device import resolve_device
    from pasur.hidden.policy_train import run_policy

    dev = str(resolve_device(device or "cpu"))
    with _training_display(quiet or as_json) as (bar, say):

        def epoch_done(e: int, row: dict) -> None:
            bar("epochs", e, epochs)
            say(f"epoch {e}: held-out cross-entropy {row['val_ce']}, agreement with the search {row['val_agree']}, "
                f"value RMSE {row['val_value_rmse']} points")  # fmt: skip

        try:
            fit = run_policy(
                out, games, epochs, seed, sample_seed, dev,
                on_step=say,
                on_games=lambda kind, done, total: bar(f"{kind} games", done, total),
                on_epoch=epoch_done,
                on_batch=lambda done, total: bar("positions this epoch", done, total),
            )  # fmt: skip
        except KeyboardInterrupt:
            note("interrupted: the games played and the last epoch are kept; rerun the same command to go on")
            raise typer.Exit(130) from None
    if as_json:
        typer.echo(json.dumps({"out": str(out), **{k: v for k, v in fit.items() if k != "history"}}, indent=1))
        return
    held = fit["held_out"]
    typer.echo(
        f"policy weights in {out}/policy-weights.pt (best epoch {fit['best_epoch']} of {epochs}); held-out games: "
        f"cross-entropy {held['ce']}, agreement with the search {held['agree']:.1%}, value RMSE "
        f"{held['value_rmse']} points, action-value RMSE {held['q_rmse']} points"
    )


def _train_selfplay(out, games, generations, gate_deals, start, seed, sample_seed, device, quiet, as_json) -> None:
    """``pasur hidden-train selfplay``: generations of games, training and gates, with a progress display."""
    from pasur.common.device import resolve_device
    from pasur.hidden import policy_selfplay as sp
    from pasur.hidden.policy import DEFAULT_WEIGHTS

    start = Path(start) if start is not None else DEFAULT_WEIGHTS
    if not start.is_file():
        raise PasurInputError(f"--start {start}: no such weights file")
    dev = str(resolve_device(device or "cpu"))
    with _training_display(quiet or as_json) as (bar, say):
        try:
            rows = sp.run_selfplay(
                out, generations, games, gate_deals, start, sp.SEED if seed is None else seed, sp.GATE_SEED,
                sample_seed, dev,
                on_step=say,
                on_games=lambda g, done, total: bar(f"generation {g} games", done, total),
                on_epoch=lambda g, e, row: say(f"generation {g}, epoch {e}: held-out cross-entropy {row['val_ce']}"),
            )  # fmt: skip
        except KeyboardInterrupt:
            note("interrupted: the games played and the last epoch are kept; rerun the same command to go on")
            raise typer.Exit(130) from None
    if as_json:
        typer.echo(json.dumps({"out": str(out), **sp.summary(rows), "generations_table": rows}, indent=1))
        return
    typer.echo(sp.table(rows).rstrip())
    final = sp.summary(rows)["final_generation"]
    typer.echo(
        f"policy weights in {out}/policy-weights.pt: generation {final} (0: the starting weights, no candidate kept)"
    )
