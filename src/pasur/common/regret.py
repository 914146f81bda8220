"""The CFR family's update rules, as functions on tensors: the one home of regret matching,
regret discounting (CFR+ flooring, Linear CFR, Discounted CFR) and the averaging weights.

Every solver calls these: the poker core's :class:`~pasur.poker.solvers.CFRSolver`, its dense
small-game CFR, Embedding CFR (in advisor space) and Pasur's round-by-round CFR (on edge lists).
A new variant is a new branch here, checked once (``tests/test_regret_kernel.py``, and through
the solvers against OpenSpiel and the exact solvers), and every solver has it. The scheduled
variants (:data:`SCHEDULED`: HS-PCFR+, HS-DCFR), whose parameters depend on the run's length, are
wired into the poker core's two CFR solvers only; the others refuse them (an error, not a
silent fallback).

Two layouts of a strategy table are served:

* **dense**: actions on dimension 1 (``[rows, actions, ...]``), with a mask of the legal actions
  broadcastable to it (:func:`normalize`, :func:`regret_matching`);
* **segments**: one entry per edge and the index of its parent node (Pasur's trees, where nodes
  have different numbers of children; :func:`normalize_segments`).

Discounting (:func:`discount_`) is the rule of iteration ``t``; *when* it is applied is the
solver's convention, stated in its docstring (the poker core follows OpenSpiel: add iteration
``t``'s regrets, then discount with ``t``; Pasur's CFR follows the paper's equations (6)-(8):
discount with ``t - 1``, then add).

>>> import torch
>>> r = torch.tensor([[[2.0], [-1.0], [2.0]], [[-1.0], [-3.0], [0.0]]])
>>> legal = torch.tensor([[True, True, False], [True, True, False]])
>>> regret_matching(r, legal[:, :, None]).squeeze(-1).tolist()
[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]
>>> discount_(torch.tensor([4.0, -4.0]), "dcfr", 1, alpha=1.5, beta=0.0).tolist()
[2.0, -2.0]
>>> [average_weight(m, 3) for m in METHODS]
[1.0, 3.0, 3.0, 9.0]
"""

from __future__ import annotations

import math

import torch

# the method names and defaults live in cfr_methods (no torch); re-exported here
from pasur.common.cfr_methods import (  # noqa: F401
    DCFR_DEFAULTS,
    HS_GAMMA0,
    HS_GAMMA_DROP,
    METHODS,
    PARAMETER_METHODS,
    PREDICTIVE,
    PREDICTIVE_DEFAULTS,
    SCHEDULED,
    UPDATES,
    default_parameters,
)

#: regret matching floor on edge lists: edges without positive regret get FLOOR / total, so a
#: node whose regrets are all non-positive plays uniformly (negligible elsewhere: 1e-30)
FLOOR = 1e-30


#: SAPCFR+'s fixed asymmetry: the prediction enters with step 1 / (1 + 2)
SAPCFR_STEP = 1.0 / 3.0


def is_predictive(method: str) -> bool:
    """Whether ``method`` matches its next strategy on regrets plus a prediction (the
    predictive variants and HS-PCFR+)."""
    return method in PREDICTIVE or method == "hs-pcfr+"


def hs_schedule(t: int, horizon: int, gamma0: float = HS_GAMMA0) -> tuple[float, float, float]:
    """``(alpha, beta, gamma)`` of the paper's eq. (4) at iteration ``t`` of ``horizon``:
    ``1 + 3 t/n``, ``-1 - 2 t/n``, ``gamma0 - 5 t/n``.

    >>> hs_schedule(500, 1000)
    (2.5, -2.0, 27.5)
    """
    if horizon is None or horizon < 1:
        raise ValueError(f"a hyperparameter schedule needs the run's length (horizon), got {horizon!r}")
    s = t / horizon
    return 1.0 + 3.0 * s, -1.0 - 2.0 * s, gamma0 - HS_GAMMA_DROP * s


