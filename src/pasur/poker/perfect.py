"""Total exploitability: the distance of a strategy profile from a perfect Bayesian equilibrium.

Exploitability (:mod:`pasur.poker.measures`) asks what a best response gains from the root, so
it ignores every information set the profile does not reach. Here every information set counts.
At an information set u of player i, with beliefs ``beta(u)`` (:mod:`pasur.poker.beliefs`:
Bayes' rule from the opponent's reach and chance, the chance prior where the opponent's reach
is 0), the *gain*

    g(u) = max over sigma_i' of E_beta(u)[u_i(sigma_i', sigma_-i) | u] - E_beta(u)[u_i(sigma) | u]

is what player i would win, in chips from u on, by switching to a best response in the subgame
below u (player i's own reach to u set to 1, as in BUFP's eq. 8); ``sigma_i'`` may change play
only at u and below. Then

    total exploitability (sum) = sum over all information sets u of both players of g(u)
    total exploitability (max) = max over u of g(u)

Both are 0 exactly when every information set's play is sequentially rational given these
beliefs (Kreps and Wilson 1982), i.e. the profile with its beliefs is a perfect Bayesian
equilibrium (with our beliefs where Bayes' rule is silent), and each g(u) >= 0. At the root
g is the player's best-response gain, so ``max >= `` each player's root gain. Two traversals
(``sigma`` and ``max``), plus one per level holding an information set without a Bayes belief.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pasur.poker.beliefs import infoset_values


@dataclass(frozen=True)
class TotalExploitability:
    total: float  # sum of the gains over every information set of both players (chips)
    max: float  # the largest gain
    by_player: tuple[float, float]  # sums per player
    n_infosets: int
    n_fallback: int  # information sets whose belief is the chance prior
    exploitability: float  # NashConv / 2, from the same traversals
    gains: list  # per round [rows, keys]: g(u)
    reach: list  # per round [rows, keys]: the actor's own reach under the profile

    def as_dict(self) -> dict:
        return {
            "total_exploitability": self.total,
            "total_exploitability_max": self.max,
            "total_exploitability_by_player": list(self.by_player),
            "infosets": self.n_infosets,
            "fallback_infosets": self.n_fallback,
            "exploitability": self.exploitability,
        }

    def off_path(self, threshold: float = 0.0) -> tuple[float, float]:
        """Sum and max of the gains at information sets whose actor reaches them with
        probability at most ``threshold`` under the profile (off the player's own path)."""
        g = torch.cat([x.reshape(-1) for x in self.gains])
        x = torch.cat([x.reshape(-1) for x in self.reach])
        sel = g[x <= threshold]
        return (float(sel.sum()), float(sel.max())) if sel.numel() else (0.0, 0.0)


def total_exploitability(engine, policy) -> TotalExploitability:
    """Exact total exploitability of ``policy`` (both players' rows) on a lossless engine."""
    best = infoset_values(engine, policy, mode="max")
    play = infoset_values(engine, policy, mode="sigma")
    t = engine.tree
    gains, by_player = [], [0.0, 0.0]
    for r in range(engine.R):
        g = (best.value[r] - play.value[r]).clamp(min=0.0)  # rounding noise below 0
        gains.append(g)
        actor = torch.as_tensor(t.actor[t.round_decisions[r]], device=engine.device)
        for p in (0, 1):
            by_player[p] += float(g[actor == p].sum())
    flat = torch.cat([g.reshape(-1) for g in gains])
    nash_conv = float(best.roots.sum())
    return TotalExploitability(
        total=float(flat.sum()),
        max=float(flat.max()),
        by_player=(by_player[0], by_player[1]),
        n_infosets=int(flat.numel()),
        n_fallback=best.n_fallback,
        exploitability=nash_conv / 2,
        gains=gains,
        reach=best.reach,
    )
