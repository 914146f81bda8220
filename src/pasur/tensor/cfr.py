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
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from pasur.errors import PasurInputError
from pasur.state import ALEX, TURNS_PER_ROUND
from pasur.tensor.tree import GameTree, RoundTree

METHODS = ("cfr", "cfr+", "dcfr", "es-mccfr")
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
        if self.iterations is not None and self.iterations <= 0:
            raise PasurInputError(f"iterations must be a positive number, got {self.iterations}")
        if self.target_exploitability is not None and not self.target_exploitability > 0:
            raise PasurInputError(f"the target exploitability must be positive, got {self.target_exploitability}")
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
    gt_edge: torch.Tensor  # int64 [E]
    reward: torch.Tensor  # float [E]
    n_parent: int
    n_child: int
    tree_like: bool  # child == arange(E): gathers instead of scatters
    deg: torch.Tensor  # float [n_parent], number of edges of each parent


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
            tree_like = parent.shape[0] == n_child and rt.mode == "paper"
            reward = rt.gt[t].reward.to(device)[gt_edge].to(self.dtype)
            deg = torch.bincount(parent, minlength=n_parent).to(self.dtype)
            self.layers.append(_Layer(t, t & 1, parent, child, gt_edge, reward, n_parent, n_child, tree_like, deg))
        self.regret = [torch.zeros_like(L.reward) for L in self.layers]
        self.avg = [torch.zeros_like(L.reward) for L in self.layers]
        self.sigma = [1.0 / L.deg[L.parent] for L in self.layers]
        self.it = 0
        self.gen = torch.Generator(device=device).manual_seed(params.seed * 1_000_003 + rt.round)

    @property
    def n_edges(self) -> int:
        return sum(int(L.parent.shape[0]) for L in self.layers)

    # -- passes -----------------------------------------------------------------------------
    def _to_child(self, L: _Layer, per_edge: torch.Tensor) -> torch.Tensor:
        return per_edge if L.tree_like else _scatter(per_edge, L.child, L.n_child)

    def _reach(self, sigma) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Reach probabilities of Alex and Bob at the parents of every layer."""
        ra = torch.ones(self.n_roots, dtype=self.dtype, device=self.device)
        rb = ra.clone()
        out = []
        for L, s in zip(self.layers, sigma, strict=True):
            out.append((ra, rb))
            ea, eb = ra[L.parent], rb[L.parent]
            if L.mover == ALEX:
                ea = ea * s
            else:
                eb = eb * s
            ra, rb = self._to_child(L, ea), self._to_child(L, eb)
        return out

    def _backward(self, rule: Callable[[_Layer, int, torch.Tensor], torch.Tensor], on_layer=None) -> torch.Tensor:
        """Values at the round's roots; ``rule(layer, index, q)`` gives the parents' values from
        the edges' ``q = reward + value(child)``; ``on_layer(index, q, v_parent)`` sees each layer."""
        v = self.terminal
        for i in reversed(range(len(self.layers))):
            L = self.layers[i]
            q = L.reward + v[L.child]
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
        total = _scatter(w, L.parent, L.n_parent)[L.parent]
        return torch.where(total > 0, w / torch.where(total > 0, total, 1.0), 1.0 / L.deg[L.parent])

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

    def _cfr_pass(self, players: tuple[int, ...]) -> None:
        reach = self._reach(self.sigma)
        method, t = self.params.method, self.it
        updates: list[tuple[int, torch.Tensor, torch.Tensor]] = []

        def on_layer(i, q, v_parent):
            L = self.layers[i]
            if L.mover in players:
                ra, rb = reach[i]
                own, opp = (ra, rb) if L.mover == ALEX else (rb, ra)
                sign = 1.0 if L.mover == ALEX else -1.0
                r = sign * opp[L.parent] * (q - v_parent[L.parent])
                updates.append((i, r, own[L.parent] * self.sigma[i]))

        self._backward(self._expect(self.sigma), on_layer)
        p = self.params
        for i, r, w in updates:
            if method == "cfr":
                self.regret[i] += r
                self.avg[i] += w
            elif method == "cfr+":
                self.regret[i] = torch.clamp_min(self.regret[i] + r, 0.0)
                self.avg[i] += t * w
            else:  # dcfr, equations (6)-(8)
                if t > 1:
                    pos = (t - 1) ** p.alpha / ((t - 1) ** p.alpha + 1)
                    neg = (t - 1) ** p.beta / ((t - 1) ** p.beta + 1)
                    self.regret[i] *= torch.where(self.regret[i] > 0, pos, neg)
                self.avg[i] = self.avg[i] * ((t - 1) / t) ** p.gamma + w
                self.regret[i] += r
            L = self.layers[i]
            self.sigma[i] = self._normalize(L, torch.clamp_min(self.regret[i], 0.0))

    def _es_pass(self, traverser: int) -> None:
        """External sampling for ``traverser``: counts of sampled paths instead of reaches."""
        sampled = []
        for L, s in zip(self.layers, self.sigma, strict=True):
            if L.mover == traverser:
                sampled.append(None)
                continue
            u = torch.rand(s.shape, generator=self.gen, dtype=self.dtype, device=self.device).clamp_min(1e-300)
            key = torch.log(s.clamp_min(1e-300)) - torch.log(-torch.log(u))
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
        from pasur.reference import banked_diff

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
    from pasur.tensor.exact import exploitability as full_exploitability

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
        avg = solver.average_strategy()
        if not trace.iterations or trace.iterations[-1] != solver.it:
            per_root = solver.exploitability(avg)
            trace.iterations.append(solver.it)
            trace.exploitability.append(float(per_root.max()))
            trace.mean_exploitability.append(float(per_root.mean()))
            snapshots.append(torch.cat([a[s] for a, s in zip(avg, sample, strict=True)]).cpu())
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
