"""CFR on one round of the tensor tree (paper section 2.10, CodeSnippets 10-12; 2.9), and its
parameters. The driver over the rounds, with whole-game exploitability targets, is
:func:`pasur.solve.rounds.solve_cfr`.

Round 5 is solved first, each of its roots with reach probability 1; the values of a round's
roots under its *average* strategy (one exact backward pass, not the mean of the iterates'
values that the paper's code passes) become the values of the previous round's terminal nodes
through the linkage; and so on down to round 0. Each iteration is a few vectorized passes
over the round's layers: reach probabilities forward (``index_add`` over child indices, which
also covers compact mode, where a node can have several parents), values backward
(``index_add`` over parents), then regrets and the average strategy per edge.

Variants (``method``):

* ``cfr``: vanilla CFR, regret matching, uniform averaging.
* ``cfr+``: regrets floored at zero after each update, linear averaging (weight ``t``).
* ``lcfr``: Linear CFR: after iteration ``t`` adds its regrets, they are multiplied by
  ``t / (t + 1)`` (iteration ``t`` weighs ``t``); linear averaging.
* ``dcfr``: Discounted CFR, the paper's equations (6)-(8): before iteration ``t`` adds its
  regrets, positive accumulated regrets are multiplied by ``(t-1)^α / ((t-1)^α + 1)`` and the
  others by ``(t-1)^β / ((t-1)^β + 1)``; the average strategy by ``((t-1)/t)^γ`` (kept as
  weights ``t^γ``: the same average once normalized, one pass less per iteration).
  Defaults α = 1.5, β = 0, γ = 2.
* ``pcfr+``: Predictive CFR+: regrets floored at zero after each update, and each next
  strategy matched on the regrets plus the last instantaneous regrets (the prediction of the
  next ones); average weights ``t^γ``, γ = 2.
* ``pdcfr+``: Predictive Discounted CFR+: as ``pcfr+``, with the regrets multiplied by
  ``(t-1)^α / ((t-1)^α + 1)`` before iteration ``t`` adds its own; defaults α = 2.3, γ = 5.
* ``sapcfr+``: Simple Asymmetric PCFR+: as ``pcfr+``, with the prediction entering at step 1/3.
* ``hs-pcfr+``, ``hs-dcfr``: the hyperparameter-scheduled variants of
  :data:`pasur.common.regret.SCHEDULED`, whose parameters depend on the run's length: run by
  the poker core's two CFR solvers only, refused here (not in :data:`METHODS`: an error).
* ``es-mccfr``: external-sampling Monte Carlo CFR (CodeSnippet 9's scheme), the subclass
  :class:`pasur.solve.sampling.SampledRoundCFR`; :func:`pasur.solve.rounds.round_solver` picks
  the class from the method.

The update rules themselves (discounting, averaging weights, regret matching) are those of
:mod:`pasur.common.regret`, shared with the poker solvers; this module applies them to a round's
edge lists in preallocated buffers.

``tremble`` (default 0): every action keeps at least this probability in each iterate, that is
CFR runs on the ε-perturbed game (each node's strategy is ``ε + (1 - kε) x`` for its ``k``
actions; ``ε`` is capped at ``1 / (2k)``), the approximation of an extensive-form perfect
equilibrium of Kroer, Farina and Sandholm (2017). Without it, CFR leaves the states an
equilibrium never reaches (the opponent's reach is 0, or below float32's range) with no regret
to learn from, and plays them nearly at random: against players who make mistakes, as the
random agent does, the table then throws points away. The strategy written is the perturbed
average with the tremble taken out again, ``(avg - ε) / (1 - kε)``: the same point of the
unperturbed game, its exploitability measured as usual.

``updates="alternating"`` (default) updates Alex, then Bob against Alex's new strategy, in
every iteration; ``"simultaneous"`` updates both from the same strategy profile, as the
paper's code does.

``kernel`` (default ``"auto"``): on the CPU, for ``dcfr``, ``cfr``, ``cfr+``, ``lcfr`` and
``pcfr+``, an iteration is one call of a compiled kernel (:mod:`pasur.solve.native`, built with the
system C compiler on first use) doing the torch path's arithmetic in the same order, so the iterates
are the same bit for bit, 2 to 3 times faster on the compact tree (docs/benchmarks.md); ``"torch"``
keeps the tensor operations; ``"native"`` refuses to run without the kernel.

Reproducibility: on the CPU a run is deterministic. Where several actions are equally good,
rounding noise decides how regret matching splits between them, so runs on another device
(CUDA sums scatter-adds in no fixed order) or with another dtype can give different strategies
of the same quality (the same values and exploitability to within the tolerance).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from pasur.common.errors import PasurInputError
from pasur.common.regret import (
    DCFR_DEFAULTS,
    PREDICTIVE,
    UPDATES,
    average_weight,
    default_parameters,
    discount_,
    normalize_segments,
    predicted_regret,
    predictive_update_,
)
from pasur.common.regret import METHODS as SHARED
from pasur.game.state import ALEX
from pasur.solve.gametree import RoundTree
from pasur.solve.iteration_graph import IterationGraph
from pasur.solve.layer_groups import COEFFICIENTS, coefficients, group_layers, update_group
from pasur.solve.native import KERNELS, METHOD_CODES, NativeRound, unavailable, use_native
from pasur.solve.ops import gather, scatter
from pasur.solve.round_parts import RoundPart, edges_below

#: :class:`RoundCFR` itself runs every full-width method of the shared rules, the predictive
#: variants included (``FULL_WIDTH``); the others are its subclasses'
FULL_WIDTH = (*SHARED, *PREDICTIVE)
METHODS = (*FULL_WIDTH, "es-mccfr")
#: the methods whose iteration can be captured as a CUDA graph: PDCFR+'s prediction takes a
#: Python number that changes every iteration (``alpha`` of ``torch.add``), the others' from a tensor
GRAPH_METHODS = tuple(m for m in FULL_WIDTH if m != "pdcfr+")
#: iterations per round beyond any real use (a full deck needs a few hundred): a larger
#: number is a typo, refused before any work
MAX_ITERATIONS = 10_000_000
#: the largest tremble: a strategy that must play every action this often is no longer an
#: approximation of the game's equilibrium
MAX_TREMBLE = 0.01


@dataclass(frozen=True)
class CFRParams:
    """What to run; :meth:`check` refuses bad values before any work starts."""

    method: str = "dcfr"
    iterations: int | None = 1000
    #: a bound on the whole game's exploitability (NashConv / 2, points; docs/conventions.md)
    target_exploitability: float | None = None
    check_every: int = 10
    #: DCFR's and PDCFR+'s discount exponent; None: the method's published default
    #: (:func:`pasur.common.regret.default_parameters`: 1.5, PDCFR+ 2.3)
    alpha: float | None = None
    beta: float = DCFR_DEFAULTS[1]
    #: the average's weight t^gamma (DCFR, the predictive variants); None: the method's default
    #: (2, PDCFR+ 5)
    gamma: float | None = None
    updates: str = "alternating"
    seed: int = 0
    max_iterations: int = 100_000
    tremble: float = 0.0
    #: how an iteration runs: ``"torch"`` (tensor operations), ``"native"`` (the compiled CPU kernel
    #: of :mod:`pasur.solve.native`, the same iterates) or ``"auto"``: native where it applies
    kernel: str = "auto"

    def __post_init__(self) -> None:
        alpha, gamma = default_parameters(self.method)
        if self.alpha is None:
            object.__setattr__(self, "alpha", alpha)
        if self.gamma is None:
            object.__setattr__(self, "gamma", gamma)

    def check(self) -> CFRParams:
        if self.method not in METHODS:
            raise PasurInputError(f"unknown CFR method {self.method!r} (choose from {', '.join(METHODS)})")
        if self.updates not in UPDATES:
            raise PasurInputError(f"unknown update scheme {self.updates!r} (choose from {', '.join(UPDATES)})")
        if self.iterations is None and self.target_exploitability is None:
            raise PasurInputError("give a number of iterations or a target exploitability")
        if self.iterations is not None and not 1 <= self.iterations <= MAX_ITERATIONS:
            raise PasurInputError(f"--iterations must be between 1 and {MAX_ITERATIONS:,}, got {self.iterations}")
        if self.target_exploitability is not None and not (
            self.target_exploitability > 0 and math.isfinite(self.target_exploitability)
        ):
            raise PasurInputError(f"the target exploitability must be positive, got {self.target_exploitability}")
        if self.method == "es-mccfr" and self.updates != "alternating":
            raise PasurInputError("es-mccfr traverses each player in turn: its updates are alternating")
        if not 1 <= self.max_iterations <= MAX_ITERATIONS:
            raise PasurInputError(
                f"--max-iterations must be between 1 and {MAX_ITERATIONS:,}, got {self.max_iterations}"
            )
        if self.check_every <= 0:
            raise PasurInputError(f"--check-every must be positive, got {self.check_every}")
        if not (0 <= self.alpha <= 10 and math.isfinite(self.alpha)):
            raise PasurInputError(f"DCFR alpha must be in [0, 10], got {self.alpha}")
        if not (-10 <= self.beta <= 10 and math.isfinite(self.beta)):
            raise PasurInputError(f"DCFR beta must be in [-10, 10], got {self.beta}")
        if not (0 <= self.gamma <= 10 and math.isfinite(self.gamma)):
            raise PasurInputError(f"DCFR gamma must be in [0, 10], got {self.gamma}")
        if not (0 <= self.tremble <= MAX_TREMBLE and math.isfinite(self.tremble)):
            raise PasurInputError(f"--tremble must be in [0, {MAX_TREMBLE}], got {self.tremble}")
        if self.tremble and self.method not in FULL_WIDTH:
            raise PasurInputError(f"--tremble applies to the full-width methods ({', '.join(FULL_WIDTH)})")
        if self.kernel not in KERNELS:
            raise PasurInputError(f"unknown --kernel {self.kernel!r} (choose from {', '.join(KERNELS)})")
        if self.kernel == "native" and self.method not in METHOD_CODES:
            raise PasurInputError(f"--kernel native runs {', '.join(METHOD_CODES)}, not --method {self.method}")
        if self.kernel == "native" and (why := unavailable()) is not None:
            raise PasurInputError(f"--kernel native cannot run here: {why}")
        return self


@dataclass
class _Layer:
    """One layer's edges on the solving device."""

    t: int
    mover: int
    parent: torch.Tensor  # int64 [E]
    child: torch.Tensor | None  # int64 [E]; None when tree_like (it would be arange(E))
    reward: torch.Tensor  # float [E]
    n_parent: int
    n_child: int
    tree_like: bool  # child == arange(E) (paper mode): gathers instead of scatters
    uniform: torch.Tensor  # float [E], 1 / deg of the edge's parent
    parent32: torch.Tensor  # int32 [E]: gathers are faster with int32 indices
    child32: torch.Tensor | None  # int32 [E]; None when tree_like
    # work buffers, reused every iteration (the hot loop allocates nothing)
    q: torch.Tensor  # [E] reward + value of the child (kept from the values pass to the updates)
    # scratch within one layer's step: views of two buffers that the round's layers share
    tmp: torch.Tensor  # [E]
    tmp2: torch.Tensor  # [E]
    vpar: torch.Tensor  # [n_parent] values of the parents
    # the tremble (CFRParams.tremble > 0 only): each edge's least probability and the share
    # 1 - k * that of its node that regret matching spreads
    floor: torch.Tensor | None = None  # [E]
    spread: torch.Tensor | None = None  # [E]

    def child_of(self, edges: torch.Tensor) -> torch.Tensor:
        """The children of ``edges`` (indices of this layer's edges): the edges themselves in a
        tree-like layer, whose child tensors are not kept (12 bytes an edge, about a seventh of
        a paper round's memory)."""
        return edges if self.tree_like else gather(self.child, edges)

    def tremble(self, eps: float, floor: torch.Tensor | None = None, spread: torch.Tensor | None = None) -> None:
        """Set :attr:`floor` and :attr:`spread` for a tremble ``eps`` (capped at ``1 / (2k)``),
        written into ``floor`` and ``spread`` when given (the same values: ``-x + 1`` is ``1 - x``)."""
        if eps > 0 and floor is None:
            self.floor = torch.clamp_max(self.uniform * 0.5, eps)
            self.spread = 1.0 - self.floor / self.uniform
        elif eps > 0:
            self.floor = torch.clamp_max(self.uniform * 0.5, eps, out=floor)
            self.spread = torch.div(self.floor, self.uniform, out=spread).neg_().add_(1.0)


