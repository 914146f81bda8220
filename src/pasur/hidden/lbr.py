"""A best-response bound for any agent of the hidden-hand game: local best response (LBR).

Lisý and Bowling (2017) bound how much a poker program can be beaten without solving the game: a
*responder* keeps the posterior over the program's private cards by asking the program what it
would have done with each hand, and at each of its own decisions plays the action with the best
expected value under that posterior, valued by a simple, fixed continuation. Whatever it wins is
won by a real strategy against the agent, so its expected gain never exceeds what a best response
wins: the agent's exploitability. Here:

- the posterior over the agent's current hand (:mod:`pasur.hidden.lbr_posterior`): every hand
  weighed by the agent's own choices this round, exact when it can hold at most 2,000 hands,
  sampled by rejection when it can hold more;
- each legal action valued by the rest of the round solved over the posterior's hands
  (:func:`pasur.hidden.roundsolve.solve_round`, mode ``consistent``: the responder's own later
  choices of the round are the same in every hand it cannot tell apart, weighted by the
  posterior; the agent's replies within the round are its open-hand best replies, a pessimistic
  stand-in for its real continuation), and the position at the end of the round by the boundary
  value (the learned one in the standard game; a small variant's exact one);
- the responder plays the action of the best posterior mean (the first in legal order on ties).

The posterior's likelihoods come from the agent itself by default, or from a cheaper *model* of
it (``model=``, :class:`pasur.hidden.lbr_posterior.Model`): the responder is then a different
strategy, but still a strategy, so its gain is still a lower bound.

The gain is the responder's mean margin per game, each deal played from both seats. It is a lower
bound on the exploitability up to the sampling error of the deals (and, where the posterior is
sampled, the responder plays a little worse, never better, than with the exact posterior).

>>> from pasur.game.cards import Deck
>>> from pasur.hidden.agents import GreedyAgent
>>> from pasur.game.variants import get_variant
>>> rec = lbr_duplicates([Deck.from_seed(0, get_variant("micro"))], GreedyAgent(), LBRResponder(GreedyAgent()))[0]
>>> rec["margin"] == (rec["a_as_alex"] - rec["b_as_alex"]) / 2
True
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Iterator, Sequence
from itertools import combinations

import numpy as np

from pasur.game.cards import Deck
from pasur.game.rules import Action
from pasur.game.variants import Variant
from pasur.hidden.game import HiddenGame
from pasur.hidden.infostate import InfoState
from pasur.hidden.lbr_posterior import EXACT_CAP, HandTracker, Posterior, is_uniform, model_of
from pasur.hidden.pimc import PIMCAgent, banked
from pasur.hidden.worlds import Worlds

#: the most round solves a responder keeps for reuse (well under a KiB each)
VALUES_KEPT = 20_000


class _PosteriorSearch(PIMCAgent):
    """The round solve of :class:`~pasur.hidden.pimc.PIMCAgent` (consistent mode, the boundary
    value beyond the round) over worlds given by the caller: the posterior's hands."""

    def __init__(self, device: str) -> None:
        super().__init__(1, mode="consistent", device=device, name="lbr-search")

    def posterior_values(self, info: InfoState, worlds: Worlds) -> list[tuple[Action, float]]:
        q = self._solve_rounds([info], [worlds])[0]
        return self._finish(info, q, worlds.weight)


class LBRResponder:
    """The responder against ``agent`` (see the module docstring): ``model``, ``model_eps``, what
    its likelihoods come from (:func:`~pasur.hidden.lbr_posterior.model_of`: the agent itself
    by default); ``hands``, the posterior's sample size where it is sampled; ``cap``, the most
    hands it weighs exactly; ``seed``, the seed of its draws. ``stats`` counts its decisions:
    exact, sampled, fallback (the agent's moves fitted no drawn hand), the hands weighed and the
    hands asked about (of the agent, or of the model when it is not the agent)."""

    name = "lbr"

    def __init__(self, agent, *, model=None, model_eps: float | None = None, hands: int = 200, cap: int = EXACT_CAP,
                 seed: int = 0, device: str = "cpu") -> None:  # fmt: skip
        if hands < 1:
            raise ValueError(f"the posterior needs at least one hand, got {hands}")
        self.agent = agent
        self.model = model_of(agent, model, model_eps)
        self.hands = hands
        self.cap = cap
        self.seed = seed
        self.search = _PosteriorSearch(device)
        self._values: dict[tuple, list[tuple[Action, float]]] = {}  # a solve per distinct input (see _solved)
        self.last_posterior: Posterior | None = None  # of its last decision (for checks)
        self.stats = {"decisions": 0, "exact": 0, "sampled": 0, "fallback": 0, "hands_weighed": 0, "agent_asked": 0,
                      "model_asked": 0}  # fmt: skip

    def tracker(self) -> HandTracker:
        """A new game's posterior."""
        return HandTracker(self.model, self.hands, self.cap, self.seed)

    def choose(self, info: InfoState, tracker: HandTracker) -> Action:
        """The responder's move at ``info``: the best action under the posterior."""
        actions = info.legal_actions()
        if len(actions) == 1:
            return actions[0]
        post = tracker.posterior(info)
        self.last_posterior = post
        self._count(post)
        values = self._solved(info, post)
        best = max(v for _, v in values)
        return next(a for a, v in values if v == best)

    def _solved(self, info: InfoState, post: Posterior) -> list[tuple[Action, float]]:
        """Each action's posterior value, solved once per distinct input: the round solve reads of
        ``info`` only what the key holds (the piles through the clubs and the banked points), so
        decks that differ in cards not yet seen reuse it (a small variant's every deal repeats
        most first-round decisions). At most ``VALUES_KEPT`` kept, then forgotten together."""
        worlds = _worlds(post)
        posterior = hashlib.blake2b(worlds.opp_hand.astype(np.int64).tobytes(), digest_size=16)
        posterior.update(worlds.weight.tobytes())  # a digest: an exact posterior may hold 2,000 hands
        key = (type(info), info.variant, info.player, info.round, info.turn, info.hand, info.pool, info.clubs,
               info.last_capturer, info.unseen, banked(info), len(worlds.weight), posterior.digest())  # fmt: skip
        values = self._values.get(key)
        if values is None:
            if len(self._values) >= VALUES_KEPT:
                self._values.clear()
            values = self._values[key] = self.search.posterior_values(info, worlds)
        return values

    def _count(self, post: Posterior) -> None:
        s = self.stats
        s["decisions"] += 1
        s["exact" if post.exact else "sampled"] += 1
        s["fallback"] += int(post.fallback)
        s["hands_weighed"] += len(post.hands)
        s["agent_asked" if self.model.player is self.agent else "model_asked"] += post.asked


