"""The seat wrapper of the hidden-hand game: the referee holds the full state, and each seat gets
only its :class:`~pasur.hidden.infostate.InfoState`.

The rules stay in :mod:`pasur.game.state` (pure, open-hand); this module adds the history of
moves and the observation of one seat, as in pgx. An agent is called with an information state,
never with a :class:`~pasur.game.state.GameState`; its action is checked for legality here.

>>> from pasur.game.cards import Deck
>>> from pasur.hidden.agents import GreedyAgent, RandomAgent
>>> result = play_hidden(Deck.from_seed(1), (GreedyAgent(), RandomAgent(seed=0)))
>>> result.state.is_terminal, len(result.moves)
(True, 48)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pasur.game.cards import Deck
from pasur.game.rules import Action
from pasur.game.state import PLAYER_NAMES, GameState, IllegalActionError
from pasur.hidden.infostate import InfoState, Move, VariantInfoState


def observe(state: GameState, moves: Sequence[Move], player: int) -> InfoState:
    """What ``player`` sees of ``state`` reached by ``moves``: own hand, pool, piles, Surs, last
    capturer, the initial pool and the moves; never the other hand or the undealt cards. Under
    another variant than the standard game, a :class:`VariantInfoState` that carries it."""
    extra = {} if state.variant.is_standard else {"variant": state.variant}
    return (InfoState if not extra else VariantInfoState)(
        player=player,
        round=state.round,
        turn=state.turn,
        hand=state.hands[player],
        pool=state.pool,
        piles=state.piles,
        surs=state.surs,
        last_capturer=state.last_capturer,
        initial_pool=state.deck.pool_mask,
        moves=tuple(moves),
        **extra,
    )


class HiddenGame:
    """A game in progress: the full state (private to the referee) and the moves so far."""

    __slots__ = ("_moves", "_state")

    def __init__(self, deck: Deck, start: GameState | None = None) -> None:
        self._state = start or GameState.initial(deck)
        if start is not None and (start.round, start.turn) != (0, 0):
            raise ValueError("a hidden game starts at the deal: its history must be known")
        self._moves: list[Move] = []

    @property
    def state(self) -> GameState:
        """The full state: for the referee, the arena and replays, never for an agent."""
        return self._state

    @property
    def moves(self) -> tuple[Move, ...]:
        return tuple(self._moves)

    @property
    def mover(self) -> int:
        return self._state.player

    @property
    def is_terminal(self) -> bool:
        return self._state.is_terminal

    def observation(self, player: int) -> InfoState:
        return observe(self._state, self._moves, player)

    def apply(self, action: Action) -> None:
        s = self._state
        if not s.is_legal(action):
            raise IllegalActionError(f"illegal action {action} for {PLAYER_NAMES[s.player]} in {s.stage}")
        self._moves.append(Move(s.player, s.round, action.card, action.captured))
        self._state = s.apply(action, check=False)


@dataclass(frozen=True)
class HiddenResult:
    state: GameState
    moves: tuple[Move, ...]

    @property
    def utility(self) -> int:
        return self.state.utility()


def play_hidden(
    deck: Deck,
    agents: Sequence,
    on_move: Callable[[InfoState, Action], None] | None = None,
) -> HiddenResult:
    """Play one game; ``agents[p]`` gets only ``p``'s information state (the open-hand optimal
    player, and only it, gets the full state instead: :func:`sees_everything`)."""
    game = HiddenGame(deck)
    while not game.is_terminal:
        p = game.mover
        agent = agents[p]
        if sees_everything(agent):
            action = agent.choose_open(game.state, game.moves)
        else:
            info = game.observation(p)
            action = agent.choose(info)
            if on_move is not None:
                on_move(info, action)
        game.apply(action)
    return HiddenResult(game.state, game.moves)


def sees_everything(agent: object) -> bool:
    """Whether ``agent`` is given the full state: only the open-hand optimal player, the arena's
    upper bound. An allow-list by exact class, not an attribute an agent could set on itself."""
    from pasur.hidden.optimal import OptimalAgent

    return type(agent) is OptimalAgent
