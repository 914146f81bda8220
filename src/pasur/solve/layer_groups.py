"""A round's layers laid end to end per mover, so that one CFR update of a player is a fixed
handful of tensor operations over all of that player's layers at once, not that handful per layer.

On the compact tree a round's layers hold hundreds to tens of thousands of edges, so the cost of
an operation (about a microsecond of dispatch on a CPU, a kernel launch on a GPU) and not the
memory it moves bounds the iteration. The regrets, average strategy, strategy, ``q`` and parents'
values and reaches of the layers one player moves at become slices of one flat tensor each (the
solver's per-layer tensors are views into them, so every other pass is unchanged), and each edge
keeps its parent's index among the group's parent nodes (:attr:`LayerGroup.parent32`).

Every update is entry by entry, and a parent's sums add its edges in ascending order, within a
group as within a layer: the iterates are those of the per-layer updates, bit for bit on the CPU.

The update's iteration-dependent numbers (the average's weight, DCFR's and Linear CFR's discounts)
are read from a small tensor (:data:`COEFFICIENTS`) rather than passed as Python numbers, so the
same operations can be captured once and replayed (:mod:`pasur.solve.iteration_graph`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pasur.common.regret import FLOOR, PREDICTIVE, dcfr_factors, pdcfr_discount, predicted_regret

#: the slots of the coefficient tensor: the average's weight of this iteration, DCFR's factors on
#: positive and other regrets (1 and 1 at the first iteration: nothing to discount), Linear CFR's
#: factor and PDCFR+'s discount of the regrets
COEFFICIENTS = ("average", "positive", "negative", "linear", "predictive")


@dataclass
class LayerGroup:
    """The layers one player moves at, end to end (flat tensors; the layers' are views of them)."""

    mover: int
    layers: list[int]
    n_nodes: int
    parent32: torch.Tensor  # int32 [E]: each edge's parent among the group's parent nodes
    parent64: torch.Tensor | None  # int64 [E] for the scatter-adds; None on tree-like rounds (index_add_ of int32)
    regret: torch.Tensor  # [E]
    avg: torch.Tensor  # [E]
    sigma: torch.Tensor  # [E]
    q: torch.Tensor  # [E] reward + value of the child; then the instantaneous regret
    scratch: torch.Tensor  # [E]
    vpar: torch.Tensor  # [N] values of the parents
    reach: tuple[torch.Tensor, torch.Tensor]  # [N] Alex's and Bob's reach at the parents
    floor: torch.Tensor | None = None  # [E] the tremble's least probabilities
    spread: torch.Tensor | None = None  # [E]


def group_layers(solver) -> list[LayerGroup]:
    """Lay ``solver``'s layers end to end per mover, copying its regrets, average and strategy into
    the flat tensors (or starting them, zero, zero and uniform, where the solver has none yet) and
    pointing the solver's per-layer tensors (``regret``, ``avg``, ``sigma``, ``reach``, and each
    layer's ``q``, ``vpar``, ``tmp``, ``tmp2``, ``floor``, ``spread``) at slices of them."""
    groups = []
    dev, dtype = solver.device, solver.dtype
    movers = sorted({L.mover for L in solver.layers})
    # one scratch for all groups (they are updated one after another), as long as the longest
    longest = max((sum(int(L.parent.shape[0]) for L in solver.layers if L.mover == m) for m in movers), default=0)
    shared = torch.empty(longest, dtype=dtype, device=dev)
    for mover in movers:
        ids = [i for i, L in enumerate(solver.layers) if L.mover == mover]
        sizes = [int(solver.layers[i].parent.shape[0]) for i in ids]
        nodes = [solver.layers[i].n_parent for i in ids]
        n_edges, n_nodes = sum(sizes), sum(nodes)
        edges = [torch.empty(n_edges, dtype=dtype, device=dev) for _ in range(4)] + [shared[:n_edges]]
        parents = [torch.empty(n_nodes, dtype=dtype, device=dev) for _ in range(3)]
        parent32 = torch.empty(n_edges, dtype=torch.int32, device=dev)
        tree_like = all(solver.layers[i].tree_like for i in ids)
        parent64 = None if tree_like else torch.empty(n_edges, dtype=torch.int64, device=dev)
        eps = solver.params.tremble
        trembles = eps > 0
        floor, spread = (torch.empty(n_edges, dtype=dtype, device=dev) for _ in range(2)) if trembles else (None, None)
        e0 = n0 = 0
        for i, e, n in zip(ids, sizes, nodes, strict=True):
            L, es, ns = solver.layers[i], slice(e0, e0 + e), slice(n0, n0 + n)
            torch.add(L.parent32, n0, out=parent32[es])
            if parent64 is not None:
                torch.add(L.parent, n0, out=parent64[es])
            starts = (0, 0, None)  # where the solver has none yet: zero regrets and average, uniform strategy
            for flat, own, start in zip(edges[:3], (solver.regret, solver.avg, solver.sigma), starts, strict=True):
                if own[i] is not None:
                    flat[es].copy_(own[i])
                elif start is None:
                    flat[es].copy_(L.uniform)
                else:
                    flat[es].fill_(start)
                own[i] = flat[es]
            if trembles:
                L.tremble(eps, floor[es], spread[es])
            L.q, L.tmp, L.tmp2, L.vpar = edges[3][es], edges[4][es], edges[4][es], parents[0][ns]
            solver.reach[i] = (parents[1][ns], parents[2][ns])
            e0, n0 = e0 + e, n0 + n
        groups.append(
            LayerGroup(
                mover, ids, n_nodes, parent32, parent64, *edges, parents[0], (parents[1], parents[2]), floor, spread
            )
        )
    return groups


def coefficients(method: str, t: int, average: float, alpha: float, beta: float) -> list[float]:
    """The update's numbers of iteration ``t`` in :data:`COEFFICIENTS` order: ``average`` (the
    average's weight, already scaled by the solver), DCFR's factors of ``t - 1`` (applied before
    iteration ``t`` adds its regrets; 1 and 1 at ``t = 1``, where there is nothing to discount),
    Linear CFR's ``t / (t + 1)`` and PDCFR+'s ``(t-1)^a / ((t-1)^a + 1)``."""
    positive, negative = dcfr_factors(t - 1, alpha, beta) if t > 1 else (1.0, 1.0)
    return [average, positive, negative, t / (t + 1), pdcfr_discount(t, alpha)]


def update_group(g: LayerGroup, method: str, coef: torch.Tensor, t: int, alpha: float) -> None:
    """One CFR update of the group's layers, in place and without allocating: the instantaneous
    regrets (into ``q``), the average strategy, the regrets, and the next strategy by regret
    matching. ``coef``: the tensor of :data:`COEFFICIENTS`. ``t`` and ``alpha`` are read by
    PDCFR+'s prediction only (a Python number: that method is not captured)."""
    q, w = g.q, g.scratch
    torch.index_select(g.vpar, 0, g.parent32, out=w)
    if g.mover == 0:
        q.sub_(w)  # q - v(parent)
    else:
        torch.sub(w, q, out=q)  # v(parent) - q: Bob minimizes Alex's points
    own, opp = g.reach[g.mover], g.reach[1 - g.mover]
    torch.index_select(opp, 0, g.parent32, out=w)
    q.mul_(w)  # x the opponent's reach: q holds the instantaneous regrets from here on
    torch.index_select(own, 0, g.parent32, out=w)
    w.mul_(coef[0])  # own reach x the average's weight (addcmul's value, as a tensor)
    g.avg.addcmul_(w, g.sigma)
    R = g.regret
    if method in PREDICTIVE:
        if method == "pdcfr+":
            R.mul_(coef[4])
        R.add_(q).clamp_min_(0.0)
        match(g, predicted_regret(R, q, method, t, alpha, out=w), spread=q)
        return
    if method == "dcfr":  # equations (6)-(8): discount with t - 1, then add
        torch.clamp_min(R, 0.0, out=w).mul_(coef[1])
        R.clamp_max_(0.0).mul_(coef[2]).add_(w)  # each entry is one of the two products exactly
    R.add_(q)
    if method == "cfr+":
        R.clamp_min_(0.0)
    elif method == "lcfr":
        R.mul_(coef[3])
    match(g, R, spread=w)


def match(g: LayerGroup, weights: torch.Tensor, spread: torch.Tensor) -> None:
    """Regret matching of the whole group into ``g.sigma``: ``max(weights, FLOOR)`` over its sum
    per parent (``g.vpar`` holds the sums: the values are recomputed by the next pass), then the
    tremble; as :func:`pasur.common.regret.normalize_segments` does per layer."""
    out = torch.clamp_min(weights, FLOOR, out=g.sigma)
    g.vpar.zero_()
    if g.parent64 is not None:
        g.vpar.scatter_add_(0, g.parent64, out)
    else:
        g.vpar.index_add_(0, g.parent32, out)
    torch.index_select(g.vpar, 0, g.parent32, out=spread)
    out.div_(spread)
    if g.floor is not None:
        out.mul_(g.spread).add_(g.floor)