def _worlds(post: Posterior) -> Worlds:
    """The posterior as the round solver's worlds (the round horizon needs no undealt order)."""
    return Worlds(post.hands, np.zeros((len(post.hands), 0), dtype=np.int64), post.weight.astype(np.float64))


def play_lbr(deck: Deck, agent, responder: LBRResponder, seat: int) -> int:
    """One game of ``responder`` in ``seat`` (0 Alex, 1 Bob) against ``agent``: Alex minus Bob.
    The responder sees only its own information state, before each of its moves and each of the
    agent's (what the agent then plays is public)."""
    game = HiddenGame(deck)
    tracker = responder.tracker()
    while not game.is_terminal:
        mover = game.mover
        if mover == seat:
            action = responder.choose(game.observation(seat), tracker)
        else:
            action = agent.choose(game.observation(mover))
            tracker.agent_moved(game.observation(seat), action)
        game.apply(action)
    return game.state.utility()


def lbr_duplicates(
    decks: Sequence[Deck], agent, responder: LBRResponder, on_deck: Callable[[int], None] | None = None
) -> list[dict]:
    """Each deck played twice, the responder as Alex then as Bob: one record per deck, as
    :func:`pasur.hidden.duplicate.play_duplicates` gives them with the responder as A
    (``margin``: the responder's mean margin over the two games)."""
    out = []
    for i, deck in enumerate(decks):
        u1 = play_lbr(deck, agent, responder, 0)
        u2 = play_lbr(deck, agent, responder, 1)
        out.append({"a_as_alex": u1, "b_as_alex": u2, "margin": (u1 - u2) / 2})
        if on_deck is not None:
            on_deck(i)
    return out


def every_deck(variant: Variant) -> Iterator[Deck]:
    """One deck per deal chance can make in ``variant`` (the pool without a Jack, then each hand
    as a set, in dealing order), each as likely as the others: :meth:`Variant.deals_count`."""
    jacks = {c for c in variant.cards if c // 4 == 10}

    def hands(rest: tuple[int, ...], n_hands: int) -> Iterator[tuple[int, ...]]:
        if n_hands == 0:
            yield ()
            return
        for hand in combinations(rest, variant.hand_size):
            others = tuple(c for c in rest if c not in hand)
            for tail in hands(others, n_hands - 1):
                yield hand + tail

    for pool in combinations([c for c in variant.cards if c not in jacks], variant.pool_size):
        rest = tuple(c for c in variant.cards if c not in pool)
        for dealt in hands(rest, 2 * variant.deals):
            yield Deck(pool + dealt, variant)


def expected_utility(game: HiddenGame, agent, responder: LBRResponder, seat: int, tracker: HandTracker) -> float:
    """Alex minus Bob expected from ``game`` on: as :func:`play_lbr`, but the uniform agent
    (``random``) is followed down every one of its legal actions, each 1 / their number, instead
    of its one seeded choice, so the expectation is over its policy as the exact exploitability
    takes it (:mod:`pasur.hidden.exact_exploit`)."""
    while not game.is_terminal:
        mover = game.mover
        if mover == seat:
            game.apply(responder.choose(game.observation(seat), tracker))
            continue
        seen = game.observation(seat)
        if not is_uniform(agent):
            action = agent.choose(game.observation(mover))
            tracker.agent_moved(seen, action)
            game.apply(action)
            continue
        actions = game.observation(mover).legal_actions()
        total = 0.0
        for action in actions:
            branch, branch_tracker = copy.deepcopy(game), tracker.fork()
            branch_tracker.agent_moved(seen, action)
            branch.apply(action)
            total += expected_utility(branch, agent, responder, seat, branch_tracker)
        return total / len(actions)
    return float(game.state.utility())


def exact_seats(variant: Variant, agent, responder: LBRResponder) -> tuple[float, float]:
    """Alex minus Bob expected with the responder as Alex, and as Bob, over every deal of a small
    variant and every move of a uniform agent: no sampling of deals or moves, so comparable with
    the exact best responses (:meth:`pasur.hidden.exact_cfr.HiddenCFR.best_response`)."""
    decks = list(every_deck(variant))
    as_alex = [expected_utility(HiddenGame(d), agent, responder, 0, responder.tracker()) for d in decks]
    as_bob = [expected_utility(HiddenGame(d), agent, responder, 1, responder.tracker()) for d in decks]
    return float(np.mean(as_alex)), float(np.mean(as_bob))


def exact_gain(variant: Variant, agent, responder: LBRResponder) -> float:
    """The responder's expected gain over every deal of a small variant (points per game, the
    mean over both seats: comparable with the exact exploitability, NashConv / 2)."""
    as_alex, as_bob = exact_seats(variant, agent, responder)
    return (as_alex - as_bob) / 2
