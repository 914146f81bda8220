"""The scalar rules engine: an immutable game state, legal actions, applying them.

This module is the specification in code. It favours plain, checkable steps over
speed; the tensor engine and every solver are tested against it.

>>> from pasur.game.cards import Deck
>>> s = GameState.initial(Deck.from_seed(0))
>>> s.round, s.turn, s.player, len(s.legal_actions()) > 0
(0, 0, 0, True)
>>> while not s.is_terminal:
...     s = s.apply(s.legal_actions()[0])
>>> sum(s.points) >= 20 or s.pool != 0   # 20 points plus Surs, unless nobody ever captured
True
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pasur.game.cards import HAND_SIZE, N_ROUNDS, Deck, format_cards
from pasur.game.rules import Action, is_sur, legal_actions
from pasur.game.variants import STANDARD, Variant

ALEX, BOB = 0, 1
PLAYER_NAMES = ("Alex", "Bob")
FINAL_ROUND = N_ROUNDS - 1
TURNS_PER_ROUND = 2 * HAND_SIZE


class IllegalActionError(ValueError):
    """An action that is not legal in the state it was applied to."""


def _pair(t: tuple[int, int], player: int, new: int) -> tuple[int, int]:
    return (new, t[1]) if player == 0 else (t[0], new)


@dataclass(frozen=True, slots=True)
class GameState:
    """Everything about an open-hand Pasur position.

    Card sets are masks (:mod:`pasur.game.cards`). ``turn`` counts the cards played in
    the current round (0..8); Alex moves on even turns, Bob on odd ones. The state
    after the last card of round 5 (final sweep done) is terminal.

    ``variant`` (:mod:`pasur.game.variants`, default the standard game) sets the deck, the
    hands, the deals and the scores. ``deck`` may be ``None`` in a tree where chance deals each
    round as the game goes (:mod:`pasur.hidden.history_tree`): only :meth:`initial`,
    :meth:`undealt`, :meth:`check` and dealing the next round read it.
    """

    deck: Deck
    round: int
    turn: int
    hands: tuple[int, int]
    pool: int
    piles: tuple[int, int] = (0, 0)
    surs: tuple[int, int] = (0, 0)
    last_capturer: int | None = None
    variant: Variant = field(default=STANDARD, repr=False)

    def __deepcopy__(self, memo) -> GameState:  # immutable all through: OpenSpiel's clones copy it
        return self

    # -- construction ---------------------------------------------------------
    @classmethod
    def initial(cls, deck: Deck) -> GameState:
        return cls(
            deck=deck,
            round=0,
            turn=0,
            hands=(deck.hand_mask(ALEX, 0), deck.hand_mask(BOB, 0)),
            pool=deck.pool_mask,
            variant=deck.variant,
        )

    def undealt(self) -> int:
        """Cards of the rounds after the current one, still in the dealer's hand."""
        m = 0
        for r in range(self.round + 1, self.variant.deals):
            m |= self.deck.hand_mask(ALEX, r) | self.deck.hand_mask(BOB, r)
        return m

    def check(self) -> None:
        """Raise ``ValueError`` unless the state is consistent: every card in exactly one
        place, hand sizes matching the turn, round and turn in range."""
        v = self.variant
        if not 0 <= self.round < v.deals or not 0 <= self.turn <= v.turns_per_round:
            raise ValueError(f"round {self.round} / turn {self.turn} out of range")
        places = [self.hands[0], self.hands[1], self.pool, self.piles[0], self.piles[1], self.undealt()]
        total = 0
        for m in places:
            if total & m:
                raise ValueError(f"cards in two places: {format_cards(total & m)}")
            total |= m
        if total != v.deck_mask:
            raise ValueError(f"cards missing: {format_cards(v.deck_mask & ~total)}")
        a, b = self.hands[0].bit_count(), self.hands[1].bit_count()
        if (a, b) != (v.hand_size - (self.turn + 1) // 2, v.hand_size - self.turn // 2):
            raise ValueError(f"hand sizes {a}, {b} do not match turn {self.turn}")

    # -- whose turn, and what can be done ---------------------------------------
    @property
    def player(self) -> int:
        """Player to move (0 = Alex, 1 = Bob)."""
        return self.turn & 1

    @property
    def is_terminal(self) -> bool:
        v = self.variant
        return self.round == v.deals - 1 and self.turn == 2 * v.hand_size

    def legal_actions(self) -> list[Action]:
        if self.is_terminal:
            return []
        return legal_actions(self.hands[self.player], self.pool)

    def is_legal(self, action: Action) -> bool:
        return action in self.legal_actions()

    # -- transitions ------------------------------------------------------------
    def apply(self, action: Action, *, check: bool = True) -> GameState:
        """The state after ``action``, including the deal of the next round or the
        final sweep when it is the last card of a round."""
        if check and not self.is_legal(action):
            raise IllegalActionError(f"illegal action {action} for {PLAYER_NAMES[self.player]} in {self.stage}")
        s = self.play(action)
        return s.end_round() if s.turn == 2 * self.variant.hand_size else s

    def play(self, action: Action) -> GameState:
        """The card play alone, without what follows the last card of a round (see
        :meth:`end_round`). Unchecked; :meth:`apply` is the public transition."""
        p = self.player
        card_bit = 1 << action.card
        hands = _pair(self.hands, p, self.hands[p] & ~card_bit)
        piles, surs, last = self.piles, self.surs, self.last_capturer
        if action.captured:
            pool = self.pool & ~action.captured
            piles = _pair(piles, p, piles[p] | action.captured | card_bit)
            if is_sur(action, self.pool, self.round, final_round=self.variant.deals - 1):
                surs = _pair(surs, p, surs[p] + 1)
            last = p
        else:
            pool = self.pool | card_bit
        return GameState(self.deck, self.round, self.turn + 1, hands, pool, piles, surs, last, self.variant)

    def end_round(self) -> GameState:
        """After the 8th card: deal the next round, or, after round 5, sweep the pool to the
        last capturer of the whole game (to nobody if nobody ever captured)."""
        if self.turn != self.variant.turns_per_round:
            raise ValueError(f"round {self.round} is not over (turn {self.turn})")
        if self.round < self.variant.final_round:
            rnd = self.round + 1
            hands = (self.deck.hand_mask(ALEX, rnd), self.deck.hand_mask(BOB, rnd))
            return replace(self, round=rnd, turn=0, hands=hands)
        last = self.last_capturer
        if last is None or not self.pool:
            return self
        return replace(self, pool=0, piles=_pair(self.piles, last, self.piles[last] | self.pool))

    def with_(self, **changes) -> GameState:
        """A copy with some fields changed (for crafted positions in tests)."""
        return replace(self, **changes)

    # -- scores -------------------------------------------------------------------
    @property
    def clubs(self) -> tuple[int, int]:
        clubs = self.variant.club_mask
        return (self.piles[0] & clubs).bit_count(), (self.piles[1] & clubs).bit_count()

    @property
    def clubs_winner(self) -> int | None:
        """The player who has clinched the clubs bonus (7 or more clubs), if any."""
        ca, cb = self.clubs
        need = self.variant.clubs_for_bonus
        if ca >= need:
            return ALEX
        if cb >= need:
            return BOB
        return None

    @property
    def card_points(self) -> tuple[int, int]:
        """Points of the captured cards alone (Aces, Jacks, 2♣, 10♦ in the standard game)."""
        v = self.variant
        return v.points_in(self.piles[0]), v.points_in(self.piles[1])

    @property
    def points(self) -> tuple[int, int]:
        """Points so far: card points, 5 per Sur, and the clubs bonus once clinched."""
        cp, w, v = self.card_points, self.clubs_winner, self.variant
        return (
            cp[0] + v.sur_points * self.surs[0] + (v.clubs_bonus if w == ALEX else 0),
            cp[1] + v.sur_points * self.surs[1] + (v.clubs_bonus if w == BOB else 0),
        )

    @property
    def score_diff(self) -> int:
        """Alex's points minus Bob's points so far."""
        a, b = self.points
        return a - b

    def utility(self) -> int:
        """Alex minus Bob at the end of the game (zero-sum); only defined at terminal states."""
        if not self.is_terminal:
            raise ValueError(f"utility asked at non-terminal stage {self.stage}")
        return self.score_diff

    @property
    def stage(self) -> str:
        """``round.turn.player`` as in the paper's Figure 1 (turn counts pairs of plays)."""
        if self.is_terminal:
            return "end"
        return f"{self.round}.{self.turn // 2}.{self.player}"

    def __str__(self) -> str:
        return (
            f"[{self.stage}] Alex: {format_cards(self.hands[0])} | Bob: {format_cards(self.hands[1])}"
            f" | pool: {format_cards(self.pool)} | points {self.points[0]}-{self.points[1]}"
        )
