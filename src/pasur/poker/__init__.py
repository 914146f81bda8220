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
"""