@dataclass
class RoundTrace:
    """Convergence of one round: per checkpoint, the iteration, the round's NashConv with the
    next round's values held fixed (the largest over its roots, points; its exploitability is
    half of it, docs/conventions.md), the suffix gap (a bound on the whole game's NashConv from
    this round on, see :func:`solve_cfr`; measured at every checkpoint when there is a target,
    else at the last one), and the mean squared difference of the average strategy then to the
    final one (over all edges, or a fixed sample of a million)."""

    round: int
    iterations: list[int] = field(default_factory=list)
    nash_conv: list[float] = field(default_factory=list)
    mean_nash_conv: list[float] = field(default_factory=list)
    mse_to_final: list[float] = field(default_factory=list)
    suffix_gap: list[float] = field(default_factory=list)
    #: the exploitability (``suffix_gap / 2``) this round must reach: its share of the target and
    #: the later rounds' shares, or None
    budget: float | None = None
    seconds: float = 0.0
    nodes: int = 0
    #: solved in this many parts of its roots, one after another (:mod:`pasur.solve.round_parts`)
    parts: int = 1

    @property
    def exploitability(self) -> list[float]:
        """Per checkpoint, the round's exploitability (``nash_conv / 2``, worst root)."""
        return [x / 2 for x in self.nash_conv]

    @property
    def mean_exploitability(self) -> list[float]:
        """Per checkpoint, the round's exploitability (``mean_nash_conv / 2``, mean over roots)."""
        return [x / 2 for x in self.mean_nash_conv]


