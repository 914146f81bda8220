"""pasur: solve and play the card game Pasur, and solve poker benchmark games.

The entry points a researcher needs are names of ``pasur`` itself, each loaded from its module
when first named, so ``import pasur`` is instant and loads no torch (``dir(pasur)`` lists them;
the API reference documents each one where it lives):

- the game: :class:`Deck`, :class:`GameState`, :func:`get_variant` (the rule variants, from the
  standard game to ``micro``);
- open-hand solving: :func:`build_tree`, :func:`solve_exact`, :func:`optimal_line`,
  :func:`exploitability`, :class:`CFRParams`, :func:`solve_cfr`;
- strategy tables: :func:`write_strategy_table`, :func:`read_strategy_table`;
- poker: :func:`poker_game`, :class:`PokerEngine`, :class:`CFRConfig`, :func:`solve_poker`,
  :func:`evaluate_poker`, :func:`export_openspiel`, :func:`import_openspiel`;
- the hidden-hand game: :func:`make_agent` (any agent by name), :func:`play_hidden`,
  :func:`play_pair` (two agents on duplicate deals, in this process), :func:`run_arena`;
- :func:`set_threads`.

Threads: the command line runs torch on one CPU thread unless ``--threads`` says otherwise (the
fastest for most trees; torch's own default, every core, made a notebook's solve 4x slower on the
2-core dev machine). Library calls do the same: the first name taken from ``pasur`` (or from a
subpackage's front door, ``pasur.solve.solve_cfr`` and the like) whose module loads torch sets
torch to one thread, unless :func:`set_threads` was called before; call ``pasur.set_threads(n)``
for more. A module imported directly (``from pasur.solve.rounds import solve_cfr``) leaves
torch's setting as it is.

Solve a deck of the ``mini`` variant (10 cards) exactly, then by Discounted CFR:

```pycon
>>> import pasur
>>> deck = pasur.Deck.from_seed(1, pasur.get_variant("mini"))
>>> tree = pasur.build_tree(pasur.GameState.initial(deck))
>>> exact = pasur.solve_exact(tree)
>>> exact.game_value()                   # Alex - Bob under optimal play, open hands
-8.0
>>> cfr = pasur.solve_cfr(tree, pasur.CFRParams(method="dcfr", iterations=None, target_exploitability=0.05))
>>> cfr.target_met, abs(cfr.game_value() - exact.game_value()) <= 2 * cfr.exploitability
(True, True)

```

Poker: Kuhn by DCFR, measured, and its OpenSpiel table:

```pycon
>>> kuhn = pasur.PokerEngine("kuhn")
>>> run = pasur.solve_poker(kuhn, pasur.CFRConfig("dcfr"), iterations=200)
>>> pasur.evaluate_poker(kuhn, run.policy).exploitability < 0.01
True
>>> len(pasur.export_openspiel(kuhn, run.policy))   # Kuhn's 12 information sets
12

```

Two agents of the hidden-hand game on 4 duplicate deals (each dealt twice, seats swapped):

```pycon
>>> r = pasur.play_pair("greedy", "random", deals=4, seed=0)
>>> r["games"], r["ci95"][0] <= r["margin"] <= r["ci95"][1]
(8, True)

```

One subpackage per layer; a module imports its own layer and those below it, never one above
(docs/architecture.md; checked by tests/test_layers.py). From the bottom up:

- :mod:`pasur.common`: errors, outputs, console, torch device, memory, the experiment registry;
- :mod:`pasur.game`: cards, rules, state, game logs: the spec in code;
- :mod:`pasur.poker`: poker games and their solvers, beside the Pasur layers (imports only common);
- :mod:`pasur.solve`: reference minimax, tensor tree, exact, CFR, strategy tables;
- :mod:`pasur.play`: agents, batched self-play, measures, infoset features per game;
- :mod:`pasur.learn`: XGBoost models of strategies;
- :mod:`pasur.study`: per-deck pipeline, Ray sweeps, manifest, report, the paper's experiments;
- :mod:`pasur.hidden`: the hidden-hand game: information states, worlds, agents, arena;
- :mod:`pasur.web`: the page and JSON API to play against the AI, SQLite, terminal game;
- :mod:`pasur.cli`: the command line (typer), one module per command group.
"""

from __future__ import annotations

import importlib
import os
import sys

__version__ = "0.1.0"

#: the front door: each name and the ``module:attribute`` it stands for (loaded when first named;
#: no import statement, so the package root imports no layer: tests/test_layers.py)
EXPORTS: dict[str, str] = {
    "Deck": "pasur.game.cards:Deck",
    "GameState": "pasur.game.state:GameState",
    "get_variant": "pasur.game.variants:get_variant",
    "build_tree": "pasur.solve.tree:build_tree",
    "solve_exact": "pasur.solve.exact:solve_exact",
    "optimal_line": "pasur.solve.exact:optimal_line",
    "exploitability": "pasur.solve.exact:exploitability",
    "CFRParams": "pasur.solve.cfr:CFRParams",
    "solve_cfr": "pasur.solve.rounds:solve_cfr",
    "write_strategy_table": "pasur.solve.strategy_io:write_strategy_table",
    "read_strategy_table": "pasur.solve.strategy_io:read_strategy_table",
    "poker_game": "pasur.poker.games:get_game",
    "PokerEngine": "pasur.poker.engine:Engine",
    "CFRConfig": "pasur.poker.solvers:CFRConfig",
    "solve_poker": "pasur.poker.run:solve",
    "evaluate_poker": "pasur.poker.measures:evaluate",
    "export_openspiel": "pasur.poker.openspiel:export_policy",
    "import_openspiel": "pasur.poker.openspiel:import_policy",
    "make_agent": "pasur.hidden.registry:make_agent",
    "play_hidden": "pasur.hidden.game:play_hidden",
    "play_pair": "pasur.hidden.arena:play_pair",
    "run_arena": "pasur.hidden.arena:run_arena",
}

__all__ = ["__version__", "set_threads", *EXPORTS]

_threads_chosen = False


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def set_threads(n: int | None = None) -> int:
    """Set torch's CPU threads for library calls to ``n`` (default 1, as the command line's
    ``--threads``), capped at the CPUs this process may use; returns the number set. Once called,
    the front doors no longer set one thread on their own (see the package docstring).

    ```pycon
    >>> import pasur
    >>> pasur.set_threads(1)
    1

    ```
    """
    global _threads_chosen
    import torch

    n = min(n or 1, _cpu_count())
    torch.set_num_threads(n)
    _threads_chosen = True
    return n


def default_threads() -> None:
    """One torch thread, as the command line, if torch is loaded and :func:`set_threads` was never
    called (the front doors call this after loading a name)."""
    if not _threads_chosen and "torch" in sys.modules:
        set_threads(1)


def load(target: str):
    """The object ``"module:attribute"`` names, with :func:`default_threads` applied."""
    module, _, attribute = target.partition(":")
    value = getattr(importlib.import_module(module), attribute)
    default_threads()
    return value


def lazy_exports(package: str, exports: dict[str, str]):
    """A package's module-level ``__getattr__`` and ``__dir__`` for its front door ``exports``
    (name -> ``"module:attribute"``): each name is loaded when first named, then kept."""

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = load(exports[name])
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__


__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
