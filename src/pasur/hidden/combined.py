"""Search and the policy-value network together (issue 27, item 3).

:class:`CombinedAgent` is PIMC (:class:`~pasur.hidden.pimc.PIMCAgent`, any mode) with the
network (:mod:`pasur.hidden.policy`) used in up to three places:

- **a prior on the choice** (agent options ``:pvL`` and ``:plL``): each legal action's score is
  the search's value (expected final margin) plus ``L`` times the network's value of that action
  (``:pv``, in points; the score is then divided by ``1 + L``, so it stays a margin) or plus ``L``
  times the log of the network's probability of it (``:pl``); the agent plays the best score;
- **a short list** (``:topN``): the agent chooses only among the network's N most probable
  actions (the search still solves them all; the values of the others are reported unchanged);
- **the opponent model** (``:popp``, or ``:poppT`` with a temperature T): each sampled world is
  weighted by the likelihood of the opponent's moves of this round under the network, evaluated
  from the opponent's information state as it was at each of those moves in that world
  (:func:`policy_opponent_weights`), as ``:infer`` does with the soft-greedy model. Each move's
  probability is mixed with a uniform choice (weight :data:`FLOOR`) so that one surprising move
  does not zero a world, and the log-likelihood is multiplied by T (1 by default).

The opponent's information state at one of its past moves is the observer's public history cut
before that move (pool, piles, Surs, last capturer, moves) with the world's opponent hand plus
the cards it played from then on: a function of what the observer has seen and of the world only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pasur.game.rules import Action, is_sur
from pasur.game.state import FINAL_ROUND
from pasur.hidden.infostate import InfoState, Move
from pasur.hidden.pimc import PIMCAgent
from pasur.hidden.worlds import Worlds

#: the uniform share mixed into each of the opponent's move probabilities (``:popp``)
FLOOR = 0.1


def opponent_views(info: InfoState) -> list[tuple[InfoState, Move, int]]:
    """The opponent's moves of this round, each with the opponent's information state just before
    it, its hand left empty (the world fills it in), and the cards it played from that move on.
    Only public information is read."""
    opp = 1 - info.player
    first = next((i for i, m in enumerate(info.moves) if m.round == info.round), len(info.moves))
    this_round = info.moves[first:]
    if not any(m.player == opp for m in this_round):
        return []
    # undo the round's moves, last first, to recover the public state before each
    pool, piles, surs = info.pool, list(info.piles), list(info.surs)
    before: list[tuple[int, tuple[int, int], tuple[int, int]]] = []
    for m in reversed(this_round):
        if m.captured:
            pool = pool | m.captured
            piles[m.player] &= ~(m.captured | (1 << m.card))
            if is_sur(m.action, pool, info.round, final_round=FINAL_ROUND):
                surs[m.player] -= 1
        else:
            pool &= ~(1 << m.card)
        before.append((pool, (piles[0], piles[1]), (surs[0], surs[1])))
    before.reverse()
    last = None
    for m in info.moves[:first]:
        if m.captured:
            last = m.player
    out = []
    for j, m in enumerate(this_round):
        if m.player == opp:
            later = 0
            for m2 in this_round[j:]:
                if m2.player == opp:
                    later |= 1 << m2.card
            pool_j, piles_j, surs_j = before[j]
            view = InfoState(
                player=opp,
                round=info.round,
                turn=j,
                hand=0,
                pool=pool_j,
                piles=piles_j,
                surs=surs_j,
                last_capturer=last,
                initial_pool=info.initial_pool,
                moves=info.moves[: first + j],
            )
            out.append((view, m, later))
        if m.captured:
            last = m.player
    return out


def policy_opponent_weights(
    infos: Sequence[InfoState], worlds: Sequence[Worlds], model, *, temperature: float = 1.0, floor: float = FLOOR
) -> list[Worlds]:
    """Each decision's worlds, their weights multiplied by the likelihood (to the power
    ``temperature``) of the opponent's moves of this round under the policy network ``model``
    (:class:`~pasur.hidden.policy.PolicyModel`), each move's probability mixed with a uniform
    choice (``floor``). One network call for every decision, world and move."""
    from dataclasses import replace

    queries: list[InfoState] = []
    index: dict[tuple[int, int], int] = {}  # (decision, (view, hand)) -> row
    plan = []  # per decision: per world, the rows and the observed moves
    for d, (info, w) in enumerate(zip(infos, worlds, strict=True)):
        views = opponent_views(info)
        rows = []
        for k in range(w.k):
            per = []
            for v, (view, move, later) in enumerate(views):
                hand = int(w.opp_hand[k]) | later
                key = (d, v, hand)
                if key not in index:
                    index[key] = len(queries)
                    queries.append(replace(view, hand=hand))
                per.append((index[key], move))
            rows.append(per)
        plan.append(rows)
    if not queries:
        return list(worlds)
    evals = model.evaluate(queries)
    out = []
    for w, rows in zip(worlds, plan, strict=True):
        if not rows or not rows[0]:
            out.append(w)
            continue
        logw = np.zeros(w.k)
        for k, per in enumerate(rows):
            total = 0.0
            for row, move in per:
                actions, p, _, _ = evals[row]
                j = next(i for i, a in enumerate(actions) if a.card == move.card and a.captured == move.captured)
                total += np.log((1 - floor) * p[j] + floor / len(actions))
            logw[k] = temperature * total
        out.append(Worlds(w.opp_hand, w.undealt, w.weight * np.exp(logw - logw.max())))
    return out


class CombinedAgent(PIMCAgent):
    """PIMC with the policy-value network as a prior on its choice, a short list, or the opponent
    model (see the module docstring). ``policy``: a :class:`~pasur.hidden.policy.PolicyModel`
    (default: the shipped one); the other keywords are :class:`PIMCAgent`'s."""

    def __init__(
        self,
        worlds: int = 20,
        *,
        policy=None,
        value_weight: float = 0.0,
        logp_weight: float = 0.0,
        top: int = 0,
        opponent: bool = False,
        temperature: float = 1.0,
        **kwargs,
    ) -> None:
        if value_weight < 0 or logp_weight < 0 or top < 0 or temperature <= 0:
            raise ValueError("the policy's weights and the short list must be >= 0, the temperature > 0")
        if opponent and (kwargs.get("infer") or kwargs.get("belief") is not None):
            raise ValueError("the policy as opponent model replaces :infer and :belief: not both")
        super().__init__(worlds, **kwargs)
        if policy is None:
            from pasur.hidden.policy import default_policy

            policy = default_policy(str(self.device))
        self.policy = policy
        self.value_weight = value_weight
        self.logp_weight = logp_weight
        self.top = top
        self.opponent = opponent
        self.temperature = temperature

    def reweight(self, infos: list[InfoState], worlds: list[Worlds]) -> list[Worlds]:
        if not self.opponent:
            return worlds
        return policy_opponent_weights(infos, worlds, self.policy, temperature=self.temperature)

    def values_batch(self, infos: Sequence[InfoState]) -> list[list[tuple[Action, float]]]:
        """Each legal action's expected final margin: the search's, averaged with the network's
        value of the action as ``:pv`` asks (still a margin, in points). What hints show and
        what training reads; the choice adds ``:pl``'s prior (:meth:`scores_batch`)."""
        return self._blend(infos)[0]

    def scores_batch(self, infos: Sequence[InfoState]) -> list[list[tuple[Action, float]]]:
        """What the agent maximizes: :meth:`values_batch` plus ``:pl``'s weight times the log of
        the network's probability of each action (not a margin)."""
        return self._blend(infos)[1]

    def decide_batch(self, infos: Sequence[InfoState]) -> tuple[list[list[tuple[Action, float]]], list[Action]]:
        """The margins (:meth:`values_batch`) and the actions played (:meth:`choose_batch`), from
        one search."""
        values, scores, evals = self._blend(infos, for_choice=True)
        return values, self._pick(scores, evals)

    def choose_batch(self, infos: Sequence[InfoState]) -> list[Action]:
        return self.decide_batch(infos)[1]

    def _blend(self, infos: Sequence[InfoState], for_choice: bool = False):
        """The margins, the scores and the network's outputs by decision (those with more than
        one legal action; evaluated only when a weight, or ``:top`` for a choice, reads them)."""
        vals = super().values_batch(infos)
        todo = [i for i, v in enumerate(vals) if len(v) > 1]
        need = self.value_weight or self.logp_weight or (for_choice and self.top)
        evals = dict(zip(todo, self.policy.evaluate([infos[i] for i in todo]), strict=True)) if need else {}
        if not (self.value_weight or self.logp_weight):
            return vals, vals, evals
        margins, scores = [], []
        for i, v in enumerate(vals):
            if i not in evals:
                margins.append(v)
                scores.append(v)
                continue
            actions, p, q, _ = evals[i]
            if [a for a, _ in v] != list(actions):  # the network's order, as the search's
                at = {a: k for k, a in enumerate(actions)}
                order = [at[a] for a, _ in v]
                p, q = p[order], q[order]
            m = (np.array([x for _, x in v]) + self.value_weight * q) / (1 + self.value_weight)
            s = m + self.logp_weight * np.log(np.maximum(p, 1e-12))
            margins.append([(a, float(x)) for (a, _), x in zip(v, m, strict=True)])
            scores.append([(a, float(x)) for (a, _), x in zip(v, s, strict=True)])
        return margins, scores, evals

    def _pick(self, scores, evals) -> list[Action]:
        """The best score of each decision, among the network's ``top`` most probable actions
        when ``:topN`` asks (first on ties)."""
        out = []
        for i, v in enumerate(scores):
            allowed = range(len(v))
            if self.top and len(v) > self.top:
                p = evals[i][1]
                if [a for a, _ in v] != list(evals[i][0]):
                    at = {a: k for k, a in enumerate(evals[i][0])}
                    p = p[[at[a] for a, _ in v]]
                allowed = sorted(np.argsort(-p, kind="stable")[: self.top].tolist())
            best = max(v[j][1] for j in allowed)
            out.append(next(v[j][0] for j in allowed if v[j][1] == best))
        return out
