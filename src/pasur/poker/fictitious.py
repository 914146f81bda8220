"""Fictitious play on the vectorized engine: XFP, BUFP(X) and BUFP(EF).

Every iteration ``t = 1, 2, ...`` both players best-respond to the current strategy ``pi_{t-1}``
(simultaneous updates, as OpenSpiel's XFP; ``pi_0`` uniform), then average with ``alpha_t = 1 /
(t + 1)``:

* **best response** (BUFP eq. 9-10): at *every* information set u, on or off the path, the action
  of highest belief-weighted value in u's counterfactual subgame, the actor best-responding below
  (:mod:`pasur.poker.beliefs`; first maximum on ties, values within ``TIE`` of the largest
  magnitude counting as ties). Together these choices are a global best response, so XFP and
  BUFP share this step;
* **XFP** (Heinrich, Lanctot and Silver 2015) mixes realization plans, ``x_t = (1 - alpha_t)
  x_{t-1} + alpha_t x_b``: we keep ``S = x_0 + sum_t x_{b_t}`` per sequence (the uniform plan plus
  each best response's), and ``pi_t = S`` normalized per information set;
* **BUFP** updates behaviour at every information set (eq. 11), ``pi_t(u) = pi_{t-1}(u) +
  a_t(u) (b_t(u) - pi_{t-1}(u))``, with the stepsize
  ``x``: XFP's, ``a_t(u) = alpha_t x_b(u) / ((1 - alpha_t) x_pi(u) + alpha_t x_b(u))`` (own
  reach of the best response and of ``pi_{t-1}``), which makes BUFP(X) XFP computed
  information set by information set; or
  ``ef``: extensive-form fictitious play's (Hendon, Jacobsen and Sloth 1996), ``a_t(u) =
  alpha_t`` everywhere, so an information set the player never reaches keeps improving.

**BUFP as its authors' code runs it** (``bufp-authors``; GitHub ``Zealoter/BUFP``, ``SPFP.py``,
docs/bufp.md "The authors' code"): at every information set the *local* best response
``l_t(u)``, the action of highest counterfactual value with *everyone*, the actor included,
following ``pi_{t-1}`` below (a one-step deviation, not a best response below), exact ties split
evenly (all legal actions where the opponent never reaches ``u``), and ``pi_t(u) = (1 - 1/t)
pi_{t-1}(u) + (1/t) l_t(u)``: the step is ``1/t``, so ``pi_1 = l_1`` and ``pi_0`` (their
random draw, ours uniform unless ``initial`` is given) only picks ``l_1``. ``bufp-authors-c10``
adds their Kuhn script's ``prior_preference={'_': ['C', 10]}``: at player 0's first decision the
step is ``min(1, 10/t)`` for the hands whose ``l_t`` checks. :func:`local_regret` is the measure
their code logs as ``loss`` (on Kuhn, their number is twice ours).

All tables are ``[rows, A, keys]`` per round (:class:`pasur.poker.policy.TabularPolicy`, lossless).
"""

from __future__ import annotations

import torch

from pasur.common.errors import PasurInputError
from pasur.poker.beliefs import InfosetValues, check_engine, infoset_values
from pasur.poker.policy import TabularPolicy, normalize
from pasur.poker.realization import own_reach
from pasur.poker.tree import CALL, N_ACTIONS

#: action values within this share of the largest magnitude at an information set are ties
TIE = 1e-12
#: the fictitious-play methods: XFP, BUFP with XFP's stepsize, BUFP with EFFP's stepsize, BUFP as
#: the authors' code runs it (plain, and with their Kuhn script's preference for the first check)
METHODS = ("xfp", "bufp-x", "bufp-ef", "bufp-authors", "bufp-authors-c10")
AUTHORS = ("bufp-authors", "bufp-authors-c10")
LABELS = {
    "xfp": "XFP",
    "bufp-x": "BUFP(X)",
    "bufp-ef": "BUFP(EF)",
    "bufp-authors": "BUFP (authors' code)",
    "bufp-authors-c10": "BUFP (authors' Kuhn script)",
    "cfr": "CFR",
}
#: ``bufp-authors-c10``: the step multiplier at player 0's first decision for hands that check
CHECK_BOOST = 10.0


