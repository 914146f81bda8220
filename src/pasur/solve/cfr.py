"""Round-by-round CFR on the tensor tree (paper section 2.10, CodeSnippets 10-12; 2.9).

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
* ``dcfr``: Discounted CFR, the paper's equations (6)-(8): before iteration ``t`` adds its
  regrets, positive accumulated regrets are multiplied by ``(t-1)^α / ((t-1)^α + 1)`` and the
  others by ``(t-1)^β / ((t-1)^β + 1)``; the average strategy by ``((t-1)/t)^γ``.
  Defaults α = 1.5, β = 0, γ = 2.
* ``es-mccfr``: external-sampling Monte Carlo CFR (CodeSnippet 9's scheme): the traverser
  explores all its actions, the opponent's are sampled from the current strategy (one per
  node, Gumbel-max over the node's edges); regrets without discounting; the opponent's average
  strategy is updated where it was sampled. Seeded; converges in expectation.

``updates="alternating"`` (default) updates Alex, then Bob against Alex's new strategy, in
every iteration; ``"simultaneous"`` updates both from the same strategy profile, as the
paper's code does.

Reproducibility: on the CPU a run is deterministic. Where several actions are equally good,
rounding noise decides how regret matching splits between them, so runs on another device
(CUDA sums scatter-adds in no fixed order) or with another dtype can give different strategies
of the same quality (the same values and exploitability to within the tolerance).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from pasur.common.errors import PasurInputError
from pasur.game.state import ALEX, TURNS_PER_ROUND
from pasur.solve.tree import GameTree, RoundTree

METHODS = ("cfr", "cfr+", "dcfr", "es-mccfr")
#: iterations per round beyond any real use (a full deck needs a few hundred): a larger
#: number is a typo, refused before any work
MAX_ITERATIONS = 10_000_000
#: regret matching floor: actions without positive regret get FLOOR / total, so a node whose
#: regrets are all non-positive plays uniformly (as the paper's TOL, but negligible: 1e-30)
FLOOR = 1e-30
UPDATES = ("alternating", "simultaneous")


@dataclass(frozen=True)
class CFRParams:
    """What to run; :meth:`check` refuses bad values before any work starts."""

    method: str = "dcfr"
    iterations: int | None = 1000
    target_exploitability: float | None = None
    check_every: int = 10
    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 2.0
    updates: str = "alternating"
    seed: int = 0
    max_iterations: int = 100_000

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
        return self


@dataclass
class _Layer:
    """One layer's edges on the solving device."""

    t: int
    mover: int
    parent: torch.Tensor  # int64 [E]
    child: torch.Tensor  # int64 [E]
    reward: torch.Tensor  # float [E]
    n_parent: int
    n_child: int
    tree_like: bool  # child == arange(E) (paper mode): gathers instead of scatters
    uniform: torch.Tensor  # float [E], 1 / deg of the edge's parent
    parent32: torch.Tensor  # int32 [E]: gathers are faster with int32 indices
    child32: torch.Tensor  # int32 [E]
    # work buffers, reused every iteration (the hot loop allocates nothing)
    q: torch.Tensor  # [E] reward + value of the child
    tmp: torch.Tensor  # [E]
    tmp2: torch.Tensor  # [E]
    vpar: torch.Tensor  # [n_parent] values of the parents


@dataclass
class RoundTrace:
    """Convergence of one round: per checkpoint, the iteration, the round's exploitability
    (the largest over its roots, points), and the mean squared difference of the average
    strategy then to the final one (over all edges, or a fixed sample of a million)."""

    round: int
    iterations: list[int] = field(default_factory=list)
    exploitability: list[float] = field(default_factory=list)
    mean_exploitability: list[float] = field(default_factory=list)
    mse_to_final: list[float] = field(default_factory=list)
    seconds: float = 0.0
    nodes: int = 0


def _scatter(src: torch.Tensor, index: torch.Tensor, n: int) -> torch.Tensor:
    return torch.zeros(n, dtype=src.dtype, device=src.device).index_add_(0, index, src)


