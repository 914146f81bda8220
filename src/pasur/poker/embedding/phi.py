"""The embedding matrix Phi of one round: how each class of hands trusts the m advisors.

``Phi`` is ``[m, n]`` (n classes), non-negative, each column summing to 1 (section 3.2). The
strategy of a class is ``Phi^T sigma(E)`` (eq. 4, 8); a quantity of the classes (a regret, a
reach) is embedded as ``Phi (w * x)`` (eq. 5), ``w`` the class weights (the actual (board, hand)
pairs each class stands for), so the sum runs over every information set. Three kinds, with the
same results where they coincide:

* ``identity``: one advisor per class (m = n): Embedding CFR is then vanilla CFR;
* ``buckets``: a one-hot Phi from a bucket per class (a clustering): CFR on that abstraction;
  gathers and scatter-adds instead of products;
* ``dense``: any Phi, such as HandEbdNet's softmax: matrix products. Where its columns repeat
  (a Phi over coarser classes, such as Figure 5's strength classes: 3,957 distinct columns over
  62,020 isomorphism classes), the products run over the distinct columns only, with gathers and
  scatter-adds between classes and columns.

The solver uses the maps in two stages, so that a product over the distinct columns is made once
per traversal, not once per chunk of classes: :meth:`Embedding.strategies` recovers strategies
(the rows asked for first, then spread over a chunk of classes), :meth:`Embedding.gather_into`
and :meth:`Embedding.finish` embed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from pasur.common.errors import PasurInputError


@dataclass
class Embedding:
    kind: str  # identity | buckets | dense
    m: int
    weight: torch.Tensor  # [n] class weights
    key: torch.Tensor | None = None  # [n] bucket of each class (buckets), or its distinct column (dense)
    phi: torch.Tensor | None = None  # [m, n] (dense)
    phi_wt: torch.Tensor | None = None  # [n, m] = (Phi * w)^T (dense, where its columns do not repeat)
    cols: torch.Tensor | None = None  # [m, G] Phi's distinct columns (dense, where they repeat)

    @property
    def n(self) -> int:
        return int(self.weight.numel())

    @staticmethod
    def identity(weight: torch.Tensor) -> Embedding:
        return Embedding("identity", int(weight.numel()), weight)

    @staticmethod
    def buckets(key, weight: torch.Tensor, m: int | None = None) -> Embedding:
        key = torch.as_tensor(key, dtype=torch.int64, device=weight.device)
        if key.shape != weight.shape:
            raise PasurInputError(f"a bucket per class needed: {tuple(key.shape)} against {tuple(weight.shape)}")
        if key.numel() and int(key.min()) < 0:
            raise PasurInputError("negative bucket ids")
        m = int(key.max()) + 1 if m is None else m
        if key.numel() and int(key.max()) >= m:
            raise PasurInputError(f"bucket ids reach {int(key.max())}, beyond {m} buckets")
        return Embedding("buckets", m, weight, key=key)

    @staticmethod
    def uniform(weight: torch.Tensor) -> Embedding:
        """One advisor for every class."""
        return Embedding.buckets(torch.zeros_like(weight, dtype=torch.int64), weight, 1)

    @staticmethod
    def dense(phi: torch.Tensor, weight: torch.Tensor, atol: float = 1e-4) -> Embedding:
        phi = phi.to(dtype=weight.dtype, device=weight.device)
        if phi.ndim != 2 or phi.shape[1] != weight.numel():
            raise PasurInputError(f"Phi must be [m, {weight.numel()}], got {tuple(phi.shape)}")
        if (phi < 0).any() or not torch.allclose(phi.sum(0), torch.ones_like(weight), atol=atol):
            raise PasurInputError("Phi's columns must be probability vectors")
        phi = (phi / phi.sum(0, keepdim=True)).contiguous()
        m = int(phi.shape[0])
        key, first = repeated_columns(phi)
        if key is None:
            return Embedding("dense", m, weight, phi=phi, phi_wt=(phi * weight).T.contiguous())
        return Embedding("dense", m, weight, key=key, phi=phi, cols=phi.index_select(1, first).contiguous())

    def to_dense(self) -> torch.Tensor:
        """Phi itself, ``[m, n]`` (for tests and small games)."""
        if self.kind == "dense":
            return self.phi
        eye = torch.zeros(self.m, self.n, dtype=self.weight.dtype, device=self.weight.device)
        cols = torch.arange(self.n, device=eye.device)
        eye[cols if self.kind == "identity" else self.key, cols] = 1.0
        return eye

    # ------------------------------------------------------------------ the two maps

    def recover(self, sig: torch.Tensor, c0: int, c1: int) -> torch.Tensor:
        """``Phi^T`` applied to advisor values ``sig`` ``[k, m]``: ``[k, c1 - c0]`` for classes ``c0:c1``."""
        if self.kind == "identity":
            return sig[:, c0:c1]
        if self.kind == "buckets":
            return sig.index_select(1, self.key[c0:c1])
        if self.cols is not None:
            return (sig @ self.cols).index_select(1, self.key[c0:c1])
        return sig @ self.phi[:, c0:c1]

    def recover_at(self, sig: torch.Tensor, classes: torch.Tensor) -> torch.Tensor:
        """Like :meth:`recover` for any class ids ``[N]``: ``[k, N]``."""
        if self.kind == "identity":
            return sig.index_select(1, classes)
        if self.kind == "buckets":
            return sig.index_select(1, self.key.index_select(0, classes))
        if self.cols is not None:
            return (sig @ self.cols).index_select(1, self.key.index_select(0, classes))
        return sig @ self.phi.index_select(1, classes)

    def embed_into(self, out: torch.Tensor, x: torch.Tensor, c0: int, c1: int) -> None:
        """``out += Phi (w * x)^T`` for ``x`` ``[k, c1 - c0]``: ``out`` is ``[k, m]``."""
        if self.cols is None:
            self.gather_into(out, x, c0, c1)
        else:
            pre = torch.zeros(x.shape[0], self.width, dtype=x.dtype, device=x.device)
            self.gather_into(pre, x, c0, c1)
            out += self.finish(pre)

    # ------------------------------------------------------------------ the maps in two stages

    @property
    def width(self) -> int:
        """Columns of :meth:`lift`'s table and of :meth:`gather_into`'s accumulator: one per class
        (identity), per bucket (buckets), per distinct column (dense with repeated columns) or per
        advisor (any other dense Phi, whose products run per chunk of classes)."""
        if self.kind == "identity":
            return self.n
        return self.m if self.cols is None else int(self.cols.shape[1])

    def lift(self, sig: torch.Tensor) -> torch.Tensor:
        """The advisor table ``sig`` ``[k, m]`` made ready for :meth:`strategies`: the product with the
        distinct columns of a dense Phi is made here, once."""
        return sig @ self.cols if self.cols is not None else sig

    def strategies(self, sig: torch.Tensor, rows: list[torch.Tensor | None]) -> Callable:
        """``Phi^T sig`` at the (row, action) ids of each level, ``rows`` ``[V_d]`` (None where a
        level has none), for a chunk of classes: ``strategies(sig, rows)(c0, c1)(d)`` is ``[V_d,
        c1 - c0]``. The rows are picked first, once per traversal where the class side has fewer
        columns than the game has classes (buckets, a dense Phi's distinct columns), so only the
        rows asked for are spread over the classes, by a gather per chunk."""
        lifted = self.lift(sig)
        if self.key is not None:  # buckets, or a dense Phi's distinct columns
            picked = [None if x is None else lifted.index_select(0, x) for x in rows]

            def chunk(c0: int, c1: int) -> Callable[[int], torch.Tensor]:
                key = self.key[c0:c1]
                return lambda d: picked[d].index_select(1, key)

        elif self.kind == "identity":

            def chunk(c0: int, c1: int) -> Callable[[int], torch.Tensor]:
                part = lifted[:, c0:c1]
                return lambda d: part.index_select(0, rows[d])

        else:

            def chunk(c0: int, c1: int) -> Callable[[int], torch.Tensor]:
                spread = lifted @ self.phi[:, c0:c1]
                return lambda d: spread.index_select(0, rows[d])

        return chunk

    def gather_into(self, acc: torch.Tensor, x: torch.Tensor, c0: int, c1: int, scratch: bool = False) -> None:
        """``acc += `` the first stage of ``Phi (w * x)^T`` for ``x`` ``[k, c1 - c0]``, ``acc`` ``[k,
        width]``; :meth:`finish` of the total is the embedding. Only a dense Phi with repeated
        columns has a second stage: the weighted classes are summed into their distinct columns
        here (a scatter-add), the product with those columns is made once in :meth:`finish`.
        ``scratch``: ``x`` is not needed afterwards and may be overwritten."""
        if self.kind == "identity":
            acc[:, c0:c1].addcmul_(x, self.weight[c0:c1])
        elif self.key is not None:
            w = self.weight[c0:c1]
            acc.index_add_(1, self.key[c0:c1], x.mul_(w) if scratch else x * w)
        else:
            acc.addmm_(x, self.phi_wt[c0:c1])

    def finish(self, acc: torch.Tensor) -> torch.Tensor:
        """The embedding ``[k, m]`` of what :meth:`gather_into` accumulated in ``acc``."""
        return acc @ self.cols.T if self.cols is not None else acc


#: a dense Phi is kept by its distinct columns when they are at most this share of its columns
REPEATED = 0.5


def repeated_columns(phi: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """The distinct column of each column of ``phi`` ``[m, n]`` (``[n]``, numbered in the order
    of first appearance) and the first column of each (``[G]``), where the columns repeat
    (bitwise equal: a Phi made over coarser classes); ``(None, None)`` where at most ``n x
    REPEATED`` of them would be saved."""
    n = int(phi.shape[1])
    if n < 2:
        return None, None
    cols = np.ascontiguousarray(phi.T.detach().cpu().numpy())
    bits = cols.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[cols.dtype.itemsize])
    mult = np.random.default_rng(0).integers(1, 2**63, size=bits.shape[1], dtype=np.uint64) | np.uint64(1)
    code = np.empty(n, dtype=np.uint64)
    with np.errstate(over="ignore"):  # a hash of each column's bits (wrapping): equal columns, equal codes
        for i in range(0, n, 8192):
            code[i : i + 8192] = (bits[i : i + 8192].astype(np.uint64) * mult).sum(1)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    if len(first) > n * REPEATED:
        return None, None
    inverse = inverse.reshape(-1)
    if not np.array_equal(cols, cols[first[inverse]]):  # two distinct columns with one code: compare bytes
        rows = cols.view(np.dtype((np.void, cols.dtype.itemsize * cols.shape[1]))).reshape(-1)
        _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    order = np.argsort(first, kind="stable")  # number the distinct columns by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    dev = phi.device
    key = torch.as_tensor(rank[inverse], dtype=torch.int64, device=dev)
    return key, torch.as_tensor(first[order], dtype=torch.int64, device=dev)
