"""Perfect-information Monte Carlo (PIMC) and its information-set-consistent variant.

PIMC(K) samples K worlds consistent with the information state (:mod:`pasur.hidden.worlds`),
solves each open-hand, averages each legal action's value over the worlds and plays the best.
All worlds of all the decisions asked at once are solved in one batched tensor pass.

``horizon="round"`` (the default) solves to the end of the current round and values the position
before the next deal with a boundary value (:mod:`pasur.hidden.boundary`): milliseconds per
world in every round, and no pretence of knowing the later deals. ``horizon="game"`` is textbook
PIMC: every world solved exactly to the end of the game with the open-hand solver's forest
(:func:`pasur.solve.tree.build_forest`), about 0.3 s per world from round 0.

``exhaustive=N`` replaces the K sampled worlds by every hand the opponent can hold when there
are at most N of them (its last card of a round; two or three cards late in the game; agent flag
``:exact``). Round horizon only: to the end of the game a world is more than the hand.

``belief`` (agent flag ``:belief``) draws the worlds from a learned belief over the opponent's
hand (:mod:`pasur.hidden.belief`) instead of uniformly; with ``exhaustive``, every hand weighted
by it.

``mode="consistent"`` (agent ``ispimc``) makes the agent's own later choices in the round the same
in every world it cannot tell apart (:mod:`pasur.hidden.roundsolve`), which removes the strategy
fusion of plain PIMC; it needs the round horizon.

Under a variant's rules (``info.variant``, :mod:`pasur.game.variants`) the round solve scores by the
variant and the deal boundary is valued exactly (:class:`~pasur.hidden.variant_boundary.ExactBoundary`:
every next deal, solved): the learned boundary value and ``:clubs``'s closed form know only the
standard game. The game horizon's forest takes the variant from its start states. The learned
belief (``:belief``) knows only the standard game: a variant's decision is refused with it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from pasur.game.cards import cards_of
from pasur.game.rules import Action
from pasur.game.variants import Variant
from pasur.hidden.agents import HiddenAgent
from pasur.hidden.infostate import InfoState
from pasur.hidden.roundsolve import Roots, solve_round
from pasur.hidden.worlds import Worlds, info_seed, sample_worlds, world_state

HORIZONS = ("round", "game")
#: roots solved in one call at most (bounds memory: about 600 nodes per root at a round's start)
MAX_ROOTS = 2048
#: worlds of one game-horizon forest at most (a decision's own K worlds are one forest whatever K)
GAME_ROOTS = 256


def banked(info: InfoState) -> int:
    """Alex minus Bob of the points that can no longer change: card points and Surs (the clubs
    bonus is paid at the end, so the solvers count it in the future)."""
    v = info.variant
    a = v.points_in(info.piles[0]) + v.sur_points * info.surs[0]
    b = v.points_in(info.piles[1]) + v.sur_points * info.surs[1]
    return a - b


class PIMCAgent(HiddenAgent):
    """PIMC(K); see the module docstring. ``boundary``: the value at the deal boundary (default:
    the shipped learned one); ``seed``: the seed of world sampling (mixed with the information
    state, so decisions do not depend on batching)."""

    def __init__(
        self,
        worlds: int = 50,
        *,
        horizon: str = "round",
        mode: str = "minimax",
        boundary=None,
        seed: int = 0,
        device: str | torch.device = "cpu",
        name: str | None = None,
        balanced: bool = True,
        others: int = 4,
        infer: bool = False,
        exhaustive: int = 0,
        belief=None,
    ) -> None:
        if worlds < 1:
            raise ValueError(f"PIMC needs at least one world, got {worlds}")
        if horizon not in HORIZONS:
            raise ValueError(f"unknown horizon {horizon!r} (choose from {', '.join(HORIZONS)})")
        if mode != "minimax" and horizon != "round":
            raise ValueError("the consistent modes solve one round: they need horizon='round'")
        if exhaustive and horizon != "round":
            raise ValueError("exhaustive worlds are the exact belief only with horizon='round'")
        self.k = worlds
        self.horizon = horizon
        self.mode = mode
        self.seed = seed
        self.balanced = balanced
        self.others = others
        self.infer = infer
        self.exhaustive = exhaustive
        if belief is not None and infer:
            raise ValueError("the learned belief replaces the soft-greedy weights: not both")
        self.device = torch.device(device)
        if belief == "default":
            from pasur.hidden.belief import default_belief

            belief = default_belief(str(self.device))  # the agent's device, as the boundary's below
        self.belief = belief
        if boundary is None and horizon == "round":
            from pasur.hidden.boundary import default_boundary

            boundary = default_boundary(str(self.device))
        self.boundary = boundary
        self._exact_boundaries: dict[Variant, object] = {}
        prefix = {"minimax": "pimc", "consistent": "ispimc", "both": "ispimc2"}[mode]
        self.name = name or f"{prefix}:{worlds}" + (":game" if horizon == "game" else "")

    # -- the interface -------------------------------------------------------------------------
    def action_values(self, info: InfoState) -> list[tuple[Action, float]]:
        return self.values_batch([info])[0]

    def choose(self, info: InfoState) -> Action:
        return self.choose_batch([info])[0]

    def choose_batch(self, infos: Sequence[InfoState]) -> list[Action]:
        out = []
        for vals in self.values_batch(infos):
            best = max(v for _, v in vals)
            out.append(next(a for a, v in vals if v == best))
        return out

    def values_batch(self, infos: Sequence[InfoState]) -> list[list[tuple[Action, float]]]:
        """Each decision's legal actions with their expected final margin for the mover."""
        results: list[list[tuple[Action, float]] | None] = [None] * len(infos)
        todo = []
        for i, info in enumerate(infos):
            actions = info.legal_actions()
            if len(actions) == 1:  # nothing to decide
                results[i] = [(actions[0], float(info.margin))]
            else:
                todo.append(i)
        if self.belief is not None:
            if any(not infos[i].variant.is_standard for i in todo):
                raise ValueError("the learned belief knows only the standard game, not a variant's")
            drawn = self.belief.worlds_batch([infos[i] for i in todo], self.k, self.seed, exhaustive=self.exhaustive)
            worlds = dict(zip(todo, drawn, strict=True))
        else:
            worlds = {
                i: sample_worlds(infos[i], self.k, self.seed, balanced=self.balanced, exhaustive=self.exhaustive)
                for i in todo
            }
        if self.infer:
            from pasur.hidden.inference import opponent_weights

            worlds = {i: opponent_weights(infos[i], w) for i, w in worlds.items()}
        if todo:
            worlds = dict(zip(todo, self.reweight([infos[i] for i in todo], [worlds[i] for i in todo]), strict=True))
        if self.horizon == "game":  # one forest for decisions that share the mover's hand and pool
            same = lambda i: (infos[i].variant, infos[i].round, infos[i].turn, infos[i].hand, infos[i].pool)  # noqa: E731
            for part in _batches(todo, same, lambda i: worlds[i].k, GAME_ROOTS):
                qs = self._solve_game([infos[i] for i in part], [worlds[i] for i in part])
                for i, q in zip(part, qs, strict=True):
                    results[i] = self._finish(infos[i], q, worlds[i].weight)
        else:
            per_world = self.others if self.mode == "both" else 1
            layer = lambda i: (infos[i].variant, infos[i].round, infos[i].turn)  # noqa: E731
            for part in _batches(todo, layer, lambda i: worlds[i].k * per_world, MAX_ROOTS):
                qs = self._solve_rounds([infos[i] for i in part], [worlds[i] for i in part])
                for i, q in zip(part, qs, strict=True):
                    results[i] = self._finish(infos[i], q, worlds[i].weight)
        return results  # type: ignore[return-value]

    def reweight(self, infos: list[InfoState], worlds: list[Worlds]) -> list[Worlds]:
        """A subclass's hook to reweigh each decision's worlds (here: unchanged)."""
        return worlds

    # -- solving -------------------------------------------------------------------------------
    def _finish(self, info: InfoState, q: np.ndarray, weight: np.ndarray) -> list[tuple[Action, float]]:
        """[K, A] future values (Alex minus Bob) -> each action's expected final margin for the mover."""
        mean = (weight[:, None] * q).sum(0) / weight.sum()
        sign = 1 if info.player == 0 else -1
        return [(a, float(sign * (banked(info) + m))) for a, m in zip(info.legal_actions(), mean, strict=True)]

    def _solve_rounds(self, infos: list[InfoState], worlds: list[Worlds]) -> list[np.ndarray]:
        """One batched round solve for decisions at the same (round, turn): per decision, its K
        worlds (and, in ``both`` mode, ``others - 1`` more hands of the mover per world, that the
        opponent cannot rule out); returns each decision's [K, A] values (true hand only)."""
        dev = self.device
        me = infos[0].player
        mine, opp, rest, group, weight, first = [], [], [], [], [], []
        for g, (info, w) in enumerate(zip(infos, worlds, strict=True)):
            first.append(len(mine))
            unseen = info.unseen
            for j in range(w.k):
                h = int(w.opp_hand[j])
                mine.append(info.hand)
                opp.append(h)
                rest.append(unseen & ~h)
                weight.append(float(w.weight[j]))
            if self.mode == "both":
                rng = info_seed(info, self.seed + 1)  # the same whatever the batch
                n_mine = info.hand.bit_count()
                for j in range(w.k):
                    h = int(w.opp_hand[j])
                    pool_cards = np.array(cards_of(info.hand | (unseen & ~h)))
                    for _ in range(self.others - 1):
                        fake = sum(1 << int(c) for c in rng.choice(pool_cards, n_mine, replace=False))
                        mine.append(fake)
                        opp.append(h)
                        rest.append((info.hand | unseen) & ~h & ~fake)
                        weight.append(float(w.weight[j]))
            group += [g] * (len(mine) - len(group))

        def t(xs) -> torch.Tensor:
            return torch.tensor(xs, dtype=torch.int64, device=dev)

        def per_root(f) -> torch.Tensor:
            return t([f(infos[g]) for g in group])

        mine_t, opp_t = t(mine), t(opp)
        roots = Roots(
            round=infos[0].round,
            turn=infos[0].turn,
            hands=(mine_t, opp_t) if me == 0 else (opp_t, mine_t),
            pool=per_root(lambda i: i.pool),
            clubs=(per_root(lambda i: i.clubs[0]), per_root(lambda i: i.clubs[1])),
            last=per_root(lambda i: 0 if i.last_capturer is None else i.last_capturer + 1),
            remaining=t(rest),
            group=t(group),
            weight=torch.tensor(weight, dtype=torch.float64, device=dev),
            variant=infos[0].variant,
        )
        sol = solve_round(roots, self._boundary_for(infos[0]), self.mode)
        q = sol.q.to("cpu", torch.float64).numpy()
        out = []
        for g, (info, w) in enumerate(zip(infos, worlds, strict=True)):
            actions = info.legal_actions()
            lo = first[g]
            got = sol.card[lo, : len(actions)].tolist()
            if got != [a.card for a in actions] or int(sol.n_actions[lo]) != len(actions):
                raise AssertionError("the round solver's actions differ from the rules' legal actions")
            out.append(q[lo : lo + w.k, : len(actions)])
        return out

    def _boundary_for(self, info: InfoState):
        """The value at the end of ``info``'s round: none after the last, the agent's own in the
        standard game, the exact one of a variant (one per variant, memoized across decisions)."""
        variant = info.variant
        if info.round == variant.final_round:
            return None
        if variant.is_standard:
            return self.boundary
        if variant not in self._exact_boundaries:
            from pasur.hidden.variant_boundary import ExactBoundary

            self._exact_boundaries[variant] = ExactBoundary(variant, self.device)
        return self._exact_boundaries[variant]

    def _solve_game(self, infos: list[InfoState], worlds: list[Worlds]) -> list[np.ndarray]:
        """Every world of decisions with the same mover's hand and pool solved to the end of the
        game in one forest; each decision's [K, A] values."""
        from pasur.solve.exact import solve_exact
        from pasur.solve.tree import build_forest

        states = [world_state(info, w, j) for info, w in zip(infos, worlds, strict=True) for j in range(w.k)]
        tree = build_forest(states, "compact", self.device)
        q = solve_exact(tree).root_action_values().to("cpu", torch.float64).numpy()
        ends = np.cumsum([w.k for w in worlds])
        return [q[end - w.k : end] for w, end in zip(worlds, ends, strict=True)]


def _batches(todo: list[int], key, size, limit: int) -> list[list[int]]:
    """The decisions ``todo`` in groups of equal ``key(i)`` (in order of first appearance), each
    cut into parts of at most ``limit`` roots (``size(i)`` each; a part has at least one decision)."""
    groups: dict = {}
    for i in todo:
        groups.setdefault(key(i), []).append(i)
    parts = []
    for same in groups.values():
        part, roots = [], 0
        for i in same:
            n = size(i)
            if part and roots + n > limit:
                parts.append(part)
                part, roots = [], 0
            part.append(i)
            roots += n
        parts.append(part)
    return parts
