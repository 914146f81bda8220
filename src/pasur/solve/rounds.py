"""Round-by-round CFR over a whole tree (paper section 2.10): rounds 5 -> start, each solved by
a :class:`pasur.solve.cfr.RoundCFR` (:func:`round_solver`: the full-width methods, or
:class:`pasur.solve.sampling.SampledRoundCFR` for ES-MCCFR) with the next round's values at its
end, and stopped by a whole-game exploitability target (see :func:`solve_cfr`).

Exploitability is NashConv / 2 throughout (docs/conventions.md): the tensors below hold
best-response gaps ``A - B`` (NashConv), halved where an exploitability is reported or compared."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from pasur.common.errors import PasurInputError
from pasur.game.state import ALEX
from pasur.solve.cfr import FULL_WIDTH, CFRParams, RoundCFR, RoundTrace
from pasur.solve.gametree import GameTree, RoundTree
from pasur.solve.native import unsupported
from pasur.solve.ops import gather
from pasur.solve.round_parts import root_groups, round_part, solve_room
from pasur.solve.sampling import SampledRoundCFR

#: the solver class of each method that is not full width (those are :class:`RoundCFR`'s)
SOLVERS: dict[str, type[RoundCFR]] = {m: SampledRoundCFR for m in SampledRoundCFR.methods}


@dataclass
class CFRResult:
    """A CFR solve: the average strategy per layer (on the tree's device), the root value of that strategy with
    each round's roots valued under it, the traces, and the whole game's NashConv (exact best
    responses of both players over all rounds) and exploitability (half of it)."""

    tree: GameTree
    params: CFRParams
    strategy: dict[tuple[int, int], torch.Tensor]
    root_value: float
    traces: list[RoundTrace]
    nash_conv: float
    iterations: dict[int, int]
    seconds: float
    value_passed: str = "value of the round's average strategy (exact backward pass)"
    #: per round, its roots' (V, A, B): the average strategy's value and the suffix best responses
    suffix: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = field(default_factory=dict)

    def game_value(self) -> float:
        from pasur.solve.reference import banked_diff

        return banked_diff(self.tree.start) + self.root_value

    @property
    def exploitability(self) -> float:
        """The whole game's exploitability: ``nash_conv / 2`` (points; docs/conventions.md)."""
        return self.nash_conv / 2

    @property
    def target(self) -> float | None:
        """The target on the whole game's exploitability (NashConv / 2), or None."""
        return self.params.target_exploitability

    @property
    def target_met(self) -> bool | None:
        """Whether the whole game's exploitability is within the target (None without one)."""
        return None if self.target is None else self.exploitability <= self.target

    @property
    def round_exploitability(self) -> dict[int, float]:
        """Per round, its final exploitability with the next round's values held fixed (worst root)."""
        return {tr.round: tr.exploitability[-1] for tr in self.traces}

    @property
    def round_nash_conv(self) -> dict[int, float]:
        """Per round, its final NashConv with the next round's values held fixed (worst root)."""
        return {tr.round: tr.nash_conv[-1] for tr in self.traces}


MSE_SAMPLE = 1_000_000


def round_solver(
    rt: RoundTree, terminal: torch.Tensor, params: CFRParams, device: torch.device, **options: bool
) -> RoundCFR:
    """The solver of one round for ``params.method``: :class:`RoundCFR` (full width) or
    :class:`SampledRoundCFR` (``es-mccfr``), with ``terminal`` the values at the round's end.
    ``options``: :class:`RoundCFR`'s ``fused`` and ``graphs`` (the full-width methods' only)."""
    cls = SOLVERS.get(params.method, RoundCFR)
    return cls(rt, terminal, params, device, **options) if cls is RoundCFR else cls(rt, terminal, params, device)


def target_shares(tree: GameTree) -> dict[int, float]:
    """Each round's share of a whole-game target, proportional to the square root of its nodes:
    if a round's exploitability falls as ``c / iterations``, this split of the target minimizes
    the total work (nodes x iterations) to reach it."""
    w = {rt.round: math.sqrt(sum(rt.n_nodes(t) for t in rt.turns)) for rt in tree.rounds}
    total = sum(w.values())
    return {r: x / total for r, x in w.items()}


def solve_cfr(
    tree: GameTree,
    params: CFRParams,
    device: str | torch.device | None = None,
    progress: Callable[[int, int, float | None], None] | None = None,
    solver_memory: int | None = None,
    *,
    fused: bool | None = None,
    graphs: bool = True,
) -> CFRResult:
    """Round-by-round CFR over ``tree`` (rounds 5 -> start); see the module docstring.

    A tree-like round whose solver would not fit in memory is solved in parts of its roots, one
    part at a time, with the same result bit for bit (:mod:`pasur.solve.round_parts`; full-width
    methods with a fixed number of iterations). ``solver_memory``: the bytes a round's solver may
    take, by default 80 % of what the device has free when the round begins.

    A target is a bound on the *whole game's* exploitability, NashConv / 2 (docs/conventions.md),
    so the gaps below, which bound NashConv, are held to twice it. Beside each round's root values
    ``V`` (of its average strategy), the round passes down the suffix best-response values of
    both players (``A`` for Alex, ``B`` for Bob: best responses over this round and all later
    ones). A round's *suffix gap* ``max(A - V) + max(V - B)`` over its roots bounds the gap of
    every earlier root, since ``A`` and ``B`` of a round are at most that far from ``V`` plus
    its own best-response gains against ``V``; at the first round (one root) it is exactly the
    whole game's NashConv. A round stops once half its gap is within its budget (an
    exploitability): its share of the target (:func:`target_shares`) plus the later rounds'
    shares, so the first round checks the whole target itself. A round that reaches the
    iteration cap stops there; whether the target was met is the exact whole-game measure
    (``result.target_met``).

    ``progress(round, iteration, exploitability or None)`` is called after every iteration (the
    round's exploitability, NashConv / 2, worst root). ``fused``, ``graphs``: how the full-width
    solvers run an iteration (:class:`RoundCFR`'s options; the same iterates either way), as
    ``params.kernel`` (torch operations or the native CPU kernel; ``"native"`` where it cannot run
    on ``device``: PasurInputError before any work)."""
    params.check()
    options = {"fused": fused, "graphs": graphs}
    dev = torch.device(device) if device is not None else tree.device
    if params.kernel == "native" and (why := unsupported(dev, params.method)) is not None:
        raise PasurInputError(f"--kernel native cannot run: {why}")
    t0 = time.perf_counter()
    strategy: dict[tuple[int, int], torch.Tensor] = {}
    traces: list[RoundTrace] = []
    iterations: dict[int, int] = {}
    target = params.target_exploitability
    shares = target_shares(tree)
    budget = 0.0
    suffix: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None  # roots' (V, A, B)
    suffixes = {}
    for rt in reversed(tree.rounds):
        t_round = time.perf_counter()
        if rt.terminal_value is not None:
            ends = (rt.terminal_value,) * 3
        else:
            link = rt.link.long().to(dev)
            ends = tuple(x[link] for x in suffix)
        budget += shares[rt.round]
        trace = RoundTrace(rt.round, nodes=sum(rt.n_nodes(t) for t in rt.turns))
        if target is not None:
            trace.budget = target if rt is tree.rounds[0] else target * budget
        groups = None
        if params.method in FULL_WIDTH and target is None:  # (parts iterate a fixed number of times)
            groups = root_groups(rt, solve_room(dev, solver_memory))
        if groups is not None:
            trace.parts = len(groups)
            avg, suffix, snapshots = _solve_in_parts(rt, groups, ends, params, dev, trace, progress, options)
            iterations[rt.round] = params.iterations
        else:
            avg, suffix, snapshots, iterations[rt.round] = _solve_whole(rt, ends, params, dev, trace, progress, options)
        _finish_round(rt, trace, snapshots, avg, suffix, tree.device, strategy, suffixes)
        suffix = suffixes[rt.round]
        trace.seconds = time.perf_counter() - t_round
        traces.append(trace)
        del avg, snapshots  # (on a GPU, the next round's solver needs the room)
    traces.reverse()
    root_value = float(suffix[0][0])
    nash = float(suffix[1][0] - suffix[2][0])  # exact best responses of the whole game, round by round
    seconds = time.perf_counter() - t0
    return CFRResult(tree, params, strategy, root_value, traces, nash, iterations, seconds, suffix=suffixes)


def _solve_whole(
    rt: RoundTree, ends, params: CFRParams, dev: torch.device, trace: RoundTrace, progress, options: dict
) -> tuple[list[torch.Tensor], tuple[torch.Tensor, torch.Tensor, torch.Tensor], list[torch.Tensor], int]:
    """A round solved by one solver (:func:`round_solver`) until its iteration cap or, with a
    target, until half its suffix gap is within ``trace.budget`` (focused on the lagging roots
    between checks): its average strategy, its roots' suffix values (V, A, B), the MSE trace's
    snapshots and the iterations run, with ``trace`` filled at each check."""
    target = params.target_exploitability
    solver = round_solver(rt, ends[0], params, dev, **options)
    ta, tb = (x.to(device=dev, dtype=solver.dtype) for x in ends[1:])
    sample = _mse_sample([int(L.parent.shape[0]) for L in solver.layers], params.seed, solver.device)
    snapshots = []
    measures = _RoundMeasures(ta, tb)
    limit = params.iterations if params.iterations is not None else params.max_iterations
    suffix = None
    while solver.it < limit:
        solver.iterate()
        expl = None
        if solver.it % params.check_every == 0 or solver.it == limit:
            with_suffix = target is not None or solver.it == limit
            expl = _check(solver, measures, with_suffix, trace, sample, snapshots)
            if with_suffix:
                suffix = measures.suffix
        if progress is not None:
            progress(rt.round, solver.it, expl)
        if expl is not None and target is not None:
            if trace.suffix_gap[-1] / 2 <= trace.budget:
                break
            _focus_on_laggards(solver, measures.suffix, 2 * trace.budget)  # (on NashConv's scale)
    solver.unfocus()
    # (the loop ends on a checkpoint: limit reached or budget met; suffix is of the final average)
    return measures.avg, suffix, snapshots, solver.it


def _check(
    solver: RoundCFR, measures: _RoundMeasures, with_suffix: bool, trace: RoundTrace, sample, snapshots
) -> float:
    """A checkpoint of a whole round's solve: its measures (the suffix values too ``with_suffix``)
    into ``trace`` and an MSE snapshot of the ``sample`` of its edges; the round's exploitability
    (NashConv / 2, worst root)."""
    measures.measure(solver, with_suffix=with_suffix)
    per_root = measures.own[0] - measures.own[1]  # NashConv per root
    nash = float(per_root.max())
    trace.iterations.append(solver.it)
    trace.nash_conv.append(nash)
    trace.mean_nash_conv.append(float(per_root.mean()))
    snapshots.append(torch.cat([a[s] for a, s in zip(measures.avg, sample, strict=True)]).cpu())
    if with_suffix:
        suffix = measures.suffix
        trace.suffix_gap.append(float((suffix[1] - suffix[0]).max() + (suffix[0] - suffix[2]).max()))
    return nash / 2


def _finish_round(rt, trace, snapshots, avg, suffix, device, strategy, suffixes) -> None:
    """Record a solved round: its MSE trace, its suffix values and its average strategy (on the
    tree's ``device``) into ``strategy`` and ``suffixes``."""
    final = snapshots[-1]
    trace.mse_to_final = [float(((s - final) ** 2).mean()) if final.numel() else 0.0 for s in snapshots]
    suffixes[rt.round] = tuple(x.to(device=device, dtype=torch.float32) for x in suffix)
    for t, a in zip(rt.play_turns, avg, strict=True):
        strategy[(rt.round, t)] = a.to(device=device, dtype=torch.float32)


def _solve_in_parts(
    rt: RoundTree,
    groups: list[torch.Tensor],
    ends,
    params: CFRParams,
    dev: torch.device,
    trace: RoundTrace,
    progress,
    options: dict,
) -> tuple[list[torch.Tensor], tuple[torch.Tensor, torch.Tensor, torch.Tensor], list[torch.Tensor]]:
    """A tree-like round solved one group of its roots at a time (:mod:`pasur.solve.round_parts`):
    the whole round's average strategy, its roots' suffix values (V, A, B) and the MSE trace's
    snapshots, each the same as a solve of the whole round, and ``trace`` filled as that would."""
    limit = params.iterations
    turns = rt.play_turns
    n_roots = rt.n_nodes(rt.start_turn)
    store = rt.edg[rt.end_turn].device  # where the assembled average waits (the tree's device)
    avg = [torch.empty(rt.n_edges_at(t), dtype=torch.float32, device=store) for t in turns]
    sample = _mse_sample([rt.n_edges_at(t) for t in turns], params.seed, store)
    checkpoints = [it for it in range(1, limit + 1) if it % params.check_every == 0 or it == limit]
    own = torch.empty(len(checkpoints), n_roots, dtype=torch.float32, device=dev)  # NashConv per root
    snapshots = [torch.empty(sum(int(s.shape[0]) for s in sample)) for _ in checkpoints]
    offsets = [0]
    for s in sample:
        offsets.append(offsets[-1] + int(s.shape[0]))
    suffix = tuple(torch.empty(n_roots, dtype=torch.float32, device=dev) for _ in range(3))
    for p, roots in enumerate(groups):
        part = round_part(rt, roots)
        term = part.terminal
        solver = RoundCFR(rt, gather(ends[0].to(store), term), params, dev, part=part, **options)
        ta, tb = (gather(x.to(store), term).to(device=dev, dtype=solver.dtype) for x in ends[1:])
        # the sampled edges that lie in this part: (place in the sample, index in the part's layer)
        hits = []
        for sel, s in zip(part.edges, sample, strict=True):
            pos = torch.searchsorted(sel, s)
            inside = pos < sel.shape[0]
            found = torch.zeros_like(inside)
            found[inside] = gather(sel, pos[inside]) == s[inside]
            hits.append((torch.nonzero(found).squeeze(1).cpu(), pos[found].to(dev)))
        measures = _RoundMeasures(ta, tb)
        roots_dev = roots.to(dev)
        k = 0
        while solver.it < limit:
            solver.iterate()
            if solver.it == checkpoints[k]:
                measures.measure(solver, with_suffix=solver.it == limit)
                own[k].index_copy_(0, roots_dev, measures.own[0] - measures.own[1])
                for i, (where, at) in enumerate(hits):
                    snapshots[k][offsets[i] + where] = gather(measures.avg[i], at).cpu()
                k += 1
            if progress is not None:
                progress(rt.round, (p * limit + solver.it) // len(groups), None)
        for full, mine in zip(suffix, measures.suffix, strict=True):
            full.index_copy_(0, roots_dev, mine)
        for full, mine, sel in zip(avg, measures.avg, part.edges, strict=True):
            full.index_copy_(0, sel, mine.to(store))
        del solver, measures, part, hits
    for k, it in enumerate(checkpoints):
        trace.iterations.append(it)
        trace.nash_conv.append(float(own[k].max()))
        trace.mean_nash_conv.append(float(own[k].mean()))
    trace.suffix_gap.append(float((suffix[1] - suffix[0]).max() + (suffix[0] - suffix[2]).max()))
    return avg, suffix, snapshots


class _RoundMeasures:
    """A round's measures at its checkpoints, per root: the best responses against the later
    rounds' fixed values (the round's own NashConv) and the suffix values (V, A, B); and
    the average strategy. While the solver is focused on a tree-like round, only the roots it
    iterates are measured again (the others have not changed); otherwise the whole round."""

    def __init__(self, ta: torch.Tensor, tb: torch.Tensor) -> None:
        self.ta, self.tb = ta, tb
        self.own: list[torch.Tensor] | None = None
        self.suffix: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
        self.avg: list[torch.Tensor] | None = None

    def measure(self, solver: RoundCFR, with_suffix: bool) -> None:
        partial = solver.focused and solver.tree_like and self.avg is not None and self.suffix is not None
        if not partial:
            solver.unfocus()
            self.avg = None  # (the round's whole average: 4 bytes an edge not held twice)
        avg = solver.average_strategy()
        br = (solver.best_response(avg, ALEX), solver.best_response(avg, 1 - ALEX))
        if not partial:
            self.avg, self.own = avg, [x.clone() for x in br]
            if with_suffix:
                self.suffix = tuple(x.clone() for x in _suffix(solver, avg, self.ta, self.tb, br))
            return
        ids, term = solver.root_ids, solver.terminal_ids
        sfx = _suffix(solver, avg, gather(self.ta, term), gather(self.tb, term), br)
        for full, part in zip((*self.own, *self.suffix), (*br, *sfx), strict=True):
            full.index_copy_(0, ids, part)
        for full, part, sel in zip(self.avg, avg, solver.edge_ids, strict=True):
            full.index_copy_(0, sel, part)


#: roots frozen at a round's first focus may use this share of its budget, split between the two
#: best-response gains in proportion to their worst values then
FREEZE_SHARE = 0.8
#: focus only when the roots still iterated are at most this share of those iterated now
FOCUS_BELOW = 0.7


def _focus_on_laggards(solver: RoundCFR, suffix, budget: float) -> None:
    """Iterate on only the roots whose suffix best-response gains (``A - V``, ``V - B``) are not
    yet within their thresholds: the others already fit in the budget, and the round's work
    shrinks to the part below the laggards. The thresholds are fixed at the round's first focus
    (frozen roots of a tree-like round never change again); the stopping rule measures all roots.
    ``budget`` is on the suffix gap's (NashConv's) scale: twice the round's exploitability budget."""
    v, a, b = suffix
    ga, gb = a - v, v - b
    if getattr(solver, "freeze", None) is None:
        ma, mb = max(float(ga.max()), 0.0), max(float(gb.max()), 0.0)
        share = 0.5 if ma + mb == 0 else ma / (ma + mb)
        solver.freeze = (FREEZE_SHARE * budget * share, FREEZE_SHARE * budget * (1 - share))
    active = (ga > solver.freeze[0]) | (gb > solver.freeze[1])
    if solver.focused and solver.tree_like:
        active = active[solver.root_ids]  # narrow the focus; frozen roots stay frozen
    n = int(active.sum())
    if 0 < n <= FOCUS_BELOW * active.shape[0]:
        solver.focus(active)


def _suffix(solver: RoundCFR, avg, ta, tb, br) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The round's roots under ``avg``: its value ``V`` and the suffix best responses ``A``, ``B``
    (the round's best responses with the later rounds' suffix best responses at its end). In the
    last round these are the round's own best responses ``br``."""
    v = solver.values(avg)
    if ta is solver.terminal or torch.equal(ta, solver.terminal):
        a = br[0]
    else:
        a = solver.best_response(avg, ALEX, ta)
    if tb is solver.terminal or torch.equal(tb, solver.terminal):
        b = br[1]
    else:
        b = solver.best_response(avg, 1 - ALEX, tb)
    return v, a, b


def _mse_sample(sizes: list[int], seed: int, device: torch.device) -> list[torch.Tensor]:
    """Per layer (of ``sizes`` edges), the edges whose probabilities the MSE trace follows: all,
    or about a million."""
    total = sum(sizes)
    out = []
    g = torch.Generator().manual_seed(seed)
    for e in sizes:
        if total <= MSE_SAMPLE:
            out.append(torch.arange(e, device=device))
        else:
            k = max(1, e * MSE_SAMPLE // total)
            out.append(torch.randperm(e, generator=g)[:k].to(device))
    return out
