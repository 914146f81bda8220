"""A tree-like round solved in parts of its roots, so that a tail deck's CFR fits in memory.

In paper mode every node has one parent edge, so the subtrees below a round's roots are
separate games once the next round's values are fixed: CFR on some of the roots and everything
below them gives those edges the same iterates, bit for bit, as CFR on the whole round. Every
update is edge by edge, and each parent's sums add its edges in the same order (ascending edge
ids), whichever other roots are present. The solver's memory is about
:data:`SOLVER_BYTES_PER_EDGE` bytes per edge, so the paper's deck 49 (315 M edges in round 5)
needs about 32 GiB solved whole; in parts, only the average strategy of the whole round (4 bytes
an edge) is held beside one part's solver. :func:`root_groups` decides from the memory left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from pasur.common.errors import PasurInputError
from pasur.common.memory import available_bytes, gib
from pasur.solve.gametree import RoundTree
from pasur.solve.ops import gather

#: memory of a round's solver per edge, its measures' transients included: 98 bytes measured on
#: the CPU (DCFR with a tremble, the paper's deck 87; results/tail-memory/cfr.md), plus 8 to 11
#: that the fused layout's group index and scratch add (results/cfr-roofline/memory.txt), rounded up
SOLVER_BYTES_PER_EDGE = 110
#: per edge of a part, its edge ids (int64), held while the part is solved
PART_BYTES_PER_EDGE = 8
#: per edge of the round, the average strategy assembled from the parts (float32)
AVERAGE_BYTES_PER_EDGE = 4
#: share of the free memory a solve may use when no limit is given (as the tree builder's guard)
DEFAULT_SHARE = 0.8


@dataclass
class RoundPart:
    """Some roots of a tree-like round and everything below them: per layer (turns
    ``start_turn..7``), the round's edges in the part (ascending ids) and each one's parent as
    an index among the part's nodes of that turn (the part's nodes of turn ``t+1`` are the
    layer's edges, in that order)."""

    roots: torch.Tensor  # int64 [R], ascending
    edges: list[torch.Tensor]  # per layer, int64 [E_t], ascending
    parents: list[torch.Tensor]  # per layer, int64 [E_t]

    def n_nodes(self, i: int) -> int:
        """The part's nodes at the parents of layer ``i``."""
        return int(self.roots.shape[0]) if i == 0 else int(self.edges[i - 1].shape[0])

    @property
    def terminal(self) -> torch.Tensor:
        """The round's end nodes in the part (indices of the round's)."""
        return self.edges[-1]

    @property
    def n_edges(self) -> int:
        return sum(int(e.shape[0]) for e in self.edges)


def subtree_edges(rt: RoundTree) -> torch.Tensor:
    """Per root of a tree-like round, the number of edges below it (int64)."""
    if rt.mode != "paper":
        raise ValueError("only a tree-like (paper mode) round splits into separate subtrees")
    below = torch.zeros(rt.n_nodes(rt.end_turn), dtype=torch.int64, device=rt.edg[rt.end_turn].device)
    for t in reversed(rt.play_turns):
        parent = rt.edg[t + 1]  # the parent of each node of turn t+1, that is of each edge
        below = torch.zeros(rt.n_nodes(t), dtype=torch.int64, device=below.device).index_add_(0, parent, below + 1)
    return below


def edges_below(node: torch.Tensor, parent: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The edges of a layer whose parent is in ``node`` (a mask over the layer's parents), in
    ascending order, and each one's parent as an index among those nodes."""
    sel = torch.nonzero(gather(node, parent)).squeeze(1)
    local = torch.cumsum(node, 0) - 1  # a node's index among the nodes of the mask
    return sel, gather(local, gather(parent, sel))


def round_part(rt: RoundTree, roots: torch.Tensor) -> RoundPart:
    """The part of ``rt`` below ``roots`` (ascending indices of its roots)."""
    dev = rt.edg[rt.end_turn].device
    roots = roots.to(device=dev, dtype=torch.int64)
    node = torch.zeros(rt.n_nodes(rt.start_turn), dtype=torch.bool, device=dev)
    node[roots] = True
    edges, parents = [], []
    for t in rt.play_turns:
        sel, parent = edges_below(node, rt.edg[t + 1])
        edges.append(sel)
        parents.append(parent)
        node = torch.zeros(rt.n_nodes(t + 1), dtype=torch.bool, device=dev)
        node[sel] = True
    return RoundPart(roots, edges, parents)


def root_groups(rt: RoundTree, room: int) -> list[torch.Tensor] | None:
    """The round's roots in consecutive groups of about equal edges whose solvers fit in
    ``room`` bytes each, beside the whole round's average; None when the round fits whole (or is
    not tree-like: a compact round's subtrees share nodes). Refuses a round that cannot fit."""
    total = sum(rt.n_edges_at(t) for t in rt.play_turns)
    if rt.mode != "paper" or SOLVER_BYTES_PER_EDGE * total <= room:
        return None
    per_part = room - AVERAGE_BYTES_PER_EDGE * total
    below = subtree_edges(rt)
    largest = int(below.max())
    per_edge = SOLVER_BYTES_PER_EDGE + PART_BYTES_PER_EDGE
    usable = per_part - per_edge * largest  # a group may pass total / n by one root's subtree
    if usable <= 0:
        raise PasurInputError(
            f"round {rt.round}: {total:,} edges need about {gib(SOLVER_BYTES_PER_EDGE * total)} to solve whole; "
            f"in parts, its largest root alone ({largest:,} edges) would not fit in the {gib(max(room, 0))} "
            "left; use --tree compact or a bigger device"
        )
    n = min(math.ceil(total * per_edge / usable), int(below.shape[0]))
    # group k holds the roots whose first edge falls in the k-th n-th of the round's edges: sizes
    # differ by at most one root's subtree from total / n
    start = torch.cumsum(below, 0) - below
    group = torch.div(start * n, max(total, 1), rounding_mode="floor")
    roots = torch.arange(below.shape[0], device=below.device)
    return [g for k in range(n) if (g := roots[group == k]).numel()]


def solve_room(device: torch.device, solver_memory: int | None) -> int:
    """Bytes a round's solver may take: ``solver_memory``, or a share of what ``device`` has free."""
    return int(DEFAULT_SHARE * available_bytes(device)) if solver_memory is None else solver_memory
