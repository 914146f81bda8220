"""An advisor-space strategy as a policy of the core engine: each hand plays ``Phi^T sigma(E)``.

The engine asks for edge probabilities per (board chunk, hand position); the policy looks up each
position's class and recovers its strategy from the advisor tables on the fly (a gather for a
one-hot Phi, a matrix product for a dense one), so nothing per hand is stored. The core's exact
best response (:mod:`pasur.poker.measures`) then measures it in the real game.
"""

from __future__ import annotations

import torch

from pasur.poker.tree import N_ACTIONS


class AdvisorPolicy:
    """``tables[r]``: ``[rows * A, m_r]`` advisor strategies; ``embeddings[r]`` their Phi."""

    def __init__(self, engine, space, embeddings, tables) -> None:
        self.engine = engine
        self.space = space
        self.emb = embeddings
        self.tables = tables
        self.of_position = [
            torch.as_tensor(rc.of_position, dtype=torch.int64, device=engine.device) for rc in space.rounds
        ]

    def _classes(self, r: int, b0: int, b1: int) -> torch.Tensor:
        return self.of_position[r][b0:b1].reshape(-1)

    def probs(self, r: int, lo: int, hi: int, b0: int, b1: int) -> torch.Tensor:
        sig = self.tables[r][lo * N_ACTIONS : hi * N_ACTIONS]
        out = self.emb[r].recover_at(sig, self._classes(r, b0, b1))
        return out.view(hi - lo, N_ACTIONS, b1 - b0, self.engine.Hr[r])

    def edge_probs(self, r: int, lo: int, child_slot: torch.Tensor, b0: int, b1: int) -> torch.Tensor:
        sig = self.tables[r].index_select(0, lo * N_ACTIONS + child_slot)
        out = self.emb[r].recover_at(sig, self._classes(r, b0, b1))
        return out.view(-1, b1 - b0, self.engine.Hr[r])
