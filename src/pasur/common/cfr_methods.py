"""The CFR family's method names, the parameters each reads and their published defaults: plain
data, without torch, so that the command line lists and checks methods before torch is imported.
:mod:`pasur.common.regret`, the update rules themselves, re-exports every name here."""

from __future__ import annotations

#: the full-width variants every solver offers
METHODS = ("cfr", "cfr+", "lcfr", "dcfr")
#: the update orders every solver offers: alternating (player 0's regrets, then player 1's from a
#: traversal that sees player 0's new strategy) and simultaneous (both from one traversal)
UPDATES = ("alternating", "simultaneous")
#: Discounted CFR's published defaults (Brown and Sandholm, 2019): alpha, beta, gamma
DCFR_DEFAULTS = (1.5, 0.0, 2.0)

#: the predictive variants (issue 26): CFR+'s floored regrets (discounted in PDCFR+), and each
#: next strategy from the regrets plus a prediction of the next instantaneous regret, the last
#: one (Farina, Kroer and Sandholm 2021; Xu et al. 2024; Meng et al. 2025)
PREDICTIVE = ("pcfr+", "pdcfr+", "sapcfr+")
#: their published defaults: alpha (PDCFR+'s discount exponent) and gamma (the average's weight
#: t^gamma): PCFR+ and SAPCFR+ quadratic averaging; PDCFR+ alpha 2.3, gamma 5 (the authors' code)
PREDICTIVE_DEFAULTS = {"pcfr+": (None, 2.0), "pdcfr+": (2.3, 5.0), "sapcfr+": (None, 2.0)}

#: Hyperparameter Schedules (Zhang, McAleer and Sandholm, "Faster Game Solving via
#: Hyperparameter Schedules", AAAI 2026, arXiv 2404.09097, eq. (4)): DCFR and PCFR+ whose
#: parameters move linearly with the share ``t / n`` of the run done, ``n`` the run's length (its
#: *horizon*): ``gamma = gamma0 - 5 t/n`` (gamma0 30: the paper's HS(30); 15: HS(15)) and, for
#: HS-DCFR, ``alpha = 1 + 3 t/n``, ``beta = -1 - 2 t/n``. ``hs-pcfr+``: PCFR+'s regrets;
#: ``hs-dcfr``: DCFR's. Each parameter enters where the fixed one does in OpenSpiel's DCFR, which
#: the paper's experiments ran on: iteration ``t``'s regrets discounted with ``alpha(t)``,
#: ``beta(t)`` after they are added, average weights ``t^gamma(t)``.
SCHEDULED = ("hs-pcfr+", "hs-dcfr")
#: HS(30): the initial gamma of the paper's recommended schedule
HS_GAMMA0 = 30.0
#: HS(30)'s last gamma: the start less 5 over the run
HS_GAMMA_DROP = 5.0

#: the parameters a user may set, and the methods that read each (the others refuse it when
#: given): alpha, DCFR's and PDCFR+'s discount exponent; beta, DCFR's on negative regrets;
#: gamma, the average's weight t^gamma (the scheduled ones: its start)
PARAMETER_METHODS = {"alpha": ("dcfr", "pdcfr+"), "beta": ("dcfr",), "gamma": ("dcfr", *PREDICTIVE, *SCHEDULED)}


def default_parameters(method: str) -> tuple[float, float]:
    """``(alpha, gamma)`` a method runs with when none are given: DCFR's (1.5, 2) for the
    full-width methods (only DCFR reads them), the published ones for the predictive variants,
    the initial gamma 30 of HS(30) for the scheduled ones."""
    if method in PREDICTIVE:
        alpha, gamma = PREDICTIVE_DEFAULTS[method]
        return (DCFR_DEFAULTS[0] if alpha is None else alpha), gamma
    if method in SCHEDULED:  # gamma is the schedule's start; alpha is unused (scheduled in HS-DCFR)
        return DCFR_DEFAULTS[0], HS_GAMMA0
    return DCFR_DEFAULTS[0], DCFR_DEFAULTS[2]
