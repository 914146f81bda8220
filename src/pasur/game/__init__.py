"""The game of Pasur as the spec (docs/rules.md) has it: cards and decks, the capture rules, the
state with its legal actions, game logs, matches, and the rule variants as data.

Front door (each name loaded when first named): :class:`Deck`, :class:`NamedDeck`,
:func:`seed_decks`, :func:`read_deck_file`, :class:`GameState`, :class:`Action`,
:func:`get_variant`, :data:`VARIANTS`, :func:`parse_card`, :func:`format_card`,
:func:`format_cards`, :func:`cards_of`, :class:`GameLog`.

A deck of the ``micro`` variant (6 cards), its deal, and a game played to the end:

```pycon
>>> from pasur.game import Deck, GameState, get_variant, format_cards
>>> deck = Deck.from_seed(0, get_variant("micro"))
>>> format_cards(deck.cards)
'AC TD JD TC JC AD'
>>> state = GameState.initial(deck)
>>> format_cards(state.hands[0]), format_cards(state.hands[1]), format_cards(state.pool)
('JD', 'TC', 'AC TD')
>>> while not state.is_terminal:
...     state = state.apply(state.legal_actions()[0])
>>> state.points, state.utility()
((14, 0), 14)

```
"""

from pasur import lazy_exports

#: name -> ``"module:attribute"``
EXPORTS = {
    "Deck": "pasur.game.cards:Deck",
    "NamedDeck": "pasur.game.cards:NamedDeck",
    "seed_decks": "pasur.game.cards:seed_decks",
    "read_deck_file": "pasur.game.cards:read_deck_file",
    "parse_card": "pasur.game.cards:parse_card",
    "format_card": "pasur.game.cards:format_card",
    "format_cards": "pasur.game.cards:format_cards",
    "cards_of": "pasur.game.cards:cards_of",
    "GameState": "pasur.game.state:GameState",
    "Action": "pasur.game.rules:Action",
    "GameLog": "pasur.game.gamelog:GameLog",
    "get_variant": "pasur.game.variants:get_variant",
    "VARIANTS": "pasur.game.variants:VARIANTS",
}
__all__ = list(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
