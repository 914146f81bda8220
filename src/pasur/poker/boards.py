"""The boards of each round, with suit isomorphism, card removal and chance weights.

Round ``r`` sees the board cards dealt up to it. With ``iso=False`` every board is listed; with
``iso=True`` only one representative per orbit of the suit permutations (the lexicographically
smallest relabelling), which shrinks Numeral211's boards from 40 / 1,560 to 10 / 190 in rounds
2 / 3. Values of a non-listed board are those of its representative with the hands relabelled,
so a chance node sums, over *every* actual child board, the representative's values gathered
through a hand permutation (``expand_*``). This is exact for suit-symmetric strategies (every
strategy of a suit-invariant keying); :mod:`pasur.poker.engine` checks the keying before using it.

Chance weights: every complete deal (two hands and a full board) has probability
``1 / n_deals``. A value at a round-``r`` node sums over the deals that complete its board, all
equally many, so terminal utilities of round ``r`` carry ``weight[r] = completions_r / n_deals``.

>>> from pasur.poker.games import get_game
>>> b = RoundBoards(get_game("numeral211"), iso=True)
>>> [len(x) for x in b.boards], [int(m.sum()) for m in b.mult]
([1, 10, 190], [1, 40, 1560])
>>> b.n_deals == 780 * 703 * 36 * 35  # both hands, then the flop and the turn
True
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from pasur.poker.cards import card_masks, hand_permutation, hands, permute_cards, suit_permutations
from pasur.poker.evaluator import strengths
from pasur.poker.games import PokerGame


@dataclass
class RoundBoards:
    """Boards per round (numpy). ``boards[r]``: ``[B_r, visible_r]`` card ids in dealing order
    (sorted within a round); ``mult[r]``: how many actual boards each stands for; ``valid[r]``:
    ``[B_r, H]`` hand disjoint from the board; ``parent[r]``: index of the board's prefix in round
    ``r - 1``; ``expand_parent/child/gather[r]``: one entry per actual child board of each listed
    round-``r - 1`` board (``gather`` is ``None`` when no relabelling is needed)."""

    game: PokerGame
    iso: bool

    def __post_init__(self) -> None:
        g = self.game
        self.hands = hands(g)
        self.hand_masks = card_masks(self.hands)
        self.perms = suit_permutations(g.n_suits) if self.iso else [tuple(range(g.n_suits))]
        self._perm_gathers: dict[tuple[int, ...], np.ndarray] = {}
        self.boards: list[np.ndarray] = []
        self.mult: list[np.ndarray] = []
        self.parent: list[np.ndarray] = []
        self.expand_parent: list[np.ndarray] = []
        self.expand_child: list[np.ndarray] = []
        self.expand_gather: list[np.ndarray | None] = []
        prev = [((), self.perms)]  # (segments, stabilizer) of the listed boards before round 1
        prev_mult = np.ones(1, dtype=np.int64)
        for r, m in enumerate(g.board_cards):
            listed, stabs, ep, ec, eperm = [], [], [], [], []
            index: dict[tuple, int] = {}
            for pi, (segs, stab) in enumerate(prev):
                used = [c for s in segs for c in s]
                rest = [c for c in range(g.n_cards) if c not in used]
                for new in itertools.combinations(rest, m):
                    child = (*segs, new)
                    canon, sigma = self._canonical(child, stab)
                    if canon not in index:
                        index[canon] = len(listed)
                        listed.append(canon)
                        stabs.append([p for p in stab if self._apply(canon, p) == canon])
                    ep.append(pi)
                    ec.append(index[canon])
                    eperm.append(sigma)
            n_vis = sum(g.board_cards[: r + 1])
            flat = [[c for s in b for c in s] for b in listed]
            self.boards.append(np.asarray(flat, dtype=np.int64).reshape(len(listed), n_vis))
            ep_a, ec_a = np.asarray(ep, dtype=np.int64), np.asarray(ec, dtype=np.int64)
            mult = np.zeros(len(listed), dtype=np.int64)
            np.add.at(mult, ec_a, prev_mult[ep_a])
            self.mult.append(mult)
            parent = np.zeros(len(listed), dtype=np.int64)
            parent[ec_a] = ep_a
            self.parent.append(parent)
            self.expand_parent.append(ep_a)
            self.expand_child.append(ec_a)
            identity = tuple(range(g.n_suits))
            if all(p == identity for p in eperm):
                self.expand_gather.append(None)
            else:
                self.expand_gather.append(np.stack([self._perm_gather(p) for p in eperm]))
            prev, prev_mult = list(zip(listed, stabs, strict=True)), mult
        self.valid = [(self.hand_masks[None, :] & card_masks(b)[:, None]) == 0 for b in self.boards]
        self.n_deals, self.weight = self._chance_weights()
        self._positions()

    def _positions(self) -> None:
        """Each round's ranges hold only the hands that miss the board (the same count on every
        board), in a per-board order: by hand id, except in the last round, by strength (what
        the showdown needs: :mod:`pasur.poker.showdown`)."""
        g = self.game
        H = len(self.hands)
        self.hand_ids: list[np.ndarray] = []
        self.pos: list[np.ndarray] = []  # [B_r, H]: position of each hand, -1 if it meets the board
        last = self.boards[-1]
        cards = np.concatenate(
            [np.repeat(last[:, None, :], H, axis=1), np.broadcast_to(self.hands, (len(last), H, g.hole_cards))], axis=2
        ).reshape(len(last) * H, -1)
        s = strengths(g, cards).reshape(len(last), H)
        self.strength = np.where(self.valid[-1], s, -1)
        for r in range(g.n_rounds):
            v = self.valid[r]
            if r == g.n_rounds - 1:
                key = np.where(v, self.strength, np.iinfo(np.int64).min)
                order = np.argsort(key, axis=1, kind="stable")
            else:
                order = np.argsort(~v, axis=1, kind="stable")
            n_valid = int(v[0].sum())
            ids = order[:, H - n_valid :] if r == g.n_rounds - 1 else order[:, :n_valid]
            pos = np.full((len(v), H), -1, dtype=np.int64)
            np.put_along_axis(pos, ids, np.arange(n_valid)[None, :].repeat(len(v), 0), axis=1)
            self.hand_ids.append(ids)
            self.pos.append(pos)
        self._links()
        self._card_rows()

    def _links(self) -> None:
        """``root_index[r]``: where each (board, position) of round ``r`` finds its reach in round
        ``r - 1`` (flat ``board * H_prev + position``); ``expand_pos[r]``: for each chance entry and
        each parent position, the child position holding the relabelled hand (-1: the hand meets
        the new cards)."""
        self.root_index: list[np.ndarray | None] = [None]
        self.expand_pos: list[np.ndarray | None] = [None]
        for r in range(1, self.game.n_rounds):
            hp = self.hand_ids[r - 1].shape[1]
            par = self.parent[r]
            self.root_index.append(
                par[:, None] * hp + np.take_along_axis(self.pos[r - 1][par], self.hand_ids[r], axis=1)
            )
            parent_hands = self.hand_ids[r - 1][self.expand_parent[r]]  # [E, H_prev]
            if self.expand_gather[r] is not None:
                parent_hands = np.take_along_axis(self.expand_gather[r], parent_hands, axis=1)
            self.expand_pos.append(np.take_along_axis(self.pos[r][self.expand_child[r]], parent_hands, axis=1))

    def _card_rows(self) -> None:
        """For two-card hands: per board, the hands holding each card that misses the board
        (``card_pos [B, N', Hc']`` positions, in position order), and each hand's two entries in that
        layout (``hand_slot [B, 2, H_r]``, flat: first cards, then second cards) and rows
        (``hand_row [B, 2, H_r]``)."""
        self.card_pos, self.hand_slot, self.hand_row = [], [], []
        if self.game.hole_cards != 2:
            return
        n = self.game.n_cards
        for r in range(self.game.n_rounds):
            ids = self.hand_ids[r]
            B, Hr = ids.shape
            hc = self.hands[ids]  # [B, Hr, 2]
            on_board = np.zeros((B, n), dtype=bool)
            np.put_along_axis(on_board, self.boards[r], True, axis=1)
            rowmap = np.cumsum(~on_board, axis=1) - 1  # row of each card among the cards off the board
            n_rows = n - self.boards[r].shape[1]
            width = 2 * Hr // n_rows
            row = np.take_along_axis(rowmap, hc.reshape(B, -1), axis=1).reshape(B, Hr, 2)
            key = (row * Hr + np.arange(Hr)[None, :, None]).transpose(0, 2, 1).reshape(B, 2 * Hr)  # [B, (j, i)]
            order = np.argsort(key, axis=1, kind="stable")  # entries sorted by (row, position)
            self.card_pos.append((order % Hr).reshape(B, n_rows, width))
            slot = np.empty_like(order)
            np.put_along_axis(slot, order, np.arange(2 * Hr)[None, :].repeat(B, 0), axis=1)
            self.hand_slot.append(slot.reshape(B, 2, Hr))
            self.hand_row.append(row.transpose(0, 2, 1))

    def _apply(self, segs: tuple, perm: tuple[int, ...]) -> tuple:
        n = self.game.n_suits
        return tuple(tuple(sorted(permute_cards(np.asarray(s, dtype=np.int64), perm, n).tolist())) for s in segs)

    def _canonical(self, segs: tuple, stab: list) -> tuple[tuple, tuple[int, ...]]:
        """The smallest relabelling of ``segs`` by the parent's stabilizer, and the permutation
        ``sigma`` taking the actual board to it."""
        best, best_p = None, None
        for p in stab:
            cand = self._apply(segs, p)
            if best is None or cand < best:
                best, best_p = cand, p
        return best, best_p

    def _perm_gather(self, sigma: tuple[int, ...]) -> np.ndarray:
        # value(actual board, h) = value(representative, sigma(h)): gather index g[h] = sigma(h)
        if sigma not in self._perm_gathers:
            self._perm_gathers[sigma] = hand_permutation(self.game, sigma)
        return self._perm_gathers[sigma]

    def _chance_weights(self) -> tuple[int, list[float]]:
        g = self.game
        n, k = g.n_cards, g.hole_cards
        dealt = 2 * k
        ways = []  # ways to deal each round's board cards
        for m in g.board_cards:
            ways.append(math.comb(n - dealt, m))
            dealt += m
        n_deals = math.comb(n, k) * math.comb(n - k, k) * math.prod(ways)
        weight = [math.prod(ways[r + 1 :]) / n_deals for r in range(g.n_rounds)]
        return n_deals, weight

    def n_actual(self, r: int) -> int:
        return int(self.mult[r].sum())

    def pairs_per_round(self) -> list[int]:
        """(board, hand) pairs per round over actual boards: Numeral211 780 / 29,640 / 1,096,680."""
        return [int((self.valid[r].sum(axis=1) * self.mult[r]).sum()) for r in range(self.game.n_rounds)]
