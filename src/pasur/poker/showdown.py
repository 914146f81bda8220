"""Terminal utilities against a range, with card removal, in O(n) per public node after an
O(n log n) sort per board.

Ranges of a round hold the hands that miss the board, and in the last round they are sorted by
strength on each board (:mod:`pasur.poker.boards`), so at a showdown a hand ``h`` wins the mass of
the weaker hands and loses the mass of the stronger ones, both prefix sums:

    W - L = (A_lt + A_le - T) - sum_{c in h} (A_lt^c + A_le^c - T^c)

``A_lt``/``A_le``: the opponent's mass strictly below / up to ``h``'s strength (gathered at the
first and last position of ``h``'s tie group), ``T`` the total; ``h`` itself and ties cancel.
The second sum removes the hands that share a card ``c`` with ``h`` (card removal): the same
prefix sums restricted to the hands holding ``c`` (one row per card, in strength order). A hand
sharing both cards with ``h`` is ``h``, in no term. One-card hands (Kuhn, Leduc) need no card
rows. For a fold, the winner takes the opponent's chips against every compatible hand:
``C = T - S_c1 - S_c2 + pi(h)`` (``S_c``: the mass of the hands holding ``c``; ``S`` and its sum
over a hand's two cards are products with the board's hand-card incidence, ``O(n * cards)``). Results below
1e-12 of the total mass are set to 0: they are what is left of exact cancellations (a hand that
wins as much as it loses), and an exact 0 keeps ties exact for regret matching.
"""

from __future__ import annotations

import numpy as np
import torch


