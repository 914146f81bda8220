"""The ``pasur`` command line: deal, show, play and solve.

User mistakes (bad cards, decks, files, options) end with a one-line ``error: ...``
on stderr and exit code 2; results go to stdout, progress to stderr.
"""

from __future__ import annotations

import json
import random
import secrets
import time
from pathlib import Path
from typing import Annotated

import typer

from pasur import __version__
from pasur.cli import study as cli_sweep
from pasur.cli import study_models as cli_models
from pasur.play.agents import AGENT_NAMES, ExactAgent, GameAborted, make_agent, play_game
from pasur.game.cards import JACK_MASK, NamedDeck, clubs_in, format_cards, random_deck
from pasur.cli.common import (
    CFR_METHODS,
    METHODS,
    TREES,
    AsciiOpt,
    DeckFileOpt,
    DeckIdOpt,
    DeckOpt,
    DeviceOpt,
    JsonOpt,
    MemOpt,
    QuietOpt,
    SeedOpt,
    TreeOpt,
    err,
    one_deck,
    progress_display,
    select_decks,
    tree_options,
    user_errors,
)
from pasur.common.errors import PasurInputError
from pasur.game.gamelog import GameLog
from pasur.cli.runs import build, run_cfr, solve_exact_run, solve_reference
from pasur.game.state import GameState

app = typer.Typer(
    name="pasur",
    help="Solve and play the card game Pasur (two players, open hands).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
    threads: Annotated[
        int,
        typer.Option(
            "--threads", min=1, help="CPU threads for torch. One is fastest for most trees; more helps huge layers."
        ),
    ] = 1,
) -> None:
    if version:
        typer.echo(__version__)
        raise typer.Exit(0)
    import torch

    torch.set_num_threads(threads)


