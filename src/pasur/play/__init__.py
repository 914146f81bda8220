"""Playing the open-hand game: scalar agents and single games, many games of one deck at once in
lockstep on tensors (batch agents, strategy tables, models), the measures of a matchup, and each
game's infoset features.

Front door (each name loaded when first named; torch on one thread unless
:func:`pasur.set_threads` says otherwise): :func:`make_agent` (``random``, ``greedy``,
``exact``), :func:`play_game`, :func:`play_batch`, :class:`BatchRandom`, :class:`BatchGreedy`,
:class:`BatchExact`, :class:`BatchStrategy`, :func:`matchup_measures`.

The exact player against itself reaches the exact value; 200 games of greedy against random at
once, measured:

```pycon
>>> from pasur.game import Deck, get_variant
>>> from pasur.play import BatchGreedy, BatchRandom, make_agent, matchup_measures, play_batch, play_game
>>> deck = Deck.from_seed(1, get_variant("mini"))
>>> play_game(deck, make_agent("exact"), make_agent("exact")).final.utility()
-8
>>> games = play_batch(Deck.from_seed(7), BatchGreedy(), BatchRandom(seed=0), n_games=200)
>>> m = matchup_measures(games.utility())
>>> m["games"], m["ci95"][0] <= m["mean"] <= m["ci95"][1]
(200, True)

```
"""

from pasur import lazy_exports

#: name -> ``"module:attribute"``
EXPORTS = {
    "make_agent": "pasur.play.agents:make_agent",
    "play_game": "pasur.play.agents:play_game",
    "play_batch": "pasur.play.selfplay:play_batch",
    "BatchRandom": "pasur.play.selfplay:BatchRandom",
    "BatchGreedy": "pasur.play.selfplay:BatchGreedy",
    "BatchExact": "pasur.play.selfplay:BatchExact",
    "BatchStrategy": "pasur.play.selfplay:BatchStrategy",
    "matchup_measures": "pasur.play.measures:matchup_measures",
}
__all__ = list(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