class RoundCFR:
    """CFR on one round, with fixed values at its terminal nodes: the full-width methods
    (:data:`FULL_WIDTH`); subclasses override :meth:`iterate` for others (:attr:`methods`)."""

    #: the ``params.method`` values this class runs
    methods: tuple[str, ...] = FULL_WIDTH

    def __init__(
        self,
        rt: RoundTree,
        terminal: torch.Tensor,
        params: CFRParams,
        device: torch.device,
        part: RoundPart | None = None,
        *,
        fused: bool | None = None,
        graphs: bool = True,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        """``part``: solve only those roots of a tree-like round and what lies below them
        (:mod:`pasur.solve.round_parts`); ``terminal`` then holds the values of the part's end
        nodes. ``fused``: update each player's layers together (:mod:`pasur.solve.layer_groups`;
        False: layer by layer, the earlier code path; None: fused on a GPU, whose graphs need it,
        and on the CPU for rounds whose nodes can have several parents (compact), where it is
        1.04 to 1.17 times faster, not for tree-like ones, 0.95 to 0.97 times as fast,
        results/cfr-roofline/before_after.md); ``graphs``: on a CUDA
        device, replay each iteration as a captured CUDA graph (:mod:`pasur.solve.iteration_graph`;
        fused updates only; ignored elsewhere). ``params.kernel``: an iteration as torch operations or
        as one call of the native CPU kernel (:mod:`pasur.solve.native`, which needs the fused
        layout: ``fused=False`` keeps ``"auto"`` on torch). The iterates are the same either way.
        ``dtype``: of the regrets, strategies and values (float32; float64 for checks)."""
        if params.method not in self.methods:
            raise ValueError(
                f"{type(self).__name__} runs {', '.join(self.methods)}, not {params.method!r} "
                "(pasur.solve.rounds.round_solver picks the class from the method)"
            )
        self.rt, self.params, self.device = rt, params, device
        own_iterate = type(self).iterate is RoundCFR.iterate  # (a subclass's iteration is its own)
        native = own_iterate and use_native(params.kernel, device, params.method, dtype, fused)
        self.kernel = "native" if native else "torch"
        self._native: NativeRound | None = None
        if native:  # (the kernel reads the groups' flat tensors)
            fused = True
        self.fused = fused if fused is not None else torch.device(device).type == "cuda" or rt.mode != "paper"
        fused = self.fused
        self.dtype = dtype
        self.terminal = terminal.to(device=device, dtype=self.dtype)
        if part is not None and rt.mode != "paper":
            raise ValueError("only a tree-like (paper mode) round is solved in parts")
        self.n_roots = rt.n_nodes(rt.start_turn) if part is None else int(part.roots.shape[0])
        self.layers: list[_Layer] = []
        turns = rt.play_turns
        if part is None:
            widest = max((rt.n_edges_at(t) for t in turns), default=0)
        else:
            widest = max((int(e.shape[0]) for e in part.edges), default=0)
        # (fused: the layers' scratch are slices of their group's, set by group_layers)
        n_scratch = 0 if fused else widest
        self._scratch = scratch = [torch.empty(n_scratch, dtype=self.dtype, device=device) for _ in range(2)]
        for i, t in enumerate(turns):
            if part is None:
                parent, child, gt_edge = (x.to(device) for x in rt.edges(t))
                n_parent, n_child = rt.n_nodes(t), rt.n_nodes(t + 1)
            else:  # (tree-like: the children are the layer's edges, no child tensor is kept)
                sel = part.edges[i]
                parent, child = part.parents[i].to(device), None
                gt_edge = gather(rt.fgm[t + 1][:, 0], sel.to(rt.fgm[t + 1].device)).long().to(device)
                n_parent, n_child = part.n_nodes(i), int(sel.shape[0])
            tree_like = rt.mode == "paper"  # every child has exactly one parent edge
            reward = rt.gt[t].reward.to(device)[gt_edge].to(self.dtype)
            deg = torch.bincount(parent, minlength=n_parent).to(self.dtype)
            uniform = 1.0 / deg[parent]
            e = parent.shape[0]
            buffers = [torch.empty(e, dtype=self.dtype, device=device), scratch[0][:e], scratch[1][:e]]
            vpar = torch.empty(n_parent, dtype=self.dtype, device=device)
            if fused:  # (the group's slices replace them)
                buffers[0], vpar = scratch[0], scratch[0]
            self.layers.append(
                _Layer(
                    t,
                    t & 1,
                    parent,
                    None if tree_like else child,
                    reward,
                    n_parent,
                    n_child,
                    tree_like,
                    uniform,
                    parent.to(torch.int32),
                    None if tree_like else child.to(torch.int32),
                    *buffers,
                    vpar,
                )
            )
            del parent, child, gt_edge
        self._start_state()
        self._avg_scale = [1.0] * len(self.layers)
        self.it = 0
        self._stale = {ALEX, 1 - ALEX}  # players whose reach must be recomputed
        self._focus = None  # (the whole round's layers and state, selected edges per layer) while focused
        self._coef = torch.zeros(len(COEFFICIENTS), dtype=self.dtype, device=device)
        self._graph = IterationGraph(device, enabled=graphs and params.method in GRAPH_METHODS)
        self.groups = group_layers(self) if fused else []
        self._native = NativeRound(self) if native else None

    def _start_state(self) -> None:
        """Zero regrets and average, the uniform strategy, the tremble, and room for the reaches of
        Alex and Bob at every layer's parents; when fused, :func:`group_layers` makes them instead,
        as slices of its flat tensors (nothing held twice)."""
        if self.fused:
            self.reach, self.regret, self.avg, self.sigma = ([None] * len(self.layers) for _ in range(4))
            return
        for L in self.layers:
            L.tremble(self.params.tremble)
        self.reach = [
            (
                torch.empty(L.n_parent, dtype=self.dtype, device=self.device),
                torch.empty(L.n_parent, dtype=self.dtype, device=self.device),
            )
            for L in self.layers
        ]
        self.regret = [torch.zeros_like(L.reward) for L in self.layers]
        self.avg = [torch.zeros_like(L.reward) for L in self.layers]
        self.sigma = [L.uniform.clone() for L in self.layers]

    @property
    def n_edges(self) -> int:
        return sum(int(L.parent.shape[0]) for L in self.layers)

    # -- focus: iterate only the part of the round below some roots ------------------------------
    def focus(self, active: torch.Tensor) -> None:
        """From now on iterate only the nodes reachable from the current roots where ``active`` is
        true (the others keep their regrets and average strategy); :meth:`unfocus` writes the
        focused part back. Focusing again narrows further. Compact nodes below both kinds of
        roots keep changing; on tree-like rounds (paper mode) the focused part is a round of its
        own, whose measures are those of its roots (:attr:`root_ids`)."""
        dev = self.device
        self._sync()
        node = active.to(device=dev, dtype=torch.bool)
        keep = torch.nonzero(node).squeeze(1)
        root_ids = keep if self._focus is None else self._focus[3][keep]
        layers, sels = [], []
        for L in self.layers:
            n_parent = int(node.sum())
            sel, parent = edges_below(node, L.parent)
            child = L.child_of(sel)
            node = torch.zeros(L.n_child, dtype=torch.bool, device=dev)
            node[child] = True
            child_keep = torch.nonzero(node).squeeze(1)
            child_remap = torch.full((L.n_child,), -1, dtype=torch.int64, device=dev)
            child_remap[child_keep] = torch.arange(child_keep.shape[0], device=dev)
            child = gather(child_remap, child)
            e = sel.shape[0]
            buffers = [torch.empty(e, dtype=self.dtype, device=dev), self._scratch[0][:e], self._scratch[1][:e]]
            n_child = int(child_keep.shape[0])
            layers.append(
                _Layer(
                    L.t,
                    L.mover,
                    parent,
                    None if L.tree_like else child,
                    gather(L.reward, sel),
                    n_parent,
                    n_child,
                    L.tree_like,
                    gather(L.uniform, sel),
                    parent.to(torch.int32),
                    None if L.tree_like else child.to(torch.int32),
                    *buffers,
                    torch.empty(n_parent, dtype=self.dtype, device=dev),
                )
            )
            layers[-1].tremble(self.params.tremble)
            sels.append(sel)
        if self._focus is None:
            full = (self.layers, self.regret, self.avg, self.sigma, self.terminal, self.n_roots)
            full_sels, terminal_ids = sels, child_keep
        else:
            full, old_sels, old_terminal_ids, _ = self._focus
            full_sels = [gather(o, n) for o, n in zip(old_sels, sels, strict=True)]
            terminal_ids = gather(old_terminal_ids, child_keep)
        self._focus = (full, full_sels, terminal_ids, root_ids)
        self.terminal = gather(self.terminal, child_keep)
        self.layers = layers
        self.regret = [gather(x, sel) for x, sel in zip(self.regret, sels, strict=True)]
        self.avg = [gather(x, sel) for x, sel in zip(self.avg, sels, strict=True)]
        self.sigma = [gather(x, sel) for x, sel in zip(self.sigma, sels, strict=True)]
        self.n_roots = int(root_ids.shape[0])
        self._reset_buffers()

    @property
    def focused(self) -> bool:
        return self._focus is not None

    @property
    def tree_like(self) -> bool:
        """Every node has one parent edge (paper mode): roots are separate subgames."""
        return all(L.tree_like for L in self.layers)

    @property
    def root_ids(self) -> torch.Tensor | None:
        """While focused: the round's roots iterated, as indices of the whole round's roots."""
        return None if self._focus is None else self._focus[3]

    @property
    def terminal_ids(self) -> torch.Tensor | None:
        """While focused: the terminal nodes below them, as indices of the whole round's."""
        return None if self._focus is None else self._focus[2]

    @property
    def edge_ids(self) -> list[torch.Tensor] | None:
        """While focused: per layer, the edges iterated, as indices of the whole round's."""
        return None if self._focus is None else self._focus[1]

    def _sync(self) -> None:
        """Write the focused part's regrets and strategies into the whole round's."""
        if self._focus is None:
            return
        (_, regret, avg, sigma, _, _), sels, _, _ = self._focus
        for full, part in ((regret, self.regret), (avg, self.avg), (sigma, self.sigma)):
            for x, y, idx in zip(full, part, sels, strict=True):
                x.index_copy_(0, idx, y)

    def unfocus(self) -> None:
        """Back to the whole round, with the focused part's regrets and strategies written back."""
        if self._focus is None:
            return
        self._sync()
        (layers, regret, avg, sigma, terminal, n_roots), _, _, _ = self._focus
        self.layers, self.regret, self.avg, self.sigma = layers, regret, avg, sigma
        self.terminal, self.n_roots = terminal, n_roots
        self._focus = None
        self._reset_buffers()

    def _reset_buffers(self) -> None:
        self.reach = [
            (
                torch.empty(L.n_parent, dtype=self.dtype, device=self.device),
                torch.empty(L.n_parent, dtype=self.dtype, device=self.device),
            )
            for L in self.layers
        ]
        self._stale = {ALEX, 1 - ALEX}
        if self.fused:  # the new layers' tensors, laid end to end again; a captured graph saw the old ones
            self._graph.reset()
            self.groups = group_layers(self)
        if self._native is not None:
            self._native = NativeRound(self)

    # -- passes -----------------------------------------------------------------------------
    def _backward(
        self, rule: Callable[[_Layer, int, torch.Tensor], torch.Tensor], on_layer=None, terminal=None
    ) -> torch.Tensor:
        """Values at the round's roots; ``rule(layer, index, q)`` gives the parents' values from
        the edges' ``q = reward + value(child)``; ``on_layer(index, q, v_parent)`` sees each layer.
        ``terminal``: values at the round's end other than the fixed ones (suffix best responses)."""
        v = self.terminal if terminal is None else terminal
        for i in reversed(range(len(self.layers))):
            L = self.layers[i]
            q = L.reward + (v if L.tree_like else gather(v, L.child))
            v_parent = rule(L, i, q)
            if on_layer is not None:
                on_layer(i, q, v_parent)
            v = v_parent
        return v

    def _expect(self, sigma):
        return lambda L, i, q: scatter(sigma[i] * q, L.parent, L.n_parent)

    def values(self, sigma) -> torch.Tensor:
        """Root values when both players follow ``sigma``."""
        return self._backward(self._expect(sigma))

    def best_response(self, sigma, player: int, terminal: torch.Tensor | None = None) -> torch.Tensor:
        """Root values when ``player`` best-responds to the other's ``sigma`` (at the round's end:
        the fixed values, or ``terminal``)."""
        expect = self._expect(sigma)

        def rule(L, i, q):
            if L.mover != player:
                return expect(L, i, q)
            init = float("-inf") if player == ALEX else float("inf")
            out = torch.full((L.n_parent,), init, dtype=q.dtype, device=q.device)
            return out.scatter_reduce_(0, L.parent, q, "amax" if player == ALEX else "amin")

        return self._backward(rule, terminal=terminal)

    def nash_conv(self, sigma=None) -> torch.Tensor:
        """Per root: NashConv, Alex's best response minus Bob's (points), against ``sigma``
        (default: the average strategy)."""
        sigma = self.average_strategy() if sigma is None else sigma
        return self.best_response(sigma, ALEX) - self.best_response(sigma, 1 - ALEX)

    def exploitability(self, sigma=None) -> torch.Tensor:
        """Per root: exploitability, ``nash_conv / 2`` (points; docs/conventions.md)."""
        return self.nash_conv(sigma) / 2

    # -- strategies -------------------------------------------------------------------------
    def _normalize(self, L: _Layer, w: torch.Tensor) -> torch.Tensor:
        """``w`` normalized per parent (a new tensor); uniform where ``w`` is all zero."""
        return normalize_segments(w, L.parent, L.n_parent, gather_index=L.parent32)

    def average_strategy(self) -> list[torch.Tensor]:
        """The average strategy; with a tremble, the perturbed average with the tremble taken
        out (``(avg - floor) / spread``, renormalized against rounding)."""
        out = []
        for L, a in zip(self.layers, self.avg, strict=True):
            s = self._normalize(L, a)
            if L.floor is not None:
                s.sub_(L.floor).div_(L.spread).clamp_min_(0.0)
                normalize_segments(s, L.parent, L.n_parent, out=s, gather_index=L.parent32)
            out.append(s)
        return out

    # -- one iteration ----------------------------------------------------------------------
    def iterate(self) -> None:
        self.it += 1
        if self._native is not None:  # the whole iteration in one call of the compiled kernel
            self._set_coefficients()
            self._stale = self._native.iterate(self._stale)
            return
        if not self.fused:
            for group in self._update_groups():
                self._cfr_pass(group)
            return
        self._set_coefficients()
        self._stale = set(self._graph.run(self._fused_iteration, frozenset(self._stale)))

    def _update_groups(self) -> list[tuple[int, ...]]:
        return [(ALEX,), (1 - ALEX,)] if self.params.updates == "alternating" else [(ALEX, 1 - ALEX)]

    def _set_coefficients(self) -> None:
        """This iteration's numbers into the coefficient tensor the fused updates read (the
        average's weight scaled as :meth:`_avg_weight` does, rescaling the sums first when needed)."""
        p, t = self.params, self.it
        weight = 0.0
        for g in self.groups:
            i = g.layers[0]
            weight = average_weight(p.method, t, p.gamma) * self._avg_scale[i]
            if weight > 1e20:  # (every layer of the round crosses it at the same iteration)
                g.avg.mul_(1e-20)
                for j in g.layers:
                    self._avg_scale[j] *= 1e-20
                weight *= 1e-20
        values = coefficients(p.method, t, weight, p.alpha, p.beta)
        if self._native is not None:
            self._native.set_coefficients(values)
        else:
            self._graph.set_coefficients(self._coef, values, t)

    def _fused_iteration(self) -> frozenset:
        """One iteration with the players' layers updated together; the players whose reach is
        stale after it (the host-side state a captured graph must leave as it found)."""
        p = self.params
        for players in self._update_groups():
            self._fast_reach()
            self._fast_values()
            for g in self.groups:
                if g.mover in players:
                    update_group(g, p.method, self._coef, self.it, p.alpha)
                    self._stale.add(g.mover)
        return frozenset(self._stale)

    def _fast_reach(self) -> None:
        """Reach at every layer's parents under the current strategy, in place, for the players
        whose strategy changed since it was last computed (``self._stale``). Fused: the scatter-adds'
        targets are zeroed group by group first (two kernels, not one a layer)."""
        whole = self.fused and not self.tree_like
        for p in self._stale:
            for g in self.groups if whole else ():
                g.reach[p].zero_()
            self.reach[0][p].fill_(1.0)
        for i, L in enumerate(self.layers[:-1]):
            for p in self._stale:
                r, nxt, own = self.reach[i][p], self.reach[i + 1][p], L.mover == p
                if L.tree_like:
                    torch.index_select(r, 0, L.parent32, out=nxt)
                    if own:
                        nxt.mul_(self.sigma[i])
                else:
                    torch.index_select(r, 0, L.parent32, out=L.tmp)
                    if own:
                        L.tmp.mul_(self.sigma[i])
                    if not whole:
                        nxt.zero_()
                    nxt.scatter_add_(0, L.child, L.tmp)
        self._stale = set()

    def _fast_values(self) -> None:
        """``q`` of every edge and ``vpar`` of every parent under the current strategy, in place
        (fused: the values zeroed group by group first; a layer's are read only once summed)."""
        for g in self.groups:
            g.vpar.zero_()
        v = self.terminal
        for i in reversed(range(len(self.layers))):
            L = self.layers[i]
            if L.tree_like:
                torch.add(L.reward, v, out=L.q)
            else:
                torch.index_select(v, 0, L.child32, out=L.q)
                L.q.add_(L.reward)
            torch.mul(self.sigma[i], L.q, out=L.tmp)
            if not self.fused:
                L.vpar.zero_()
            L.vpar.scatter_add_(0, L.parent, L.tmp)
            v = L.vpar

    def _cfr_pass(self, players: tuple[int, ...]) -> None:
        """One CFR update of ``players``' layers: reach forward, values backward, then regrets,
        average strategy and regret matching, edge by edge, without allocating."""
        self._fast_reach()
        self._fast_values()
        p, t = self.params, self.it
        for i, L in enumerate(self.layers):
            if L.mover not in players:
                continue
            ra, rb = self.reach[i]
            own, opp = (ra, rb) if L.mover == ALEX else (rb, ra)
            r, w = L.tmp, L.tmp2
            torch.index_select(L.vpar, 0, L.parent32, out=r)
            if L.mover == ALEX:
                torch.sub(L.q, r, out=r)  # q - v(parent)
            else:
                r.sub_(L.q)  # v(parent) - q: Bob minimizes Alex's points
            torch.index_select(opp, 0, L.parent32, out=w)
            r.mul_(w)  # x the opponent's reach
            torch.index_select(own, 0, L.parent32, out=w)  # own reach (x current strategy: the average's weight)
            R = self.regret[i]
            # the average strategy: weight 1 (CFR), t (CFR+) or t^gamma (DCFR, whose discount
            # ((t-1)/t)^gamma of the sum every iteration is the same up to a common factor that
            # normalizing removes)
            self.avg[i].addcmul_(w, self.sigma[i], value=self._avg_weight(i, t))
            if p.method in PREDICTIVE:  # floored (discounted) regrets; the next strategy predicts r
                predictive_update_(R, r, p.method, t, p.alpha)
                self._match(L, predicted_regret(R, r, p.method, t, p.alpha, out=L.q), self.sigma[i])
                self._stale.add(L.mover)
                continue
            if p.method == "dcfr":  # equations (6)-(8): discount with t - 1, then add
                if t > 1:  # L.q is free again: the scratch buffer
                    discount_(R, "dcfr", t - 1, alpha=p.alpha, beta=p.beta, scratch=L.q)
                R.add_(r)
            else:  # CFR: add; CFR+: add, then floor at 0; Linear CFR: add, then times t / (t + 1)
                discount_(R.add_(r), p.method, t)
            self._match(L, R, self.sigma[i])
            self._stale.add(L.mover)

    def _avg_weight(self, i: int, t: int) -> float:
        """The weight of iteration ``t`` in layer ``i``'s average (:func:`average_weight`) times a
        scale that shrinks (with the sums so far) whenever the weight would pass 1e20 (DCFR's
        ``t^gamma``)."""
        w = average_weight(self.params.method, t, self.params.gamma) * self._avg_scale[i]
        if w > 1e20:
            self.avg[i].mul_(1e-20)
            self._avg_scale[i] *= 1e-20
            w *= 1e-20
        return w

    @staticmethod
    def _match(L: _Layer, weights: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """Regret matching in place: ``out`` = positive part of ``weights``, normalized per parent;
        uniform where none is positive (:func:`normalize_segments`, in the layer's buffers); with
        a tremble, then ``floor + spread * out``."""
        out = normalize_segments(
            weights, L.parent, L.n_parent, out=out, totals=L.vpar, spread=L.tmp, gather_index=L.parent32
        )
        if L.floor is not None:
            out.mul_(L.spread).add_(L.floor)
        return out