@app.command()
@user_errors
def deal(
    seed: SeedOpt = None,
    count: Annotated[int, typer.Option("--count", min=1, help="How many decks (seeds S, S+1, ...).")] = 1,
    unicode: Annotated[bool, typer.Option("--unicode", help="Cards as '10♦' instead of 'TD'.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Print a seeded (or random) valid deck as one line of 52 cards; a deck file with --count."""

    if seed is None:
        seed = secrets.randbelow(2**31)
        err.print(f"seed {seed}", highlight=False)
    decks = [(f"seed-{seed + i}", random_deck(random.Random(seed + i))) for i in range(count)]
    if as_json:
        typer.echo(json.dumps([{"id": i, "deck": str(d)} for i, d in decks], indent=1))
    else:
        for _, d in decks:
            typer.echo(d.format(unicode=unicode))


@app.command()
@user_errors
def show(
    deck: DeckOpt = None,
    deck_file: DeckFileOpt = None,
    seed: SeedOpt = None,
    deck_id: DeckIdOpt = None,
    ascii_cards: AsciiOpt = False,
) -> None:
    """Render a deck's deal: the initial pool and both hands of every round."""
    nd = one_deck(select_decks(deck, deck_file, seed, deck_id), "show")
    d, u = nd.deck, not ascii_cards
    typer.echo(f"deck {nd.id}: {d}")
    typer.echo(f"pool     {format_cards(d.pool, unicode=u)}")
    for r in range(6):
        alex_hand, bob_hand = format_cards(d.hand(0, r), unicode=u), format_cards(d.hand(1, r), unicode=u)
        typer.echo(f"round {r}  Alex: {alex_hand:<16} Bob: {bob_hand}")
    for p, name in enumerate(("Alex", "Bob")):
        dealt = sum(d.hand_mask(p, r) for r in range(6))
        typer.echo(f"{name} is dealt {clubs_in(dealt)} clubs and {(dealt & JACK_MASK).bit_count()} Jacks")


@app.command()
@user_errors
def play(
    alex: Annotated[str, typer.Option("--alex", help=f"Alex's agent: {', '.join(AGENT_NAMES)}.")] = "greedy",
    bob: Annotated[str, typer.Option("--bob", help=f"Bob's agent: {', '.join(AGENT_NAMES)}.")] = "random",
    deck: DeckOpt = None,
    deck_file: DeckFileOpt = None,
    seed: SeedOpt = None,
    deck_id: DeckIdOpt = None,
    agent_seed: Annotated[int | None, typer.Option("--agent-seed", help="Seed of random agents.")] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the log as a Markdown table.")] = False,
    as_json: JsonOpt = False,
    ascii_cards: AsciiOpt = False,
) -> None:
    """Play one game between two agents (`human` plays at the terminal) and print the log and score."""
    nd = one_deck(select_decks(deck, deck_file, seed, deck_id), "play")
    a = make_agent(alex, seed=agent_seed)
    b = make_agent(bob, seed=None if agent_seed is None else agent_seed + 1)
    for agent in (a, b):
        if isinstance(agent, ExactAgent):  # solve up front, with a spinner, not silently mid-game
            with err.status(f"solving deck {nd.id} for the exact agent"):
                agent.solver(nd.deck).value(GameState.initial(nd.deck))
    show_moves = None
    if "human" in (alex, bob):
        names = {0: f"Alex ({alex})", 1: f"Bob ({bob})"}

        def show_moves(state: GameState, action) -> None:
            typer.echo(f"  -> {names[state.player]}: {action.describe(unicode=not ascii_cards)}")

    try:
        log = play_game(nd.deck, a, b, on_move=show_moves)
    except GameAborted as e:
        err.print(f"game aborted: {e}", highlight=False)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(log.to_json())
    elif markdown:
        typer.echo(log.to_markdown(unicode=not ascii_cards))
    else:
        typer.echo(f"deck {nd.id}: {nd.deck}\nAlex: {alex}, Bob: {bob}\n")
        typer.echo(log.to_text(unicode=not ascii_cards))


@app.command()
@user_errors
def solve(
    deck: DeckOpt = None,
    deck_file: DeckFileOpt = None,
    seed: SeedOpt = None,
    deck_id: DeckIdOpt = None,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="exact: backward induction on the tensor tree; reference: plain-Python memoized minimax; "
            "cfr, cfr+, dcfr, es-mccfr: round-by-round CFR variants.",
        ),
    ] = "exact",
    tree: TreeOpt = "compact",
    device: DeviceOpt = "cpu",
    memory_limit: MemOpt = None,
    iterations: Annotated[
        int | None, typer.Option("--iterations", help="CFR: iterations per round (a cap with a target).")
    ] = None,
    target: Annotated[
        float | None,
        typer.Option("--target-exploitability", help="CFR: stop a round once its exploitability (points) is below."),
    ] = None,
    check_every: Annotated[int, typer.Option("--check-every", help="CFR: measure exploitability every K.")] = 10,
    alpha: Annotated[float, typer.Option("--alpha", help="DCFR: positive regret discount exponent.")] = 1.5,
    beta: Annotated[float, typer.Option("--beta", help="DCFR: negative regret discount exponent.")] = 0.0,
    gamma: Annotated[float, typer.Option("--gamma", help="DCFR: average strategy discount exponent.")] = 2.0,
    updates: Annotated[str, typer.Option("--updates", help="CFR: alternating or simultaneous.")] = "alternating",
    sample_seed: Annotated[int, typer.Option("--sample-seed", help="es-mccfr: seed of the sampling.")] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", help="CFR: folder for strategy.parquet, summary.json, traces.")
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --out folder.")] = False,
    as_json: JsonOpt = False,
    ascii_cards: AsciiOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Solve the open-hand game of a deck: exactly (its value, Alex minus Bob, and an optimal game),
    or with a CFR variant (an approximate equilibrium, its value and exploitability)."""
    if method not in METHODS:
        raise PasurInputError(f"unknown method {method!r} (choose from {', '.join(METHODS)})")
    dev, limit = tree_options(tree, device, memory_limit)
    if method in CFR_METHODS:
        from pasur.solve.cfr import CFRParams

        params = CFRParams(
            method=method,
            iterations=iterations if iterations is not None or target is not None else 1000,
            target_exploitability=target,
            check_every=check_every,
            alpha=alpha,
            beta=beta,
            gamma=gamma,
            updates=updates,
            seed=sample_seed,
        ).check()
        if out is not None and out.exists() and not overwrite:
            raise PasurInputError(f"output folder {out} exists already (choose another --out, or --overwrite)")
        nd = one_deck(select_decks(deck, deck_file, seed, deck_id), "a CFR solve")
        result, info = run_cfr(nd, tree, dev, limit, params, out, overwrite, quiet)
        _print_cfr(nd, tree, dev, params, out, result, info, as_json)
        return
    if out is not None:
        raise PasurInputError("--out goes with the CFR methods (cfr, cfr+, dcfr, es-mccfr)")
    decks = select_decks(deck, deck_file, seed, deck_id)
    results = []
    with progress_display(quiet) as progress:
        overall = progress.add_task("decks", total=len(decks)) if len(decks) > 1 else None
        for nd in decks:
            shown = None if quiet else progress
            if method == "exact":
                results.append(solve_exact_run(nd, tree, dev, limit, shown))
            else:
                results.append(solve_reference(nd, shown))
            if overall is not None:
                progress.advance(overall)
    if as_json:
        out = []
        for r in results:
            log: GameLog = r.pop("log")
            out.append({**r, "optimal_line": json.loads(log.to_json())["actions"], "points": list(log.final.points)})
        typer.echo(json.dumps(out[0] if len(out) == 1 else out, indent=1, ensure_ascii=False))
        return
    for r in results:
        log = r["log"]
        known = "" if r["known_value"] is None else f" (known: {r['known_value']:+g})"
        typer.echo(f"deck {r['id']}: {r['deck']}")
        if r["method"] == "reference":
            how = f"reference: {r['states']:,} states in {r['seconds']:.2f} s"
        else:
            how = (
                f"exact on the {r['tree']} tree ({r['device']}): {r['nodes']:,} nodes, "
                f"{r['tree_bytes'] / 2**20:.1f} MiB, built in {r['build_seconds']:.2f} s, "
                f"solved in {r['solve_seconds']:.2f} s"
            )
        typer.echo(f"exact value (Alex - Bob): {r['value']:+d}{known}   [{how}]\n")
        if len(results) == 1:
            typer.echo("An optimal game (ties broken by the first action in card order):")
            typer.echo(log.to_text(unicode=not ascii_cards))
    mismatched = [r["id"] for r in results if r["known_value"] is not None and r["known_value"] != r["value"]]
    if mismatched:
        err.print(f"error: value differs from the known value for: {', '.join(mismatched)}", highlight=False)
        raise typer.Exit(1)


def _print_cfr(nd: NamedDeck, tree: str, dev, params, out: Path | None, result, info: dict, as_json: bool) -> None:
    exact = info["exact_value"]
    if as_json:
        typer.echo(json.dumps(info, indent=1))
        return
    typer.echo(f"deck {nd.id}: {nd.deck}")
    typer.echo(
        f"{params.method} on the {tree} tree ({dev}), {params.updates} updates, "
        f"{result.seconds:.2f} s; between rounds: {result.value_passed}"
    )
    typer.echo(
        f"value of the average strategy: {info['value']:+.4f}   exact value: {exact:+g}   "
        f"exploitability: {info['exploitability']:.4g} points"
    )
    typer.echo("round  iterations  exploitability (worst root)  mean over roots    nodes   seconds")
    for row in info["rounds"]:
        typer.echo(
            f"{row['round']:>5}  {row['iterations']:>10}  {row['exploitability']:>27.3e}  "
            f"{row['mean_exploitability']:>15.3e}  {row['nodes']:>7,}  {row['seconds']:>8.2f}"
        )
    if out is not None:
        typer.echo(
            f"wrote {out}/strategy.parquet ({info['strategy_rows']:,} rows), summary.json, traces.parquet, "
            "convergence.png"
        )


@app.command()
@user_errors
def selfplay(
    deck: DeckOpt = None,
    deck_file: DeckFileOpt = None,
    seed: SeedOpt = None,
    deck_id: DeckIdOpt = None,
    alex: Annotated[
        str, typer.Option("--alex", help="random, greedy, exact, table[:PATH] or model[:PATH].")
    ] = "greedy",
    bob: Annotated[str, typer.Option("--bob", help="random, greedy, exact, table[:PATH] or model[:PATH].")] = "random",
    model: Annotated[
        Path | None, typer.Option("--model", help="The XGBoost model a bare 'model' agent plays (pasur fit).")
    ] = None,
    table: Annotated[
        Path | None, typer.Option("--table", help="The strategy table a bare 'table' agent plays (pasur solve).")
    ] = None,
    games: Annotated[int, typer.Option("--games", min=1, help="Games played at once.")] = 1000,
    agent_seed: Annotated[int, typer.Option("--agent-seed", help="Seed of the sampling agents.")] = 0,
    device: DeviceOpt = "cpu",
    as_json: JsonOpt = False,
) -> None:
    """Play many games of one deck at once between two agents; print the distribution of Alex's
    points minus Bob's, its mean with a 95 % interval, and win, tie and loss rates."""
    from pasur.play.measures import matchup_measures
    from pasur.cli.runs import batch_agent
    from pasur.play.selfplay import play_batch
    from pasur.common.device import resolve_device

    dev = resolve_device(device)
    alex, bob = (_agent_spec(x, model, table) for x in (alex, bob))
    nd = one_deck(select_decks(deck, deck_file, seed, deck_id), "selfplay")
    trees: dict = {}
    a, tree_a = batch_agent(alex, nd, agent_seed, dev, trees)
    b, tree_b = batch_agent(bob, nd, agent_seed + 1, dev, trees)
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
        f"Alex - Bob: mean {m['mean']:+.3f}, 95% interval [{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}], sd {m['std']:.3f}"
    )
    typer.echo(
        f"Alex wins {m['win_rate']:.1%}, ties {m['tie_rate']:.1%}, loses {m['loss_rate']:.1%} "
        f"(wins with ties counted for Alex, as the paper's code does: {m['win_rate_ties_to_alex']:.1%})"
    )
    dist = "  ".join(f"{v:+d}:{c}" for v, c in sorted(m["distribution"].items()))
    typer.echo(f"distribution: {dist}")


def _agent_spec(spec: str, model: Path | None, table: Path | None) -> str:
    """``model`` and ``table`` name the file given with --model / --table."""
    for name, path, flag in (("model", model, "--model"), ("table", table, "--table")):
        if spec == name:
            if path is None:
                raise PasurInputError(f"the {name} agent needs {flag} PATH (or write {name}:PATH)")
            return f"{name}:{path}"
    return spec


@app.command("tree-stats")
@user_errors
def tree_stats(
    deck: DeckOpt = None,
    deck_file: DeckFileOpt = None,
    seed: SeedOpt = None,
    deck_id: DeckIdOpt = None,
    tree: Annotated[str, typer.Option("--tree", help="compact, paper, or both.")] = "both",
    device: DeviceOpt = "cpu",
    memory_limit: MemOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Build a deck's tree and report nodes per round and turn, bytes held and build time."""
    modes = list(TREES) if tree == "both" else [tree]
    for m in modes:
        dev, limit = tree_options(m, device, memory_limit)
    nd = one_deck(select_decks(deck, deck_file, seed, deck_id), "tree-stats")
    reports = []
    with progress_display(quiet) as progress:
        for m in modes:
            built = build(nd, m, dev, limit, None if quiet else progress)
            reports.append(
                {
                    "id": nd.id,
                    "tree": m,
                    "device": str(dev),
                    "nodes": built.n_nodes,
                    "bytes": built.nbytes(),
                    "build_seconds": round(built.seconds, 4),
                    "layers": built.node_counts(),
                }
            )
    if as_json:
        typer.echo(json.dumps(reports[0] if len(reports) == 1 else reports, indent=1))
        return
    typer.echo(f"deck {nd.id}: {nd.deck}")
    header = "round " + " ".join(f"{'turn ' + str(t):>11}" for t in range(9)) + "        total"
    for rep in reports:
        typer.echo(
            f"\n{rep['tree']} tree on {rep['device']}: {rep['nodes']:,} nodes, "
            f"{rep['bytes'] / 2**20:.1f} MiB, built in {rep['build_seconds']:.2f} s"
        )
        typer.echo(header)
        by_round: dict[int, dict[int, int]] = {}
        for row in rep["layers"]:
            by_round.setdefault(row["round"], {})[row["turn"]] = row["nodes"]
        for r, turns in by_round.items():
            cells = " ".join(f"{turns[t]:>11,}" if t in turns else f"{'':>11}" for t in range(9))
            typer.echo(f"{r:<5} {cells} {sum(turns.values()):>12,}")
    if len(reports) == 2:
        a, b = reports
        typer.echo(f"\n{a['tree']} / {b['tree']}: {a['nodes'] / b['nodes']:.3f} of the nodes")


cli_sweep.register(app)
cli_models.register(app)


def main() -> None:
    app()
