"""Strength classes: the suit-isomorphism classes of a round merged where their hand strength
is equal, the paper's "structurally equivalent hand strength classes" (Numeral211: 100 / 2,250 /
3,957, section 5).

Three readings (:data:`READINGS`), each a function of the exact (lose, draw, win) counts of
:func:`pasur.poker.embedding.tensors.rollout_counts` (integers: no rounding decides a merge):

* ``paper``: the last round by the hand's own showdown counts; an earlier round by the multiset
  of the next round's strength classes over its next deals (each equally likely): two hands are
  merged when their next deals can be paired off into equal classes (the recursive merge of
  Gilpin and Sandholm's lossless abstraction, applied to strength alone). Numeral211: **100 /
  2,250 / 3,957**, the paper's counts exactly (docs/embedding-cfr.md);
* ``shares``: every round by the hand's own rolled-out shares: 100 / 2,234 / 3,957;
* ``tensor``: every round by the full strength tensor (the hand's and its predecessors' shares,
  HandEbdNet's target, appendix D.2): 100 / 2,248 / 51,070.

The first two forget the history, and ``tensor`` keeps only its shares: hands with different
earlier cards share a class (imperfect recall), so a strength class space is an abstraction, not
the game; what it loses shows in the
exploitability, always measured in the real game. :func:`pasur.poker.abstraction.abstraction`
makes them a keying of the core's solvers (``pasur poker solve --abstraction strength``);
:func:`coarse_phi` gives Embedding CFR a Phi with one column per class (Figure 5's
``--classes strength``).
"""

from __future__ import annotations

import numpy as np
import torch

from pasur.common.errors import PasurInputError
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.tensors import rollout_counts

READINGS = ("paper", "shares", "tensor")


def _number(keys: np.ndarray) -> np.ndarray:
    """Class ids ``0..k-1`` of the distinct rows of ``keys`` ``[n, d]`` (in sorted row order)."""
    return np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)


def strength_classes(space: ClassSpace, reading: str = "paper", counts=None) -> list[np.ndarray]:
    """Per round, ``[n_r]``: the strength class of each isomorphism class (ids ``0..k_r - 1``)."""
    if reading not in READINGS:
        raise PasurInputError(f"strength classes: reading {reading!r} is not one of {', '.join(READINGS)}")
    counts = counts or rollout_counts(space)
    R = space.R
    if reading == "shares":
        return [_number(c) for c in counts]
    if reading == "tensor":
        out = []
        for r in range(R):
            cls = np.arange(space.rounds[r].n)
            rows = []
            for j in range(r, -1, -1):
                rows.append(counts[j][cls])
                if j:
                    cls = space.rounds[j].parent[cls]
            out.append(_number(np.concatenate(rows, 1)))
        return out
    out = [None] * R
    out[-1] = _number(counts[-1])
    for r in range(R - 2, -1, -1):
        out[r] = _number(np.sort(out[r + 1][space.rounds[r].children], axis=1))
    return out


def class_counts(space: ClassSpace, reading: str = "paper") -> list[int]:
    """Strength classes per round."""
    return [int(c.max()) + 1 for c in strength_classes(space, reading)]


def strength_weights(space: ClassSpace, classes: list[np.ndarray]) -> list[np.ndarray]:
    """Per round, ``[k_r]``: the actual (board, hand) pairs each strength class stands for."""
    return [np.bincount(c, weights=rc.weight).astype(np.int64) for c, rc in zip(classes, space.rounds, strict=True)]


def strength_space(engine) -> ClassSpace:
    """The class space strength classes are made on (suit-isomorphic boards needed)."""
    if not engine.iso:
        raise PasurInputError("strength classes are made on suit-isomorphism classes: the engine with iso=True (--iso)")
    return ClassSpace(engine)


def coarse_phi(phi: torch.Tensor, classes: np.ndarray, weight) -> torch.Tensor:
    """A Phi with one column per coarse class, given back over the isomorphism classes (``[m, n]``,
    equal columns within a class): each coarse class's column is the mean of its members' columns
    of ``phi`` ``[m, n]``, weighted by the hands they stand for. A one-hot ``phi`` constant on each
    class stays itself, so Embedding CFR on it is CFR on that bucketing."""
    c = torch.as_tensor(np.asarray(classes), dtype=torch.int64, device=phi.device)
    w = torch.as_tensor(np.asarray(weight), dtype=phi.dtype, device=phi.device)
    k = int(c.max()) + 1
    merged = torch.zeros(phi.shape[0], k, dtype=phi.dtype, device=phi.device).index_add_(1, c, phi * w)
    merged /= torch.zeros(k, dtype=phi.dtype, device=phi.device).index_add_(0, c, w)
    return merged.index_select(1, c)
