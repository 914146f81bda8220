"""Embedding CFR (section 3.2, algorithm 1), full width and vectorized, in advisor space.

Info-blocks are the public betting sequences (section 4.1): every decision row of a round shares
that round's embedding ``Phi`` (:mod:`pasur.poker.embedding.phi`). Stored per round, per
(decision row, action, advisor), and nothing else: the cumulative embedded regret ``R(E, a)``,
the current advisor strategy ``sigma(E, a)`` and the average-strategy numerator. One iteration:

1. each class's strategy is recovered, ``sigma(J, a) = Phi^T sigma(E, a)`` (eq. 4);
2. one traversal of the real game, every board and hand at once, both players (simultaneous
   updates, as algorithm 1), gives each class's counterfactual values; the instantaneous regret
   of each hand ``r(J, a) = q(J, a) - sum_b sigma(J, b) q(J, b)`` is embedded, ``Phi r(J, a)``,
   and added to ``R(E, a)`` (eq. 5; the paper's 1/T scaling does not change regret matching);
3. regret matching per advisor (eq. 6) gives the next ``sigma(E)``;
4. the average: ``sum_t W_t(E) sigma_t(E, a)`` with ``W_t(E) = Phi pi_t(J)``, the player's own
   reach embedded like the regrets. This is our reading of eq. 7 (which averages ``sigma(E)``
   with equal weights): with Phi the identity it is vanilla CFR's average strategy exactly, and
   with a one-hot Phi that of CFR on the abstraction; ``average="uniform"`` is eq. 7 as written.
   The average strategy of the classes is ``Phi^T`` of it (eq. 8).

The paper samples about 10^6 deals per iteration; we traverse all of them (full width): one
iteration is one vanilla-CFR iteration over the whole game. The traversal runs on suit-isomorphism
classes (:mod:`pasur.poker.embedding.classes`), node-major ``[nodes, classes]`` per player, one
level of the betting tree at a time (every betting sequence of that depth together), terminal
utilities as small matrix products per board (:mod:`pasur.poker.embedding.operators`); the last
round runs in chunks of boards. With Phi the identity its iterates are vanilla CFR's, with a
one-hot Phi those of CFR on the abstraction (the tests check both against
:class:`pasur.poker.solvers.CFRSolver`). The same traversal with the best action in place of the
strategy gives an exact best response (:meth:`EmbeddingCFR.exploitability`), equal to
:mod:`pasur.poker.measures`' and several times faster.

``config`` (a :class:`pasur.poker.solvers.CFRConfig`) picks the regret rule and the update order,
the kernel's (:mod:`pasur.common.regret`): the paper's vanilla CFR with simultaneous updates by
default; CFR+, Linear CFR, DCFR and the predictive variants, and alternating updates (one
traversal per player: player 0's rows first, player 1's then see player 0's new strategy), each
with the core's :class:`~pasur.poker.solvers.CFRSolver` iterates (tested on a small variant). With
an identity Phi this is the lossless solver of a whole game (``pasur poker solve-lossless``).
"""

from __future__ import annotations

import itertools

import torch

from pasur.common import regret as kernel
from pasur.common.errors import PasurInputError
from pasur.common.regret import PREDICTIVE, SCHEDULED
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.operators import RoundOperators
from pasur.poker.embedding.phi import Embedding
from pasur.poker.solvers import SNAP, CFRConfig, UpdatePasses
from pasur.poker.tree import N_ACTIONS

AVERAGES = ("reach", "uniform")


class Buffers:
    """A pass's accumulators, kept for the next pass by shape (the two players' levels have the
    same shapes): a large tensor allocated anew is mapped afresh and every page of it faults when
    first written, which was a quarter of the lossless Numeral211 run's CPU time (320 million
    faults, 859 of 3,683 s)."""

    def __init__(self) -> None:
        self.free: dict[tuple, list[torch.Tensor]] = {}

    def zeros(self, shape: tuple[int, ...], dtype, device) -> torch.Tensor:
        kept = self.free.get((tuple(shape), dtype, str(device)))
        return kept.pop().zero_() if kept else torch.zeros(shape, dtype=dtype, device=device)

    def give_back(self, x: torch.Tensor) -> None:
        self.free.setdefault((tuple(x.shape), x.dtype, str(x.device)), []).append(x)

    def clear(self) -> None:
        self.free.clear()


