"""The paper's experiments (section 3), one function each, over decks swept with
:mod:`pasur.study.sweep` (so they resume, and run on Ray workers or a cluster), written as PNG plots
and CSV + Markdown tables into one folder:

* Figure 12: the distribution of tree sizes, both tree modes;
* Figure 14: equilibrium vs equilibrium, vs random, and random vs equilibrium;
* Figure 15: CFR convergence per round, mean and standard-deviation bands over decks;
* Figure 16 and Table 15: the first-turn strategy of one deck;
* Table 16: fair value against the Jacks and clubs Alex is dealt, with the decision-stump split
  on clubs per number of Jacks, beside the same table from the decks' exact values.

One module per experiment (:mod:`.tree_sizes`, :mod:`.selfplay`, :mod:`.convergence`,
:mod:`.first_turn`, :mod:`.fair_value`), beside the registry (:mod:`.registry`) and what their
writers share (:mod:`.writers`); their public names are re-exported here.

Each function returns a dict of headline numbers (also written as ``summary.json``). Each is
registered in :data:`REGISTRY` (a :class:`pasur.common.registry.Registry`) through a small runner
that takes a :class:`StudyRun`, declaring what it takes: whether it solves by CFR (and so takes
the CFR options and ``tree``, and runs on a :class:`DeckJob`), whether it plays games (``games``,
``fit``, ``model_params``), how many decks, and options of its own (figure12's
``paper_memory_limit``). ``pasur experiment NAME`` looks the experiment up, refuses any other
option before a folder is made, and runs it.
"""

from __future__ import annotations

from pasur.study.experiments.convergence import figure15
from pasur.study.experiments.fair_value import split_table, stump_split, table16
from pasur.study.experiments.first_turn import figure16
from pasur.study.experiments.registry import (
    CFR_OPTIONS,
    MODULES,
    PAPER_MEMORY_LIMIT_GIB,
    PLAY_OPTIONS,
    REGISTRY,
    StudyExperiment,
    StudyRun,
    experiment,
    get,
    names,
)
from pasur.study.experiments.selfplay import (
    FIG14_MATCHUPS,
    MM_MISS,
    PAPER_MATCHUPS,
    TABLE_MATCHUPS,
    _deck_index,
    compare_with_paper,
    figure14,
    read_paper_results,
)
from pasur.study.experiments.tree_sizes import figure12

__all__ = [
    "CFR_OPTIONS",
    "FIG14_MATCHUPS",
    "MM_MISS",
    "MODULES",
    "PAPER_MATCHUPS",
    "PAPER_MEMORY_LIMIT_GIB",
    "PLAY_OPTIONS",
    "REGISTRY",
    "TABLE_MATCHUPS",
    "StudyExperiment",
    "StudyRun",
    "_deck_index",
    "compare_with_paper",
    "experiment",
    "figure12",
    "figure14",
    "figure15",
    "figure16",
    "get",
    "names",
    "read_paper_results",
    "split_table",
    "stump_split",
    "table16",
]