class RoundCards:
    """Card-removal structures of round ``r`` on a device."""

    def __init__(self, boards, r: int, device, with_showdown: bool, dtype=torch.float64) -> None:
        lt = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=torch.int64, device=device)  # noqa: E731
        self.k = boards.game.hole_cards
        B, self.H = boards.hand_ids[r].shape
        if self.k == 2:
            cp = boards.card_pos[r]
            _, self.n_rows, self.width = cp.shape
            self.card_pos = lt(cp.reshape(B, -1))
            self.hand_slot = lt(boards.hand_slot[r].reshape(B, -1))
            # hand-card incidence per board [B, H, N']: card sums and their sum over a hand's two
            # cards are two small batched matrix products (O(n * cards), much faster than gathers)
            inc = np.zeros((B, self.H, self.n_rows))
            rows = boards.hand_row[r]  # [B, 2, H]
            for j in range(2):
                np.put_along_axis(inc, rows[:, j, :, None], 1.0, axis=2)
            self.incidence = torch.as_tensor(inc, dtype=dtype, device=device)
        if with_showdown:
            self._groups(boards, r, lt)

    def _groups(self, boards, r: int, lt) -> None:
        """Tie groups of the sorted hands (and of each card row): a hand's wins and losses are
        those of its group, so prefix sums are read once per group and spread to the hands."""
        s = np.take_along_axis(boards.strength, boards.hand_ids[r], axis=1)  # ascending per board
        B, H = s.shape
        new = np.ones((B, H), dtype=bool)
        new[:, 1:] = s[:, 1:] != s[:, :-1]
        gid = np.cumsum(new, axis=1) - 1
        G = int(gid[:, -1].max()) + 1
        ends = np.full((B, G), H - 1, dtype=np.int64)  # padded with the last position
        last = np.ones((B, H), dtype=bool)
        last[:, :-1] = new[:, 1:]
        bb, jj = np.nonzero(last)
        ends[bb, gid[bb, jj]] = jj
        self.gid, self.ends = lt(gid), lt(ends)
        if self.k != 2:
            return
        cp = boards.card_pos[r].reshape(B, -1)  # [B, N'*Hc'] positions, rows in position order
        w = self.width
        srow = np.take_along_axis(s, cp, axis=1).reshape(B, self.n_rows, w)
        rnew = np.ones_like(srow, dtype=bool)
        rnew[:, :, 1:] = srow[:, :, 1:] != srow[:, :, :-1]
        rlast = np.ones_like(srow, dtype=bool)
        rlast[:, :, :-1] = rnew[:, :, 1:]
        flat_new, flat_last = rnew.reshape(B, -1), rlast.reshape(B, -1)
        rgid = np.cumsum(flat_new, axis=1) - 1  # row groups numbered across the board's rows
        RG = int(rgid[:, -1].max()) + 1
        starts = np.zeros((B, RG), dtype=np.int64)
        rends = np.zeros((B, RG), dtype=np.int64)
        bb, ee = np.nonzero(flat_new)
        starts[bb, rgid[bb, ee]] = ee
        bb, ee = np.nonzero(flat_last)
        rends[bb, rgid[bb, ee]] = ee
        # each hand's two entries -> their row groups (in the flat group numbering)
        slot = boards.hand_slot[r].reshape(B, -1)  # [B, 2H] entries of first, then second cards
        self.rends = lt(rends)
        self.hand_rgroup = lt(np.take_along_axis(rgid, slot, axis=1))
        # from the groups' upper prefix sums alone: the previous group's (0 at a row's start: the
        # padded slot 0) and the row's total (its last group's)
        first = (starts % w) == 0
        self.prev_group = lt(np.where(first, 0, np.arange(RG)[None, :]))
        row_of = rends // w
        last_of_row = np.zeros((B, self.n_rows), dtype=np.int64)
        bb, gg = np.nonzero(np.arange(RG)[None, :] <= rgid[:, -1:])  # real groups (the rest is padding)
        np.maximum.at(last_of_row, (bb, row_of[bb, gg]), gg)
        self.row_last_group = lt(np.take_along_axis(last_of_row, row_of, axis=1))

    def _rows(self, pi: torch.Tensor, b0: int, b1: int) -> torch.Tensor:
        n, bc, _ = pi.shape
        idx = self.card_pos[b0:b1]
        return torch.gather(pi, 2, idx.expand(n, bc, idx.shape[-1]))

    def compatible(self, pi: torch.Tensor, b0: int, b1: int) -> torch.Tensor:
        """Mass of the opponent hands sharing no card with each hand: ``[n, Bc, H] -> [n, Bc, H]``."""
        total = pi.sum(-1, keepdim=True)
        if self.k == 1:
            return _snap(total - pi, total)
        inc = self.incidence[b0:b1]  # [Bc, H, N']
        x = pi.transpose(0, 1)  # [Bc, n, H]
        both = torch.bmm(torch.bmm(x, inc), inc.transpose(1, 2)).transpose(0, 1)  # S_c1 + S_c2
        out = pi - both
        out += total
        return _snap(out, total)

    def win_minus_lose(self, pi: torch.Tensor, b0: int, b1: int) -> torch.Tensor:
        """``pi``: ``[n, Bc, H]`` opponent reach (last round, strength order) -> ``W - L``."""
        n, bc, H = pi.shape
        cs = pi.cumsum(2)
        total = cs[:, :, -1:]
        ends = self.ends[b0:b1]
        a_le = torch.nn.functional.pad(torch.gather(cs, 2, ends.expand(n, bc, ends.shape[-1])), (1, 0))
        group = a_le[:, :, :-1] + a_le[:, :, 1:] - total  # A_lt + A_le - T of each tie group
        gid = self.gid[b0:b1]
        out = torch.gather(group, 2, gid.expand(n, bc, H))
        if self.k == 1:
            return _snap(out, total)
        rows = self._rows(pi, b0, b1)
        w = rows.shape[-1]
        rcs = rows.view(n, bc, self.n_rows, self.width).cumsum(3).view(n, bc, w)
        en = self.rends[b0:b1]
        rg = en.shape[-1]
        le = torch.nn.functional.pad(torch.gather(rcs, 2, en.expand(n, bc, rg)), (1, 0))  # [0, A_le^c...]
        e = torch.gather(le, 2, self.prev_group[b0:b1].expand(n, bc, rg))  # A_lt^c
        e += le[:, :, 1:]
        e -= torch.gather(le[:, :, 1:], 2, self.row_last_group[b0:b1].expand(n, bc, rg))  # T^c
        hg = self.hand_rgroup[b0:b1]
        both = torch.gather(e, 2, hg.expand(n, bc, hg.shape[-1]))
        out -= both[:, :, :H]
        out -= both[:, :, H:]
        return _snap(out, total)


#: a result below this share of the opponent's total mass is rounding noise of the prefix sums
SNAP = 1e-12


def _snap(x: torch.Tensor, total: torch.Tensor) -> torch.Tensor:
    """Rounding noise to exact 0: differences of prefix sums of a mass ``total`` that should
    cancel leave ~1e-16 of it, which regret matching would read as a real regret."""
    return x.masked_fill_(x.abs() <= total * SNAP, 0.0)
