"""The embedding matrix Phi of one round: how each class of hands trusts the m advisors.

``Phi`` is ``[m, n]`` (n classes), non-negative, each column summing to 1 (section 3.2). The
strategy of a class is ``Phi^T sigma(E)`` (eq. 4, 8); a quantity of the classes (a regret, a
reach) is embedded as ``Phi (w * x)`` (eq. 5), ``w`` the class weights (the actual (board, hand)
pairs each class stands for), so the sum runs over every information set. Three kinds, with the
same results where they coincide:

* ``identity``: one advisor per class (m = n): Embedding CFR is then vanilla CFR;
* ``buckets``: a one-hot Phi from a bucket per class (a clustering): CFR on that abstraction;
  gathers and scatter-adds instead of products;
* ``dense``: any Phi, such as HandEbdNet's softmax: matrix products.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pasur.common.errors import PasurInputError


@dataclass
class Embedding:
    kind: str  # identity | buckets | dense
    m: int
    weight: torch.Tensor  # [n] class weights
    key: torch.Tensor | None = None  # [n] bucket of each class (buckets)
    phi: torch.Tensor | None = None  # [m, n] (dense)
    phi_wt: torch.Tensor | None = None  # [n, m] = (Phi * w)^T (dense)

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
        phi = phi / phi.sum(0, keepdim=True)
        return Embedding("dense", int(phi.shape[0]), weight, phi=phi.contiguous(), phi_wt=(phi * weight).T.contiguous())

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
        return sig @ self.phi[:, c0:c1]

    def recover_at(self, sig: torch.Tensor, classes: torch.Tensor) -> torch.Tensor:
        """Like :meth:`recover` for any class ids ``[N]``: ``[k, N]``."""
        if self.kind == "identity":
            return sig.index_select(1, classes)
        if self.kind == "buckets":
            return sig.index_select(1, self.key.index_select(0, classes))
        return sig @ self.phi.index_select(1, classes)

    def embed_into(self, out: torch.Tensor, x: torch.Tensor, c0: int, c1: int) -> None:
        """``out += Phi (w * x)^T`` for ``x`` ``[k, c1 - c0]``: ``out`` is ``[k, m]``."""
        if self.kind == "identity":
            out[:, c0:c1].addcmul_(x, self.weight[c0:c1])
        elif self.kind == "buckets":
            out.index_add_(1, self.key[c0:c1], x * self.weight[c0:c1])
        else:
            out.addmm_(x, self.phi_wt[c0:c1])
