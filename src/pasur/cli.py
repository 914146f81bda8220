"""The ``pasur`` command line: deal, show, play and solve.

User mistakes (bad cards, decks, files, options) end with a one-line ``error: ...``
on stderr and exit code 2; results go to stdout, progress to stderr.
"""

from __future__ import annotations

import functools
import json
import secrets
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from pasur import __version__
from pasur.agents import AGENT_NAMES, ExactAgent, GameAborted, make_agent, play_game
from pasur.cards import JACK_MASK, NamedDeck, clubs_in, format_cards, parse_deck, random_deck, read_deck_file
from pasur.errors import PasurInputError
from pasur.gamelog import GameLog
from pasur.reference import ReferenceSolver
from pasur.state import GameState

app = typer.Typer(
    name="pasur",
    help="Solve and play the card game Pasur (two players, open hands).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)

CFR_METHODS = ("cfr", "cfr+", "dcfr", "es-mccfr")
METHODS = ("exact", "reference", *CFR_METHODS)
TREES = ("compact", "paper")

DeckOpt = Annotated[str | None, typer.Option("--deck", help="A deck: 52 cards such as 'TD 5S QC ...'.")]
DeckFileOpt = Annotated[
    Path | None, typer.Option("--deck-file", help="A file of decks: one per line, or JSON (list of strings/objects).")
]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="Deal a random valid deck from this seed.")]
DeckIdOpt = Annotated[str | None, typer.Option("--deck-id", help="With --deck-file: only the deck with this id.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a machine-readable JSON summary instead of tables.")]
AsciiOpt = Annotated[bool, typer.Option("--ascii", help="Cards as 'TD' instead of '10♦'.")]
TreeOpt = Annotated[str, typer.Option("--tree", help="Tree mode: compact (lossless state merging) or paper.")]
DeviceOpt = Annotated[str, typer.Option("--device", help="Torch device: cpu, cuda, cuda:N or auto.")]
MemOpt = Annotated[
    float | None, typer.Option("--memory-limit", help="GiB the tree may use (default: what the device has free).")
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")]


def _tree_options(tree: str, device: str, memory_limit: float | None):
    from pasur.tensor.device import resolve_device

    if tree not in TREES:
        raise PasurInputError(f"unknown tree mode {tree!r} (choose from {', '.join(TREES)})")
    if memory_limit is not None and memory_limit <= 0:
        raise PasurInputError(f"--memory-limit must be positive, got {memory_limit}")
    limit = None if memory_limit is None else int(memory_limit * 2**30)
    return resolve_device(device), limit


def _build(nd: NamedDeck, tree: str, dev, limit, progress: Progress | None, infosets: bool = False):
    from pasur.tensor.tree import build_tree

    task = None
    callback = None
    if progress is not None:
        task = progress.add_task(f"building the {tree} tree of {nd.id}", total=None)

        def callback(r: int, t: int, n: int) -> None:
            progress.update(task, description=f"building the {tree} tree of {nd.id}: round {r} turn {t}, {n:,} nodes")

    built = build_tree(GameState.initial(nd.deck), tree, dev, infosets=infosets, memory_limit=limit, progress=callback)
    if task is not None:
        progress.remove_task(task)
    return built


def fail(message: str) -> typer.Exit:
    err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(2)


def user_errors(fn):
    """Turn :class:`PasurInputError` into a one-line message and exit code 2, and running out of
    (GPU) memory into a one-line message and exit code 3."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import torch

        try:
            return fn(*args, **kwargs)
        except PasurInputError as e:
            raise fail(str(e)) from None
        except (torch.OutOfMemoryError, MemoryError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            err.print(
                f"error: out of memory ({first}); try --tree compact or a smaller --memory-limit",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(3) from None

    return wrapper


def select_decks(deck: str | None, deck_file: Path | None, seed: int | None, deck_id: str | None) -> list[NamedDeck]:
    """The decks named by the common options; exactly one source, else a random seed (printed)."""
    given = [n for n, v in (("--deck", deck), ("--deck-file", deck_file), ("--seed", seed)) if v is not None]
    if len(given) > 1:
        raise PasurInputError(f"give only one of {', '.join(given)}")
    if deck_id is not None and deck_file is None:
        raise PasurInputError("--deck-id goes with --deck-file")
    if deck is not None:
        return [NamedDeck("deck", parse_deck(deck))]
    if deck_file is not None:
        decks = read_deck_file(deck_file)
        if deck_id is not None:
            decks = [d for d in decks if d.id == deck_id]
            if not decks:
                raise PasurInputError(f"no deck with id {deck_id!r} in {deck_file}")
        return decks
    if seed is None:
        seed = secrets.randbelow(2**31)
        err.print(f"dealing a random deck (seed {seed})", highlight=False)
    import random

    return [NamedDeck(f"seed-{seed}", random_deck(random.Random(seed)))]


def one_deck(decks: list[NamedDeck], what: str) -> NamedDeck:
    if len(decks) != 1:
        raise PasurInputError(f"{what} takes one deck; the file holds {len(decks)} (pick one with --deck-id)")
    return decks[0]


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
    import random

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


def _solve_reference(nd: NamedDeck, progress: Progress | None) -> dict:
    solver = ReferenceSolver(nd.deck)
    task = None
    if progress is not None:
        task = progress.add_task(f"solving {nd.id}", total=None)
        solver.on_progress = lambda n: progress.update(task, description=f"solving {nd.id}: {n:,} states")
    t0 = time.perf_counter()
    start = GameState.initial(nd.deck)
    value = solver.value(start)
    seconds = time.perf_counter() - t0
    if progress is not None and task is not None:
        progress.remove_task(task)
    line = solver.optimal_line(start)
    return {
        "id": nd.id,
        "deck": str(nd.deck),
        "method": "reference",
        "value": value,
        "known_value": nd.value,
        "states": solver.n_states,
        "seconds": round(seconds, 4),
        "log": GameLog(nd.deck, tuple(line)),
    }


def _solve_exact(nd: NamedDeck, tree: str, dev, limit, progress: Progress | None) -> dict:
    from pasur.tensor.exact import optimal_line, solve_exact

    t0 = time.perf_counter()
    built = _build(nd, tree, dev, limit, progress)
    t1 = time.perf_counter()
    solution = solve_exact(built, keep_values=False)
    value = solution.game_value()  # (a float: waits for the device)
    t2 = time.perf_counter()
    line = optimal_line(solution)
    return {
        "id": nd.id,
        "deck": str(nd.deck),
        "method": "exact",
        "tree": tree,
        "device": str(dev),
        "value": int(value),
        "known_value": nd.value,
        "nodes": built.n_nodes,
        "tree_bytes": built.nbytes(),
        "build_seconds": round(t1 - t0, 4),
        "solve_seconds": round(t2 - t1, 4),
        "seconds": round(t2 - t0, 4),
        "log": GameLog(nd.deck, tuple(line)),
    }


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
    dev, limit = _tree_options(tree, device, memory_limit)
    if method in CFR_METHODS:
        from pasur.tensor.cfr import CFRParams

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
        _solve_cfr(nd, tree, dev, limit, params, out, overwrite, as_json, quiet)
        return
    if out is not None:
        raise PasurInputError("--out goes with the CFR methods (cfr, cfr+, dcfr, es-mccfr)")
    decks = select_decks(deck, deck_file, seed, deck_id)
    results = []
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=quiet,
    ) as progress:
        overall = progress.add_task("decks", total=len(decks)) if len(decks) > 1 else None
        for nd in decks:
            shown = None if quiet else progress
            if method == "exact":
                results.append(_solve_exact(nd, tree, dev, limit, shown))
            else:
                results.append(_solve_reference(nd, shown))
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


def _solve_cfr(nd: NamedDeck, tree: str, dev, limit, params, out: Path | None, overwrite, as_json, quiet) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn

    from pasur.atomic import atomic_dir
    from pasur.tensor.cfr import solve_cfr
    from pasur.tensor.exact import solve_exact

    cap = params.iterations if params.iterations is not None else params.max_iterations
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True, disable=quiet) as progress:
        built = _build(nd, tree, dev, limit, None if quiet else progress, infosets=out is not None)
        tasks: dict[int, int] = {}

        def on_iteration(r: int, it: int, expl: float | None) -> None:
            if r not in tasks:
                tasks[r] = progress.add_task(f"round {r}", total=cap)
            desc = f"round {r}" + ("" if expl is None else f": exploitability {expl:.2e}")
            progress.update(tasks[r], completed=it, **({"description": desc} if expl is not None else {}))

        result = solve_cfr(built, params, dev, progress=on_iteration)
        exact = solve_exact(built, keep_values=False).game_value()
        info = None
        if out is not None:
            from pasur.tensor.cfr_io import write_outputs

            progress.add_task(f"writing {out}", total=None)
            with atomic_dir(out, overwrite=overwrite) as tmp:
                info = write_outputs(tmp, result, nd.id, str(dev))
                info["exact_value"] = exact
                (tmp / "summary.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    if info is None:
        from pasur.tensor.cfr_io import summary

        info = summary(result, nd.id, str(dev), None)
        info["exact_value"] = exact
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
        dev, limit = _tree_options(m, device, memory_limit)
    nd = one_deck(select_decks(deck, deck_file, seed, deck_id), "tree-stats")
    reports = []
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=quiet,
    ) as progress:
        for m in modes:
            built = _build(nd, m, dev, limit, None if quiet else progress)
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


def main() -> None:
    app()
