"""The poker papers' experiments, one function each, found by name (``pasur poker experiment NAME``).

An experiment module registers its function with :func:`experiment` (the registry of
:mod:`pasur.common.registry`, this package's own instance); the function takes an
:class:`ExperimentRun` (what the user asked for) and returns a JSON-able summary dict, having
written its PNG, CSV and Markdown into ``run.out`` (a folder prepared with
:func:`pasur.common.outputs.prepare_resumable_dir`, so a long run resumes). Each declares the
options it takes beyond the common ones and their checks (figure5's ``configs``); any other is
refused by :meth:`Experiment.check_options` before a folder is made. The modules are imported
by :func:`get`, so a name is known as soon as its module is listed in :data:`MODULES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pasur.common.registry import Experiment, Registry

__all__ = ["MODULES", "REGISTRY", "Experiment", "ExperimentRun", "experiment", "get", "names"]

#: the modules that define experiments (imported on first use)
MODULES: tuple[str, ...] = ("bufp", "figure5", "lossless")


@dataclass(frozen=True)
class ExperimentRun:
    """What the user asked for. ``progress(done, total, note)`` reports progress (may be a no-op);
    ``workers`` > 1 runs that many methods at once, each in a local worker process that ends with
    its driver; ``engine="ray"`` makes each method a Ray task instead, on a Ray instance of our own
    with ``workers`` CPUs or on the cluster at ``address``
    (:func:`pasur.poker.experiments.checkpoints.run_methods`)."""

    game: str
    iterations: int
    out: Path
    device: str = "cpu"
    workers: int = 1
    seed: int = 0
    options: dict = field(default_factory=dict)
    progress: Callable[[int, int, str], None] = lambda done, total, note: None
    engine: str = "local"
    address: str | None = None


#: the poker experiments, by name
REGISTRY = Registry(__name__, MODULES)
experiment = REGISTRY.experiment
names = REGISTRY.names
get = REGISTRY.get
