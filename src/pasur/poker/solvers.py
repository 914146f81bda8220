"""The CFR family on the vectorized engine: CFR, CFR+, Linear CFR, Discounted CFR(1.5, 0, 2).

Conventions are OpenSpiel's, so iterates agree with its solvers: iteration ``t`` counts from 1;
with alternating updates (the default) player 0's regrets are updated first, and player 1's pass
sees player 0's new strategy; regret matching gives the uniform strategy where no regret is
positive. Per method, after adding iteration ``t``'s regrets ``r`` to the cumulative ``R``:

* ``cfr``: ``R += r``; average strategy weights 1;
* ``cfr+``: ``R = max(R + r, 0)``; weights ``t`` (linear averaging);
* ``lcfr``: ``R = (R + r) * t / (t + 1)``; weights ``t``;
* ``dcfr``: ``R = R + r``, then positive entries times ``t^a / (t^a + 1)``, negative ones times
  ``t^b / (t^b + 1)``; weights ``t^g`` (``a, b, g = 1.5, 0, 2``).

The rules themselves (regret matching, the discounts, the averaging weights) are
:mod:`pasur.common.regret`'s, shared with the dense small-game CFR (:mod:`pasur.poker.dense_cfr`),
Embedding CFR and Pasur's CFR; this module fixes when they apply. Every poker solver satisfies
:class:`Solver` (``iterate``, ``average_policy``, ``iteration``).

Regret matching is discontinuous where no regret is positive, so rounding noise (a regret of
1e-17 where exact arithmetic gives 0) would change the next strategy. Regrets are formed per
(row, key) from the summed action values ``Q_a`` after each pass, and an instantaneous regret
``Q_a - sum_b sigma_b Q_b`` below ``SNAP`` (1e-12) times the summed magnitudes of the values
involved is counted as 0. Exact ties then stay ties on every device, and the iterates agree with
OpenSpiel's (checked to 1e-12 in the tests).

Regrets and average strategies are tables per (betting sequence, key) (:mod:`pasur.poker.policy`):
with the lossless keying this is CFR on the real game; with an abstraction, CFR on the
imperfect-recall abstraction, traversing the real game (every board, every hand: full width).
Counterfactual values carry the chance probability and, with suit isomorphism, each listed
board stands for its orbit (``mult``), so bucket sums equal sums over the real game's boards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import torch

from pasur.common import regret as kernel
from pasur.common.errors import PasurInputError
from pasur.common.regret import DCFR_DEFAULTS, METHODS, PREDICTIVE, SCHEDULED, UpdatePasses, default_parameters
from pasur.poker.policy import Keying, TabularPolicy
from pasur.poker.tree import N_ACTIONS

#: instantaneous regrets smaller than this share of the values they compare count as 0
SNAP = 1e-12


@runtime_checkable
class Solver(Protocol):
    """What every poker solver offers (:class:`CFRSolver`, :class:`pasur.poker.dense_cfr.DenseCFR`,
    :class:`pasur.poker.embedding.solver.EmbeddingCFR`, :class:`pasur.poker.fictitious.FictitiousPlay`):
    ``iterate(n)`` runs ``n`` more iterations, ``iteration`` counts those done, and
    ``average_policy()`` is the strategy the run outputs (a policy :mod:`pasur.poker.measures`
    can evaluate)."""

    iteration: int

    def iterate(self, n: int = 1) -> None: ...

    def average_policy(self): ...


@dataclass
class CFRConfig:
    """A CFR run's rules. ``alpha`` and ``gamma`` left ``None`` take the method's published
    defaults (:func:`pasur.common.regret.default_parameters`: DCFR 1.5 and 2; PDCFR+ 2.3 and 5;
    PCFR+ and SAPCFR+ quadratic averaging; HS-PCFR+ and HS-DCFR the initial gamma 30).

    ``horizon``: the run's length ``n``, which the scheduled methods (``hs-pcfr+``, ``hs-dcfr``:
    :data:`pasur.common.regret.SCHEDULED`) need, their parameters moving with ``t / n``; the
    others ignore it."""

    method: str = "cfr+"
    updates: str = "alternating"  # or "simultaneous"
    alpha: float | None = None
    beta: float = DCFR_DEFAULTS[1]
    gamma: float | None = None
    horizon: int | None = None

    def __post_init__(self) -> None:
        known = (*METHODS, *PREDICTIVE, *SCHEDULED)
        if self.method not in known:
            raise PasurInputError(f"unknown method {self.method!r} (known: {', '.join(known)})")
        if self.method in SCHEDULED and (self.horizon is None or self.horizon < 1):
            raise PasurInputError(f"{self.method} schedules its parameters over the run's length: give --iterations")
        alpha, gamma = default_parameters(self.method)
        self.alpha = alpha if self.alpha is None else self.alpha
        self.gamma = gamma if self.gamma is None else self.gamma
        if self.updates not in kernel.UPDATES:
            raise PasurInputError(f"updates must be one of {', '.join(kernel.UPDATES)}, not {self.updates!r}")


@dataclass
class CFRSolver(UpdatePasses):
    """Regret tables, average-strategy tables and the current policy of one run."""

    engine: object
    config: CFRConfig = field(default_factory=CFRConfig)
    keying: Keying | None = None

    def __post_init__(self) -> None:
        e = self.engine
        self.keying = self.keying or Keying.lossless_for(e)
        self.current = TabularPolicy(e, self.keying)
        shape = lambda r: (e.n_rows[r], N_ACTIONS, self.keying.n_keys[r])  # noqa: E731
        self.regret = [torch.zeros(shape(r), dtype=e.dtype, device=e.device) for r in range(e.R)]
        self.strategy_sum = [torch.zeros(shape(r), dtype=e.dtype, device=e.device) for r in range(e.R)]
        self.legal = [self.current.legal(r) for r in range(e.R)]
        t = e.tree
        self.row_player = [torch.as_tensor(t.actor[t.round_decisions[r]], device=e.device) for r in range(e.R)]
        self.iteration = 0
        lossless = self.keying.lossless
        self._cols = None if lossless else self.keying.key
        # the predictive variants: this pass's instantaneous regrets (the next prediction)
        self._inst: list[torch.Tensor | None] | None = None

    # ------------------------------------------------------------ accumulation (engine hook)

    def _weight(self) -> float:
        return kernel.average_weight(self.config.method, self.iteration, self.config.gamma)

    def _add(self, buf: torch.Tensor, r: int, rows: torch.Tensor, b0: int, b1: int, src: torch.Tensor) -> None:
        """``buf[rows, key(b, h)] += src[:, b, h]`` over boards ``b0:b1`` (``buf``: ``[rows, K]``;
        the engine's values and reach already carry each board's multiplicity)."""
        e = self.engine
        H = e.Hr[r]
        n = src.shape[0]
        if self.keying.lossless:
            buf[:, b0 * H : b1 * H].index_add_(0, rows, src.reshape(n, -1))
            return
        tmp = torch.zeros(n, buf.shape[1], dtype=e.dtype, device=e.device)
        tmp.index_add_(1, self.keying.key[r][b0:b1].reshape(-1), src.reshape(n, -1))
        buf.index_add_(0, rows, tmp)

    def _accumulate(self, d) -> None:
        """Engine hook: action values (and their magnitudes) per (row, action, key), own reach
        per (row, key); regrets are formed from the sums after the pass (:meth:`_finish_pass`)."""
        r = d.round
        rows = d.row_lo * N_ACTIONS + d.child_slot
        self._add(self._q[r], r, rows, d.b0, d.b1, d.q)
        self._add(self._qabs[r], r, rows, d.b0, d.b1, d.q.abs())  # magnitudes, for the rounding snap
        nodes = torch.arange(d.row_lo, d.row_hi, device=self.engine.device)
        self._add(self._reach[r], r, nodes, d.b0, d.b1, d.reach)

    def _start_pass(self) -> None:
        e = self.engine
        z = lambda r, a: torch.zeros(e.n_rows[r] * a, self.keying.n_keys[r], dtype=e.dtype, device=e.device)  # noqa: E731
        self._q = [z(r, N_ACTIONS) for r in range(e.R)]
        self._qabs = [z(r, N_ACTIONS) for r in range(e.R)]
        self._reach = [z(r, 1) for r in range(e.R)]

    def _finish_pass(self) -> None:
        """Regrets ``Q - sum_a sigma_a Q_a`` (rounding noise snapped to 0, see the module doc),
        average-strategy contributions ``w_t * reach * sigma`` (the scheduled methods first
        scale the updated rows' sums: :func:`pasur.common.regret.average_discount`)."""
        c, t = self.config, self.iteration
        w = self._weight()
        f = kernel.average_discount(c.method, t, c.gamma, c.horizon)
        for r in range(self.engine.R):
            sig = self.current.tables[r]
            q = self._q[r].view(sig.shape)
            qa = self._qabs[r].view(sig.shape)
            v = (sig * q).sum(1, keepdim=True)
            inst = q - v
            noise = (qa + (sig * qa).sum(1, keepdim=True)).mul_(SNAP)
            inst.masked_fill_(inst.abs() <= noise, 0.0)
            if kernel.is_predictive(c.method):  # formed into the regrets in _update_regrets
                self._inst[r] = inst.mul_(self.legal[r][:, :, None].to(inst.dtype))
            else:
                self.regret[r].addcmul_(inst, self.legal[r][:, :, None].to(inst.dtype))
            if f != 1.0:
                self.strategy_sum[r].mul_(kernel.row_factor(self._masks[r], f, sig))
            self.strategy_sum[r].addcmul_(sig, self._reach[r][:, None, :], value=w)
        self._q = self._qabs = self._reach = None

    # ------------------------------------------------------------ updates

    def _mine(self, r: int, players: tuple[int, ...]) -> torch.Tensor:
        """``[rows, 1, 1]``: the rows of round ``r`` that ``players`` act at."""
        mine = torch.zeros_like(self.row_player[r], dtype=torch.bool)
        for p in players:
            mine |= self.row_player[r] == p
        return mine[:, None, None]

    def _update_regrets(self, players: tuple[int, ...]) -> None:
        """The method's discount of iteration ``t`` on the updated players' rows (after adding
        their regrets: OpenSpiel's order); the predictive variants form their regrets from this
        pass's instantaneous ones here."""
        c, t = self.config, self.iteration
        for r, reg in enumerate(self.regret):
            mine = self._masks[r]
            if kernel.is_predictive(c.method):
                new = kernel.predictive_update_(reg.clone(), self._inst[r], c.method, t, c.alpha)
                reg.copy_(torch.where(mine, new, reg))
            else:
                kernel.discount_(reg, c.method, t, alpha=c.alpha, beta=c.beta, mask=mine, horizon=c.horizon)

    def _update_current(self, players: tuple[int, ...]) -> None:
        c, t = self.config, self.iteration
        if not kernel.is_predictive(c.method):
            self.current.tables = [
                kernel.regret_matching(reg, legal[:, :, None])
                for reg, legal in zip(self.regret, self.legal, strict=True)
            ]
            return
        # the updated players' rows only: the others keep the strategy their own pass made
        tables = []
        for r, (reg, legal) in enumerate(zip(self.regret, self.legal, strict=True)):
            explicit = kernel.predicted_regret(reg, self._inst[r], c.method, t, c.alpha)
            new = kernel.regret_matching(explicit, legal[:, :, None])
            tables.append(torch.where(self._masks[r], new, self.current.tables[r]))
        self.current.tables = tables
        self._inst = None

    def _pass(self, players: tuple[int, ...]) -> None:
        self._masks = [self._mine(r, players) for r in range(len(self.regret))]  # this pass's rows
        if kernel.is_predictive(self.config.method):
            self._inst = [None] * len(self.regret)
        self._start_pass()
        self.engine.traverse(self.current, players=players, modes="sigma", hook=self._accumulate)
        self._finish_pass()
        self._update_regrets(players)
        self._update_current(players)

    def average_policy(self) -> TabularPolicy:
        """The average strategy (uniform where a row was never reached)."""
        tables = [kernel.normalize(s, lg[:, :, None]) for s, lg in zip(self.strategy_sum, self.legal, strict=True)]
        return TabularPolicy(self.engine, self.keying, tables)
