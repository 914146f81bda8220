"""The value of a position at a deal boundary: the end of a round, before the next deal.

At that moment both players know the same things (the pool, both piles, which cards are still to
be dealt); only the order of the undealt cards is unknown, to both. A search that stops at the
end of the current round needs the expected future there, Alex minus Bob, over the next deals:

:class:`LearnedBoundary`
    one small network per round (``BoundaryNet``), fitted backwards from round 5 on values of
    the next round solved exactly for random deals (:mod:`pasur.hidden.train`); the default;
:class:`ClubsBoundary`
    a closed form: the clubs race as coin flips (:func:`~pasur.hidden.heuristic.club_race`) and
    the pool to the last capturer. A baseline, and what runs when no weights are at hand.

Both know only the standard game; a small variant's boundary is valued exactly instead
(:class:`pasur.hidden.variant_boundary.ExactBoundary`, every next deal solved).

Inputs are tensors: ``pool``, ``remaining`` (card masks), ``ca``, ``cb`` (clubs, normalized:
7/0 once clinched) and ``last`` (0 nobody, 1 Alex, 2 Bob); ``round`` is the round just ended (0..4).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import torch
from torch import nn

from pasur.game.cards import CLUB_MASK, N_CLUBS
from pasur.game.state import FINAL_ROUND
from pasur.hidden.heuristic import club_race
from pasur.hidden.weights import load_net, save_checked
from pasur.solve.actions import card_points_of
from pasur.solve.ops import popcount

#: the weights shipped with the package (written by ``pasur hidden-train``)
DEFAULT_WEIGHTS = Path(__file__).with_name("boundary-weights.pt")
N_FEATURES = 52 + 52 + 8 + 8 + 3 + 1


def features(pool: torch.Tensor, ca: torch.Tensor, cb: torch.Tensor, last: torch.Tensor, remaining: torch.Tensor):
    """``[N, 124]`` float features: pool and remaining cards as bits, clubs and last capturer
    one-hot, and the pool's card points."""
    bits = torch.arange(52, device=pool.device)
    f = [
        ((pool.unsqueeze(1) >> bits) & 1).float(),
        ((remaining.unsqueeze(1) >> bits) & 1).float(),
        nn.functional.one_hot(ca.clamp(0, 7), 8).float(),
        nn.functional.one_hot(cb.clamp(0, 7), 8).float(),
        nn.functional.one_hot(last.clamp(0, 2), 3).float(),
        card_points_of(pool).float().unsqueeze(1) / 10,
    ]
    return torch.cat(f, 1)


class BoundaryNet(nn.Module):
    """One MLP per boundary round (0..4): features -> expected future value."""

    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.hidden = hidden
        self.nets = nn.ModuleList(
            nn.Sequential(
                nn.Linear(N_FEATURES, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1)
            )
            for _ in range(FINAL_ROUND)
        )

    def forward(self, round_: int, x: torch.Tensor) -> torch.Tensor:
        return self.nets[round_](x).squeeze(1)


class LearnedBoundary:
    """The fitted networks as a boundary value (see the module docstring)."""

    name = "learned"

    def __init__(self, net: BoundaryNet, device: str | torch.device = "cpu") -> None:
        self.net = net.to(device).eval()
        self.device = torch.device(device)

    @classmethod
    def load(cls, path: str | Path = DEFAULT_WEIGHTS, device: str | torch.device = "cpu") -> LearnedBoundary:
        """The networks of a weights file, checked against its JSON card (``<name>.card.json``:
        the file's SHA-256, the architecture and how it was fitted). Weights without their card,
        or that do not match it, are refused: nothing unchecked is loaded."""
        return cls(load_net(path, "boundary", lambda blob: BoundaryNet(int(blob["hidden"]))), device)

    def save(self, path: str | Path, meta: dict | None = None) -> None:
        """PyTorch's format, and a JSON card beside it; both written through temporary names."""
        blob = {"hidden": self.net.hidden, "state": self.net.state_dict(), "meta": meta or {}}
        architecture = {"hidden": self.net.hidden, "inputs": N_FEATURES, "rounds": FINAL_ROUND}
        save_checked(path, blob, "pasur boundary value", architecture, meta)

    @torch.no_grad()
    def __call__(self, round_, pool, ca, cb, last, remaining) -> torch.Tensor:
        x = features(pool, ca, cb, last, remaining).to(self.device)
        return self.net(round_, x).to(pool.device)


class ClubsBoundary:
    """Closed form: the expected clubs bonus if every club still out is a coin flip, plus the pool's
    points (and clubs) to the last capturer, discounted by how much play is left to change that."""

    name = "clubs"

    def __init__(self) -> None:
        self._table = torch.tensor(
            [[[club_race(a, b, n) for n in range(N_CLUBS + 1)] for b in range(8)] for a in range(8)]
        )

    def __call__(self, round_, pool, ca, cb, last, remaining) -> torch.Tensor:
        left = (N_CLUBS - ca - cb).clamp(0, N_CLUBS)
        v = self._table.to(pool.device)[ca.clamp(0, 7), cb.clamp(0, 7), left]
        share = 1.0 / (FINAL_ROUND - round_ + 1)  # the sweep is far off early in the game
        pts = card_points_of(pool).float() + 0.5 * popcount(pool & CLUB_MASK).float()
        sweep = torch.where(last == 1, pts, torch.where(last == 2, -pts, 0.0)) * share
        return v + sweep


@lru_cache(maxsize=4)
def default_boundary(device: str = "cpu"):
    """The shipped learned boundary, or the closed form when its weights are missing."""
    if DEFAULT_WEIGHTS.exists():
        return LearnedBoundary.load(DEFAULT_WEIGHTS, device)
    return ClubsBoundary()
