"""What every ``pasur`` command shares: one-line errors, ``--threads``, option groups (decks, CFR),
refusal of options that do not apply, and the option types themselves.

A command is a plain function registered with :func:`command`. The decorator adds ``--threads``
to it, turns a :class:`PasurInputError` (or a failure to write a file) into ``error: ...`` and
exit 2, running out of memory into exit 3, and expands option groups: a parameter annotated
with an :class:`OptionGroup` (``decks: DeckChoice = DECKS``) stands for all the group's
options in ``--help``, and the function receives one object built from them. The root group
(:class:`PasurGroup`) prints the option parser's own errors (``--seed abc``, an unknown option, a
missing argument) as the same one line.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import math
import os
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from pasur.cli.clicklib import (
    Abort,
    ClickException,
    NoArgsIsHelpError,
    ParameterSource,
    UsageError,
    get_current_context,
)
from pasur.common import cfr_methods
from pasur.common.console import err, note, progress_display
from pasur.common.errors import PasurInputError
from pasur.common.outputs import describe_os_error

__all__ = ["err", "note", "progress_display"]

# ---------------------------------------------------------------- errors


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on one line of stderr; return the exit to raise."""
    note("error: " + " ".join(message.split()))
    return typer.Exit(code)


#: the modules each extra of pyproject.toml's ``[project.optional-dependencies]`` brings, by the
#: name they import as; a command that needs an extra checks them before any work
EXTRA_MODULES = {"web": ("fastapi", "uvicorn", "websockets", "confusables")}


def need_extra(extra: str, command: str) -> None:
    """Refuse a command whose extra is not installed, in one line that names the pip command,
    before any work (the base install leaves out the web server, issue 45)."""
    missing = [name for name in EXTRA_MODULES[extra] if importlib.util.find_spec(name) is None]
    if missing:
        raise PasurInputError(
            f"{command} needs the {extra!r} extra ({', '.join(missing)} not installed): pip install 'pasur[{extra}]'"
        )


class PasurGroup(TyperGroup):
    """The root command: the option parser's errors become one line ``error: ...`` and exit 2,
    like every other user error (click would print a boxed, multi-line message)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(args=args, prog_name=prog_name, standalone_mode=False, **extra)
        except NoArgsIsHelpError as e:
            typer.echo(e.ctx.get_help())
            rv = 0
        except UsageError as e:
            where = f" (see: {e.ctx.command_path} --help)" if e.ctx is not None else ""
            fail(_first_upper_lower(e.format_message()).rstrip(".") + where)
            rv = 2
        except ClickException as e:
            fail(e.format_message())
            rv = e.exit_code
        except Abort:
            note("aborted")
            rv = 130
        if not standalone_mode:
            return rv
        raise SystemExit(rv if isinstance(rv, int) else 0)


def _first_upper_lower(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _out_of_memory(e: BaseException) -> bool:
    """Python's or torch's out-of-memory error; torch is only asked if a command loaded it (``deal``,
    ``show`` and ``--help`` start without it)."""
    torch = sys.modules.get("torch")
    return isinstance(e, MemoryError) or (torch is not None and isinstance(e, torch.OutOfMemoryError))


def _with_user_errors(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except PasurInputError as e:
            raise fail(str(e)) from None
        except (MemoryError, RuntimeError) as e:
            if not _out_of_memory(e):
                raise
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise fail(f"out of memory ({first}); try --tree compact or a smaller --memory-limit", 3) from None
        except OSError as e:  # a file that cannot be written or read where the library did not check
            raise fail(describe_os_error(e)) from None

    return wrapper


# ---------------------------------------------------------------- option groups


@dataclass(frozen=True)
class OptionGroup:
    """Options that travel together: ``params`` become the command's options, ``build`` turns
    their values (and which of them the user gave) into the one object the command receives."""

    params: tuple[inspect.Parameter, ...]
    build: Callable[[dict[str, Any], set[str]], Any]


def _given_names(ctx, names: list[str]) -> set[str]:
    if ctx is None:
        return set()
    sources = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
    return {n for n in names if ctx.get_parameter_source(n) in sources}


def given(*names: str) -> set[str]:
    """Which of the current command's parameters the user gave on the command line."""
    return _given_names(get_current_context(silent=True), list(names))


