"""pasur: solve and play the card game Pasur, and solve poker benchmark games.

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

__version__ = "0.1.0"
