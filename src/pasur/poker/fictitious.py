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

All tables are ``[rows, A, keys]`` per round (:class:`pasur.poker.policy.TabularPolicy`, lossless).
"""

from __future__ import annotations

import torch

from pasur.common.errors import PasurInputError
from pasur.poker.beliefs import check_engine, infoset_values
from pasur.poker.policy import TabularPolicy, normalize
from pasur.poker.realization import own_reach
from pasur.poker.tree import N_ACTIONS

#: action values within this share of the largest magnitude at an information set are ties
TIE = 1e-12
#: the fictitious-play methods: XFP, BUFP with XFP's stepsize, BUFP with EFFP's stepsize
METHODS = ("xfp", "bufp-x", "bufp-ef")
LABELS = {"xfp": "XFP", "bufp-x": "BUFP(X)", "bufp-ef": "BUFP(EF)", "cfr": "CFR"}


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


def best_response(engine, policy) -> tuple[list[torch.Tensor], list[torch.Tensor], int]:
    """The best response at every information set (one-hot tables), the actor's own reach under
    ``policy`` (``[rows, keys]``), and the number of information sets whose belief came from the
    chance prior."""
    v = infoset_values(engine, policy, mode="max")
    return [best_action(q) for q in v.q], v.reach, v.n_fallback


class FictitiousPlay:
    """One run of ``method`` (``xfp``, ``bufp-x`` or ``bufp-ef``) on a lossless engine (a
    :class:`pasur.poker.solvers.Solver`)."""

    def __init__(self, engine, method: str = "bufp-ef") -> None:
        if method not in METHODS:
            raise PasurInputError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
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
            self._policy = uniform

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