def average_discount(method: str, t: int, gamma: float, horizon: int | None = None) -> float:
    """Factor on the cumulative strategy before iteration ``t`` (from 1) adds its own with
    :func:`average_weight`: 1, except for the scheduled methods, whose weights ``t^gamma(t)``
    (``gamma`` the schedule's start) reach ``10^75`` by ``t = 1000`` and are therefore kept as
    ratios, ``S <- S w(t-1) / w(t) + reach sigma`` (the same average, nothing overflows); 0 at
    ``t = 1``.

    >>> round(average_discount("hs-pcfr+", 2, 30.0, 10) * 2**29, 12)
    1.0
    """
    if method not in SCHEDULED:
        return 1.0
    if t <= 1:
        return 0.0
    g_prev = hs_schedule(t - 1, horizon, gamma)[2]
    g = hs_schedule(t, horizon, gamma)[2]
    return math.exp(g_prev * math.log(t - 1) - g * math.log(t))


def row_factor(mask: torch.Tensor, factor: float, like: torch.Tensor) -> torch.Tensor:
    """``factor`` where ``mask`` holds and 1 elsewhere, in ``like``'s dtype and device (built
    there: a Python float through ``torch.where`` would pass through float32)."""
    one = torch.ones((), dtype=like.dtype, device=like.device)
    return torch.where(mask, one * factor, one)


def pdcfr_discount(t: int, alpha: float) -> float:
    """PDCFR+'s factor on the regrets before iteration ``t`` adds its own: ``(t-1)^a / ((t-1)^a + 1)``
    (0 at ``t = 1``)."""
    return (t - 1) ** alpha / ((t - 1) ** alpha + 1)


def predictive_update_(regret: torch.Tensor, inst: torch.Tensor, method: str, t: int, alpha: float) -> torch.Tensor:
    """The cumulative (implicit) regrets after iteration ``t``, in place: ``max(R + r, 0)``
    (PCFR+, SAPCFR+, HS-PCFR+), ``max(R d(t) + r, 0)`` with :func:`pdcfr_discount` (PDCFR+)."""
    if method == "pdcfr+":
        regret.mul_(pdcfr_discount(t, alpha))
    elif method not in ("pcfr+", "sapcfr+", "hs-pcfr+"):
        raise ValueError(f"not a predictive method: {method!r}")
    return regret.add_(inst).clamp_min_(0.0)


def predicted_regret(
    regret: torch.Tensor, inst: torch.Tensor, method: str, t: int, alpha: float, out: torch.Tensor | None = None
) -> torch.Tensor:
    """The explicit regrets the next strategy is matched on, after iteration ``t`` with
    instantaneous regrets ``inst`` (the prediction of the next ones): ``R + r`` (PCFR+),
    ``R d(t+1) + r`` (PDCFR+), ``R + r / 3`` (SAPCFR+); regret matching takes their positive part."""
    if method in ("pcfr+", "hs-pcfr+"):
        return torch.add(regret, inst, out=out)
    if method == "pdcfr+":
        return torch.add(inst, regret, alpha=pdcfr_discount(t + 1, alpha), out=out)
    if method == "sapcfr+":
        return torch.add(regret, inst, alpha=SAPCFR_STEP, out=out)
    raise ValueError(f"not a predictive method: {method!r}")


def average_weight(method: str, t: int, gamma: float = DCFR_DEFAULTS[2]) -> float:
    """Weight of iteration ``t`` (from 1) in the average strategy: 1 (CFR), ``t`` (CFR+ and
    Linear CFR), ``t^gamma`` (DCFR and the predictive variants, whose gamma differs:
    :func:`default_parameters`); 1 for the scheduled methods, whose cumulative strategy is
    discounted instead (:func:`average_discount`)."""
    if method == "cfr" or method in SCHEDULED:
        return 1.0
    if method == "dcfr" or method in PREDICTIVE:
        return float(t) ** gamma
    return float(t)


