"""pasur: solve and play the card game Pasur.

Layers, each tested against the one below it:
:mod:`pasur.game.cards` (cards, decks) -> :mod:`pasur.game.rules` (what a card can capture) ->
:mod:`pasur.game.state` (the scalar rules engine) -> :mod:`pasur.solve.reference` (exact solver),
:mod:`pasur.game.gamelog` (Figure-1 style logs), :mod:`pasur.play.agents`, :mod:`pasur.cli`.
"""

__version__ = "0.1.0"
