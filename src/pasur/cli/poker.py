"""``pasur poker ...``: the poker benchmark games (Kuhn, Leduc, 5-Leduc, Numeral211 hold'em).

``games`` lists the presets with their sizes, ``info`` details one, ``solve`` runs a CFR variant
(strategy, summary, trace and plot into ``--out``), ``eval`` measures a strategy file (ours or
OpenSpiel's) exactly. Mounted on the root app as the ``poker`` group.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn

from pasur.cli.common import (
    ALPHA_DEFAULTS,
    AddressOpt,
    DeviceOpt,
    JsonOpt,
    OverwriteOpt,
    QuietOpt,
    command,
    progress_display,
    refuse_unless,
)
from pasur.common import cfr_methods
from pasur.common.errors import PasurInputError

poker_app = typer.Typer(
    name="poker",
    help="Poker benchmark games: Kuhn, Leduc, 5-Leduc, Numeral211 hold'em; CFR family, exact best response.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

GameOpt = Annotated[str, typer.Option("--game", help="A preset: see `pasur poker games`.", show_default=False)]
AbstractionOpt = Annotated[
    str | None,
    typer.Option(
        "--abstraction",
        help="Buckets per round, comma separated: iso (lossless suit classes), ehs:K (hand-strength quantiles), "
        "strength (suit classes of equal strength: the Embedding CFR paper's classes; strength:shares and "
        "strength:tensor are other readings) or lossless; e.g. iso,ehs:225,ehs:396; strength alone stands for "
        "every round. Default: lossless.",
    ),
]
IsoOpt = Annotated[
    bool | None,
    typer.Option(
        "--iso/--no-iso", help="List one board per suit-isomorphism class (default: when boards have 2+ cards)."
    ),
]


def _method_help() -> str:
    """--method's help: each method with the parameters it runs with by default."""
    a, g = cfr_methods.DCFR_DEFAULTS[0], cfr_methods.DCFR_DEFAULTS[2]
    b = cfr_methods.DCFR_DEFAULTS[1]
    pred = {m: cfr_methods.default_parameters(m) for m in cfr_methods.PREDICTIVE}
    return (
        f"{', '.join(cfr_methods.METHODS)} (alpha {a:g}, beta {b:g}, gamma {g:g}), the predictive pcfr+ "
        f"(gamma {pred['pcfr+'][1]:g}), pdcfr+ (alpha {pred['pdcfr+'][0]:g}, gamma {pred['pdcfr+'][1]:g}) and "
        f"sapcfr+ (gamma {pred['sapcfr+'][1]:g}), or the scheduled {' and '.join(sorted(cfr_methods.SCHEDULED))} "
        f"(Zhang et al. 2026's HS({cfr_methods.HS_GAMMA0:g}): gamma from {cfr_methods.HS_GAMMA0:g} to "
        f"{cfr_methods.HS_GAMMA0 - cfr_methods.HS_GAMMA_DROP:g} over --iterations, which they need)."
    )


_METHOD_HELP = _method_help()
DtypeOpt = Annotated[str, typer.Option("--dtype", help="float64 (default; exact) or float32 (faster, for big games).")]


def _one_of(argument, option, what: str, arg_name: str, opt_name: str):
    """A value that may be given as the argument or as the option, not both and not neither."""
    if argument is not None and option is not None:
        raise PasurInputError(f"give {what} once: as {arg_name} or as {opt_name}, not both")
    if argument is None and option is None:
        raise PasurInputError(f"give {what}: {arg_name} or {opt_name}")
    return argument if argument is not None else option


def _chips(x: float) -> str:
    return f"{x:g} chip" + ("" if x == 1 else "s")


def _game(name: str):
    from pasur.poker.games import get_game

    return get_game(name)


def _engine(game, iso, device, dtype):
    import torch

    from pasur.common.device import resolve_device
    from pasur.poker.engine import Engine

    if dtype not in ("float64", "float32"):
        raise PasurInputError(f"--dtype must be float64 or float32, not {dtype!r}")
    return Engine(game, iso=iso, device=resolve_device(device or "cpu"), dtype=getattr(torch, dtype))


