"""The suit-isomorphism classes of (board, private hand) in each round: where every per-hand
quantity of Embedding CFR and of its clustering baselines lives.

Two (board, hand) pairs related by a permutation of the suits are strategically identical, and
every strategy built here is suit-symmetric, so a reach, a value, a feature or a column of the
embedding matrix Phi is stored once per class: Numeral211 has 100 / 2,260 / 62,020 classes
against 780 / 29,640 / 1,096,680 pairs. A class lives on exactly one board the engine lists
(:mod:`pasur.poker.boards`), at one or more of its positions (the board's own symmetries).

Per round ``r`` (:class:`RoundClasses`): each class's representative (listed board, position,
hand), ``weight`` (the actual (board, hand) pairs it stands for: a sum over all pairs is a
weighted sum over classes), ``parent`` (the class of the same hand on the previous round's
board: where its reach comes from) and ``children`` (the class on each actual next board: what
its value sums). Classes are numbered board by board, boards grouped by how many classes they
hold (``groups``), so a per-board operator is one batched matrix product per group.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from pasur.common.errors import PasurInputError
from pasur.poker.cards import permute_cards


def isomorphic_classes(engine, r: int) -> np.ndarray:
    """Class id of every (listed board, position) of round ``r``: ``[B_r, H_r]``."""
    g = engine.game
    bd = engine.boards
    boards = bd.boards[r]
    hands = bd.hands[bd.hand_ids[r]]  # [B, Hr, k]
    bounds = np.cumsum((0, *g.board_cards[: r + 1]))
    best = None
    for perm in itertools.permutations(range(g.n_suits)):
        pb = permute_cards(boards, perm, g.n_suits)
        for a, b in itertools.pairwise(bounds):
            pb[:, a:b] = np.sort(pb[:, a:b], axis=1)
        ph = np.sort(permute_cards(hands, perm, g.n_suits), axis=2)
        key = np.concatenate([np.broadcast_to(pb[:, None, :], (*ph.shape[:2], pb.shape[1])), ph], axis=2)
        code = np.zeros(key.shape[:2], dtype=np.int64)
        for c in range(key.shape[2]):
            code = code * g.n_cards + key[..., c]
        best = code if best is None else np.minimum(best, code)
    _, inverse = np.unique(best, return_inverse=True)
    return inverse.reshape(best.shape)


@dataclass(frozen=True)
class Group:
    """Boards with ``size`` classes each, holding classes ``lo:lo + boards * size``."""

    lo: int
    boards: np.ndarray  # listed board ids, in class order
    size: int

    @property
    def hi(self) -> int:
        return self.lo + len(self.boards) * self.size


@dataclass
class RoundClasses:
    round: int
    n: int
    board: np.ndarray  # [n] listed board of each class
    pos: np.ndarray  # [n] its representative position (the first on the board)
    hand: np.ndarray  # [n] the representative's hand id
    count: np.ndarray  # [n] positions of the class on its board
    weight: np.ndarray  # [n] actual (board, hand) pairs: count x the board's multiplicity
    of_position: np.ndarray  # [B_r, H_r] class of every (listed board, position)
    core_id: np.ndarray  # [n] the class id of isomorphic_classes
    groups: list[Group]
    parent: np.ndarray | None = None  # [n] class in round r - 1 (None in round 0)
    children: np.ndarray | None = None  # [n, k] classes of round r + 1, one per next deal


class ClassSpace:
    """The classes of every round of ``engine``'s game (numpy, built once; about 1 s for
    Numeral211). Needs suit-isomorphic boards and two private cards."""

    def __init__(self, engine) -> None:
        g = engine.game
        if g.hole_cards != 2:
            raise PasurInputError(f"{g.name}: the class space needs two private cards (got {g.hole_cards})")
        self.engine = engine
        self.game = g
        self.R = engine.R
        self.rounds = [self._round(r) for r in range(self.R)]
        for r in range(1, self.R):
            self.rounds[r].parent = self._parents(r)
            self.rounds[r - 1].children = self._children(r)

    def _round(self, r: int) -> RoundClasses:
        e = self.engine
        bd = e.boards
        core = isomorphic_classes(e, r)  # [B, H]
        B = core.shape[0]
        counts = [len(np.unique(core[b])) for b in range(B)]
        order = sorted(range(B), key=lambda b: (counts[b], b))
        first = {}
        for b in order:
            _, idx = np.unique(core[b], return_index=True)
            for p in np.sort(idx):
                c = int(core[b, p])
                if c in first:
                    raise AssertionError("a class spans two listed boards")
                first[c] = (b, int(p))
        n = len(first)
        # our numbering: boards in `order`, classes by first position
        new_of_core = np.empty(n, dtype=np.int64)
        board = np.empty(n, dtype=np.int64)
        pos = np.empty(n, dtype=np.int64)
        k = 0
        groups: list[Group] = []
        for size in sorted(set(counts)):
            bs = np.asarray([b for b in order if counts[b] == size], dtype=np.int64)
            groups.append(Group(k, bs, size))
            for b in bs:
                _, idx = np.unique(core[b], return_index=True)
                for p in np.sort(idx):
                    c = int(core[b, p])
                    new_of_core[c] = k
                    board[k], pos[k] = b, p
                    k += 1
        of_position = new_of_core[core]
        count = np.bincount(of_position.reshape(-1), minlength=n)
        mult = np.asarray(bd.mult[r], dtype=np.int64)
        weight = count * mult[board]
        hand = bd.hand_ids[r][board, pos]
        core_id = np.empty(n, dtype=np.int64)
        core_id[new_of_core] = np.arange(n)
        total = int((bd.valid[r].sum(axis=1) * mult).sum())
        if int(weight.sum()) != total:
            raise AssertionError(f"round {r}: class weights sum to {weight.sum()}, not {total}")
        return RoundClasses(r, n, board, pos, hand, count, weight, of_position, core_id, groups)

    def _parents(self, r: int) -> np.ndarray:
        bd = self.engine.boards
        rc, prev = self.rounds[r], self.rounds[r - 1]
        pb = bd.parent[r][rc.board]
        ppos = bd.pos[r - 1][pb, rc.hand]
        if (ppos < 0).any():
            raise AssertionError("a hand missing its previous board")
        return prev.of_position[pb, ppos]

    def _children(self, r: int) -> np.ndarray:
        """For each class of round ``r - 1``, the round-``r`` class of each actual next board
        that misses the hand (``[n, k]``: the same ``k`` for every class)."""
        bd = self.engine.boards
        prev, cur = self.rounds[r - 1], self.rounds[r]
        ep, ec, epos = bd.expand_parent[r], bd.expand_child[r], bd.expand_pos[r]
        rows = []
        for b, p in zip(prev.board, prev.pos, strict=True):
            sel = np.nonzero(ep == b)[0]
            cp = epos[sel, p]
            ok = cp >= 0
            rows.append(cur.of_position[ec[sel[ok]], cp[ok]])
        k = {len(x) for x in rows}
        if len(k) != 1:
            raise AssertionError(f"round {r}: classes with different numbers of next deals {sorted(k)}")
        return np.stack(rows)

    @property
    def sizes(self) -> list[int]:
        return [rc.n for rc in self.rounds]
