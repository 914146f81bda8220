"""Solving the open-hand game: the reference minimax (the oracle), the tensor game tree (the
paper's Full Game Tree or the compact one), exact backward induction with best responses and
exploitability, round-by-round CFR (CFR, CFR+, Linear, Discounted, predictive, ES-MCCFR), and the
strategy tables a solve leaves (Parquet).

Front door (each name loaded when first named; torch on one thread unless
:func:`pasur.set_threads` says otherwise): :func:`build_tree`, :func:`build_forest`,
:func:`solve_exact`, :func:`optimal_line`, :func:`best_response`, :func:`exploitability`,
:func:`nash_conv`, :func:`strategy_value`, :func:`uniform_strategy`, :class:`CFRParams`,
:func:`solve_cfr`, :class:`CFRResult`, :func:`write_strategy_table`,
:func:`read_strategy_table`, :func:`write_outputs`, :func:`read_summary`,
:class:`ReferenceSolver`, and the command line's runs on one named deck, :func:`solve_exact_run`
and :func:`run_cfr` (:mod:`pasur.solve.runs`).

A deck of the ``mini`` variant solved exactly and by DCFR; the strategy written as a table and
read back onto the tree:

```pycon
>>> import tempfile
>>> from pathlib import Path
>>> from pasur.game import Deck, GameState, get_variant
>>> from pasur.solve import (CFRParams, build_tree, exploitability, optimal_line, read_strategy_table,
...     solve_cfr, solve_exact, write_strategy_table)
>>> tree = build_tree(GameState.initial(Deck.from_seed(1, get_variant("mini"))))
>>> tree.n_nodes, solve_exact(tree).game_value(), len(optimal_line(solve_exact(tree)))
(39, -8.0, 8)
>>> result = solve_cfr(tree, CFRParams(method="dcfr", iterations=None, target_exploitability=0.05))
>>> result.exploitability <= 0.05, result.exploitability == exploitability(tree, result.strategy)
(True, True)
>>> path = Path(tempfile.mkdtemp()) / "strategy.parquet"
>>> write_strategy_table(path, tree, result.strategy, deck_id="mini-1") == tree.n_edges
True
>>> back = read_strategy_table(path, tree)
>>> all(bool((back[k] == p).all()) for k, p in result.strategy.items())
True

```
"""

from pasur import lazy_exports

#: name -> ``"module:attribute"``
EXPORTS = {
    "build_tree": "pasur.solve.tree:build_tree",
    "build_forest": "pasur.solve.tree:build_forest",
    "solve_exact": "pasur.solve.exact:solve_exact",
    "optimal_line": "pasur.solve.exact:optimal_line",
    "best_response": "pasur.solve.exact:best_response",
    "exploitability": "pasur.solve.exact:exploitability",
    "nash_conv": "pasur.solve.exact:nash_conv",
    "strategy_value": "pasur.solve.exact:strategy_value",
    "uniform_strategy": "pasur.solve.exact:uniform_strategy",
    "CFRParams": "pasur.solve.cfr:CFRParams",
    "solve_cfr": "pasur.solve.rounds:solve_cfr",
    "CFRResult": "pasur.solve.rounds:CFRResult",
    "write_strategy_table": "pasur.solve.strategy_io:write_strategy_table",
    "read_strategy_table": "pasur.solve.strategy_io:read_strategy_table",
    "write_outputs": "pasur.solve.strategy_io:write_outputs",
    "read_summary": "pasur.solve.strategy_io:read_summary",
    "ReferenceSolver": "pasur.solve.reference:ReferenceSolver",
    "solve_exact_run": "pasur.solve.runs:solve_exact_run",
    "run_cfr": "pasur.solve.runs:run_cfr",
}
__all__ = list(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