def _iso_default(game) -> bool:
    """The engine's default: list one board per suit-isomorphism class when boards have 2+ cards."""
    return sum(game.board_cards) >= 2 and game.n_suits > 1


def _memory_limit(gib_given: float | None, device) -> int:
    """Bytes a solve may take: ``--memory-limit`` GiB, or 90 % of what the device has free."""
    from pasur.common.device import resolve_device
    from pasur.common.memory import available_bytes

    if gib_given is not None:
        return int(gib_given * 2**30)
    return int(0.9 * available_bytes(resolve_device(device or "cpu")))


def _refuse_unless_fits(game, iso, n_keys, itemsize, limit, given, abstraction=None) -> None:
    """One line naming what would fit when the solve's estimate (:func:`pasur.poker.sizes.solve_estimate`)
    is over ``limit``."""
    from pasur.common.memory import gib
    from pasur.poker.sizes import solve_estimate

    need = solve_estimate(game, iso=iso, n_keys=n_keys, itemsize=itemsize)
    if need <= limit:
        return
    what = "lossless" if abstraction is None else f"with --abstraction {abstraction}"
    dtype = "float64" if itemsize == 8 else "float32"
    hints = []
    if itemsize == 8:
        half = solve_estimate(game, iso=iso, n_keys=n_keys, itemsize=4)
        hints.append(f"--dtype float32 needs about {gib(half)}{'' if half <= limit else ' (too)'}")
    if not iso and game.n_suits > 1:
        hints.append("--iso lists one board per suit class")
    if abstraction is None:
        hints.append("--abstraction stores far less (e.g. iso,ehs:225,ehs:396 for numeral211)")
    source = "--memory-limit" if given else "90 % of the free memory"
    raise PasurInputError(
        f"solving {game.name} {what} in {dtype} needs about {gib(need)}, over {gib(limit)} ({source}); "
        + "; ".join(hints)
    )


def _keying(engine, spec):
    from pasur.poker.abstraction import abstraction

    return None if spec is None else abstraction(engine, spec)


@command(poker_app)
def games(as_json: JsonOpt = False) -> None:
    """List the preset games with their sizes."""
    from pasur.poker.games import PRESETS
    from pasur.poker.sizes import game_info, human_bytes

    rows = [game_info(g) for g in PRESETS.values()]
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    typer.echo(
        f"{'game':<16} {'cards':>5} {'rounds':>6} {'infosets':>13} {'public nodes':>13}  {'hands per round':<28} solve"
    )
    for i in rows:
        hands = " / ".join(f"{h:,}" for h in i["hands_per_round"])
        typer.echo(
            f"{i['game']:<16} {i['cards']:>5} {i['rounds']:>6} {i['infosets_total']:>13,} {i['public_nodes']:>13,}  "
            f"{hands:<28} {human_bytes(i['solve_bytes'])}"
        )
    for i in rows:
        typer.echo(f"  {i['game']}: {i['description']}")


