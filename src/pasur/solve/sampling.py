"""External-sampling MCCFR on one round (``method="es-mccfr"``, CodeSnippet 9's scheme):
:class:`SampledRoundCFR`, the :class:`pasur.solve.cfr.RoundCFR` whose iteration walks only the
sampled part of the round, as index lists of the visited nodes, layer by layer.

The traverser explores all its actions, the opponent's are sampled from the current strategy
(one per node, Gumbel-max over the node's edges); regrets without discounting; the opponent's
average strategy is updated where it was sampled. Seeded; converges in expectation. On these
trees it does not beat the full-width methods (docs/benchmarks.md); it is kept as the paper's
method."""

from __future__ import annotations

import torch

from pasur.common.regret import normalize_segments
from pasur.game.state import ALEX
from pasur.solve.cfr import CFRParams, RoundCFR
from pasur.solve.gametree import RoundTree
from pasur.solve.ops import gather


class SampledRoundCFR(RoundCFR):
    """External-sampling MCCFR on one round: an iteration is one :meth:`es_pass` per player."""

    methods = ("es-mccfr",)

    def __init__(self, rt: RoundTree, terminal: torch.Tensor, params: CFRParams, device: torch.device) -> None:
        super().__init__(rt, terminal, params, device)
        self.gen = torch.Generator(device=device).manual_seed(params.seed * 1_000_003 + rt.round)
        self._csr_cache: list | None = None
        #: the last pass: (edges read, edges walked), and per layer the visited nodes and the
        #: edges walked from them
        self.touched = (0, 0)
        self.walk: list[tuple[torch.Tensor, torch.Tensor]] = []

    def iterate(self) -> None:
        self.it += 1
        for p in (ALEX, 1 - ALEX):
            self.es_pass(p)

    def _reset_buffers(self) -> None:
        super()._reset_buffers()
        self._csr_cache = None

    def _csr(self) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]]:
        """Per layer, each parent's edges as a range: (degree, first position, order), where
        ``order`` maps positions to edge ids (None when edges are already grouped by parent)."""
        if self._csr_cache is None:
            self._csr_cache = []
            for L in self.layers:
                deg = torch.bincount(L.parent, minlength=L.n_parent)
                grouped = L.parent.shape[0] < 2 or bool((L.parent[1:] >= L.parent[:-1]).all())
                order = None if grouped else torch.argsort(L.parent, stable=True)
                self._csr_cache.append((deg, torch.cumsum(deg, 0) - deg, order))
        return self._csr_cache

    def _out_edges(self, i: int, nodes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The edges out of ``nodes`` (layer ``i``), and each edge's position in ``nodes``."""
        deg, first, order = self._csr()[i]
        d = gather(deg, nodes)
        total = int(d.sum())
        at = torch.arange(nodes.shape[0], device=nodes.device).repeat_interleave(d, output_size=total)
        start = gather(gather(first, nodes) - (torch.cumsum(d, 0) - d), at)
        e = torch.arange(total, device=nodes.device).add_(start)
        return (e if order is None else gather(order, e)), at

    def es_pass(self, traverser: int) -> None:
        """External sampling for ``traverser``, on the sampled part of the round only: from every
        root, all of the traverser's edges and one edge, drawn from the current strategy, at each
        of the opponent's nodes. A node's weight is the number of sampled paths that reach it
        (compact nodes can have several). Regrets and the traverser's strategy change on the
        visited edges, the opponent's average strategy at its visited nodes. Random access costs
        more per edge than the full-width passes' streaming (see docs/benchmarks.md)."""
        dev, n = self.device, len(self.layers)
        nodes = torch.arange(self.n_roots, device=dev)
        count = torch.ones(self.n_roots, dtype=self.dtype, device=dev)
        tiny = torch.finfo(self.dtype).tiny
        path, walk = [], []
        read = walked = 0
        for i, L in enumerate(self.layers):
            e, at = self._out_edges(i, nodes)
            read += int(e.shape[0])
            m = nodes.shape[0]
            if L.mover != traverser:  # one edge per node, Gumbel-max over its edges
                s = gather(self.sigma[i], e)
                u = torch.rand(e.shape, generator=self.gen, dtype=self.dtype, device=dev).clamp_(tiny, 1 - 1e-7)
                key = torch.log(s.clamp_min(tiny)).sub_(torch.log(-torch.log(u)))
                best = torch.full((m,), float("-inf"), dtype=key.dtype, device=dev).scatter_reduce_(0, at, key, "amax")
                idx = torch.arange(e.shape[0], device=dev)
                cand = torch.where(key == gather(best, at), idx, e.shape[0])
                pick = torch.full((m,), e.shape[0], dtype=torch.int64, device=dev).scatter_reduce_(0, at, cand, "amin")
                # the opponent's average strategy: weight 1 per sampled path (uniform averaging)
                self.avg[i].index_add_(0, e, s.mul_(gather(count, at)))
                e, at = gather(e, pick), torch.arange(m, device=dev)
            walked += int(e.shape[0])
            walk.append((nodes, e))
            child = L.child_of(e)
            if i + 1 == n:  # the round's end: children index the terminal values
                path.append((count, e, at, child))
            elif L.tree_like:  # every edge has its own child
                path.append((count, e, at, None))
                nodes, count = child, gather(count, at)
            else:  # children of several walked edges are one node; their counts add up
                nodes, pos = torch.unique(child, return_inverse=True)
                path.append((count, e, at, pos))
                c = torch.zeros(nodes.shape[0], dtype=self.dtype, device=dev)
                count = c.index_add_(0, pos, gather(count, at))
        self.touched, self.walk = (read, walked), walk
        v = None
        for i in reversed(range(n)):
            L = self.layers[i]
            count, e, at, child = path[i]
            q = gather(L.reward, e)
            q += gather(self.terminal, child) if i == n - 1 else (v if child is None else gather(v, child))
            if L.mover != traverser:
                v = q  # one edge per node, in node order
                continue
            sig = gather(self.sigma[i], e)
            v = torch.zeros(count.shape[0], dtype=self.dtype, device=dev).index_add_(0, at, sig * q)
            r = (q - gather(v, at)).mul_(gather(count, at))
            self.regret[i].index_add_(0, e, r if traverser == ALEX else r.neg_())
            # regret matching on the visited nodes (the segments are their positions, ``at``)
            w = gather(self.regret[i], e)
            self.sigma[i].index_copy_(0, e, normalize_segments(w, at, count.shape[0], out=w))
