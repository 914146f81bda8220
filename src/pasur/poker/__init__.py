"""Poker benchmark games and a vectorized solver core (docs/poker.md).

Games as data (:mod:`~pasur.poker.games`), hand strengths (:mod:`~pasur.poker.evaluator`), the
betting tree (:mod:`~pasur.poker.tree`), boards with suit isomorphism (:mod:`~pasur.poker.boards`),
showdowns with card removal (:mod:`~pasur.poker.showdown`), the engine, public tree x ranges
(:mod:`~pasur.poker.engine`), strategies (:mod:`~pasur.poker.policy`), abstractions
(:mod:`~pasur.poker.abstraction`), best response and exploitability (:mod:`~pasur.poker.measures`),
the CFR family (:mod:`~pasur.poker.solvers`, :mod:`~pasur.poker.dense_cfr`, :mod:`~pasur.poker.run`;
its update rules are :mod:`pasur.common.regret`'s, and every solver is a
:class:`~pasur.poker.solvers.Solver`),
OpenSpiel policies (:mod:`~pasur.poker.openspiel`), files (:mod:`~pasur.poker.strategy_io`), sizes
(:mod:`~pasur.poker.sizes`). Imports only :mod:`pasur.common` and third-party packages.

Front door (each name loaded when first named; torch on one thread unless
:func:`pasur.set_threads` says otherwise): :func:`get_game`, :class:`Engine`, :class:`CFRConfig`,
:func:`solve` (:func:`pasur.poker.run.solve`: iterations or a target, with a trace),
:func:`evaluate`, :func:`exploitability`, :class:`TabularPolicy`, :func:`export_policy` and
:func:`import_policy` (OpenSpiel's ``{infostate: [[action, probability], ...]}``),
:func:`to_pyspiel` and :func:`from_pyspiel` (needs ``open_spiel``), :func:`write_strategy`,
:func:`read_strategy`, :func:`write_openspiel`, :func:`read_openspiel` (the files of
``pasur poker solve --out``: ``read_openspiel`` reads ``policy.openspiel.json``, whose table
is under ``"policy"``, for :func:`import_policy`).

Leduc by DCFR to an exploitability of 0.01 chips, and the policy through OpenSpiel's form and back:

```pycon
>>> from pasur.poker import CFRConfig, Engine, evaluate, export_policy, import_policy, solve
>>> leduc = Engine("leduc")
>>> run = solve(leduc, CFRConfig("dcfr"), target_exploitability=0.01, check_every=50)
>>> run.exploitability <= 0.01, run.iterations % 50
(True, 0)
>>> table = export_policy(leduc, run.policy)
>>> len(table)                       # Leduc's 936 information sets
936
>>> abs(evaluate(leduc, import_policy(leduc, table)).exploitability - run.exploitability) < 1e-12
True

```
"""

from pasur import lazy_exports

#: name -> ``"module:attribute"``
EXPORTS = {
    "get_game": "pasur.poker.games:get_game",
    "Engine": "pasur.poker.engine:Engine",
    "CFRConfig": "pasur.poker.solvers:CFRConfig",
    "solve": "pasur.poker.run:solve",
    "evaluate": "pasur.poker.measures:evaluate",
    "exploitability": "pasur.poker.measures:exploitability",
    "TabularPolicy": "pasur.poker.policy:TabularPolicy",
    "export_policy": "pasur.poker.openspiel:export_policy",
    "import_policy": "pasur.poker.openspiel:import_policy",
    "to_pyspiel": "pasur.poker.openspiel:to_pyspiel",
    "from_pyspiel": "pasur.poker.openspiel:from_pyspiel",
    "write_strategy": "pasur.poker.strategy_io:write_strategy",
    "read_strategy": "pasur.poker.strategy_io:read_strategy",
    "write_openspiel": "pasur.poker.strategy_io:write_openspiel",
    "read_openspiel": "pasur.poker.strategy_io:read_openspiel",
}
__all__ = list(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