@command(poker_app)
def info(
    game: Annotated[
        str | None, typer.Argument(help="A preset: see `pasur poker games` (or --game).", show_default=False)
    ] = None,
    game_opt: Annotated[
        str | None, typer.Option("--game", help="The preset, as `pasur poker solve` takes it.", show_default=False)
    ] = None,
    as_json: JsonOpt = False,
    iso: IsoOpt = None,
    abstraction: AbstractionOpt = None,
) -> None:
    """Sizes of one game: information sets per player, public nodes, hands per round, and the
    memory a solve needs (lossless, or with --abstraction)."""
    game = _one_of(game, game_opt, "the game", "GAME", "--game")
    import dataclasses

    from pasur.poker.sizes import game_info, human_bytes

    g = _game(game)
    n_keys = None
    if abstraction is not None:
        engine = _engine(g, iso, "cpu", "float64")
        n_keys = _keying(engine, abstraction).n_keys
        iso = engine.iso
    i = game_info(g, iso=iso, n_keys=n_keys)
    i["rules"] = {k: v for k, v in dataclasses.asdict(g).items() if k not in ("name", "description")}
    i["rules"]["big_blind"] = g.blind  # chips: the unit of mb/g (docs/conventions.md)
    if abstraction is not None:
        i["abstraction"] = {"spec": abstraction, "keys_per_round": n_keys}
    if as_json:
        typer.echo(json.dumps(i, indent=1))
        return
    typer.echo(f"{g.name}: {g.description}")
    r = i["rules"]
    typer.echo(
        f"  deck {g.n_cards} cards ({g.ranks} x {g.suits}), {g.hole_cards} private card(s) each, "
        f"board cards per round {list(g.board_cards)}, ante {g.ante}, bets {list(r['bet_sizes'])}, "
        f"at most {list(r['max_bets'])} bets+raises, "
        f"first to act {list(r['first_player'])}, fold without a bet: {'yes' if g.fold_without_bet else 'no'}; "
        f"big blind (the unit of mb/g) {_chips(g.blind)}"
    )
    typer.echo(f"  information sets: {i['infosets'][0]:,} (player 0), {i['infosets'][1]:,} (player 1)")
    typer.echo(
        f"  public nodes: {i['public_nodes']:,} ({i['public_decision_nodes']:,} decisions); "
        f"betting sequences: {i['betting_sequences']:,}"
    )
    typer.echo("  (board, hand) pairs per round: " + " / ".join(f"{h:,}" for h in i["hands_per_round"]))
    listed = " / ".join(f"{b:,}" for b in i["listed_boards_per_round"])
    typer.echo(f"  boards listed per round: {listed} (suit isomorphism {'on' if i['suit_isomorphism'] else 'off'})")
    if abstraction:
        typer.echo(f"  classes per round ({abstraction}): " + " / ".join(f"{k:,}" for k in n_keys))
    what = f"abstraction {abstraction} ({n_keys} keys)" if abstraction else "lossless"
    typer.echo(f"  a solve ({what}) needs about {human_bytes(i['solve_bytes'])}")
    if g.openspiel:
        typer.echo(f"  OpenSpiel: {g.openspiel}")


_MethodOpt = Annotated[str, typer.Option("--method", help=_METHOD_HELP)]
_IterationsOpt = Annotated[
    int | None, typer.Option("--iterations", min=1, max=100_000_000, help="Iterations (with a target: the cap).")
]
_TargetOpt = Annotated[
    float | None,
    typer.Option(
        "--target-exploitability",
        help=(
            "Stop once exploitability (chips per game) is at most this; exploitability = NashConv / 2, "
            "the mean of both players' best-response gains, as in OpenSpiel and pasur solve "
            "(docs/conventions.md)."
        ),
    ),
]
_CheckEveryOpt = Annotated[
    int,
    typer.Option(
        "--check-every", min=1, max=10_000_000, help="Measure exploitability (NashConv / 2) every K iterations."
    ),
]
_UpdatesOpt = Annotated[str, typer.Option("--updates", help="alternating (OpenSpiel's) or simultaneous.")]
_AlphaOpt = Annotated[
    float | None,
    typer.Option("--alpha", help=f"DCFR, PDCFR+: positive regret discount exponent {ALPHA_DEFAULTS}."),
]
_BetaOpt = Annotated[float, typer.Option("--beta", help="DCFR: negative regret discount exponent.")]
_GammaOpt = Annotated[
    float | None,
    typer.Option(
        "--gamma",
        help="DCFR and the predictive variants: the average's weight t^gamma; hs-dcfr, hs-pcfr+: its start "
        f"({cfr_methods.HS_GAMMA0:g}).",
    ),
]
_MemoryLimitOpt = Annotated[
    float | None,
    typer.Option(
        "--memory-limit",
        help="GiB the solve may take (default: 90 % of what the device has free); a larger estimate is refused.",
    ),
]
_SolveOutOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Folder for strategy.parquet, summary.json, trace.parquet, convergence.png."),
]