def refuse_unless(applies: bool, names: list[str] | set[str], why: str) -> None:
    """Refuse options that were given but do not apply (``why`` says when they do)."""
    shown = sorted(given(*names))
    if shown and not applies:
        opts = ", ".join("--" + n.replace("_", "-") for n in shown)
        raise PasurInputError(f"{opts} {'applies' if len(shown) == 1 else 'apply'} only {why}")


ThreadsOpt = Annotated[
    int | None,
    typer.Option(
        "--threads",
        min=1,
        max=4096,
        help="CPU threads for torch (default 1: fastest for most trees); capped at the CPUs this process may use.",
    ),
]


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def set_threads(n: int | None) -> int:
    """Torch's CPU threads: ``n`` (default 1), capped at the CPUs available."""
    import torch

    n = min(n or 1, cpu_count())
    torch.set_num_threads(n)
    return n


def command(
    app: typer.Typer, name: str | None = None, *, uses_torch: bool = True, **kwargs
) -> Callable[[Callable], Callable]:
    """Register ``fn`` on ``app`` with the shared behaviour (see the module docstring). A command
    with ``uses_torch=False`` (``deal``, ``show``) starts without importing torch (3 to 4 s of a
    2-core machine's time): its ``--threads`` is not applied."""

    def register(fn: Callable) -> Callable:
        sig = inspect.signature(fn, eval_str=True)
        groups: dict[str, OptionGroup] = {}
        params: list[inspect.Parameter] = []
        # a group's option that the command also declares is shared (declared once, given to both)
        declared = {p.name for p in sig.parameters.values() if not isinstance(p.default, OptionGroup)}
        for p in sig.parameters.values():
            if isinstance(p.default, OptionGroup):
                groups[p.name] = p.default
                params += [q for q in p.default.params if q.name not in declared]
            else:
                params.append(p)
        params.append(inspect.Parameter("threads", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ThreadsOpt))
        # typer wants options after arguments in no particular order, but keyword-only last
        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]

        @functools.wraps(fn)
        def run(**values):
            ctx = get_current_context(silent=True)
            root = ctx.find_root().params.get("threads") if ctx is not None else None
            threads = values.pop("threads") or root
            if uses_torch:
                set_threads(threads)
            for gname, group in groups.items():
                names = [q.name for q in group.params]
                mine = {n: values.pop(n) for n in names if n not in declared}
                shared = {n: values[n] for n in names if n in declared}
                values[gname] = group.build({**mine, **shared}, _given_names(ctx, names))
            return fn(**values)

        run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params}
        app.command(name, **kwargs)(_with_user_errors(run))
        return fn

    return register


def _opt(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


# -- decks ------------------------------------------------------------------------------


#: the commands whose deck options take a non-standard ``--variant``; the others refuse one
VARIANT_COMMANDS = ("solve", "tree-stats", "deal", "show")


@dataclass(frozen=True)
class DeckChoice:
    """The deck options as given; :meth:`decks` reads them the one way every command does.
    ``variant`` is the rule variant's name (``--variant``), checked when the group is built."""

    deck: str | None = None
    deck_file: Path | None = None
    deck_id: str | None = None
    seed: int | None = None
    count: int | None = None
    variant: str = "standard"

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.deck, self.deck_file, self.seed, self.count))

    @property
    def rules(self):
        """The :class:`pasur.game.variants.Variant` that ``variant`` names."""
        from pasur.game.variants import get_variant

        return get_variant(self.variant)

    def decks(self, *, random_if_none: bool = True):
        """The decks named; with no deck option, a random seed (printed) when ``random_if_none``."""
        from pasur.game.cards import select_decks

        if not self.any and random_if_none:
            seed = secrets.randbelow(2**31)
            note(f"dealing a random deck (seed {seed})")
            return select_decks(seed=seed, variant=self.rules)
        return select_decks(self.deck, self.deck_file, self.deck_id, self.seed, self.count, variant=self.rules)

    def one(self, what: str):
        decks = self.decks()
        if len(decks) != 1:
            raise PasurInputError(f"{what} takes one deck; {len(decks)} were given (pick one with --deck-id or --seed)")
        return decks[0]


def check_variant(name: str, takes_variant: bool = True) -> str:
    """``--variant``'s value, checked: a known name (else the known ones are named), and the
    standard game for a command that plays no other (refused, naming the commands that do)."""
    from pasur.game.variants import get_variant

    variant = get_variant(name)
    if not takes_variant and variant.name != "standard":
        ctx = get_current_context(silent=True)
        who = ctx.command_path if ctx is not None else "this command"
        raise PasurInputError(
            f"--variant {name}: {who} plays only the standard game (--variant applies to {', '.join(VARIANT_COMMANDS)})"
        )
    return variant.name


