"""The registry of the paper's experiments and what each takes: the CFR options, self-play's,
how many decks, options of its own (:class:`StudyExperiment`); the run a user asks for
(:class:`StudyRun`); the folder an experiment writes into."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pasur.common.errors import PasurInputError
from pasur.common.outputs import prepare_resumable_dir
from pasur.common.registry import Experiment, Registry
from pasur.game.cards import NamedDeck
from pasur.study.pipeline import DeckJob

#: the CFR options and the tree mode: taken by the experiments that solve by CFR
CFR_OPTIONS: tuple[str, ...] = (
    "method",
    "iterations",
    "target_exploitability",
    "check_every",
    "alpha",
    "beta",
    "gamma",
    "updates",
    "sample_seed",
    "max_iterations",
    "tremble",
    "tree",
)
#: the options of self-play: taken by the experiments that play games
PLAY_OPTIONS: tuple[str, ...] = ("games", "fit", "model_params")
#: figure12's default limit on a paper tree (GiB)
PAPER_MEMORY_LIMIT_GIB = 4.0


@dataclass(frozen=True)
class StudyExperiment(Experiment):
    """A Pasur experiment and what it takes: ``cfr``, it solves by CFR (takes the CFR options and
    ``tree``; runs on a job whose method is a CFR one); ``plays``, it plays games (takes
    ``games``, ``fit``, ``model_params``); ``decks``, how many decks it takes (None: any)."""

    cfr: bool = False
    plays: bool = False
    decks: int | None = None

    def __post_init__(self) -> None:
        implied = (CFR_OPTIONS if self.cfr else ()) + (PLAY_OPTIONS if self.plays else ())
        object.__setattr__(self, "options", {**dict.fromkeys(implied), **self.options})

    def check_decks(self, decks: list[NamedDeck]) -> None:
        """Refuse another number of decks than the experiment takes."""
        if self.decks is None or len(decks) == self.decks:
            return
        if self.decks == 1:
            raise PasurInputError(f"{self.name} takes one deck: --seed S, --deck, or --deck-file F --deck-id ID")
        raise PasurInputError(f"{self.name} takes {self.decks} decks; {len(decks)} were given")


@dataclass(frozen=True)
class StudyRun:
    """What the user asked for: the decks, the experiment's folder, the per-deck job (None for an
    experiment that does not solve by CFR), the sweep's options (:func:`pasur.study.sweep.run_sweep`'s
    keywords: engine, workers, address, memory_limit, progress, retry_failed) and the values of
    the experiment's own options (given or defaults)."""

    decks: list[NamedDeck]
    out: Path
    job: DeckJob | None = None
    sweep: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)


#: the modules that define the experiments (imported on first use of the registry)
MODULES: tuple[str, ...] = ("tree_sizes", "selfplay", "convergence", "first_turn", "fair_value")
#: the paper's experiments, by name
REGISTRY = Registry("pasur.study.experiments", MODULES, record=StudyExperiment)
experiment = REGISTRY.experiment
names = REGISTRY.names
get = REGISTRY.get


def folder(out: Path, name: str) -> Path:
    """The experiment's folder: created, or reopened to resume, holding only the entries it
    declares (another's files are refused)."""
    return prepare_resumable_dir(out, list(REGISTRY.get(name).outputs))