@command(poker_app)
def solve(
    game: GameOpt,
    method: _MethodOpt = "cfr+",
    iterations: _IterationsOpt = None,
    target_exploitability: _TargetOpt = None,
    check_every: _CheckEveryOpt = 100,
    updates: _UpdatesOpt = "alternating",
    alpha: _AlphaOpt = None,
    beta: _BetaOpt = 0.0,
    gamma: _GammaOpt = None,
    abstraction: AbstractionOpt = None,
    iso: IsoOpt = None,
    device: DeviceOpt = None,
    dtype: DtypeOpt = "float64",
    memory_limit: _MemoryLimitOpt = None,
    out: _SolveOutOpt = None,
    overwrite: OverwriteOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Solve a game with a CFR variant; report the average strategy's value, NashConv and
    exploitability = NashConv / 2 (exact best responses in the real game; chips per game and
    mb/g, 1000 x chips / the game's big blind: docs/conventions.md)."""
    from pasur.poker.solvers import CFRConfig

    g = _game(game)
    scheduled = method in cfr_methods.SCHEDULED  # their schedules run over --iterations
    cfg = CFRConfig(
        method=method, updates=updates, alpha=alpha, beta=beta, gamma=gamma, horizon=iterations if scheduled else None
    )
    _check_solve(method, iterations, target_exploitability, out, overwrite, memory_limit)
    engine, keying = _solve_engine(g, iso, device, dtype, abstraction, memory_limit)
    cap = iterations if iterations is not None else 100_000
    result = _run_solve(engine, cfg, f"{method} on {g.name}", cap, target_exploitability, check_every, keying, quiet)
    summary = {
        **result.summary(),
        "big_blind": g.blind,
        "exploitability_mbg": g.mbg(result.exploitability),
        "units": "chips per game; mb/g = 1000 x chips per game / big_blind; exploitability = nash_conv / 2",
        "abstraction": abstraction or "lossless",
        "device": str(engine.device),
        "dtype": dtype,
        "suit_isomorphism": engine.iso,
    }
    if out is not None:
        _write_outputs(out, overwrite, engine, result, summary)
        summary["out"] = str(out)
    if as_json:
        typer.echo(json.dumps(summary, indent=1))
        return
    typer.echo(
        f"{g.name}: {method} ({updates} updates, {result.backend} path), {result.iterations:,} iterations in "
        f"{result.seconds:.2f} s"
    )
    typer.echo(
        f"value (player 0): {result.value:+.7f}   exploitability: {result.exploitability:.3e}   "
        f"NashConv: {result.nash_conv:.3e}  (chips per game; exploitability = NashConv / 2 = "
        f"{g.mbg(result.exploitability):.1f} mb/g, 1 big blind = {_chips(g.blind)})"
    )
    if out is not None:
        extra = ", policy.openspiel.json" if g.openspiel and not engine.iso and keying is None else ""
        typer.echo(f"wrote {out}/strategy.parquet, summary.json, trace.parquet, convergence.png{extra}")


def _check_solve(
    method: str,
    iterations: int | None,
    target_exploitability: float | None,
    out: Path | None,
    overwrite: bool,
    memory_limit: float | None,
) -> None:
    """Refuse the options of ``poker solve`` that do not apply to ``method`` or are out of range,
    and an output folder that cannot be written, before any work."""
    from pasur.common.outputs import check_output_dir

    takes = cfr_methods.PARAMETER_METHODS
    refuse_unless(method in takes["alpha"], ["alpha"], f"to --method {' or '.join(takes['alpha'])}")
    refuse_unless(method in takes["beta"], ["beta"], f"to --method {' or '.join(takes['beta'])}")
    refuse_unless(method in takes["gamma"], ["gamma"], "to --method dcfr, the predictive and the scheduled ones")
    refuse_unless(out is not None, ["overwrite"], "with --out")
    if iterations is None and target_exploitability is None:
        raise PasurInputError("give --iterations N, --target-exploitability E, or both")
    if target_exploitability is not None and not (target_exploitability > 0 and math.isfinite(target_exploitability)):
        raise PasurInputError(f"--target-exploitability must be a positive number, got {target_exploitability}")
    if out is not None:
        check_output_dir(out, overwrite=overwrite)
    if memory_limit is not None and not (memory_limit > 0 and math.isfinite(memory_limit)):
        raise PasurInputError(f"--memory-limit must be a positive number of GiB, got {memory_limit}")


def _solve_engine(g, iso: bool | None, device: str | None, dtype: str, abstraction: str | None, memory_limit):
    """The engine and keying of a solve, each refused first if its solve would not fit in memory."""
    itemsize = 8 if dtype == "float64" else 4
    iso_used = _iso_default(g) if iso is None else iso
    # lossless: the estimate needs only the game, so a solve that cannot fit is refused before the
    # engine's tables are built (on Numeral211 they alone take gigabytes)
    limit = _memory_limit(memory_limit, device)
    if abstraction is None:
        _refuse_unless_fits(g, iso_used, None, itemsize, limit, memory_limit is not None)
    engine = _engine(g, iso, device, dtype)
    keying = _keying(engine, abstraction)
    if keying is not None:
        _refuse_unless_fits(g, engine.iso, keying.n_keys, itemsize, limit, memory_limit is not None, abstraction)
    return engine, keying


def _run_solve(engine, cfg, label: str, cap: int, target: float | None, check_every: int, keying, quiet: bool):
    """The solve (:func:`pasur.poker.run.solve`) with a progress bar of its iterations and last measure."""
    from pasur.poker.run import solve as run

    with progress_display(quiet, BarColumn(), MofNCompleteColumn()) as progress:
        task = progress.add_task(label, total=cap)

        def on_check(done: int, expl: float | None) -> None:
            if expl is None:  # an iteration done, no measure yet
                progress.update(task, completed=done)
                return
            progress.update(task, completed=done, description=f"{label}: exploitability {expl:.3e}")

        return run(
            engine,
            cfg,
            iterations=cap,
            target_exploitability=target,
            check_every=check_every,
            keying=keying,
            progress=on_check,
        )


def _write_outputs(out: Path, overwrite: bool, engine, result, summary: dict) -> None:
    from pasur.common.outputs import output_dir
    from pasur.poker.openspiel import export_policy
    from pasur.poker.strategy_io import plot_trace, write_openspiel, write_strategy, write_summary, write_trace

    with output_dir(out, overwrite=overwrite) as tmp:
        summary["strategy_rows"] = write_strategy(tmp / "strategy.parquet", engine, result.policy)
        write_trace(tmp / "trace.parquet", result.trace)
        plot_trace(tmp / "convergence.png", result.trace, f"{summary['method']} on {summary['game']}")
        if engine.game.openspiel and not engine.iso and result.policy.keying.lossless:
            write_openspiel(tmp / "policy.openspiel.json", engine, export_policy(engine, result.policy))
        write_summary(tmp / "summary.json", summary)


@command(poker_app, "eval")
def evaluate_file(
    strategy: Annotated[
        Path | None,
        typer.Argument(help="A strategy: our Parquet, or an OpenSpiel policy (.json/.parquet); or --strategy."),
    ] = None,
    game: GameOpt = None,
    strategy_opt: Annotated[
        Path | None, typer.Option("--strategy", help="The strategy file, as an option.", show_default=False)
    ] = None,
    abstraction: AbstractionOpt = None,
    iso: IsoOpt = None,
    device: DeviceOpt = None,
    dtype: DtypeOpt = "float64",
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Exploitability (NashConv / 2), NashConv, value and best-response values of a strategy file
    (chips per game, and mb/g: docs/conventions.md)."""
    strategy = _one_of(strategy, strategy_opt, "the strategy file", "FILE", "--strategy")
    if game is None:
        raise PasurInputError("give the game: --game NAME (see `pasur poker games`)")
    from pasur.poker.measures import evaluate
    from pasur.poker.openspiel import import_policy
    from pasur.poker.strategy_io import is_openspiel_file, read_metadata, read_openspiel, read_strategy

    if not strategy.is_file():
        raise PasurInputError(f"strategy file {strategy} not found")
    g = _game(game)
    openspiel = is_openspiel_file(strategy)
    if openspiel:
        if not g.openspiel:
            raise PasurInputError(f"{strategy} is an OpenSpiel policy; game {g.name!r} has no OpenSpiel counterpart")
        refuse_unless(False, ["abstraction"], "to our strategy files")
        if iso:
            raise PasurInputError("an OpenSpiel policy lists every board: --iso does not apply")
        engine = _engine(g, False, device, dtype)
        name, table = read_openspiel(strategy)
        if name is not None and name != g.openspiel:
            raise PasurInputError(f"{strategy} is a policy for {name}, not {g.openspiel}")
        policy = import_policy(engine, table)
    else:
        meta = read_metadata(strategy)
        if iso is None and "pasur.poker.iso" in meta:
            iso = meta["pasur.poker.iso"] == "true"
        engine = _engine(g, iso, device, dtype)
        policy = read_strategy(strategy, engine, _keying(engine, abstraction))
    with progress_display(quiet) as progress:
        task = progress.add_task(f"best responses in {g.name}", total=None)
        ev = evaluate(engine, policy)
        progress.remove_task(task)
    result = {
        "game": g.name,
        "strategy": str(strategy),
        "format": "openspiel" if openspiel else "pasur",
        **ev.as_dict(),
        "big_blind": g.blind,
        "exploitability_mbg": g.mbg(ev.exploitability),
    }
    if as_json:
        typer.echo(json.dumps(result, indent=1))
        return
    typer.echo(f"{g.name}: {strategy} ({result['format']})")
    typer.echo(
        f"value (player 0): {ev.value:+.7f}   best responses: {ev.br_values[0]:+.7f} / {ev.br_values[1]:+.7f}\n"
        f"NashConv: {ev.nash_conv:.6e}   exploitability: {ev.exploitability:.6e}  (chips per game; "
        f"exploitability = NashConv / 2 = {g.mbg(ev.exploitability):.1f} mb/g, 1 big blind = {_chips(g.blind)})"
    )


_ExpWorkersOpt = Annotated[
    int,
    typer.Option(
        "--workers", min=1, max=4096, help="Methods or runs at once (worker processes, or the CPUs of a local Ray)."
    ),
]
_ExpEngineOpt = Annotated[
    str,
    typer.Option(
        "--engine",
        help="local (in turn, or --workers processes) or ray (each method a Ray task: Ray here, or the cluster "
        "at --address, with --out on a filesystem every node mounts).",
    ),
]
_ExpSampleSeedOpt = Annotated[int, typer.Option("--sample-seed", min=0, help="Seed of everything sampled.")]
_ExpConfigsOpt = Annotated[
    int | None,
    typer.Option("--configs", help="figure5: configurations per baseline family, 1 to 3 (default 3)."),
]
_ExpClassesOpt = Annotated[
    str | None,
    typer.Option(
        "--classes",
        help="figure5: the class space, iso (suit-isomorphism classes, default) or strength (the paper's "
        "classes of equal hand strength, 100 / 2,250 / 3,957 on numeral211).",
    ),
]
_ExpDtypeOpt = Annotated[
    str | None,
    typer.Option("--dtype", help="lossless: float32 (default; half the memory) or float64 (the core's iterates)."),
]
_ExpUpdatesOpt = Annotated[
    str | None,
    typer.Option(
        "--updates",
        help="lossless: alternating (default; player 0's rows, then player 1's) or simultaneous (both players "
        "from one traversal, as vanilla CFR and Figure 5 run).",
    ),
]
_ExpPhiOpt = Annotated[
    str | None,
    typer.Option(
        "--phi",
        help="figure5: Embedding CFR's Phi, handnet (HandEbdNet's, the paper's; default) or BASELINE:softTAU, "
        "a soft assignment around a baseline's buckets (e.g. krwemd-1:soft0.3; ehs-N or krwemd-N).",
    ),
]
_ExpMethodsOpt = Annotated[
    str | None,
    typer.Option(
        "--methods",
        help="bufp-convergence, bufp-total: the methods, comma-separated (default cfr,bufp-x,bufp-ef,xfp; "
        "also bufp-authors, bufp-authors-c10: BUFP as its authors' code runs it); bufp-crossplay: the same "
        "names (default cfr,bufp-ef,bufp-x; cfr and bufp-ef required); lossless: CFR methods (default dcfr; "
        f"{', '.join((*cfr_methods.METHODS, *cfr_methods.PREDICTIVE))}).",
    ),
]


@command(poker_app)
def experiment(
    name: Annotated[
        str, typer.Argument(help="The experiment: see `pasur poker experiment --list`.", show_default=False)
    ] = "",
    game: GameOpt = "",
    iterations: Annotated[int, typer.Option("--iterations", min=1, max=10_000_000, help="Iterations to run.")] = 1000,
    out: Annotated[Path | None, typer.Option("--out", help="Folder of the outputs (created; rerun to resume).")] = None,
    workers: _ExpWorkersOpt = 1,
    engine: _ExpEngineOpt = "local",
    address: AddressOpt = None,
    sample_seed: _ExpSampleSeedOpt = 0,
    configs: _ExpConfigsOpt = None,
    classes: _ExpClassesOpt = None,
    dtype: _ExpDtypeOpt = None,
    updates: _ExpUpdatesOpt = None,
    phi: _ExpPhiOpt = None,
    device: DeviceOpt = None,
    methods: _ExpMethodsOpt = None,
    listing: Annotated[bool, typer.Option("--list", help="List the experiments and exit.")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Run one of the poker papers' experiments (BUFP, Embedding CFR): PNG, CSV and Markdown into
    --out, resumable; prints its tables. Exploitability is NashConv / 2, in chips per game or mb/g
    (1000 x chips per game / the game's big blind; docs/conventions.md)."""
    from pasur.common.device import resolve_device
    from pasur.common.outputs import prepare_resumable_dir
    from pasur.common.raytasks import check_engine
    from pasur.poker import experiments as ex
    from pasur.poker.experiments.checkpoints import ENGINES

    if listing:
        for n in ex.names():
            typer.echo(f"{n:<24} {ex.get(n).help}")
        return
    if not name:
        raise PasurInputError(f"name an experiment ({', '.join(ex.names()) or 'none yet'}), or --list")
    spec = ex.get(name)
    if not game:
        raise PasurInputError("give the game: --game NAME (see `pasur poker games`)")
    if out is None:
        raise PasurInputError("give the output folder: --out DIR")
    options = {
        k: v
        for k, v in (
            ("configs", configs),
            ("classes", classes),
            ("phi", phi),
            ("methods", methods),
            ("dtype", dtype),
            ("updates", updates),
        )
        if v is not None
    }
    spec.check_options(options)  # refused here, before any folder is made
    check_engine(engine, address, ENGINES)
    device = str(resolve_device(device or "cpu"))  # auto made concrete; CUDA that torch cannot see refused
    _game(game)
    prepare_resumable_dir(out, list(spec.outputs))
    with progress_display(quiet, BarColumn(), MofNCompleteColumn()) as progress:
        task = progress.add_task(name, total=None)

        def report(done: int, total: int, note: str) -> None:
            progress.update(task, completed=done, total=total, description=f"{name}: {note}" if note else name)

        run = ex.ExperimentRun(game, iterations, out, device, workers, sample_seed, options, report, engine, address)
        summary = spec.run(run)
    if as_json:
        typer.echo(json.dumps(summary, indent=1))
        return
    typer.echo(f"{name} on {game}: outputs in {out}\n")
    for table in spec.tables:
        path = out / table
        if path.is_file():
            typer.echo(path.read_text(encoding="utf-8"))
