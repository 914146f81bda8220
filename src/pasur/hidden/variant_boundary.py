"""The exact value of a position at a deal boundary, for a small variant's game.

The round horizon of the PIMC agents (:mod:`pasur.hidden.pimc`) stops at the end of the current
round and asks for the expected future there (:mod:`pasur.hidden.boundary`). For the standard
game that is a learned network; for a small variant it can be exact: at the boundary both players
know the same things, and every deal of the undealt cards into the next two hands is equally
likely (the later deals too, given those), so the value is the mean, over every next deal, of the
next round solved open-hand (:func:`~pasur.hidden.roundsolve.solve_round`, minimax) up to the
boundary after it, valued the same way, or to the end of the game. With two deals, as every small
variant has, that is the expected open-hand value of the rest of the game.

A boundary position is (round, pool, clubs as far as the bonus goes, last capturer, undealt
cards): a small variant has few, so each is solved once and memoized; a call solves the new ones
of all its positions in batched round solves.

>>> import torch
>>> from pasur.game.variants import get_variant
>>> b = ExactBoundary(get_variant("micro"))
>>> t = lambda *xs: torch.tensor(xs, dtype=torch.int64)
>>> # micro after round 0: 10♣ and 10♦ to deal, the pool empty, a club each, Alex took last;
>>> # neither 10 takes the other, so Alex sweeps both (2 + 3 points) and wins the clubs (5)
>>> float(b(0, t(0), t(1), t(1), t(1), t((1 << 36) | (1 << 37)))[0])
10.0
"""

from __future__ import annotations

from itertools import combinations

import torch

from pasur.game.variants import Variant
from pasur.hidden.roundsolve import Roots, solve_round

#: roots of one batched round solve at most (bounds memory)
MAX_ROOTS = 4096


def next_deals(remaining: int, hand_size: int) -> list[tuple[int, int]]:
    """Every (Alex's hand, Bob's hand) the next deal can give from the undealt cards, each as
    likely as the others."""
    cards = [c for c in range(52) if (remaining >> c) & 1]
    out = []
    for alex in combinations(cards, hand_size):
        rest = [c for c in cards if c not in alex]
        a = sum(1 << c for c in alex)
        out += [(a, sum(1 << c for c in bob)) for bob in combinations(rest, hand_size)]
    return out


class ExactBoundary:
    """The exact boundary value of ``variant``'s game (see the module docstring), in the calling
    convention of :data:`pasur.hidden.roundsolve.Boundary`: ``(round, pool, ca, cb, last,
    remaining)`` tensors ``[N]``, clubs as :func:`~pasur.hidden.roundsolve.clubs_key` gives them."""

    name = "exact"

    def __init__(self, variant: Variant, device: str | torch.device = "cpu") -> None:
        if variant.is_standard:
            raise ValueError("the standard game has too many deals to value a boundary exactly")
        self.variant = variant
        self.device = torch.device(device)
        #: (round, pool, ca, cb, last, remaining) -> expected future value, Alex minus Bob
        self.memo: dict[tuple[int, ...], float] = {}

    def __call__(self, round_, pool, ca, cb, last, remaining) -> torch.Tensor:
        rows, inverse = torch.unique(torch.stack([pool, ca, cb, last, remaining], 1), dim=0, return_inverse=True)
        keys = [(int(round_), *row) for row in rows.tolist()]
        self._solve([k for k in keys if k not in self.memo])
        values = torch.tensor([self.memo[k] for k in keys], dtype=torch.float64)
        return values.to(pool.device)[inverse]

    def _solve(self, keys: list[tuple[int, ...]]) -> None:
        """Memoize the value of every position of ``keys`` (batched, at most MAX_ROOTS roots a solve)."""
        batch: list[tuple[int, ...]] = []
        roots = 0
        for key in keys:
            n = len(next_deals(key[5], self.variant.hand_size))
            if batch and roots + n > MAX_ROOTS:
                self._solve_batch(batch)
                batch, roots = [], 0
            batch.append(key)
            roots += n
        if batch:
            self._solve_batch(batch)

    def _solve_batch(self, keys: list[tuple[int, ...]]) -> None:
        """One round solve from every next deal of every position of ``keys`` (all at one round)."""
        v = self.variant
        rows, owner = [], []
        for j, (_, pool, ca, cb, last, remaining) in enumerate(keys):
            for alex, bob in next_deals(remaining, v.hand_size):
                rows.append((alex, bob, pool, ca, cb, last, remaining & ~(alex | bob)))
                owner.append(j)
        col = torch.tensor(rows, dtype=torch.int64, device=self.device).T
        n = col.shape[1]
        nxt = keys[0][0] + 1
        roots = Roots(
            round=nxt,
            turn=0,
            hands=(col[0], col[1]),
            pool=col[2],
            clubs=(col[3], col[4]),
            last=col[5],
            remaining=col[6],
            group=torch.arange(n, device=self.device),
            weight=torch.ones(n, dtype=torch.float64, device=self.device),
            variant=v,
        )
        sol = solve_round(roots, self if nxt < v.final_round else None, "minimax")
        q = torch.nan_to_num(sol.q.to(torch.float64), nan=float("-inf"))
        best = q.max(1).values  # Alex leads every deal
        owner_t = torch.tensor(owner, device=best.device)
        total = torch.zeros(len(keys), dtype=torch.float64, device=best.device).index_add_(0, owner_t, best)
        count = torch.bincount(owner_t, minlength=len(keys)).to(torch.float64)
        for key, value in zip(keys, (total / count).tolist(), strict=True):
            self.memo[key] = value
