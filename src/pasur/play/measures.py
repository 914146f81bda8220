"""Measures of a matchup: the distribution of Alex's point difference, its mean with a 95 %
interval, and win, tie and loss rates kept apart (the paper's code counts ties as Alex's wins;
``win_rate_ties_to_alex`` reports that way too).

>>> import torch
>>> m = matchup_measures(torch.tensor([3, -2, 0, 5]))
>>> m["games"], m["mean"], m["win_rate"], m["tie_rate"], m["win_rate_ties_to_alex"]
(4, 1.5, 0.5, 0.25, 0.75)
"""

from __future__ import annotations

import math

import torch

Z95 = 1.959963984540054


def matchup_measures(utility: torch.Tensor) -> dict:
    """Summary of Alex-minus-Bob points over games (a 1-D tensor)."""
    u = utility.detach().to("cpu", torch.float64)
    n = int(u.numel())
    if n == 0:
        raise ValueError("no games to measure")
    mean = float(u.mean())
    sd = float(u.std(unbiased=True)) if n > 1 else 0.0
    half = Z95 * sd / math.sqrt(n)
    wins, ties = int((u > 0).sum()), int((u == 0).sum())
    values, counts = torch.unique(u.long(), return_counts=True)
    return {
        "games": n,
        "mean": mean,
        "std": sd,
        "ci95": [mean - half, mean + half],
        "win_rate": wins / n,
        "tie_rate": ties / n,
        "loss_rate": (n - wins - ties) / n,
        "win_rate_ties_to_alex": (wins + ties) / n,
        "distribution": {int(v): int(c) for v, c in zip(values.tolist(), counts.tolist(), strict=True)},
    }