def best_action(q: torch.Tensor) -> torch.Tensor:
    """One-hot ``[rows, A, keys]`` of the first action of highest value (``-inf`` = illegal)."""
    mx = q.amax(1, keepdim=True)
    scale = torch.where(torch.isfinite(q), q.abs(), torch.zeros_like(q)).amax(1, keepdim=True)
    ties = q >= mx - TIE * scale
    # the first maximum: an action is chosen when it ties and no earlier action does
    taken = torch.zeros_like(ties[:, 0])
    out = torch.zeros_like(q)
    for a in range(N_ACTIONS):
        pick = ties[:, a] & ~taken
        out[:, a] = pick
        taken |= pick
    return out


def even_best(q: torch.Tensor) -> torch.Tensor:
    """``[rows, A, keys]``: the actions of highest value (``-inf`` = illegal), ties (within ``TIE``
    of the largest magnitude) sharing the mass evenly, as the authors' ``find_max_action``."""
    mx = q.amax(1, keepdim=True)
    scale = torch.where(torch.isfinite(q), q.abs(), torch.zeros_like(q)).amax(1, keepdim=True)
    ties = (torch.isfinite(q) & (q >= mx - TIE * scale)).to(q.dtype)
    return ties / ties.sum(1, keepdim=True).clamp_min(1)


def local_values(engine, policy) -> InfosetValues:
    """Every information set's action values with both players following ``policy`` below, no
    chance-prior fallback: ``q`` is belief-weighted where the opponent reaches the set and 0
    (every legal action alike) where it does not, as the authors' counterfactual sums."""
    return infoset_values(engine, policy, mode="sigma", fallback=False)


def local_best_response(engine, policy) -> list[torch.Tensor]:
    """The authors' best response: at every information set the best one-step deviation from
    ``policy`` (``policy`` below, for both players), ties split evenly."""
    return [even_best(q) for q in local_values(engine, policy).q]


def local_regret(engine, policy) -> float:
    """What the authors' code logs as ``loss`` (up to its scale): the sum over every information
    set of both players of the counterfactual immediate regret ``max_a q_cf(u, a) - sum_a pi(a|u)
    q_cf(u, a)``, ``q_cf`` weighted by chance and the opponent's reach, ``pi`` below (chips). On
    Kuhn their ``loss`` is exactly twice this (their matrices weigh each deal 1, over 3 cards)."""
    v = local_values(engine, policy)
    total = 0.0
    for q, val, mass in zip(v.q, v.value, v.mass, strict=True):
        total += float(((q.amax(1) - val).clamp_min(0) * mass).sum())
    return total


def best_response(engine, policy) -> tuple[list[torch.Tensor], list[torch.Tensor], int]:
    """The best response at every information set (one-hot tables), the actor's own reach under
    ``policy`` (``[rows, keys]``), and the number of information sets whose belief came from the
    chance prior."""
    v = infoset_values(engine, policy, mode="max")
    return [best_action(q) for q in v.q], v.reach, v.n_fallback


