"""Terminal utilities in class space: folds and showdowns as small dense matrices per board.

A value at a class is the value at any of its members, so a fold or a showdown against the
opponent's reach ``x`` (per class of the board) is a linear map from the board's classes to
its classes. Per listed board with ``s`` classes:

* **fold**: the opponent's mass compatible with the hand, ``T - S_k1 - S_k2 + x(c)`` (``T`` the
  total, ``S_k`` the mass of the hands holding card ``k``; the hand itself is in both card sums),
  as ``x + Bm (A x)`` with ``A`` ``[1 + cards, s]`` (class sizes, then card counts per class)
  and ``Bm`` ``[s, 1 + cards]`` (1, then minus the representative's cards): two thin products;
* **showdown** (last round): ``W - L``, ``S[c, c'] = sum over the positions p' of class c' that
  miss the representative of c of sign(strength(c) - strength(p'))``: one ``[s, s]`` product
  (hand pairs sharing a card are left out exactly, ties give 0).

Boards with the same number of classes form a group (:mod:`pasur.poker.embedding.classes`), so
each operator is one batched matrix product per group. Vectors are node-major ``[V, classes]``.
"""

from __future__ import annotations

import numpy as np
import torch

from pasur.poker.cards import card_masks
from pasur.poker.showdown import SNAP


class RoundOperators:
    """The fold (every round) and showdown (last round) operators of one round."""

    def __init__(self, space, r: int, device, dtype) -> None:
        e = space.engine
        bd = e.boards
        rc = space.rounds[r]
        n_cards = space.game.n_cards
        hands = bd.hands
        self.groups = []
        #: float64 only: results below SNAP of the opponent's total mass are exact cancellations
        #: (as in :mod:`pasur.poker.showdown`); float32's own rounding is far above that
        self.snap = dtype == torch.float64
        last = r == space.R - 1
        for grp in rc.groups:
            A, Bm, S = [], [], []
            for b in grp.boards:
                cls = rc.of_position[b]  # [H] class of each position
                lo = grp.lo + len(A) * grp.size
                local = cls - lo  # 0..s-1
                s = grp.size
                ids = bd.hand_ids[r][b]
                hc = hands[ids]  # [H, 2]
                onehot = np.zeros((len(ids), s))
                onehot[np.arange(len(ids)), local] = 1.0
                inc = np.zeros((len(ids), n_cards))
                inc[np.arange(len(ids))[:, None], hc] = 1.0
                reps = rc.pos[lo : lo + s]
                a = np.concatenate([onehot.sum(0)[None, :], inc.T @ onehot], axis=0)  # [1 + cards, s]
                bm = np.concatenate([np.ones((s, 1)), -inc[reps]], axis=1)  # [s, 1 + cards]
                A.append(a)
                Bm.append(bm)
                if last:
                    st = bd.strength[b, ids]
                    masks = card_masks(hc)
                    compat = (masks[reps][:, None] & masks[None, :]) == 0
                    sign = np.sign(st[reps][:, None] - st[None, :]) * compat
                    S.append(sign @ onehot)
            t = lambda x: torch.as_tensor(np.stack(x), dtype=dtype, device=device)  # noqa: E731
            self.groups.append(
                (
                    grp.lo,
                    grp.hi,
                    grp.size,
                    t(A).transpose(1, 2).contiguous(),  # A^T [nb, s, 1 + cards]
                    t(Bm).transpose(1, 2).contiguous(),  # Bm^T [nb, 1 + cards, s]
                    t(S).transpose(1, 2).contiguous() if last else None,  # S^T [nb, s, s]
                )
            )

    def apply(self, kind: str, x: torch.Tensor, c0: int, c1: int, scale: torch.Tensor, out: torch.Tensor) -> None:
        """``out = scale[:, None] * op(x)`` for ``x`` ``[V, c1 - c0]`` (whole boards), ``op`` the
        ``fold`` or ``showdown`` operator of each board."""
        V = x.shape[0]
        for lo, hi, s, at, bmt, st in self.groups:
            a, b = max(lo, c0), min(hi, c1)
            if a >= b:
                continue
            if (a - lo) % s or (b - lo) % s:
                raise AssertionError("chunks must hold whole boards")
            i0, i1 = (a - lo) // s, (b - lo) // s
            xb = x[:, a - c0 : b - c0].view(V, i1 - i0, s).transpose(0, 1)  # [nb, V, s]
            # [nb, V, 1 + cards]: the total, then the card sums (a showdown needs them only to snap)
            t = torch.bmm(xb, at[i0:i1]) if kind == "fold" or self.snap else None
            if kind == "fold":
                y = torch.bmm(t, bmt[i0:i1])
                y += xb
            else:
                y = torch.bmm(xb, st[i0:i1])
            if self.snap:
                y.masked_fill_(y.abs() <= t[:, :, :1] * SNAP, 0.0)
            torch.mul(y.transpose(0, 1), scale[:, None, None], out=out[:, a - c0 : b - c0].view(V, i1 - i0, s))

    def fold(self, x: torch.Tensor, c0: int, c1: int) -> torch.Tensor:
        """The opponent mass compatible with each class's hand."""
        out = torch.empty_like(x)
        self.apply("fold", x, c0, c1, torch.ones(x.shape[0], dtype=x.dtype, device=x.device), out)
        return out

    def showdown(self, x: torch.Tensor, c0: int, c1: int) -> torch.Tensor:
        """Wins minus losses against the opponent's reach (last round)."""
        out = torch.empty_like(x)
        self.apply("show", x, c0, c1, torch.ones(x.shape[0], dtype=x.dtype, device=x.device), out)
        return out
