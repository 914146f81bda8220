"""The tensor tree as data: what the builder (:mod:`pasur.solve.tree`, compact rounds in
:mod:`pasur.solve.compact`) makes and every solver reads.

A *layer* is a (round, turn) pair: turn ``t`` (0..8) counts the cards played in the round;
Alex moves on even turns. Both modes (``paper``, ``compact``: see :mod:`pasur.solve.tree`)
give every solver the same view: per layer, edges ``(parent, child, gt_edge)`` into the next
layer (:meth:`RoundTree.edges`), and per GT edge its action and reward (:class:`GTLayer`); at
the end of a round either a link to the next round's roots or, after round 5, the terminal value
(:func:`final_value`: final sweep and clubs bonus).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import torch

from pasur.game.rules import Action
from pasur.game.state import TURNS_PER_ROUND, GameState
from pasur.game.variants import STANDARD, Variant

#: edges per step of :meth:`GameTree.edge_checksum` (any size gives the same digest)
CHECKSUM_CHUNK = 1 << 20


@dataclass
class GTLayer:
    """Game-tree nodes at one turn, and the edges to the next turn (absent at turn 8).

    ``parent``/``child`` index nodes of this and the next layer; ``card``, ``captured``
    (mask) and ``reward`` (points banked, Alex minus Bob) describe each edge's action.
    In paper mode ``child`` is ``None``: edge ``e`` creates child node ``e``. The compact
    build stores each edge's action as an index (``action``) into per-action tables
    (``table``: card, captured, reward); the per-edge tensors are made on first use.
    """

    n: int
    parent: torch.Tensor | None = None  # int32 [E]
    child: torch.Tensor | None = None  # int32 [E] (compact only)
    cmp: torch.Tensor | None = None  # t_cmp [n, m] int8 (compact: of one representative history)
    #: compact mode: each node's (Alex clubs, Bob clubs, last capturer), clubs 7/0 once clinched
    node_scores: torch.Tensor | None = None
    action: torch.Tensor | None = None  # int32 [E]: row of ``table``
    table: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None  # card int8, captured int64, reward int8
    _per_edge: dict = field(default_factory=dict, repr=False)

    def _edge_column(self, i: int, name: str) -> torch.Tensor | None:
        x = self._per_edge.get(name)
        if x is None and self.action is not None:
            x = self._per_edge[name] = torch.index_select(self.table[i], 0, self.action)
        return x

    @property
    def card(self) -> torch.Tensor | None:  # int8 [E]
        return self._edge_column(0, "card")

    @card.setter
    def card(self, x: torch.Tensor | None) -> None:
        self._per_edge["card"] = x

    @property
    def captured(self) -> torch.Tensor | None:  # int64 [E]
        return self._edge_column(1, "captured")

    @captured.setter
    def captured(self, x: torch.Tensor | None) -> None:
        self._per_edge["captured"] = x

    @property
    def reward(self) -> torch.Tensor | None:  # int8 [E]
        return self._edge_column(2, "reward")

    @reward.setter
    def reward(self, x: torch.Tensor | None) -> None:
        self._per_edge["reward"] = x

    @property
    def n_edges(self) -> int:
        return 0 if self.parent is None else int(self.parent.shape[0])

    def nbytes(self) -> int:
        xs = [
            self.parent,
            self.child,
            self.cmp,
            self.node_scores,
            self.action,
            *(self.table or ()),
            *self._per_edge.values(),
        ]
        return sum(0 if x is None else x.element_size() * x.numel() for x in xs)


@dataclass
class RoundTree:
    """One round of the tree: layers ``start_turn..8``.

    Paper mode adds the FGT per layer: ``fgm[t]`` [Q, 2] int32 (GT node, score id), sorted by
    GT node, and ``edg[t]`` [Q] int32 (parent FGT node in layer ``t-1``), with inherited
    scores ``scores`` [S, 4] int8 (Alex clubs, Bob clubs, flag, last capturer). In compact
    mode FGT and GT coincide.
    """

    round: int
    start_turn: int
    mode: str
    inp: list[int]  # the round's in-play cards (columns of t_gme / t_cmp)
    gt: dict[int, GTLayer] = field(default_factory=dict)
    fgm: dict[int, torch.Tensor] = field(default_factory=dict)
    edg: dict[int, torch.Tensor] = field(default_factory=dict)
    scores: torch.Tensor | None = None
    #: terminal FGT node -> root FGT node of the next round (rounds 0..4)
    link: torch.Tensor | None = None
    #: terminal FGT node -> future value (final sweep + clubs bonus), round 5 only
    terminal_value: torch.Tensor | None = None
    #: the round's root card states: pools [R] and the two hands (masks)
    root_pools: torch.Tensor | None = None
    root_hands: list[torch.Tensor] | None = None
    seconds: float = 0.0
    #: the turn that ends the round: the cards both players hold (the variant's ``turns_per_round``)
    end_turn: int = TURNS_PER_ROUND

    @property
    def turns(self) -> range:
        return range(self.start_turn, self.end_turn + 1)

    @property
    def play_turns(self) -> range:
        """The turns with a move (every layer but the last)."""
        return range(self.start_turn, self.end_turn)

    def n_nodes(self, t: int) -> int:
        """Solver nodes (FGT nodes) at turn ``t``."""
        return int(self.fgm[t].shape[0]) if self.mode == "paper" else self.gt[t].n

    def edges(self, t: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Edges from turn ``t`` to ``t+1`` as (parent node, child node, GT edge) int64 tensors."""
        if self.mode == "paper":
            fgm = self.fgm[t + 1]
            parent = self.edg[t + 1].long()
            child = torch.arange(fgm.shape[0], device=fgm.device)
            return parent, child, fgm[:, 0].long()
        g = self.gt[t]
        return g.parent.long(), g.child.long(), torch.arange(g.n_edges, device=g.parent.device)

    def n_edges_at(self, t: int) -> int:
        """Solver edges from turn ``t`` to ``t+1``, without building them."""
        return int(self.fgm[t + 1].shape[0]) if self.mode == "paper" else self.gt[t].n_edges

    def edge_chunk(self, t: int, lo: int, hi: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Edges ``lo:hi`` of :meth:`edges` (``t`` to ``t+1``), built for that slice alone: a tail
        deck's layer has tens of millions of edges, and its three int64 columns gigabytes."""
        if self.mode == "paper":
            fgm = self.fgm[t + 1]
            child = torch.arange(lo, min(hi, fgm.shape[0]), device=fgm.device)
            return self.edg[t + 1][lo:hi].long(), child, fgm[lo:hi, 0].long()
        g = self.gt[t]
        gt_edge = torch.arange(lo, min(hi, g.n_edges), device=g.parent.device)
        return g.parent[lo:hi].long(), g.child[lo:hi].long(), gt_edge

    def nbytes(self) -> int:
        total = sum(g.nbytes() for g in self.gt.values())
        for d in (self.fgm, self.edg):
            total += sum(x.element_size() * x.numel() for x in d.values())
        for x in (self.scores, self.link, self.terminal_value):
            total += 0 if x is None else x.element_size() * x.numel()
        return total


@dataclass
class GameTree:
    """The whole tree from a start state, or a forest from several: rounds ``start.round..5``;
    the root (of start ``k``) is node 0 (``k``) of the first layer of the first round."""

    mode: str
    device: torch.device
    start: GameState
    rounds: list[RoundTree]
    seconds: float = 0.0
    #: every start of a forest (:func:`build_forest`): start ``k`` is node ``k`` of the first layer
    starts: tuple[GameState, ...] = ()

    def __post_init__(self) -> None:
        if not self.starts:
            self.starts = (self.start,)

    @property
    def n_roots(self) -> int:
        return len(self.starts)

    @property
    def variant(self) -> Variant:
        """The rules the tree was built under (its start state's, shared by a forest's starts)."""
        return self.start.variant

    def round(self, r: int) -> RoundTree:
        return self.rounds[r - self.start.round]

    def nbytes(self) -> int:
        return sum(rt.nbytes() for rt in self.rounds)

    def node_counts(self) -> list[dict]:
        """Per round and turn: solver (FGT) nodes and GT nodes."""
        rows = []
        for rt in self.rounds:
            for t in rt.turns:
                rows.append({"round": rt.round, "turn": t, "nodes": rt.n_nodes(t), "gt_nodes": rt.gt[t].n})
        return rows

    @property
    def n_nodes(self) -> int:
        return sum(rt.n_nodes(t) for rt in self.rounds for t in rt.turns)

    @property
    def n_edges(self) -> int:
        """Solver edges (strategy-table rows) over all rounds."""
        return sum(rt.n_edges_at(t) for rt in self.rounds for t in rt.play_turns)

    def edge_checksum(self) -> str:
        """A digest of the edge structure (per layer: parent, child and action of every edge, and
        the links between rounds), so that a strategy stored per edge is refused on any tree but
        the one it was computed on, even one of the same deck, mode and size."""
        h = hashlib.blake2b(digest_size=16)
        h.update(self.mode.encode())

        def feed(x: torch.Tensor) -> None:
            h.update(x.to("cpu", torch.int64).contiguous().numpy().tobytes())

        # each column of a layer in turn (parent, child, card, captured), a chunk of edges at a time:
        # the same stream of bytes, hence the same digest, as whole columns, without a tail layer's
        # gigabytes of int64 copies at once
        step = CHECKSUM_CHUNK
        for rt in self.rounds:
            for t in rt.play_turns:
                g, n = rt.gt[t], rt.n_edges_at(t)
                for k in range(4):
                    for lo in range(0, n, step):
                        parent, child, gt_edge = rt.edge_chunk(t, lo, lo + step)
                        feed(parent if k == 0 else child if k == 1 else (g.card if k == 2 else g.captured)[gt_edge])
            if rt.link is not None:
                for lo in range(0, rt.link.shape[0], step):
                    feed(rt.link[lo : lo + step])
        return h.hexdigest()

    def path_to(self, r: int, t: int, node: int) -> list[Action]:
        """The actions of one line from the start state to ``node`` at (round ``r``, turn ``t``)
        (in compact mode a node may have several; this is the first found). For checks and
        debugging: each step scans a layer."""
        actions: list[Action] = []
        while True:
            rt = self.round(r)
            if t == rt.start_turn:
                if r == self.start.round:
                    return actions[::-1]
                prev = self.round(r - 1)
                node, r, t = int(torch.nonzero(prev.link == node)[0]), r - 1, prev.end_turn
                continue
            parent, child, gt_edge = rt.edges(t - 1)
            e = int(torch.nonzero(child == node)[0])
            layer, g = rt.gt[t - 1], int(gt_edge[e])
            actions.append(Action(int(layer.card[g]), int(layer.captured[g])))
            node, t = int(parent[e]), t - 1

    def out_actions(self, r: int, t: int, node: int) -> list[Action]:
        """The actions on the edges out of ``node``, in edge order."""
        rt = self.round(r)
        parent, _, gt_edge = rt.edges(t)
        layer = rt.gt[t]
        return [Action(int(layer.card[g]), int(layer.captured[g])) for g in gt_edge[parent == node].tolist()]


def final_value(ca, cb, last, swept_clubs, swept_points, *, variant: Variant = STANDARD) -> torch.Tensor:
    """Future value at the end of the last round: the sweep of the pool (its clubs and points) to
    ``last`` and the clubs bonus (``variant``'s), from effective clubs ``ca``, ``cb`` (normalized)
    before the sweep."""
    need, bonus = variant.clubs_for_bonus, variant.clubs_bonus
    ca = ca + torch.where(last == 1, swept_clubs, 0)
    cb = cb + torch.where(last == 2, swept_clubs, 0)
    bonus = torch.where(ca >= need, bonus, torch.where(cb >= need, -bonus, 0))
    sweep = torch.where(last == 1, swept_points, torch.where(last == 2, -swept_points, 0))
    return (bonus + sweep).to(torch.float32)
