"""The hidden-hand game of Pasur: what a player sees, worlds consistent with it, agents that play
from it, and an arena that measures them (see ``docs/hidden.md``).

Front door (each name loaded when first named; torch on one thread unless
:func:`pasur.set_threads` says otherwise): :func:`make_agent` (any agent by its spec:
:data:`NAMES`, options after colons, ``BEST`` the strongest), :class:`HiddenGame` (the referee),
:class:`InfoState` (what one player has seen), :func:`play_hidden` (one game),
:func:`play_pair` (two agents on the same duplicate deals, in this process, nothing written),
:class:`ArenaSpec` and :func:`run_arena` (every pair, resumable, into a folder; Ray or inline).

One game between two agents, each seeing only its own information state; then two agents on 4
duplicate deals (each deal played twice, seats swapped):

```pycon
>>> from pasur.game import Deck
>>> from pasur.hidden import HiddenGame, make_agent, play_hidden, play_pair
>>> game = HiddenGame(Deck.from_seed(7))
>>> info = game.observation(game.mover)
>>> info.player, bin(info.hand).count("1"), bin(info.pool).count("1")
(0, 4, 4)
>>> result = play_hidden(Deck.from_seed(7), [make_agent("heuristic"), make_agent("random", seed=1)])
>>> len(result.moves), result.utility == result.state.utility()
(48, True)
>>> r = play_pair("heuristic", "greedy", deals=4, seed=0)
>>> r["a"], r["b"], r["deals"], r["games"], r["ci95"][0] <= r["margin"] <= r["ci95"][1]
('heuristic', 'greedy', 4, 8, True)

```
"""

from pasur import lazy_exports

#: name -> ``"module:attribute"``
EXPORTS = {
    "make_agent": "pasur.hidden.registry:make_agent",
    "NAMES": "pasur.hidden.registry:NAMES",
    "BEST": "pasur.hidden.registry:BEST",
    "HiddenGame": "pasur.hidden.game:HiddenGame",
    "play_hidden": "pasur.hidden.game:play_hidden",
    "InfoState": "pasur.hidden.infostate:InfoState",
    "play_pair": "pasur.hidden.arena:play_pair",
    "ArenaSpec": "pasur.hidden.arena:ArenaSpec",
    "run_arena": "pasur.hidden.arena:run_arena",
}
__all__ = list(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