DeckOpt = Annotated[
    str | None, typer.Option("--deck", help="A deck: 52 cards such as 'TD 5S QC ...' (with --variant, its cards).")
]
DeckFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--deck-file",
        help="A file of decks: one per line, JSON (list of strings/objects), or the paper's deck tensor (.pt).",
    ),
]
DeckIdOpt = Annotated[str | None, typer.Option("--deck-id", help="With --deck-file: only the deck with this id.")]
SeedOpt = Annotated[
    int | None,
    typer.Option("--seed", min=0, help="The deck seed: deal the deck of this seed (with --decks N: seeds S..S+N-1)."),
]
DecksOpt = Annotated[
    int | None,
    typer.Option(
        "--decks",
        min=1,
        max=10_000_000,
        help="How many decks: seeds S, S+1, ... (S from --seed, 0), or the first N of --deck-file.",
    ),
]
VariantOpt = Annotated[
    str,
    typer.Option(
        "--variant",
        help="The rule variant whose decks --deck, --deck-file and --seed name: standard, or a small one "
        "(pasur variants lists them).",
    ),
]
StandardOnlyOpt = Annotated[
    str,
    typer.Option("--variant", help="Only standard: this command plays the standard game (see pasur variants)."),
]

_DECK_PARAMS = (
    _opt("deck", DeckOpt),
    _opt("deck_file", DeckFileOpt),
    _opt("deck_id", DeckIdOpt),
    _opt("seed", SeedOpt),
)


def _deck_group(many: bool, takes_variant: bool) -> OptionGroup:
    """The deck options (and --decks N when ``many``) with --variant: any variant when
    ``takes_variant``, else the standard game only (refused before the command runs)."""
    variant = _opt("variant", VariantOpt if takes_variant else StandardOnlyOpt, "standard")
    params = (*_DECK_PARAMS, *((_opt("decks", DecksOpt),) if many else ()), variant)

    def build(values: dict, _given: set[str]) -> DeckChoice:
        values = _rename(values, decks="count")
        return DeckChoice(**{**values, "variant": check_variant(values["variant"], takes_variant)})

    return OptionGroup(params, build)


def _rename(values: dict, **names: str) -> dict:
    return {names.get(k, k): v for k, v in values.items()}


#: one deck (or a deck file: ``solve`` checks each), chosen by --deck, --deck-file, --deck-id, --seed;
#: its --variant takes only the standard game (commands whose agents, models or experiments know no other)
DECK = _deck_group(many=False, takes_variant=False)
#: many decks: the same options and --decks N
DECKS = _deck_group(many=True, takes_variant=False)
#: DECK and DECKS with any --variant (the commands of :data:`VARIANT_COMMANDS`)
VARIANT_DECK = _deck_group(many=False, takes_variant=True)
VARIANT_DECKS = _deck_group(many=True, takes_variant=True)

# -- CFR --------------------------------------------------------------------------------

#: ``pasur.solve.cfr.METHODS``: the full-width and predictive rules of :mod:`pasur.common.regret`
#: (their names from :mod:`pasur.common.cfr_methods`, which imports no torch) and the sampled
#: es-mccfr (tests/test_cli.py checks that the two agree)
CFR_METHODS = (*cfr_methods.METHODS, *cfr_methods.PREDICTIVE, "es-mccfr")
#: the target when neither --iterations nor --target-exploitability is given (points of
#: exploitability = NashConv / 2; the NashConv 0.05 of the versions before docs/conventions.md)
DEFAULT_TARGET = 0.025

_CFR_HELP = f"exact: backward induction; reference: plain-Python minimax; {', '.join(CFR_METHODS)}: CFR variants"


