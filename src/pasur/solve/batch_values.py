"""Exact open-hand values of many decks, solved as forests: one tree over a batch of decks, so
a device runs few large layers instead of many small ones (:func:`pasur.solve.tree.build_forest`,
whose roots never merge: every deck keeps its own deal class).

Memory stays bounded by a node budget per batch: a forest whose edges pass the budget is
abandoned at the layer that would pass it and split in two, down to single decks; a deck alone
is built under the ordinary memory guard only, so the heavy tail is solved one deck at a time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from pasur.common.memory import MemoryGuard
from pasur.game.cards import NamedDeck
from pasur.game.state import GameState
from pasur.solve.exact import solve_exact
from pasur.solve.gametree import GameTree
from pasur.solve.tree import TreeBuilder

#: default edges one forest may hold (about 18 bytes kept and 260 transient a new edge while a
#: layer is built: a budget of 4 M edges keeps a forest near 1 GiB)
DEFAULT_BUDGET = 4_000_000


class BatchTooLarge(Exception):
    """A forest of several decks passed its node budget (it is split, never reported)."""


class _BudgetGuard(MemoryGuard):
    """The memory guard, and a cap on the edges of a forest of more than one deck."""

    def __init__(self, limit: int | None, device: torch.device, budget: int | None) -> None:
        super().__init__(limit, device)
        self.budget = budget
        self.edges = 0

    def check(self, r, t, n_gt, n_fgm, mode, m, history) -> None:
        self.edges += n_gt
        if self.budget is not None and self.edges > self.budget:
            raise BatchTooLarge(f"round {r}, turn {t}: {self.edges:,} edges, over the budget of {self.budget:,}")
        super().check(r, t, n_gt, n_fgm, mode, m, history)


@dataclass
class DeckValue:
    """One deck's exact open-hand value (Alex minus Bob, whole game) and what it cost: its own
    nodes in the forest, and its share of the batch's seconds (by nodes)."""

    index: int
    value: float
    nodes: int
    seconds: float
    batch_decks: int
    batch_seconds: float


def nodes_per_root(tree: GameTree) -> list[int]:
    """Nodes of each root's own tree in a compact forest, as :attr:`GameTree.n_nodes` counts
    them for that deck alone (every layer, the rounds' last included). A root's label is carried
    down the edges; the decks of a forest share nodes only at the end of a round whose later
    deals coincide (after the last round: none to come, so equal pools and scores merge there),
    and such a node counts once for each deck that reaches it. Past a shared node inside the
    game (two decks with the same cards to come) it would count for one deck only."""
    k, dev = tree.n_roots, tree.device
    counts = torch.zeros(k, dtype=torch.int64, device=dev)
    label = torch.arange(k, device=dev)
    here = torch.ones(k, dtype=torch.int64, device=dev)  # nodes of each deck in the current layer
    for rt in tree.rounds:
        for t in rt.play_turns:
            counts += here
            parent, child, _ = rt.edges(t)
            n_below = rt.n_nodes(t + 1)
            below = torch.empty(n_below, dtype=torch.int64, device=dev)
            below[child] = label[parent]
            if t + 1 == rt.end_turn:  # where decks may merge: count (deck, node) pairs
                pairs = torch.unique(label[parent] * n_below + child)
                here = torch.bincount(pairs // n_below, minlength=k)
            else:
                here = torch.bincount(below, minlength=k)
            label = below
        counts += here
        if rt.link is not None:  # compact: the next round's roots are this round's last layer
            nxt = tree.round(rt.round + 1)
            below = torch.empty(nxt.n_nodes(nxt.start_turn), dtype=torch.int64, device=dev)
            below[rt.link.long()] = label
            label = below
    return counts.tolist()


def solve_batch(
    decks: Sequence[NamedDeck],
    device: str | torch.device = "cpu",
    *,
    budget: int | None = DEFAULT_BUDGET,
    memory_limit: int | None = None,
) -> tuple[list[float], list[int], float]:
    """Exact values and per-deck nodes of ``decks`` solved as one compact forest, and its wall
    seconds. Raises :class:`BatchTooLarge` when a forest of more than one deck passes
    ``budget`` edges (one deck is never refused for the budget, only for memory)."""
    dev = torch.device(device)
    t0 = time.perf_counter()
    builder = TreeBuilder("compact", dev, infosets=False, memory_limit=memory_limit)
    builder.guard = _BudgetGuard(memory_limit, dev, budget if len(decks) > 1 else None)
    tree = builder.build_forest([GameState.initial(nd.deck) for nd in decks])
    solution = solve_exact(tree, keep_values=False)
    values = solution.root_values().tolist()  # banked points at the deal: none
    nodes = nodes_per_root(tree)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    seconds = time.perf_counter() - t0
    del tree, solution
    return values, nodes, seconds


def solve_decks(
    decks: Sequence[NamedDeck],
    indices: Sequence[int],
    device: str | torch.device = "cpu",
    *,
    batch: int = 16,
    budget: int | None = DEFAULT_BUDGET,
    memory_limit: int | None = None,
) -> Iterator[list[DeckValue]]:
    """Values of ``decks`` (``indices``: each one's index in its file), ``batch`` decks a forest,
    yielded batch by batch. A forest over ``budget`` edges is split in halves (the work already
    done on it is lost), so heavy decks end up alone."""
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    queue = [list(range(lo, min(lo + batch, len(decks)))) for lo in range(0, len(decks), batch)]
    while queue:
        group = queue.pop(0)
        try:
            values, nodes, seconds = solve_batch(
                [decks[i] for i in group], device, budget=budget, memory_limit=memory_limit
            )
        except BatchTooLarge:
            half = len(group) // 2
            queue[:0] = [group[:half], group[half:]]
            continue
        total = max(1, sum(nodes))
        yield [
            DeckValue(indices[i], v, n, seconds * n / total, len(group), seconds)
            for i, v, n in zip(group, values, nodes, strict=True)
        ]