class FictitiousPlay:
    """One run of ``method`` (one of :data:`METHODS`) on a lossless engine (a
    :class:`pasur.poker.solvers.Solver`). ``initial``: ``pi_0`` (uniform when None; not for XFP)."""

    def __init__(self, engine, method: str = "bufp-ef", initial: TabularPolicy | None = None) -> None:
        if method not in METHODS:
            raise PasurInputError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
        if initial is not None and method == "xfp":
            raise PasurInputError("XFP starts from the uniform strategy (initial is for the BUFP methods)")
        check_engine(engine)
        self.engine = engine
        self.method = method
        self.iteration = 0
        #: information sets whose belief came from the chance prior, summed over iterations
        self.fallbacks = 0
        uniform = TabularPolicy(engine)
        self.legal = [uniform.legal(r) for r in range(engine.R)]
        if method == "xfp":
            x0 = own_reach(engine, uniform)
            self.sums = [t * x[:, None, :] for t, x in zip(uniform.tables, x0, strict=True)]
            self._policy = None
        else:
            self._policy = uniform if initial is None else TabularPolicy(engine, tables=list(initial.tables))

    @property
    def policy(self) -> TabularPolicy:
        """The current strategy ``pi_t`` (what fictitious play outputs: its average)."""
        if self.method == "xfp":
            return TabularPolicy(self.engine, tables=normalize(self.sums, self.legal))
        return self._policy

    def average_policy(self) -> TabularPolicy:
        return self.policy

    def iterate(self, n: int = 1) -> None:
        for _ in range(n):
            self._step()

    def _step(self) -> None:
        if self.method in AUTHORS:
            self._authors_step()
            return
        pi = self.policy
        br, x_pi, fb = best_response(self.engine, pi)
        self.fallbacks += fb
        self.iteration += 1
        alpha = 1.0 / (self.iteration + 1)
        if self.method == "bufp-ef":
            self._policy = TabularPolicy(
                self.engine, tables=[p + alpha * (b - p) for p, b in zip(pi.tables, br, strict=True)]
            )
            return
        x_b = own_reach(self.engine, TabularPolicy(self.engine, tables=br))
        if self.method == "xfp":
            for s, b, x in zip(self.sums, br, x_b, strict=True):
                s.addcmul_(b, x[:, None, :])
            return
        tables = []
        for p, b, xp, xb in zip(pi.tables, br, x_pi, x_b, strict=True):
            den = (1 - alpha) * xp + alpha * xb
            step = torch.where(
                den > 0, alpha * xb / torch.where(den > 0, den, torch.ones_like(den)), torch.zeros_like(den)
            )
            tables.append(p + step[:, None, :] * (b - p))
        self._policy = TabularPolicy(self.engine, tables=tables)

    def _authors_step(self) -> None:
        """``SPFP.py`` ``flow``: every information set toward its local best response, step 1/t."""
        pi = self._policy
        br = local_best_response(self.engine, pi)
        self.iteration += 1
        lr = 1.0 / self.iteration
        tables = []
        for r, (p, b) in enumerate(zip(pi.tables, br, strict=True)):
            step = torch.full_like(p[:, :1, :], lr)
            if r == 0 and self.method == "bufp-authors-c10":
                # their prior_preference {'_': ['C', 10]}: player 0's first decision (row 0),
                # the hands whose best response checks (with any share of a tie)
                step[0, 0] = torch.where(b[0, CALL] > 0, step.new_tensor(min(1.0, CHECK_BOOST * lr)), step[0, 0])
            tables.append(p * (1 - step) + step * b)
        self._policy = TabularPolicy(self.engine, tables=tables)

    # ------------------------------------------------------------ checkpoints

    def state_dict(self) -> dict:
        tables = self.sums if self.method == "xfp" else self._policy.tables
        return {
            "method": self.method,
            "iteration": self.iteration,
            "fallbacks": self.fallbacks,
            "tables": [t.cpu() for t in tables],
        }

    def load_state_dict(self, state: dict) -> None:
        if state["method"] != self.method:
            raise PasurInputError(f"a checkpoint of {state['method']}, not {self.method}")
        tables = [t.to(self.engine.device, self.engine.dtype) for t in state["tables"]]
        self.iteration = int(state["iteration"])
        self.fallbacks = int(state["fallbacks"])
        if self.method == "xfp":
            self.sums = tables
        else:
            self._policy = TabularPolicy(self.engine, tables=tables)