@dataclass(frozen=True)
class CfrChoice:
    """The method and the CFR options as given, and which of them the user gave."""

    method: str | None
    values: dict[str, Any]
    given: frozenset[str]

    def method_or(self, default: str) -> str:
        return self.method or default

    def given_values(self) -> dict[str, Any]:
        """The options of the group the user gave, with their values (by name, sorted)."""
        return {n: self.method if n == "method" else self.values[n] for n in sorted(self.given)}

    def params(self, method: str):
        """The CFR run these options describe (checked), for a CFR ``method``."""
        from pasur.solve.cfr import CFRParams

        v = self.values
        if "max_iterations" in self.given and "iterations" in self.given:
            raise PasurInputError("--max-iterations caps a run to a target; with --iterations N, N is the cap")
        if "max_iterations" in self.given and v["target_exploitability"] is None:
            raise PasurInputError("--max-iterations caps a run to --target-exploitability; give the target")
        target = v["target_exploitability"]
        if target is None and v["iterations"] is None:
            target = DEFAULT_TARGET
        if "check_every" in self.given and target is None:
            raise PasurInputError("--check-every applies only with a --target-exploitability")
        for name, takers in cfr_methods.PARAMETER_METHODS.items():
            methods = [m for m in takers if m in CFR_METHODS]
            if name in self.given and method not in methods:
                raise PasurInputError(f"--{name} applies only to --method {' or '.join(methods)}")
        return CFRParams(
            method=method,
            iterations=v["iterations"],
            target_exploitability=target,
            check_every=v["check_every"],
            alpha=v["alpha"],
            beta=v["beta"],
            gamma=v["gamma"],
            updates=v["updates"],
            seed=v["sample_seed"],
            max_iterations=v["max_iterations"],
            tremble=v["tremble"],
            kernel=v["kernel"],
        ).check()

    def refuse_for(self, method: str) -> None:
        """For a method without CFR (exact, reference): every CFR option given is refused."""
        cfr_only = sorted(self.given - {"method"})
        if cfr_only:
            opts = ", ".join("--" + n.replace("_", "-") for n in cfr_only)
            raise PasurInputError(
                f"{opts} {'applies' if len(cfr_only) == 1 else 'apply'} only to the CFR methods "
                f"({', '.join(CFR_METHODS)}), not to --method {method}"
            )


def _positive_float(name: str, value: float | None) -> None:
    if value is not None and not (value > 0 and math.isfinite(value)):
        raise PasurInputError(f"{name} must be a positive number, got {value}")


def _build_cfr(values: dict, given_: set[str]) -> CfrChoice:
    _positive_float("--target-exploitability", values["target_exploitability"])
    method = values.pop("method")
    return CfrChoice(method, values, frozenset(given_))


MethodOpt = Annotated[
    str | None,
    typer.Option("--method", help=f"{_CFR_HELP}. Default: exact for solve, dcfr for sweep and experiment."),
]
IterationsOpt = Annotated[
    int | None,
    typer.Option(
        "--iterations",
        min=1,
        max=10_000_000,
        help=(
            "CFR: iterations per round (with a target: the cap). Neither given: whole-game exploitability "
            f"target {DEFAULT_TARGET}."
        ),
    ),
]
TargetOpt = Annotated[
    float | None,
    typer.Option(
        "--target-exploitability",
        help=(
            "CFR: a bound on the whole game's exploitability (points, exact best responses; "
            "exploitability = NashConv / 2, the mean of both players' best-response gains, as in "
            "OpenSpiel and pasur poker: docs/conventions.md); each round stops at its share, and the "
            f"summary says whether it was met (default {DEFAULT_TARGET}, i.e. NashConv {2 * DEFAULT_TARGET:g}, "
            "without --iterations)."
        ),
    ),
]
CheckEveryOpt = Annotated[
    int,
    typer.Option(
        "--check-every",
        min=1,
        max=1_000_000,
        help="CFR: measure the round's exploitability (NashConv / 2) every K iterations.",
    ),
]
#: the defaults --alpha and --gamma name: DCFR's and PDCFR+'s (alpha, gamma)
_DCFR, _PDCFR = cfr_methods.default_parameters("dcfr"), cfr_methods.default_parameters("pdcfr+")
#: the --alpha help's defaults, DCFR's and PDCFR+'s
ALPHA_DEFAULTS = f"(default {_DCFR[0]:g}, {_PDCFR[0]:g})"
AlphaOpt = Annotated[
    float | None,
    typer.Option("--alpha", min=0, max=10, help=f"DCFR, PDCFR+: positive regret discount exponent {ALPHA_DEFAULTS}."),
]
BetaOpt = Annotated[float, typer.Option("--beta", min=-10, max=10, help="DCFR: negative regret discount exponent.")]
GammaOpt = Annotated[
    float | None,
    typer.Option(
        "--gamma",
        min=0,
        max=10,
        help="DCFR and the predictive variants: the average's weight t^gamma "
        f"(default {_DCFR[1]:g}, PDCFR+ {_PDCFR[1]:g}).",
    ),
]
UpdatesOpt = Annotated[str, typer.Option("--updates", help="CFR: alternating (update Alex, then Bob) or simultaneous.")]
SampleSeedOpt = Annotated[
    int,
    typer.Option("--sample-seed", min=0, help="Seed of everything sampled: random agents, es-mccfr, data splits."),
]
MaxIterationsOpt = Annotated[
    int,
    typer.Option(
        "--max-iterations", min=1, max=10_000_000, help="CFR: iteration cap per round when a whole-game target is set."
    ),
]

