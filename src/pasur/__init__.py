"""pasur: solve and play the card game Pasur.

Layers, each tested against the one below it:
:mod:`pasur.cards` (cards, decks) -> :mod:`pasur.rules` (what a card can capture) ->
:mod:`pasur.state` (the scalar rules engine) -> :mod:`pasur.reference` (exact solver),
:mod:`pasur.gamelog` (Figure-1 style logs), :mod:`pasur.agents`, :mod:`pasur.cli`.
"""

__version__ = "0.1.0"
