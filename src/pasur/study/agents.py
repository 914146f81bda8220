"""Batch agents from their names, for self-play and experiments: the play layer's own
(``random``, ``greedy``, ``exact``), a strategy table (``table:PATH``, played on the deck's
tree) and an XGBoost model (``model:PATH``).

>>> from pasur.game.cards import seed_decks
>>> agent, tree = batch_agent("greedy", seed_decks(1, 3)[0], seed=0, device="cpu", trees={})
>>> agent.name, tree
('greedy', None)
"""

from __future__ import annotations

from pathlib import Path

from pasur.common.errors import PasurInputError
from pasur.game.cards import NamedDeck
from pasur.game.state import GameState

#: the names :func:`batch_agent` takes, for help texts
AGENT_SPECS = (
    "random, greedy, exact, table:PATH (a strategy table, or the folder pasur solve wrote it in) "
    "or model:PATH (an XGBoost model)"
)
#: the strategy table's name in the folder ``pasur solve --out`` writes
TABLE_FILE = "strategy.parquet"


def batch_agent(spec: str, nd: NamedDeck, seed: int | None, device, trees: dict):
    """``(agent, tree)``: the agent named by ``spec`` and, for a table agent, the tree its table
    is played on (built once per tree mode into ``trees``; ``None`` for the others)."""
    from pasur.play.selfplay import BATCH_AGENTS, BatchStrategy

    if spec.startswith("model:"):
        from pasur.learn.files import check_model_deck
        from pasur.learn.models import BatchModel, load_model

        path = Path(spec[len("model:") :])
        model = load_model(path)
        check_model_deck(model, path, nd.deck)
        return BatchModel(model, seed), None
    if spec.startswith("table:"):
        from pasur.solve.strategy_io import read_strategy_table, table_tree_mode
        from pasur.solve.tree import build_tree

        path = Path(spec[len("table:") :])
        if path.is_dir() and (path / TABLE_FILE).is_file():
            path = path / TABLE_FILE
        mode = table_tree_mode(path)
        if mode not in trees:
            trees[mode] = build_tree(GameState.initial(nd.deck), mode, device, infosets=False)
        return BatchStrategy(read_strategy_table(path, trees[mode]), seed), trees[mode]
    if spec not in BATCH_AGENTS:
        raise PasurInputError(f"unknown agent {spec!r} (choose from {AGENT_SPECS})")
    return (BATCH_AGENTS[spec](seed) if spec == "random" else BATCH_AGENTS[spec]()), None