TrembleOpt = Annotated[
    float,
    typer.Option(
        "--tremble",
        min=0,
        max=0.01,
        help=(
            "CFR: every action keeps this least probability in each iterate (the ε-perturbed game), so "
            "the table also learns the states an equilibrium never reaches and punishes mistakes; "
            "taken out of the table written. Default 0."
        ),
    ),
]

KernelOpt = Annotated[
    str,
    typer.Option(
        "--kernel",
        help=(
            "CFR: how an iteration runs: native (a compiled CPU kernel, built with the system C compiler on "
            "first use), torch (tensor operations) or auto (native on the CPU for dcfr, cfr, cfr+, lcfr and "
            "pcfr+ where a compiler works, else torch); the same iterates either way."
        ),
    ),
]

#: the CFR options, the same in ``solve``, ``sweep`` and ``experiment``
CFR = OptionGroup(
    (
        _opt("method", MethodOpt),
        _opt("iterations", IterationsOpt),
        _opt("target_exploitability", TargetOpt),
        _opt("check_every", CheckEveryOpt, 10),
        _opt("alpha", AlphaOpt, None),
        _opt("beta", BetaOpt, 0.0),
        _opt("gamma", GammaOpt, None),
        _opt("updates", UpdatesOpt, "alternating"),
        _opt("sample_seed", SampleSeedOpt, 0),
        _opt("max_iterations", MaxIterationsOpt, 100_000),
        _opt("tremble", TrembleOpt, 0.0),
        _opt("kernel", KernelOpt, "auto"),
    ),
    _build_cfr,
)

# -- other shared options ----------------------------------------------------------------

JsonOpt = Annotated[bool, typer.Option("--json", help="Print a machine-readable JSON summary instead of tables.")]
AsciiOpt = Annotated[bool, typer.Option("--ascii", help="Cards as 'TD' instead of '10♦'.")]
TreeOpt = Annotated[
    str | None, typer.Option("--tree", help="Tree mode: compact (lossless state merging, default) or paper.")
]
DeviceOpt = Annotated[str | None, typer.Option("--device", help="Torch device: cpu (default), cuda, cuda:N or auto.")]
MemOpt = Annotated[
    float | None, typer.Option("--memory-limit", help="GiB the tree may use (default: what the device has free).")
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")]
OverwriteOpt = Annotated[
    bool, typer.Option("--overwrite", help="Replace what an earlier run of this command wrote there (only that).")
]
AddressOpt = Annotated[
    str | None,
    typer.Option(
        "--address",
        help="Join this Ray cluster (e.g. auto, or HOST:6379; see docs/cluster.md for token authentication); "
        "default: Ray here.",
    ),
]
GamesOpt = Annotated[int, typer.Option("--games", min=1, max=100_000_000, help="Games played at once.")]


def tree_options(tree: str | None, device: str | None, memory_limit: float | None):
    """The tree mode, torch device and memory limit (bytes) from their options, checked."""
    from pasur.common.device import resolve_device
    from pasur.solve.tree import MODES

    tree = tree or "compact"
    if tree not in MODES:
        raise PasurInputError(f"unknown tree mode {tree!r} (choose from {', '.join(MODES)})")
    return tree, resolve_device(device or "cpu"), memory_bytes(memory_limit)


def memory_bytes(gib: float | None) -> int | None:
    if gib is None:
        return None
    if not (gib > 0 and math.isfinite(gib)) or gib > 1e6:
        raise PasurInputError(f"--memory-limit must be a positive number of GiB, got {gib}")
    return int(gib * 2**30)


def parse_model_params(text: str | None) -> dict:
    """``--model-params`` (a JSON object of model settings) as a dict; ``{}`` when not given."""
    import json

    if text is None:
        return {}
    try:
        params = json.loads(text)
    except json.JSONDecodeError as e:
        raise PasurInputError(f"--model-params is not JSON ({e.msg})") from None
    if not isinstance(params, dict):
        raise PasurInputError("--model-params must be a JSON object")
    return params