def dcfr_factors(t: int, alpha: float = DCFR_DEFAULTS[0], beta: float = DCFR_DEFAULTS[1]) -> tuple[float, float]:
    """DCFR's multipliers of iteration ``t``: ``t^a / (t^a + 1)`` for positive regrets and
    ``t^b / (t^b + 1)`` for the others.

    >>> dcfr_factors(4, 0.5, 0.0)
    (0.6666666666666666, 0.5)
    """
    return t**alpha / (t**alpha + 1), t**beta / (t**beta + 1)


def discount_(
    regret: torch.Tensor,
    method: str,
    t: int,
    *,
    alpha: float = DCFR_DEFAULTS[0],
    beta: float = DCFR_DEFAULTS[1],
    mask: torch.Tensor | None = None,
    scratch: torch.Tensor | None = None,
    horizon: int | None = None,
) -> torch.Tensor:
    """Apply the variant's rule of iteration ``t`` to the cumulative ``regret``, in place:
    nothing (CFR), floor at 0 (CFR+), times ``t / (t + 1)`` (Linear CFR), positive entries times
    ``t^a / (t^a + 1)`` and the others times ``t^b / (t^b + 1)`` (DCFR; HS-DCFR with ``a``, ``b``
    of :func:`hs_schedule` at ``t`` of ``horizon``).

    ``mask`` (bool, broadcastable): only those entries change (alternating updates discount the
    updated player's rows). ``scratch``: a buffer shaped like ``regret``, so the unmasked DCFR
    rule allocates nothing. Products are formed entry by entry, so the result is the same with or
    without a mask or a scratch buffer, bit for bit."""
    if method == "cfr":
        return regret
    if method == "hs-dcfr":
        alpha, beta, _ = hs_schedule(t, horizon)
        method = "dcfr"
    if mask is not None:
        new = discount_(regret.clone(), method, t, alpha=alpha, beta=beta)
        return regret.copy_(torch.where(mask, new, regret))
    if method == "cfr+":
        return regret.clamp_min_(0.0)
    if method == "lcfr":
        return regret.mul_(t / (t + 1))
    if method == "dcfr":
        pos, neg = dcfr_factors(t, alpha, beta)
        positive = torch.clamp_min(regret, 0.0, out=scratch) if scratch is not None else regret.clamp_min(0.0)
        # each entry is one of the two products exactly: the other term is 0
        return regret.clamp_max_(0.0).mul_(neg).add_(positive, alpha=pos)
    raise ValueError(f"unknown CFR method {method!r} (known: {', '.join(METHODS)})")


