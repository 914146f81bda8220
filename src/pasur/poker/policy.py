"""Strategies as tables: per round, action probabilities per (decision node, key).

A *keying* says which hands share a strategy at a node of round ``r``: ``key[r]`` maps every
(listed board, hand) of the round to a key. The lossless keying gives every (board, hand) its own
key (the real game's information sets: a betting sequence, the board, the hand). An
abstraction (imperfect recall) maps hands to buckets per round, so a table holds one row per
(betting sequence, bucket): what Embedding CFR's baselines store.

Tables are ``[rows, A, keys]`` (actions before keys, so a board chunk of a lossless table is a
slice). Illegal actions hold 0; a row's legal actions sum to 1.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import torch

from pasur.common import regret
from pasur.common.errors import PasurInputError
from pasur.poker.cards import card_masks, hand_permutation, permute_cards
from pasur.poker.tree import N_ACTIONS


@dataclass
class Keying:
    """``key[r]``: ``[B_r, H]`` int64 keys of round ``r``; ``n_keys[r]``; ``lossless``: key is
    ``board * H + hand`` (the engine's boards)."""

    key: list[torch.Tensor]
    n_keys: list[int]
    lossless: bool = False
    name: str = "lossless"

    @staticmethod
    def lossless_for(engine) -> Keying:
        keys = [
            torch.arange(b * h, device=engine.device).view(b, h)
            for b, h in zip(engine.n_boards, engine.Hr, strict=True)
        ]
        return Keying(keys, [b * h for b, h in zip(engine.n_boards, engine.Hr, strict=True)], lossless=True)

    @staticmethod
    def from_buckets(engine, buckets: list, name: str = "buckets") -> Keying:
        """An abstraction from bucket tables per round, each ``[actual boards of round r, H]``
        (rows in :func:`actual_boards` order, columns by hand id) or ``[H]`` for a round without
        board cards. Entries of hands that meet the board are ignored (any value)."""
        if len(buckets) != engine.R:
            raise PasurInputError(f"an abstraction needs one bucket table per round ({engine.R})")
        keys, n_keys = [], []
        for r, tab in enumerate(buckets):
            tab = np.asarray(tab, dtype=np.int64)
            boards = actual_boards(engine.game, r)
            H = len(engine.boards.hands)
            if tab.ndim == 1:
                tab = np.broadcast_to(tab, (len(boards), H))
            if tab.shape != (len(boards), H):
                raise PasurInputError(
                    f"round {r + 1}: bucket table of shape {tab.shape}, expected ({len(boards)}, {H})"
                )
            valid = (engine.boards.hand_masks[None, :] & card_masks(boards)[:, None]) == 0
            tab = np.where(valid, tab, 0)
            if tab.min() < 0:
                raise PasurInputError(f"round {r + 1}: negative bucket ids")
            index = {tuple(b): i for i, b in enumerate(boards.tolist())}
            listed = engine.boards.boards[r]
            rows = np.asarray([index[tuple(b)] for b in listed.tolist()], dtype=np.int64)
            if engine.iso:
                _check_suit_invariant(engine, r, tab, boards, index)
            keys.append(
                torch.as_tensor(np.take_along_axis(tab[rows], engine.boards.hand_ids[r], axis=1), device=engine.device)
            )
            n_keys.append(int(tab.max()) + 1)
        return Keying(keys, n_keys, lossless=False, name=name)


def actual_boards(game, r: int) -> np.ndarray:
    """Every board of round ``r`` (cards in dealing order, sorted within a round), in a fixed order."""
    segs = [()]
    for m in game.board_cards[: r + 1]:
        nxt = []
        for s in segs:
            used = set(s)
            rest = [c for c in range(game.n_cards) if c not in used]
            nxt.extend((*s, *new) for new in itertools.combinations(rest, m))
        segs = nxt
    n_vis = sum(game.board_cards[: r + 1])
    return np.asarray(segs, dtype=np.int64).reshape(len(segs), n_vis)


def _check_suit_invariant(engine, r: int, tab: np.ndarray, boards: np.ndarray, index: dict) -> None:
    g = engine.game
    bounds = np.cumsum((0, *g.board_cards[: r + 1]))
    for perm in engine.boards.perms[1:]:
        pb = permute_cards(boards, perm, g.n_suits)
        for a, b in itertools.pairwise(bounds):
            pb[:, a:b] = np.sort(pb[:, a:b], axis=1)
        rows = np.asarray([index[tuple(x)] for x in pb.tolist()])
        hp = hand_permutation(g, perm)
        if not np.array_equal(tab[rows][:, hp], tab):
            raise PasurInputError(
                f"round {r + 1}: the abstraction is not suit-symmetric; use the engine with iso=False"
            )


class TabularPolicy:
    """Per round ``r`` a table ``[rows_r, A, n_keys_r]`` of action probabilities."""

    def __init__(self, engine, keying: Keying | None = None, tables: list[torch.Tensor] | None = None) -> None:
        self.engine = engine
        self.keying = keying or Keying.lossless_for(engine)
        if tables is None:
            tables = [self.uniform_table(r) for r in range(engine.R)]
        self.tables = tables

    def legal(self, r: int) -> torch.Tensor:
        t = self.engine.tree
        return torch.as_tensor(t.legal[t.round_decisions[r]], device=self.engine.device)

    def uniform_table(self, r: int) -> torch.Tensor:
        legal = self.legal(r).to(self.engine.dtype)
        u = legal / legal.sum(1, keepdim=True)
        return u[:, :, None].expand(-1, -1, self.keying.n_keys[r]).contiguous()

    def probs(self, r: int, lo: int, hi: int, b0: int, b1: int) -> torch.Tensor:
        t = self.tables[r][lo:hi]
        H = self.engine.Hr[r]
        if self.keying.lossless:
            return t[:, :, b0 * H : b1 * H].reshape(hi - lo, N_ACTIONS, b1 - b0, H)
        k = self.keying.key[r][b0:b1].reshape(-1)
        return t.index_select(2, k).view(hi - lo, N_ACTIONS, b1 - b0, H)

    def edge_probs(self, r: int, lo: int, child_slot: torch.Tensor, b0: int, b1: int) -> torch.Tensor:
        """Probability of each child edge (``child_slot`` = node * A + action, nodes counted from
        row ``lo``) on boards ``b0:b1``: ``[n_children, Bc, H]``."""
        H = self.engine.Hr[r]
        t = self.tables[r]
        rows = t.view(-1, t.shape[-1]).index_select(0, child_slot + lo * N_ACTIONS)  # [n, K]
        if self.keying.lossless:
            return rows[:, b0 * H : b1 * H].reshape(-1, b1 - b0, H)
        k = self.keying.key[r][b0:b1].reshape(1, -1)
        return torch.gather(rows, 1, k.expand(rows.shape[0], -1)).view(-1, b1 - b0, H)

    def clone(self) -> TabularPolicy:
        return TabularPolicy(self.engine, self.keying, [t.clone() for t in self.tables])


def normalize(tables: list[torch.Tensor], legal: list[torch.Tensor]) -> list[torch.Tensor]:
    """Rows scaled to sum 1 over legal actions; a row of zeros becomes uniform
    (:func:`pasur.common.regret.normalize` per round; ``legal[r]``: ``[rows, A]``)."""
    return [regret.normalize(t, lg[:, :, None]) for t, lg in zip(tables, legal, strict=True)]
