"""What one player knows in the hidden-hand game: an :class:`InfoState`.

The information state is built from what the player has seen (their own hand, the initial pool,
every card played and what it took, by whom) and nothing else: it has no deck, no opponent hand
and no undealt card, so an agent handed one cannot look at them. Two full states that the
player cannot tell apart give equal information states (the tests check this on sampled worlds).

>>> from pasur.game.cards import Deck, format_cards
>>> from pasur.hidden.game import HiddenGame
>>> g = HiddenGame(Deck.from_seed(2))
>>> info = g.observation(0)
>>> (info.round, info.turn, info.player, info.to_move, info.opponent_hand_size)
(0, 0, 0, True, 4)
>>> info.unseen.bit_count()   # 52 - 4 in the pool - 4 in Alex's hand
44
>>> hasattr(info, "deck") or hasattr(info, "hands")
False
"""

from __future__ import annotations

from dataclasses import dataclass

from pasur.game.rules import Action, legal_actions
from pasur.game.state import PLAYER_NAMES
from pasur.game.variants import STANDARD, Variant


@dataclass(frozen=True, slots=True)
class Move:
    """A card played: by whom, in which round, and what it took (``captured == 0``: laid)."""

    player: int
    round: int
    card: int
    captured: int

    @property
    def action(self) -> Action:
        return Action(self.card, self.captured)

    def __deepcopy__(self, memo) -> Move:  # immutable: OpenSpiel's clones copy the moves
        return self


@dataclass(frozen=True, slots=True)
class InfoState:
    """Everything ``player`` has seen, and only that. Card sets are masks.

    ``piles`` and ``surs`` are public (captures are made face up); ``moves`` is every card played
    so far in order. ``hand`` is the observer's own current hand.
    """

    player: int
    round: int
    turn: int
    hand: int
    pool: int
    piles: tuple[int, int]
    surs: tuple[int, int]
    last_capturer: int | None
    initial_pool: int
    moves: tuple[Move, ...]

    @property
    def variant(self) -> Variant:
        """The rules: the standard game here; a :class:`VariantInfoState` carries its own."""
        return STANDARD

    # -- whose turn, and what can be done ---------------------------------------------------
    @property
    def mover(self) -> int:
        """The player to move (Alex on even turns)."""
        return self.turn & 1

    @property
    def to_move(self) -> bool:
        return not self.is_terminal and self.mover == self.player

    @property
    def is_terminal(self) -> bool:
        v = self.variant
        return self.round == v.deals - 1 and self.turn == 2 * v.hand_size

    def legal_actions(self) -> list[Action]:
        """The observer's legal actions (only when it is their turn)."""
        if not self.to_move:
            raise ValueError(f"{PLAYER_NAMES[self.player]} is not to move at {self.stage}")
        return legal_actions(self.hand, self.pool)

    # -- what is known about the unseen cards ------------------------------------------------
    @property
    def seen(self) -> int:
        """Cards the observer has seen: own hand, pool and both piles (every played card is in one)."""
        return self.hand | self.pool | self.piles[0] | self.piles[1]

    @property
    def unseen(self) -> int:
        """The opponent's hand and the undealt cards, together: the observer cannot tell them apart."""
        return self.variant.deck_mask & ~self.seen

    @property
    def opponent_hand_size(self) -> int:
        opp = 1 - self.player
        if self.is_terminal:
            return 0
        return self.variant.hand_size - (self.turn + 1 - opp) // 2

    def played_this_round(self, player: int) -> int:
        """Cards ``player`` has played in the current round (public)."""
        m = 0
        for mv in self.moves:
            if mv.round == self.round and mv.player == player:
                m |= 1 << mv.card
        return m

    def dealt(self, player: int, round_: int) -> int | None:
        """The hand ``player`` was dealt in ``round_``, when the observer knows it: their own, and
        the opponent's once the round is over; ``None`` otherwise."""
        played = 0
        for mv in self.moves:
            if mv.round == round_ and mv.player == player:
                played |= 1 << mv.card
        if player == self.player and round_ == self.round:
            return played | self.hand
        if played.bit_count() == self.variant.hand_size:
            return played
        return None

    # -- scores (public) ------------------------------------------------------------------------
    @property
    def clubs(self) -> tuple[int, int]:
        clubs = self.variant.club_mask
        return (self.piles[0] & clubs).bit_count(), (self.piles[1] & clubs).bit_count()

    @property
    def points(self) -> tuple[int, int]:
        """Points so far: card points, 5 per Sur, and the clubs bonus once clinched."""
        v, (ca, cb) = self.variant, self.clubs
        bonus = (v.clubs_bonus if ca >= v.clubs_for_bonus else 0, v.clubs_bonus if cb >= v.clubs_for_bonus else 0)
        return tuple(v.points_in(self.piles[p]) + v.sur_points * self.surs[p] + bonus[p] for p in (0, 1))  # type: ignore[return-value]

    @property
    def margin(self) -> int:
        """The observer's points minus the opponent's, so far."""
        a, b = self.points
        return a - b if self.player == 0 else b - a

    @property
    def stage(self) -> str:
        if self.is_terminal:
            return "end"
        return f"{self.round}.{self.turn // 2}.{self.mover}"


@dataclass(frozen=True, slots=True)
class VariantInfoState(InfoState):
    """An information state of a game played under another :class:`~pasur.game.variants.Variant`
    than the standard one: the same fields, and the variant (public: the rules of the table)."""

    variant: Variant
