"""The poker papers' experiments, one function each, found by name (``pasur poker experiment NAME``).

An experiment module registers its function with :func:`experiment`; the function takes an
:class:`ExperimentRun` (what the user asked for) and returns a JSON-able summary dict, having
written its PNG, CSV and Markdown into ``run.out`` (a folder prepared with
:func:`pasur.common.outputs.prepare_resumable_dir`, so a long run resumes). The modules are imported
by :func:`get`, so a name is known as soon as its module is listed in :data:`MODULES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pasur.common.errors import PasurInputError

#: the modules that define experiments (imported on first use)
MODULES: tuple[str, ...] = ("bufp", "figure5")


@dataclass(frozen=True)
class ExperimentRun:
    """What the user asked for. ``progress(done, total, note)`` reports progress (may be a no-op);
    ``workers`` > 1 allows parallel work (Ray tasks through the sweep engine, or local processes)."""

    game: str
    iterations: int
    out: Path
    device: str = "cpu"
    workers: int = 1
    seed: int = 0
    options: dict = field(default_factory=dict)
    progress: Callable[[int, int, str], None] = lambda done, total, note: None


@dataclass(frozen=True)
class Experiment:
    name: str
    run: Callable[[ExperimentRun], dict]
    help: str
    #: the Markdown files it writes (printed by the CLI when it ends)
    tables: tuple[str, ...] = ()
    #: every entry it writes into its folder (so that a rerun resumes and another's files are refused)
    outputs: tuple[str, ...] = ()
    #: the options it takes beyond the common ones (``ExperimentRun.options``): name -> a check that
    #: raises :class:`PasurInputError` on a bad value
    options: dict[str, Callable[[object], object]] = field(default_factory=dict)

    def check_options(self, given: dict) -> None:
        """Refuse, before anything is written, an option this experiment does not take or a bad value."""
        for key, value in given.items():
            if key not in self.options:
                takers = ", ".join(n for n, e in sorted(REGISTRY.items()) if key in e.options) or "no experiment"
                raise PasurInputError(f"--{key} applies only to {takers}, not to {self.name}")
            self.options[key](value)


REGISTRY: dict[str, Experiment] = {}


def experiment(
    name: str,
    help: str,
    *,
    tables: tuple[str, ...] = (),
    outputs: tuple[str, ...] = (),
    options: dict[str, Callable[[object], object]] | None = None,
):
    """Register the decorated function as the experiment ``name``."""

    def register(fn: Callable[[ExperimentRun], dict]) -> Callable[[ExperimentRun], dict]:
        REGISTRY[name] = Experiment(name, fn, help, tables, outputs or tables, dict(options or {}))
        return fn

    return register


def _load() -> None:
    for module in MODULES:
        importlib.import_module(f"pasur.poker.experiments.{module}")


def names() -> list[str]:
    _load()
    return sorted(REGISTRY)


def get(name: str) -> Experiment:
    _load()
    if name not in REGISTRY:
        known = ", ".join(sorted(REGISTRY)) or "none yet"
        raise PasurInputError(f"unknown experiment {name!r} (choose from {known})")
    return REGISTRY[name]
