"""The responder's posterior over the agent's hidden hand, for the best-response bound (LBR,
:mod:`pasur.hidden.lbr`).

What the responder knows of the agent's current hand: it is a set of ``n`` of the cards the
responder has not seen, every such set equally likely before the agent's moves are taken into
account (:mod:`pasur.hidden.worlds`), and the agent's moves of *this* round; its moves of earlier
rounds were made from hands that are public now, so they say nothing about the current one. The
responder knows the agent's policy: it asks the agent what it would have played, at each of its
turns of the round, with each hand it could have been dealt (one batch per turn:
``choose_batch``), and keeps the hands under which it would have played what it did. A hand is
kept as the agent's *dealt* hand of the round (its current hand and the cards it has played in
the round), which does not change as the round goes on.

Exact where the hands are few (at most ``cap``: every hand, weighted by its likelihood); sampled
where they are many: a deterministic agent's likelihood is 0 or 1, so importance weights would
collapse onto the few hands that happen to fit; instead the sample is drawn by *rejection*: hands
drawn uniformly from the prior, each kept with probability its likelihood (0 or 1; the uniform
agent ``random``: 1 / its legal actions at each turn), which gives independent draws of the exact
posterior. A sample is carried from one decision to the next in the round (its hands checked
against the agent's turns since) and refilled by new draws, up to ``hands`` hands, at most
:data:`MAX_DRAWS` draws a decision; if none fits within them, the prior's draws are used instead
and the decision is counted as a *fallback* (the bias the estimator has: none but the sampling
error otherwise).

The agent's likelihoods need not come from the agent itself: asking a searching agent about
thousands of hands a deal costs minutes of search. Any responder strategy's gain is a lower bound
on the agent's exploitability, whatever it believes, so the posterior may come from a cheaper
*model* of the agent (:class:`Model`): a policy network's probabilities, or a deterministic
agent's choice softened by ``eps`` (probability ``1 - eps`` on its choice plus ``eps`` spread
over the legal actions), so that a hand is never rejected only because the model chose
differently from the agent. Only the responder's play depends on the model; the bound stays
valid, and only its tightness suffers when the model is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations
from math import comb

import numpy as np

from pasur.game.cards import cards_of
from pasur.game.rules import Action
from pasur.hidden.infostate import InfoState
from pasur.hidden.worlds import info_seed

#: every hand, weighted exactly, when the agent can hold at most this many
EXACT_CAP = 2000
#: hands drawn from the prior at most per decision (sampled mode)
MAX_DRAWS = 20_000
#: a deterministic model's weight spread over the legal actions, unless given
DEFAULT_EPS = 0.1


@dataclass(frozen=True)
class AgentTurn:
    """One turn of the agent, as the responder saw it: the responder's own information state
    when the agent was to move (the public position, and the moves so far), and what it played."""

    seen: InfoState
    action: Action


def agent_info(turn: AgentTurn, dealt: int) -> InfoState:
    """The agent's information state at ``turn`` if it was dealt ``dealt`` this round: the public
    part the responder saw, and the dealt hand less what it had played of it by then."""
    agent = 1 - turn.seen.player
    return replace(turn.seen, player=agent, hand=dealt & ~turn.seen.played_this_round(agent))


def is_uniform(agent) -> bool:
    """Whether the agent's policy is uniform over the legal actions (``random``): its
    likelihoods are 1 / actions, not its seeded choice (as :mod:`pasur.hidden.exact_exploit`)."""
    from pasur.hidden.agents import RandomAgent

    return type(agent) is RandomAgent


def is_distribution(player) -> bool:
    """Whether ``player`` has a policy network whose probabilities can be read (``policy``)."""
    from pasur.hidden.policy import PolicyAgent

    return isinstance(player, PolicyAgent)


@dataclass(frozen=True)
class Model:
    """What the responder takes the agent's policy to be: ``player``'s probabilities (its
    network's where ``distribution``, 1 / legal actions for ``random``, else 1 on its choice),
    mixed with the uniform policy by ``eps``."""

    player: object
    eps: float = 0.0
    distribution: bool = False

    def probs(self, infos: list[InfoState], action: Action) -> np.ndarray:
        """The probability of ``action`` at each of ``infos`` (one batch)."""
        if is_uniform(self.player):
            return np.array([1.0 / len(a) if action in a else 0.0 for a in (i.legal_actions() for i in infos)])
        if self.distribution:
            rows = self.player.model.evaluate(infos)
            p = np.array([float(q[acts.index(action)]) if action in acts else 0.0 for acts, q, _, _ in rows])
        else:
            p = np.array([1.0 if c == action else 0.0 for c in self.player.choose_batch(infos)])
        if self.eps == 0:
            return p
        uniform = [1.0 / len(a) if action in a else 0.0 for a in (i.legal_actions() for i in infos)]
        return (1 - self.eps) * p + self.eps * np.array(uniform)


def model_of(agent, model=None, eps: float | None = None) -> Model:
    """The responder's model: the agent itself, exactly, when no ``model`` is given; else
    ``model`` (a network's probabilities, or a choice softened by ``eps``, default 0.1 for a
    deterministic model and 0 for a network)."""
    if model is None:
        return Model(agent, 0.0 if eps is None else eps, False)
    dist = is_distribution(model)
    if eps is None:
        eps = 0.0 if dist or is_uniform(model) else DEFAULT_EPS
    if not 0.0 <= eps <= 1.0:
        raise ValueError(f"eps must lie in [0, 1], got {eps}")
    return Model(model, eps, dist)


def action_probs(agent, infos: list[InfoState], action: Action) -> np.ndarray:
    """The probability that ``agent`` plays ``action`` at each of ``infos`` (one batch), the
    agent taken as its own model."""
    return Model(agent).probs(infos, action)


def likelihood(model: Model, turns: list[AgentTurn], dealt: list[int]) -> np.ndarray:
    """The probability of the agent's ``turns`` under each dealt hand, by ``model`` (turn by
    turn, each turn asked only of the hands still possible)."""
    weight = np.ones(len(dealt))
    alive = list(range(len(dealt)))
    for turn in turns:
        if not alive:
            break
        probs = model.probs([agent_info(turn, dealt[i]) for i in alive], turn.action)
        weight[alive] *= probs
        alive = [i for i, p in zip(alive, probs, strict=True) if p > 0]
    return weight


@dataclass
class Posterior:
    """The agent's possible hands at one decision: ``hands`` (its current hand, int64 masks),
    ``weight`` (each hand's posterior weight, summing to any positive total), whether every hand
    was weighed (``exact``), whether the evidence had to be dropped (``fallback``), and how many
    hands were asked about (``asked``)."""

    hands: np.ndarray
    weight: np.ndarray
    exact: bool
    fallback: bool = False
    asked: int = 0


@dataclass
class HandTracker:
    """One game's posterior, kept by the responder: the agent's turns of the current round and,
    in sampled mode, the sample of dealt hands checked against the first ``checked`` of them;
    ``model``: the agent's likelihoods (:class:`Model`)."""

    model: Model
    hands: int = 200
    cap: int = EXACT_CAP
    seed: int = 0
    round: int = -1
    turns: list[AgentTurn] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    checked: int = 0

    def fork(self) -> HandTracker:
        """A copy that goes its own way (the model shared)."""
        return replace(self, turns=list(self.turns), kept=list(self.kept))

    def _at_round(self, round_: int) -> None:
        if round_ != self.round:
            self.round, self.turns, self.kept, self.checked = round_, [], [], 0

    def agent_moved(self, seen: InfoState, action: Action) -> None:
        """Record the agent's move: ``seen`` is the responder's information state before it."""
        self._at_round(seen.round)
        self.turns.append(AgentTurn(seen, action))

    def posterior(self, info: InfoState) -> Posterior:
        """The agent's possible current hands at the responder's decision ``info``."""
        self._at_round(info.round)
        n = info.opponent_hand_size
        unseen = cards_of(info.unseen)
        played = info.played_this_round(1 - info.player)
        if comb(len(unseen), n) <= self.cap:
            dealt = [sum(1 << c for c in h) | played for h in combinations(unseen, n)]
            weight = likelihood(self.model, self.turns, dealt)
            asked = len(dealt) if self.turns else 0
            if weight.sum() == 0:  # no hand explains the moves (an agent that is not a policy)
                return Posterior(_masks(dealt, played), np.ones(len(dealt)), True, True, asked)
            keep = weight > 0
            return Posterior(_masks(dealt, played)[keep], weight[keep], True, False, asked)
        return self._sampled(info, unseen, n, played)

    def _sampled(self, info: InfoState, unseen: list[int], n: int, played: int) -> Posterior:
        rng = info_seed(info, self.seed)
        new = self.turns[self.checked :]
        asked = len(self.kept) if new else 0
        kept = _accept(self.model, new, self.kept, rng) if new else list(self.kept)
        self.checked = len(self.turns)
        drawn = 0
        batch = max(2 * self.hands, 256)
        while len(kept) < self.hands and drawn < MAX_DRAWS:
            size = min(batch, MAX_DRAWS - drawn)
            fresh = _draw(rng, unseen, n, size, played)
            drawn += size
            kept += _accept(self.model, self.turns, fresh, rng)[: self.hands - len(kept)]
            if not self.turns:
                break
        asked += drawn if self.turns else 0
        if not kept:
            prior = _draw(rng, unseen, n, self.hands, played)
            return Posterior(_masks(prior, played), np.ones(len(prior)), False, True, asked)
        self.kept = kept
        return Posterior(_masks(kept, played), np.ones(len(kept)), False, False, asked)


def _draw(rng: np.random.Generator, unseen: list[int], n: int, size: int, played: int) -> list[int]:
    """``size`` dealt hands from the prior: ``n`` unseen cards drawn uniformly, and ``played``."""
    cards = np.asarray(unseen, dtype=np.int64)
    picks = rng.permuted(np.broadcast_to(cards, (size, cards.size)), axis=1)[:, :n]
    return [int(m) | played for m in np.bitwise_or.reduce(np.left_shift(np.int64(1), picks), axis=1)]


def _accept(model: Model, turns: list[AgentTurn], dealt: list[int], rng: np.random.Generator) -> list[int]:
    """The dealt hands kept by rejection: each with probability its likelihood of ``turns``."""
    weight = likelihood(model, turns, dealt)
    u = rng.random(len(dealt))
    return [d for d, w, x in zip(dealt, weight, u, strict=True) if w > 0 and x < w]


def _masks(dealt: list[int], played: int) -> np.ndarray:
    """Current hands (dealt less played) as int64 masks."""
    return np.array([d & ~played for d in dealt], dtype=np.int64)
