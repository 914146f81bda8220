"""One hidden-hand game as the environments see it: the referee (:class:`~pasur.hidden.game.HiddenGame`,
which alone holds the deck and both hands), dealt from a seeded generator, played by action ids,
and observed by a seat only through its :class:`~pasur.hidden.infostate.InfoState`.

>>> import numpy as np
>>> t = Table("micro")
>>> t.deal(np.random.default_rng(0))
>>> obs = t.observe(0)
>>> obs["observation"].shape, int(obs["action_mask"].sum()) == len(t.info(0).legal_actions())
((540,), True)
"""

from __future__ import annotations

import numpy as np

from pasur.game.cards import Deck
from pasur.game.variants import Variant, get_variant
from pasur.hidden.encoding import action_id, encode, legal_mask
from pasur.hidden.game import HiddenGame, sees_everything
from pasur.hidden.infostate import InfoState

#: the agents' names, by seat (Alex deals first and leads every deal)
AGENTS = ("alex", "bob")
#: what an illegal action earns the player who made it (its opponent gets the opposite): the
#: game's utility bound as OpenSpiel is told it, worse than any margin a game can end with
ILLEGAL_REWARD = -200.0


class Table:
    """A game of ``variant``, dealt by :meth:`deal`: ``deck`` (for replays and tests only, never for
    an observation), ``game`` (the referee)."""

    def __init__(self, variant: str | Variant = "standard") -> None:
        self.variant = get_variant(variant)
        self.deck: Deck | None = None
        self.game: HiddenGame | None = None

    def deal(self, rng: np.random.Generator) -> None:
        """A new game on a deck drawn from ``rng`` (through a deck seed, as ``pasur deal --seed``)."""
        self.deck = Deck.from_seed(int(rng.integers(2**63)), self.variant)
        self.game = HiddenGame(self.deck)

    @property
    def mover(self) -> int:
        return self.game.mover

    @property
    def is_terminal(self) -> bool:
        return self.game.is_terminal

    def utility(self) -> int:
        """Alex's points minus Bob's at the end of the game."""
        return self.game.state.utility()

    def info(self, seat: int) -> InfoState:
        return self.game.observation(seat)

    def observe(self, seat: int) -> dict[str, np.ndarray]:
        """``{"observation": float32 [540], "action_mask": int8 [12180]}`` of ``seat``, from its
        information state alone (the mask is all zeros when it is not to move)."""
        info = self.info(seat)
        return {"observation": encode(info), "action_mask": legal_mask(info)}

    def play(self, aid: int) -> bool:
        """Play the mover's action of id ``aid``; ``False`` (and nothing played) if it is not legal."""
        legal = {action_id(a): a for a in self.game.state.legal_actions()}
        action = legal.get(int(aid))
        if action is None:
            return False
        self.game.apply(action)
        return True

    def play_agent(self, agent) -> None:
        """The mover's move chosen by a :class:`~pasur.hidden.agents.HiddenAgent` from its
        information state (the open-hand optimal player, and only it, from the full state)."""
        g = self.game
        if sees_everything(agent):
            g.apply(agent.choose_open(g.state, g.moves))
        else:
            g.apply(agent.choose(g.observation(g.mover)))

    def render(self) -> str:
        """The public view: stage, pool, captures, Surs, points (no hand)."""
        from pasur.game.cards import format_cards

        info = self.info(0)
        a, b = info.points
        return (
            f"[{info.stage}] pool: {format_cards(info.pool) or '-'} | captured: alex {info.piles[0].bit_count()} "
            f"cards, bob {info.piles[1].bit_count()} | Surs {info.surs[0]}-{info.surs[1]} | points {a}-{b}"
        )