def normalize(weights: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """``weights`` (``[rows, actions, ...]``, non-negative) scaled to sum 1 over dimension 1; a
    slice of zeros becomes uniform over its ``legal`` actions (a new tensor)."""
    return normalize_(weights.clone(), legal)


def normalize_(weights: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """:func:`normalize` in place, in three passes over ``weights`` and nothing of its size
    allocated: a zero slice gets the uniform strategy added and its sum 0 becomes 1, so every
    other slice is divided by its own sum exactly as before (adding 0 changes no bit); the
    lossless Numeral211 tables hold 151 million values. A NaN stays NaN (a diverged solver is
    not hidden behind a uniform strategy); a row with no legal action gets 0."""
    lg = legal.to(weights.dtype)
    total = weights.sum(1, keepdim=True)
    empty = (total <= 0).to(weights.dtype)
    weights.addcmul_(empty, lg / lg.sum(1, keepdim=True).clamp_min(1.0))
    return weights.div_(total.add_(empty))


def regret_matching(regret: torch.Tensor, legal: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """The next strategy: the positive part of ``regret`` over the ``legal`` actions,
    normalized over dimension 1; uniform over the legal actions where none is positive. ``out``
    (shaped like ``regret``, not overlapping it): where to write it; a new tensor otherwise."""
    positive = torch.clamp_min(regret, 0.0, out=out) if out is not None else regret.clamp_min(0.0)
    return normalize_(positive.mul_(legal.to(regret.dtype)), legal)


class DenseMatching:
    """:func:`regret_matching` for one ``[rows, actions]`` table and its fixed legal mask, into a
    given buffer and allocating nothing: the dense small-game CFR calls it twice per Leduc
    iteration, where a dozen small operations and their allocations cost more than the arithmetic.
    The uniform strategy is formed once; the sum over the actions is a product with a column of
    ones, which adds the actions in their order as ``sum(1)`` does (the same bits on the CPU,
    checked by ``tests/test_regret_kernel.py``); every other operation is :func:`normalize_`'s."""

    def __init__(self, legal: torch.Tensor, dtype: torch.dtype) -> None:
        rows, actions = legal.shape
        self.legal = legal.to(dtype)
        self.uniform = self.legal / self.legal.sum(1, keepdim=True).clamp_min(1.0)
        self.ones = torch.ones(actions, 1, dtype=dtype, device=legal.device)
        self.total = torch.empty(rows, 1, dtype=dtype, device=legal.device)
        self.empty = torch.empty_like(self.total)

    def __call__(self, regret: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """The next strategy from ``regret`` written into ``out`` (shaped like it, not overlapping)."""
        torch.clamp_min(regret, 0.0, out=out).mul_(self.legal)
        torch.mm(out, self.ones, out=self.total)
        torch.le(self.total, 0.0, out=self.empty)  # 1 where the row is empty, 0 elsewhere
        out.addcmul_(self.empty, self.uniform)
        return out.div_(self.total.add_(self.empty))


def normalize_segments(
    weights: torch.Tensor,
    segment: torch.Tensor,
    n_segments: int,
    *,
    out: torch.Tensor | None = None,
    totals: torch.Tensor | None = None,
    spread: torch.Tensor | None = None,
    gather_index: torch.Tensor | None = None,
    floor: float = FLOOR,
) -> torch.Tensor:
    """Edge list form of :func:`regret_matching` and :func:`normalize`: ``max(weights, floor)``
    divided by its sum over the edges of the same ``segment`` (the parent node), so a node whose
    weights are all non-positive plays uniformly.

    ``out`` may be ``weights`` itself; ``totals`` (``[n_segments]``) and ``spread`` (like
    ``weights``) are work buffers, so the hot loop allocates nothing; ``gather_index``: ``segment``
    as int32 (gathers are faster with it; scatters need int64).

    >>> normalize_segments(torch.tensor([3.0, 1.0, -2.0, 0.0]), torch.tensor([0, 0, 1, 1]), 2).tolist()
    [0.75, 0.25, 0.5, 0.5]
    """
    out = torch.clamp_min(weights, floor, out=out) if out is not None else torch.clamp_min(weights, floor)
    if totals is None:
        totals = torch.zeros(n_segments, dtype=out.dtype, device=out.device)
    else:
        totals.zero_()
    totals.scatter_add_(0, segment, out)
    index = segment if gather_index is None else gather_index
    if spread is None:
        return out.div_(torch.index_select(totals, 0, index))
    torch.index_select(totals, 0, index, out=spread)
    return out.div_(spread)


class UpdatePasses:
    """``iterate`` of the CFR family's solvers (the poker core's, the hidden-hand game's), shared:
    each iteration is one ``_pass(players)`` per update group, player 0 then player 1 (alternating
    updates, player 1 sees player 0's new strategy), or both at once (simultaneous). A solver
    holds ``config.updates`` and ``iteration``."""

    config: object
    iteration: int

    def _pass(self, players: tuple[int, ...]) -> None:
        raise NotImplementedError

    def iterate(self, n: int = 1) -> None:
        """Run ``n`` iterations."""
        for _ in range(n):
            self.iteration += 1
            if self.config.updates == "alternating":
                self._pass((0,))
                self._pass((1,))
            else:
                self._pass((0, 1))