def _gather(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``x[index]`` for 1-D tensors; ``index_select`` is the lean kernel for it."""
    return torch.index_select(x, 0, index)


class RoundCFR:
    """CFR on one round, with fixed values at its terminal nodes."""

    def __init__(self, rt: RoundTree, terminal: torch.Tensor, params: CFRParams, device: torch.device) -> None:
        self.rt, self.params, self.device = rt, params, device
        self.dtype = torch.float32
        self.terminal = terminal.to(device=device, dtype=self.dtype)
        self.n_roots = rt.n_nodes(rt.start_turn)
        self.layers: list[_Layer] = []
        for t in range(rt.start_turn, TURNS_PER_ROUND):
            parent, child, gt_edge = (x.to(device) for x in rt.edges(t))
            n_parent, n_child = rt.n_nodes(t), rt.n_nodes(t + 1)
            tree_like = rt.mode == "paper"  # every child has exactly one parent edge
            reward = rt.gt[t].reward.to(device)[gt_edge].to(self.dtype)
            deg = torch.bincount(parent, minlength=n_parent).to(self.dtype)
            uniform = 1.0 / deg[parent]
            e = parent.shape[0]
            buffers = [torch.empty(e, dtype=self.dtype, device=device) for _ in range(3)]
            vpar = torch.empty(n_parent, dtype=self.dtype, device=device)
            self.layers.append(
                _Layer(
                    t,
                    t & 1,
                    parent,
                    child,
                    reward,
                    n_parent,
                    n_child,
                    tree_like,
                    uniform,
                    parent.to(torch.int32),
                    child.to(torch.int32),
                    *buffers,
                    vpar,
                )
            )
        # reach probabilities of Alex and Bob at the parents of every layer
        self.reach = [
            (
                torch.empty(L.n_parent, dtype=self.dtype, device=device),
                torch.empty(L.n_parent, dtype=self.dtype, device=device),
            )
            for L in self.layers
        ]
        self.regret = [torch.zeros_like(L.reward) for L in self.layers]
        self.avg = [torch.zeros_like(L.reward) for L in self.layers]
        self.sigma = [L.uniform.clone() for L in self.layers]
        self.it = 0
        self._stale = {ALEX, 1 - ALEX}  # players whose reach must be recomputed
        self.gen = torch.Generator(device=device).manual_seed(params.seed * 1_000_003 + rt.round)

    @property
    def n_edges(self) -> int:
        return sum(int(L.parent.shape[0]) for L in self.layers)

    # -- passes -----------------------------------------------------------------------------
    def _to_child(self, L: _Layer, per_edge: torch.Tensor) -> torch.Tensor:
        return per_edge if L.tree_like else _scatter(per_edge, L.child, L.n_child)

    def _backward(self, rule: Callable[[_Layer, int, torch.Tensor], torch.Tensor], on_layer=None) -> torch.Tensor:
        """Values at the round's roots; ``rule(layer, index, q)`` gives the parents' values from
        the edges' ``q = reward + value(child)``; ``on_layer(index, q, v_parent)`` sees each layer."""
        v = self.terminal
        for i in reversed(range(len(self.layers))):
            L = self.layers[i]
            q = L.reward + (v if L.tree_like else _gather(v, L.child))
            v_parent = rule(L, i, q)
            if on_layer is not None:
                on_layer(i, q, v_parent)
            v = v_parent
        return v

    def _expect(self, sigma):
        return lambda L, i, q: _scatter(sigma[i] * q, L.parent, L.n_parent)

    def values(self, sigma) -> torch.Tensor:
        """Root values when both players follow ``sigma``."""
        return self._backward(self._expect(sigma))

    def best_response(self, sigma, player: int) -> torch.Tensor:
        """Root values when ``player`` best-responds to the other's ``sigma``."""
        expect = self._expect(sigma)

        def rule(L, i, q):
            if L.mover != player:
                return expect(L, i, q)
            init = float("-inf") if player == ALEX else float("inf")
            out = torch.full((L.n_parent,), init, dtype=q.dtype, device=q.device)
            return out.scatter_reduce_(0, L.parent, q, "amax" if player == ALEX else "amin")

        return self._backward(rule)

    def exploitability(self, sigma=None) -> torch.Tensor:
        """Per root: Alex's best response minus Bob's (points), against ``sigma`` (default: average)."""
        sigma = self.average_strategy() if sigma is None else sigma
        return self.best_response(sigma, ALEX) - self.best_response(sigma, 1 - ALEX)

    # -- strategies -------------------------------------------------------------------------
    def _normalize(self, L: _Layer, w: torch.Tensor) -> torch.Tensor:
        """``w`` normalized per parent (a new tensor); uniform where ``w`` is all zero."""
        w = torch.clamp_min(w, FLOOR)
        return w / _gather(_scatter(w, L.parent, L.n_parent), L.parent)

    def average_strategy(self) -> list[torch.Tensor]:
        return [self._normalize(L, a) for L, a in zip(self.layers, self.avg, strict=True)]

    # -- one iteration ----------------------------------------------------------------------
    def iterate(self) -> None:
        self.it += 1
        if self.params.method == "es-mccfr":
            for p in (ALEX, 1 - ALEX):
                self._es_pass(p)
            return
        players = [(ALEX,), (1 - ALEX,)] if self.params.updates == "alternating" else [(ALEX, 1 - ALEX)]
        for group in players:
            self._cfr_pass(group)

    def _fast_reach(self) -> None:
        """Reach at every layer's parents under the current strategy, in place, for the players
        whose strategy changed since it was last computed (``self._stale``)."""
        for p in self._stale:
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
                    nxt.zero_().scatter_add_(0, L.child, L.tmp)
        self._stale = set()

    def _fast_values(self) -> None:
        """``q`` of every edge and ``vpar`` of every parent under the current strategy, in place."""
        v = self.terminal
        for i in reversed(range(len(self.layers))):
            L = self.layers[i]
            if L.tree_like:
                torch.add(L.reward, v, out=L.q)
            else:
                torch.index_select(v, 0, L.child32, out=L.q)
                L.q.add_(L.reward)
            torch.mul(self.sigma[i], L.q, out=L.tmp)
            L.vpar.zero_().scatter_add_(0, L.parent, L.tmp)
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
            torch.sub(L.q, r, out=r)  # q - v(parent)
            torch.index_select(opp, 0, L.parent32, out=w)
            r.mul_(w)  # x the opponent's reach
            if L.mover != ALEX:
                r.neg_()  # Bob minimizes Alex's points
            torch.index_select(own, 0, L.parent32, out=w)
            w.mul_(self.sigma[i])  # own reach x current strategy: the average's weight
            R, S = self.regret[i], self.avg[i]
            if p.method == "cfr":
                R.add_(r)
                S.add_(w)
            elif p.method == "cfr+":
                R.add_(r).clamp_min_(0.0)
                S.add_(w, alpha=float(t))
            else:  # dcfr, equations (6)-(8)
                if t > 1:
                    pos = (t - 1) ** p.alpha / ((t - 1) ** p.alpha + 1)
                    neg = (t - 1) ** p.beta / ((t - 1) ** p.beta + 1)
                    # R * pos where R > 0, R * neg elsewhere: R*neg + max(R, 0)*(pos - neg)
                    torch.clamp_min(R, 0.0, out=L.q)
                    R.mul_(neg).add_(L.q, alpha=pos - neg)
                S.mul_(((t - 1) / t) ** p.gamma).add_(w)
                R.add_(r)
            self._match(L, R, self.sigma[i])
            self._stale.add(L.mover)

    @staticmethod
    def _match(L: _Layer, weights: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """Regret matching in place: ``out`` = positive part of ``weights``, normalized per parent;
        uniform where none is positive (a tiny floor makes those all equal)."""
        torch.clamp_min(weights, FLOOR, out=out)
        L.vpar.zero_().scatter_add_(0, L.parent, out)
        torch.index_select(L.vpar, 0, L.parent32, out=L.tmp)
        return out.div_(L.tmp)

    def _es_pass(self, traverser: int) -> None:
        """External sampling for ``traverser``: counts of sampled paths instead of reaches."""
        sampled = []
        for L, s in zip(self.layers, self.sigma, strict=True):
            if L.mover == traverser:
                sampled.append(None)
                continue
            tiny = torch.finfo(self.dtype).tiny
            u = torch.rand(s.shape, generator=self.gen, dtype=self.dtype, device=self.device).clamp(tiny, 1 - 1e-7)
            key = torch.log(s.clamp_min(tiny)) - torch.log(-torch.log(u))  # Gumbel-max sampling
            best = torch.full((L.n_parent,), float("-inf"), dtype=key.dtype, device=key.device)
            best.scatter_reduce_(0, L.parent, key, "amax")
            pick = key == best[L.parent]
            # one edge per parent even on exact ties: keep the first
            first = torch.full((L.n_parent,), L.parent.shape[0], dtype=torch.int64, device=key.device)
            idx = torch.arange(L.parent.shape[0], device=key.device)
            first.scatter_reduce_(0, L.parent, torch.where(pick, idx, L.parent.shape[0]), "amin")
            sampled.append((idx == first[L.parent]).to(self.dtype))
        count = torch.ones(self.n_roots, dtype=self.dtype, device=self.device)
        counts = []
        for L, m in zip(self.layers, sampled, strict=True):
            counts.append(count)
            e = count[L.parent] if m is None else count[L.parent] * m
            count = self._to_child(L, e)

        def rule(L, i, q):
            w = self.sigma[i] if sampled[i] is None else sampled[i]
            return _scatter(w * q, L.parent, L.n_parent)

        def on_layer(i, q, v_parent):
            L = self.layers[i]
            c = counts[i][L.parent]
            if L.mover == traverser:
                sign = 1.0 if traverser == ALEX else -1.0
                self.regret[i] += sign * c * (q - v_parent[L.parent])
                self.sigma[i] = self._normalize(L, torch.clamp_min(self.regret[i], 0.0))
            else:
                self.avg[i] += c * self.sigma[i]

        self._backward(rule, on_layer)


@dataclass
class CFRResult:
    """A CFR solve: the average strategy per layer (CPU), the root value of that strategy with
    each round's roots valued under it, the traces, and the whole game's exploitability."""

    tree: GameTree
    params: CFRParams
    strategy: dict[tuple[int, int], torch.Tensor]
    root_value: float
    traces: list[RoundTrace]
    exploitability: float
    iterations: dict[int, int]
    seconds: float
    value_passed: str = "value of the round's average strategy (exact backward pass)"

    def game_value(self) -> float:
        from pasur.solve.reference import banked_diff

        return banked_diff(self.tree.start) + self.root_value


MSE_SAMPLE = 1_000_000


def solve_cfr(
    tree: GameTree,
    params: CFRParams,
    device: str | torch.device | None = None,
    progress: Callable[[int, int, float | None], None] | None = None,
) -> CFRResult:
    """Round-by-round CFR over ``tree`` (rounds 5 -> start); see the module docstring.

    ``progress(round, iteration, exploitability or None)`` is called after every iteration."""
    from pasur.solve.exact import exploitability as full_exploitability

    params.check()
    dev = torch.device(device) if device is not None else tree.device
    t0 = time.perf_counter()
    strategy: dict[tuple[int, int], torch.Tensor] = {}
    traces: list[RoundTrace] = []
    iterations: dict[int, int] = {}
    next_roots: torch.Tensor | None = None
    for rt in reversed(tree.rounds):
        t_round = time.perf_counter()
        terminal = rt.terminal_value if rt.terminal_value is not None else next_roots[rt.link.long()]
        solver = RoundCFR(rt, terminal, params, dev)
        trace = RoundTrace(rt.round, nodes=sum(rt.n_nodes(t) for t in rt.turns))
        sample = _mse_sample(solver, params.seed)
        snapshots = []
        limit = params.iterations if params.iterations is not None else params.max_iterations
        while solver.it < limit:
            solver.iterate()
            expl = None
            if solver.it % params.check_every == 0 or solver.it == limit:
                avg = solver.average_strategy()
                per_root = solver.exploitability(avg)
                expl = float(per_root.max())
                trace.iterations.append(solver.it)
                trace.exploitability.append(expl)
                trace.mean_exploitability.append(float(per_root.mean()))
                snapshots.append(torch.cat([a[s] for a, s in zip(avg, sample, strict=True)]).cpu())
            if progress is not None:
                progress(rt.round, solver.it, expl)
            if expl is not None and params.target_exploitability is not None and expl <= params.target_exploitability:
                break
        avg = solver.average_strategy()  # (the loop ends on a checkpoint: limit reached or target met)
        final = snapshots[-1]
        trace.mse_to_final = [float(((s - final) ** 2).mean()) if final.numel() else 0.0 for s in snapshots]
        next_roots = solver.values(avg).to(device=tree.device, dtype=torch.float32)
        for L, a in zip(solver.layers, avg, strict=True):
            strategy[(rt.round, L.t)] = a.to(device=tree.device, dtype=torch.float32)
        iterations[rt.round] = solver.it
        trace.seconds = time.perf_counter() - t_round
        traces.append(trace)
        del solver
    traces.reverse()
    root_value = float(next_roots[0])
    expl = full_exploitability(tree, strategy)
    return CFRResult(tree, params, strategy, root_value, traces, expl, iterations, time.perf_counter() - t0)


def _mse_sample(solver: RoundCFR, seed: int) -> list[torch.Tensor]:
    """Per layer, the edges whose probabilities the MSE trace follows: all, or about a million."""
    total = solver.n_edges
    out = []
    g = torch.Generator().manual_seed(seed)
    for L in solver.layers:
        e = int(L.parent.shape[0])
        if total <= MSE_SAMPLE:
            out.append(torch.arange(e, device=solver.device))
        else:
            k = max(1, e * MSE_SAMPLE // total)
            out.append(torch.randperm(e, generator=g)[:k].to(solver.device))
    return out