class EmbeddingCFR(UpdatePasses):
    """CFR in advisor space on ``engine`` (suit-isomorphic boards, two private cards).

    ``embeddings``: one :class:`Embedding` per round, over that round's classes. ``chunk``: classes
    of the last round processed together (memory about ``chunk x 2.2 KB`` per betting node level
    for Numeral211). A :class:`pasur.poker.solvers.Solver`; regret matching and the average are
    :mod:`pasur.common.regret`'s."""

    def __init__(
        self,
        engine,
        embeddings: list[Embedding],
        *,
        space: ClassSpace | None = None,
        chunk: int = 4096,
        average: str = "reach",
        config: CFRConfig | None = None,
    ) -> None:
        if not engine.iso:
            raise PasurInputError("Embedding CFR runs on the suit-isomorphic engine (iso=True)")
        if average not in AVERAGES:
            raise PasurInputError(f"average must be one of {', '.join(AVERAGES)}, not {average!r}")
        self.engine = e = engine
        self.space = space or ClassSpace(engine)
        if len(embeddings) != e.R:
            raise PasurInputError(f"one embedding per round ({e.R}) needed, got {len(embeddings)}")
        for r, (emb, rc) in enumerate(zip(embeddings, self.space.rounds, strict=True)):
            if emb.n != rc.n:
                raise PasurInputError(f"round {r + 1}: the embedding covers {emb.n} classes, the round has {rc.n}")
        self.emb = embeddings
        self.average = average
        self.config = config or CFRConfig(method="cfr", updates="simultaneous")
        if self.config.method in SCHEDULED:
            raise PasurInputError(f"Embedding CFR does not run the scheduled method {self.config.method!r} yet")
        dev, dt = e.device, e.dtype
        self.ops = [RoundOperators(self.space, r, dev, dt) for r in range(e.R)]
        lt = lambda a: None if a is None else torch.as_tensor(a, dtype=torch.int64, device=dev)  # noqa: E731
        self.parent = [lt(rc.parent) for rc in self.space.rounds]
        self.children = [lt(rc.children) for rc in self.space.rounds]
        self.class_weight = [torch.as_tensor(rc.weight, dtype=dt, device=dev) for rc in self.space.rounds]
        t = e.tree
        self.legal = [torch.as_tensor(t.legal[t.round_decisions[r]], device=dev) for r in range(e.R)]
        self.n_rows = [int(lg.shape[0]) for lg in self.legal]
        self.regret = [
            torch.zeros(n * N_ACTIONS, emb.m, dtype=dt, device=dev)
            for n, emb in zip(self.n_rows, self.emb, strict=True)
        ]
        self.strategy_sum = [torch.zeros_like(x) for x in self.regret]
        self.current = [self._matching(r) for r in range(e.R)]
        #: the (row, action) ids of the edges into each level, per round (None at the roots)
        self.edges = [
            [None] + [lv0.row_lo * N_ACTIONS + lv1.child_slot for lv0, lv1 in itertools.pairwise(lvs)]
            for lvs in e.levels
        ]
        self.iteration = 0
        self._buffers = Buffers()
        self.value = None  # player 0's expected payoff under the last iterate (chips per game)
        last = self.space.rounds[-1]
        self.chunks = []
        for g in last.groups:
            per = max(1, chunk // g.size)
            for i in range(0, len(g.boards), per):
                self.chunks.append((g.lo + i * g.size, g.lo + min(len(g.boards), i + per) * g.size))

    # ------------------------------------------------------------------ storage

    def stored_values(self) -> int:
        """Strategy values stored: one per (decision row, legal action, advisor), every round."""
        return sum(int(lg.sum()) * emb.m for lg, emb in zip(self.legal, self.emb, strict=True))

    def _matching(self, r: int) -> torch.Tensor:
        """Regret matching per (row, advisor), uniform over legal actions where no regret is positive."""
        reg = self.regret[r]
        out = kernel.regret_matching(reg.view(self.n_rows[r], N_ACTIONS, -1), self.legal[r][:, :, None])
        return out.reshape(reg.shape).contiguous()

    def average_tables(self) -> list[torch.Tensor]:
        """The average advisor strategies ``[rows * A, m]`` (uniform where never reached)."""
        return [
            kernel.normalize(s.view(self.n_rows[r], N_ACTIONS, -1), self.legal[r][:, :, None]).reshape(s.shape)
            for r, s in enumerate(self.strategy_sum)
        ]

    def average_policy(self):
        from pasur.poker.embedding.policy import AdvisorPolicy

        return AdvisorPolicy(self.engine, self.space, self.emb, self.average_tables())

    def current_policy(self):
        from pasur.poker.embedding.policy import AdvisorPolicy

        return AdvisorPolicy(self.engine, self.space, self.emb, [c.clone() for c in self.current])

    def state_dict(self) -> dict:
        """Everything the next iterate depends on (the predictive variants' current strategy is
        not a function of the regrets alone, so it is kept too)."""
        return {
            "iteration": self.iteration,
            "regret": [x.cpu() for x in self.regret],
            "strategy_sum": [x.cpu() for x in self.strategy_sum],
            "current": [x.cpu() for x in self.current],
        }

    def load_state_dict(self, state: dict) -> None:
        names = ("regret", "strategy_sum", "current") if "current" in state else ("regret", "strategy_sum")
        for name in names:
            new = state[name]
            if len(new) != len(self.regret) or any(a.shape != b.shape for a, b in zip(new, self.regret, strict=True)):
                raise PasurInputError(f"checkpoint {name} tables do not fit this solver")
        # copied into the solver's tables (never aliased: the state may be a mapped checkpoint)
        for name in names:
            for mine, saved in zip(getattr(self, name), state[name], strict=True):
                mine.copy_(saved)
        self.iteration = int(state["iteration"])
        if "current" not in state:  # checkpoints before the predictive variants: the regrets' strategy
            self.current = [self._matching(r) for r in range(self.engine.R)]

    # ------------------------------------------------------------------ one iteration

    def _pass(self, players: tuple[int, ...]) -> None:
        """One traversal under the current strategies; the rows ``players`` act at take its
        regrets, average-strategy weight and new strategy (:class:`UpdatePasses` numbers the
        iterations and orders the passes). Only those players' values are computed, and only
        their rows are touched: each level of the betting tree has one actor, so a player's rows
        are whole levels, contiguous slices of the tables (with alternating updates half the
        traversal and half the table work of both players')."""
        e = self.engine
        R = e.R
        c, t = self.config, self.iteration
        # embedded regrets per level's child edges, and reach weights, in the first stage of each
        # round's embedding (Embedding.gather_into; Embedding.finish makes them advisor values)
        acc_q = [[None] * len(e.levels[r]) for r in range(R)]
        acc_w = [[None] * len(e.levels[r]) for r in range(R)]
        values = self._sweep(self.current, acc_q, acc_w, players)
        p = players[0]
        root = float((values[p][0] * self.class_weight[0]).sum())
        self.value = root if p == 0 else -root  # zero-sum: player 1's value is minus player 0's
        weight = kernel.average_weight(c.method, t, c.gamma)
        for r in range(R):
            emb = self.emb[r]
            levels = e.levels[r]
            for d, lv in enumerate(levels):
                if acc_q[r][d] is None:
                    continue
                m, lo = lv.n_dec, lv.row_lo
                rows = slice(lo * N_ACTIONS, (lo + m) * N_ACTIONS)
                q = self._buffers.zeros((m * N_ACTIONS, emb.width), e.dtype, e.device)
                q.index_add_(0, levels[d + 1].child_slot, acc_q[r][d])
                self._buffers.give_back(acc_q[r][d])
                acc_q[r][d] = None
                inst = self._advisor_regret(r, emb.finish(q), lo, m)
                current = self.current[r][rows].view(m, N_ACTIONS, -1)
                total = self.strategy_sum[r][rows].view(m, N_ACTIONS, -1)
                if self.average == "reach":
                    total.addcmul_(emb.finish(acc_w[r][d])[:, None, :], current, value=weight)
                else:
                    total.add_(current)
                self._update(r, inst, lo, m, t)
                self._buffers.give_back(q)
                if acc_w[r][d] is not None:
                    self._buffers.give_back(acc_w[r][d])

    def _update(self, r: int, inst: torch.Tensor, lo: int, m: int, t: int) -> None:
        """Regrets and strategy of round ``r``'s decision rows ``lo:lo + m`` after iteration ``t``,
        in place (``inst``: their instantaneous advisor regrets, used up)."""
        c = self.config
        rows = slice(lo * N_ACTIONS, (lo + m) * N_ACTIONS)
        reg = self.regret[r][rows]
        legal = self.legal[r][lo : lo + m, :, None]
        if c.method in PREDICTIVE:
            kernel.predictive_update_(reg, inst, c.method, t, c.alpha)
            explicit = kernel.predicted_regret(reg, inst, c.method, t, c.alpha, out=inst)
        else:
            reg.add_(inst)
            kernel.discount_(reg, c.method, t, alpha=c.alpha, beta=c.beta, scratch=inst)
            explicit = reg
        current = self.current[r][rows].view(m, N_ACTIONS, -1)
        kernel.regret_matching(explicit.view(m, N_ACTIONS, -1), legal, out=current)

    def _advisor_regret(self, r: int, q: torch.Tensor, lo: int, m: int) -> torch.Tensor:
        """The instantaneous advisor regrets of round ``r``'s decision rows ``lo:lo + m`` (one
        level; ``q`` ``[m * actions, advisors]``) from their embedded class regrets ``q`` (the
        paper's rule: ``q`` itself); a subclass may take them otherwise. Those rows of
        ``self.current`` still hold this iteration's strategy (earlier levels' are updated)."""
        return q

    def best_response_values(self, tables: list[torch.Tensor] | None = None) -> tuple[float, float]:
        """Each player's best-response value (chips per game) against the other's strategy in
        ``tables`` (advisor tables; default: the average strategy). Exact in class space: the
        opponent's strategy is suit-symmetric, so every hand of a class has the same best action."""
        self._buffers.clear()  # the measurement's average tables take their place
        values = self._sweep(self.average_tables() if tables is None else tables, None, None)
        return tuple(float((v[0] * self.class_weight[0]).sum()) for v in values)

    def exploitability(self, tables: list[torch.Tensor] | None = None) -> float:
        """NashConv / 2 of the average strategy (or of ``tables``), as :mod:`pasur.poker.measures`."""
        return sum(self.best_response_values(tables)) / 2

    def _sweep(self, tables, acc_q, acc_w, players: tuple[int, ...] = (0, 1)):
        """One traversal of the whole game under the advisor ``tables``: the values of ``players``
        at the roots (None for the other); CFR values with the regrets of the levels they act at
        embedded into ``acc_q``/``acc_w``, or best-response values where ``acc_q`` is None."""
        e = self.engine
        R = e.R
        dev, dt = e.device, e.dtype
        n0 = self.space.rounds[0].n
        roots = (torch.ones(1, n0, dtype=dt, device=dev), torch.ones(1, n0, dtype=dt, device=dev))
        fwd = []
        for r in range(R - 1):
            n = self.space.rounds[r].n
            reach, sigs = self._forward(r, roots, self.emb[r].strategies(tables[r], self.edges[r])(0, n))
            fwd.append((reach, sigs))
            n_next = int(e.levels[r + 1][0].nodes.numel())
            nxt = []
            for p in range(2):
                x = torch.zeros(n_next, n, dtype=dt, device=dev)
                for d, lv in enumerate(e.levels[r]):
                    if lv.n_cont:
                        x[lv.cont_root] = reach[d][p][lv.cont]
                nxt.append(x.index_select(1, self.parent[r + 1]))
            roots = tuple(nxt)
        last = R - 1
        n_last = self.space.rounds[last].n
        n_roots = int(e.levels[last][0].nodes.numel())
        values = [torch.empty(n_roots, n_last, dtype=dt, device=dev) if p in players else None for p in range(2)]
        strategies = self.emb[last].strategies(tables[last], self.edges[last])
        for c0, c1 in self.chunks if R > 1 else [(0, n_last)]:
            reach, sigs = self._forward(last, (roots[0][:, c0:c1], roots[1][:, c0:c1]), strategies(c0, c1))
            v = self._backward(last, reach, sigs, None, c0, c1, acc_q, acc_w, players)
            del reach, sigs
            for p in players:
                values[p][:, c0:c1] = v[p]
        for r in range(R - 2, -1, -1):
            n = self.space.rounds[r].n
            k = self.children[r].shape[1]
            flat = self.children[r].reshape(-1)
            cont = [None if v is None else v.index_select(1, flat).view(-1, n, k).sum(2) for v in values]
            reach, sigs = fwd[r]
            values = self._backward(r, reach, sigs, cont, 0, n, acc_q, acc_w, players)
        return values

    def _forward(self, r: int, roots, sc):
        """Both players' reach ``[n_d, classes]`` at every level of round ``r``, and the acting
        player's edge probabilities per level (``sc``: the strategy on the edges into a level over
        the classes, :meth:`Embedding.strategies`)."""
        levels = self.engine.levels[r]
        reach, sigs = [roots], [None]
        for d in range(1, len(levels)):
            prev, lv = levels[d - 1], levels[d]
            x = [reach[-1][p].index_select(0, lv.par) for p in range(2)]
            s = sc(d)
            x[prev.actor].mul_(s)
            reach.append(tuple(x))
            sigs.append(s)
        return reach, sigs

    def _terminal(self, r: int, lv, reach, values, c0: int, c1: int, players: tuple[int, ...]) -> None:
        """Fold and showdown utilities: each of ``players``' against the other's reach."""
        ops = self.ops[r]
        w = self.engine.weight[r]
        if lv.n_fold:
            for p in players:
                ops.apply("fold", reach[1 - p][lv.fold], c0, c1, lv.fold_stake[:, p] * w, values[p][lv.fold])
        if lv.n_show:
            for p in players:
                ops.apply("show", reach[1 - p][lv.show], c0, c1, lv.show_stake * w, values[p][lv.show])

    def _backward(self, r, reach, sigs, cont, c0, c1, acc_q, acc_w, players: tuple[int, ...]):
        """The values of ``players`` at the round's roots ``[n_roots, classes]`` (None for the
        other); embeds their regrets and reach weights into the accumulators, or (``acc_q`` None)
        takes each one's best action."""
        e = self.engine
        levels = e.levels[r]
        emb = self.emb[r]
        dev, dt = e.device, e.dtype
        Cc = c1 - c0
        below = None
        for d in range(len(levels) - 1, -1, -1):
            lv = levels[d]
            n = int(lv.nodes.numel())
            v = [torch.empty(n, Cc, dtype=dt, device=dev) if p in players else None for p in range(2)]
            self._terminal(r, lv, reach[d], v, c0, c1, players)
            if lv.n_cont:
                for p in players:
                    torch.index_select(cont[p], 0, lv.cont_root, out=v[p][lv.cont])
            m = lv.n_dec
            if m:
                child = levels[d + 1]
                a = lv.actor
                s = sigs[d + 1]
                q = below[a]
                snap = acc_q is not None and dt == torch.float64
                for p in players:
                    if p == a and acc_q is None:  # best response: the best action of every hand
                        dense = torch.full((m * N_ACTIONS, Cc), float("-inf"), dtype=dt, device=dev)
                        dense[child.child_slot] = q
                        torch.amax(dense.view(m, N_ACTIONS, Cc), 1, out=v[p][:m])
                        continue
                    v[p][:m].zero_()
                    # s is not needed after this level (but by the float64 snap), so it takes s * q
                    v[p][:m].index_add_(0, child.pdec, (s * q if snap else s.mul_(q)) if p == a else below[p])
                if acc_q is None or a not in players:
                    below = v
                    continue
                node_v = v[a][:m].index_select(0, child.pdec)
                inst = torch.sub(q, node_v, out=node_v)  # the instantaneous regrets
                if snap:
                    mag = q.abs()
                    node = torch.zeros(m, Cc, dtype=dt, device=dev).index_add_(0, child.pdec, s * mag)
                    inst.masked_fill_(inst.abs() <= (mag + node.index_select(0, child.pdec)) * SNAP, 0.0)
                if acc_q[r][d] is None:
                    acc_q[r][d] = self._buffers.zeros((inst.shape[0], emb.width), dt, dev)
                emb.gather_into(acc_q[r][d], inst, c0, c1, scratch=True)
                if self.average == "reach":  # this level's reach is not needed after it
                    if acc_w[r][d] is None:
                        acc_w[r][d] = self._buffers.zeros((m, emb.width), dt, dev)
                    emb.gather_into(acc_w[r][d], reach[d][a][:m], c0, c1, scratch=True)
            below = v
        return below
