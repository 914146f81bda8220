"""Exact CFR for the whole hidden-hand game of a small variant, vectorized over its histories.

The tree (:mod:`pasur.hidden.history_tree`) lists every history level by level: chance deals at
the root and at each deal's end, the players' decisions in between, and the terminal histories.
An iteration is one tensor pass per update group, as in the poker core
(:mod:`pasur.poker.dense_cfr`): the reach of every history forward (one gather and product per
level), the values backward (one ``index_add`` per level), and each information set's
counterfactual action values summed over its histories in one ``index_add``. The update rules are
those of :mod:`pasur.common.regret` (every method: the full-width ones, the predictive and the
scheduled ones), on a dense table ``[information sets, actions]`` with a legal mask, alternating
(player 0, then player 1 against its new strategy, as OpenSpiel) or simultaneous updates.

Exact best responses are computed the same way, bottom up, the responder choosing at each of its
information sets the action of the best summed value over the histories it cannot tell apart;
``nash_conv`` = Alex's best response minus Bob's (Alex's points), ``exploitability`` = half of it
(``docs/conventions.md``). Everything runs on one ``device``.

>>> from pasur.game.variants import Variant
>>> from pasur.hidden.history_tree import build_tree
>>> micro = Variant("micro", "A T J of clubs and diamonds", (0, 9, 10), (0, 1), 1, 2, 2, ((0, 1), (1, 1)), 2, 1, 1)
>>> solver = HiddenCFR(build_tree(micro), HiddenCFRConfig("dcfr"))
>>> before = solver.exploitability(solver.average_policy())
>>> solver.iterate(30)
>>> solver.exploitability(solver.average_policy()) < before / 5
True
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from pasur.common import regret as kernel
from pasur.common.errors import PasurInputError
from pasur.hidden.history_tree import HistoryTree, action_counts

#: instantaneous regrets below this times the summed magnitudes of the values are rounding noise
SNAP = 1e-12
#: every method of the regret kernel
ALL_METHODS = (*kernel.METHODS, *kernel.PREDICTIVE, *kernel.SCHEDULED)


@dataclass
class HiddenCFRConfig:
    """A run's rules: ``alpha`` and ``gamma`` left ``None`` take the method's published defaults
    (:func:`pasur.common.regret.default_parameters`); ``horizon``, the run's length, which the
    scheduled methods need."""

    method: str = "dcfr"
    updates: str = "alternating"
    alpha: float | None = None
    beta: float = kernel.DCFR_DEFAULTS[1]
    gamma: float | None = None
    horizon: int | None = None

    def __post_init__(self) -> None:
        if self.method not in ALL_METHODS:
            raise PasurInputError(f"unknown method {self.method!r} (known: {', '.join(ALL_METHODS)})")
        if self.method in kernel.SCHEDULED and (self.horizon is None or self.horizon < 1):
            raise PasurInputError(f"{self.method} schedules its parameters over the run's length: give --iterations")
        if self.updates not in kernel.UPDATES:
            raise PasurInputError(f"updates must be one of {', '.join(kernel.UPDATES)}, not {self.updates!r}")
        alpha, gamma = kernel.default_parameters(self.method)
        self.alpha = alpha if self.alpha is None else self.alpha
        self.gamma = gamma if self.gamma is None else self.gamma


@dataclass
class _Level:
    """One level on the device: how its nodes were reached and, for a decision level, the rows
    (information sets of both players in one table) of its nodes."""

    kind: str
    parent: torch.Tensor
    prob: torch.Tensor | None  # children of a chance level
    slot: torch.Tensor | None  # children of a decision level: row * A + action
    edge: torch.Tensor | None
    rows: torch.Tensor | None  # decision levels
    value: torch.Tensor | None  # the terminal level


class HiddenCFR(kernel.UpdatePasses):
    """CFR's tables over a :class:`~pasur.hidden.history_tree.HistoryTree` on ``device``: one
    row per information set (Alex's, then Bob's), one column per action (legal ones masked)."""

    def __init__(
        self, tree: HistoryTree, config: HiddenCFRConfig | None = None, device: str | torch.device = "cpu"
    ) -> None:
        self.tree, self.config = tree, config or HiddenCFRConfig()
        self.device, self.dtype = torch.device(device), torch.float64
        self.iteration = 0
        n0, n1 = tree.n_infosets
        self.n_rows, self.A = n0 + n1, tree.max_actions
        self.row_offset = (0, n0)
        counts = np.concatenate([action_counts(tree.actions[0]), action_counts(tree.actions[1])])
        legal = np.arange(self.A)[None, :] < counts[:, None]
        self.legal = torch.as_tensor(legal, dtype=self.dtype, device=self.device)
        owner = np.repeat([0, 1], [n0, n1])
        self.mine = [torch.as_tensor(owner == p, device=self.device)[:, None] for p in (0, 1)]
        self.levels = self._levels()
        self.regret = torch.zeros(self.n_rows, self.A, dtype=self.dtype, device=self.device)
        self.strategy_sum = torch.zeros_like(self.regret)
        self.sigma = kernel.regret_matching(self.regret, self.legal)  # uniform
        self._scratch = torch.empty_like(self.regret)

    def _levels(self) -> list[_Level]:
        """The tree's arrays as tensors on the device, with each decision edge's table slot."""
        t, dev = self.tree, self.device
        out: list[_Level] = []
        for k, lv in enumerate(t.levels):
            above = t.levels[k - 1].kind if k else None
            rows = None
            if lv.kind in ("alex", "bob"):
                rows = torch.as_tensor(lv.infoset + self.row_offset[lv.kind == "bob"], device=dev)
            slot = edge = prob = None
            if above in ("alex", "bob"):
                edge = torch.as_tensor(lv.edge, device=dev)
                slot = out[k - 1].rows[torch.as_tensor(lv.parent, device=dev)] * self.A + edge
            elif above == "chance":
                prob = torch.as_tensor(lv.prob, dtype=self.dtype, device=dev)
            value = torch.as_tensor(lv.value, dtype=self.dtype, device=dev) if lv.kind == "terminal" else None
            out.append(_Level(lv.kind, torch.as_tensor(lv.parent, device=dev), prob, slot, edge, rows, value))
        return out

    # ------------------------------------------------------------------ passes

    def _weight(self, k: int, flat: torch.Tensor) -> torch.Tensor:
        """The probability of each edge into level ``k`` under the table ``flat``."""
        lv = self.levels[k]
        return lv.prob if lv.prob is not None else flat.take(lv.slot)

    def reach(self, policy: torch.Tensor, ones_for: int | None = None) -> list[torch.Tensor]:
        """Per level, ``[3, nodes]``: each player's own reach and chance's, under ``policy``
        (``ones_for``: that player's own probabilities taken as 1, for its best response)."""
        flat = policy.reshape(-1)
        out = [torch.ones(3, 1, dtype=self.dtype, device=self.device)]
        for k in range(1, len(self.levels)):
            lv, above = self.levels[k], self.levels[k - 1].kind
            r = out[-1][:, lv.parent]
            who = 2 if above == "chance" else ("alex", "bob").index(above)
            if who != ones_for:
                r[who] *= self._weight(k, flat)
            out.append(r)
        return out

    def values(self, policy: torch.Tensor) -> list[torch.Tensor]:
        """Per level, every history's expected final margin (Alex's points minus Bob's) under
        ``policy`` for both players."""
        flat = policy.reshape(-1)
        out = [self.levels[-1].value]
        for k in range(len(self.levels) - 1, 0, -1):
            lv = self.levels[k]
            n_above = len(self.levels[k - 1].parent)
            out.append(
                torch.zeros(n_above, dtype=self.dtype, device=self.device).index_add_(
                    0, lv.parent, self._weight(k, flat) * out[-1]
                )
            )
        return out[::-1]

    def _action_values(self, players: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Counterfactual action values ``[rows, A]`` of the updated players' rows (the
        opponent's and chance's reach times the player's own margin), their summed magnitudes,
        and each row's own reach summed over its histories."""
        reach, values = self.reach(self.sigma), self.values(self.sigma)
        q = torch.zeros(self.n_rows * self.A, dtype=self.dtype, device=self.device)
        q_abs, own = torch.zeros_like(q), torch.zeros(self.n_rows, dtype=self.dtype, device=self.device)
        for k in range(1, len(self.levels)):
            above = self.levels[k - 1]
            if above.kind not in ("alex", "bob") or ("alex", "bob").index(above.kind) not in players:
                continue
            p = ("alex", "bob").index(above.kind)
            lv = self.levels[k]
            cf = reach[k - 1][1 - p][lv.parent] * reach[k - 1][2][lv.parent] * values[k]
            cf = cf if p == 0 else -cf
            q.index_add_(0, lv.slot, cf)
            q_abs.index_add_(0, lv.slot, cf.abs())
            own.index_add_(0, above.rows, reach[k - 1][p])
        return q.view(self.n_rows, self.A), q_abs.view(self.n_rows, self.A), own

    def _pass(self, players: tuple[int, ...]) -> None:
        """One traversal for ``players`` and their regret and average updates."""
        c, t = self.config, self.iteration
        q, q_abs, own = self._action_values(players)
        sig = self.sigma
        inst = q - (sig * q).sum(1, keepdim=True)
        noise = (q_abs + (sig * q_abs).sum(1, keepdim=True)).mul_(SNAP)
        inst.masked_fill_(inst.abs() <= noise, 0.0)
        rows = None if len(players) == 2 else self.mine[players[0]]
        f = kernel.average_discount(c.method, t, c.gamma, c.horizon)
        if f != 1.0:
            self.strategy_sum.mul_(f if rows is None else kernel.row_factor(rows, f, sig))
        self.strategy_sum.addcmul_(sig, own[:, None], value=kernel.average_weight(c.method, t, c.gamma))
        if kernel.is_predictive(c.method):
            inst.mul_(self.legal)
            new = kernel.predictive_update_(self.regret.clone(), inst, c.method, t, c.alpha)
            strategy = kernel.regret_matching(kernel.predicted_regret(new, inst, c.method, t, c.alpha), self.legal)
            self.regret = new if rows is None else torch.where(rows, new, self.regret)
            self.sigma = strategy if rows is None else torch.where(rows, strategy, sig)
            return
        self.regret.addcmul_(inst, self.legal)
        mask = None if rows is None or c.method == "cfr+" else rows
        kernel.discount_(
            self.regret, c.method, t, alpha=c.alpha, beta=c.beta, mask=mask, scratch=self._scratch, horizon=c.horizon
        )
        self.sigma = kernel.regret_matching(self.regret, self.legal)

    # ------------------------------------------------------------------ policies and measures

    def average_policy(self) -> torch.Tensor:
        """The average strategy ``[rows, A]`` (uniform where a row was never reached)."""
        return kernel.normalize(self.strategy_sum, self.legal)

    def value(self, policy: torch.Tensor) -> float:
        """Alex's expected margin when both play ``policy``."""
        return float(self.values(policy)[0][0])

    def best_response(self, policy: torch.Tensor, player: int) -> tuple[float, torch.Tensor]:
        """``player``'s best response to the other's part of ``policy``: its value (Alex's
        margin: the most for Alex, the least for Bob) and the pure strategy ``[rows, A]`` (the
        responder's rows; the other rows as in ``policy``). Ties go to the first action."""
        reach, flat = self.reach(policy, ones_for=player), policy.reshape(-1)
        name = ("alex", "bob")[player]
        best = policy.clone()
        v = self.levels[-1].value
        for k in range(len(self.levels) - 1, 0, -1):
            lv, above = self.levels[k], self.levels[k - 1]
            out = torch.zeros(len(above.parent), dtype=self.dtype, device=self.device)
            if above.kind != name:
                v = out.index_add_(0, lv.parent, self._weight(k, flat) * v)
                continue
            opp = reach[k - 1][1 - player][lv.parent] * reach[k - 1][2][lv.parent]
            q = torch.zeros(self.n_rows * self.A, dtype=self.dtype, device=self.device)
            q = q.index_add_(0, lv.slot, opp * v).view(self.n_rows, self.A)
            sign = 1.0 if player == 0 else -1.0
            choice = torch.where(self.legal > 0, sign * q, torch.full_like(q, -torch.inf)).argmax(1)
            taken = lv.edge == choice[above.rows[lv.parent]]
            v = out.index_add_(0, lv.parent[taken], v[taken])
            chosen_rows = torch.unique(above.rows)
            best[chosen_rows] = torch.nn.functional.one_hot(choice[chosen_rows], self.A).to(self.dtype)
        return float(v[0]), best

    def nash_conv(self, policy: torch.Tensor) -> float:
        """Alex's best-response value minus Bob's (both in Alex's points)."""
        return self.best_response(policy, 0)[0] - self.best_response(policy, 1)[0]

    def exploitability(self, policy: torch.Tensor) -> float:
        """NashConv / 2: what a best-responding opponent wins on average (docs/conventions.md)."""
        return self.nash_conv(policy) / 2


@dataclass
class SolveResult:
    """A run's average strategy, its measures and the trace of its checks."""

    policy: torch.Tensor
    iterations: int
    value: float
    nash_conv: float
    seconds: float
    target_met: bool | None
    trace: list[dict] = field(default_factory=list)

    @property
    def exploitability(self) -> float:
        return self.nash_conv / 2


def solve(
    solver: HiddenCFR,
    iterations: int,
    *,
    target_exploitability: float | None = None,
    check_every: int = 10,
    progress: Callable[[int, float | None], None] | None = None,
) -> SolveResult:
    """Iterate up to ``iterations`` times; with a target, measure the average's exploitability
    every ``check_every`` iterations and stop once it is at most the target."""
    start = time.perf_counter()
    trace: list[dict] = []
    met = None
    while solver.iteration < iterations:
        step = min(check_every if target_exploitability is not None else iterations, iterations - solver.iteration)
        solver.iterate(step)
        if target_exploitability is None:
            continue
        nc = solver.nash_conv(solver.average_policy())
        trace.append(
            {
                "iteration": solver.iteration,
                "nash_conv": nc,
                "exploitability": nc / 2,
                "seconds": time.perf_counter() - start,
            }
        )
        if progress is not None:
            progress(solver.iteration, nc / 2)
        if nc / 2 <= target_exploitability:
            break
    avg = solver.average_policy()
    nc = solver.nash_conv(avg)
    if target_exploitability is not None:
        met = nc / 2 <= target_exploitability
    seconds = time.perf_counter() - start
    if not trace or trace[-1]["iteration"] != solver.iteration:
        trace.append({"iteration": solver.iteration, "nash_conv": nc, "exploitability": nc / 2, "seconds": seconds})
    return SolveResult(avg, solver.iteration, solver.value(avg), nc, seconds, met, trace)


def strategy_table(tree: HistoryTree, policy: torch.Tensor) -> dict[str, list]:
    """The columns of a strategy table: one row per (player, information set, legal action),
    the information set as what its player has seen (:meth:`HistoryTree.describe_infoset`)."""
    table = policy.detach().cpu().numpy()
    cols: dict[str, list] = {k: [] for k in ("player", "infoset", "seen", "action", "card", "captured", "probability")}
    offset = 0
    for p in (0, 1):
        for i, acts in enumerate(tree.actions[p]):
            seen = tree.describe_infoset(p, i)
            for a, act in enumerate(acts):
                cols["player"].append(p)
                cols["infoset"].append(i)
                cols["seen"].append(seen)
                cols["action"].append(str(act))
                cols["card"].append(act.card)
                cols["captured"].append(act.captured)
                cols["probability"].append(float(table[offset + i, a]))
        offset += len(tree.actions[p])
    return cols


def write_strategy(path, tree: HistoryTree, policy: torch.Tensor) -> int:
    """The average strategy as Parquet (written atomically); returns the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pasur.common.outputs import atomic_path

    cols = strategy_table(tree, policy)
    with atomic_path(path) as tmp:
        pq.write_table(pa.table(cols), tmp)
    return len(cols["player"])
