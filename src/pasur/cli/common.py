"""What the ``pasur`` commands share: option types, deck selection, one-line errors, progress."""

from __future__ import annotations

import functools
import random
import secrets
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn

from pasur.game.cards import NamedDeck, parse_deck, random_deck, read_deck_file
from pasur.common.errors import PasurInputError

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


def tree_options(tree: str, device: str, memory_limit: float | None):
    from pasur.common.device import resolve_device

    if tree not in TREES:
        raise PasurInputError(f"unknown tree mode {tree!r} (choose from {', '.join(TREES)})")
    if memory_limit is not None and memory_limit <= 0:
        raise PasurInputError(f"--memory-limit must be positive, got {memory_limit}")
    limit = None if memory_limit is None else int(memory_limit * 2**30)
    return resolve_device(device), limit


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
    return [NamedDeck(f"seed-{seed}", random_deck(random.Random(seed)))]


def one_deck(decks: list[NamedDeck], what: str) -> NamedDeck:
    if len(decks) != 1:
        raise PasurInputError(f"{what} takes one deck; the file holds {len(decks)} (pick one with --deck-id)")
    return decks[0]


def progress_display(quiet: bool, *extra: ProgressColumn) -> Progress:
    """The progress display of long commands, on stderr, gone when done."""
    columns = (SpinnerColumn(), TextColumn("{task.description}"), *extra, TimeElapsedColumn())
    return Progress(*columns, console=err, transient=True, disable=quiet)
