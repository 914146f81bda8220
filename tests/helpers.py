"""Small builders shared by tests: reach a position, naive minimax."""

from __future__ import annotations

import contextlib
import os
import random

import pytest
import torch

from pasur.game.cards import Deck
from pasur.game.state import ALEX, GameState


def accelerators() -> list[str]:
    """The devices the device-conformance tests check against the CPU: the list in
    ``PASUR_TEST_DEVICES`` (comma-separated), else every CUDA device torch sees, else the CPU
    itself: without a GPU every conformance test runs its code paths on the CPU device (comparing
    the CPU with itself, which still checks each path, its determinism and its ``device``
    plumbing), so none is skipped; :func:`small_on_cpu` sizes the heavy ones down there."""
    listed = os.environ.get("PASUR_TEST_DEVICES")
    if listed:
        return [d.strip() for d in listed.split(",") if d.strip()]
    if torch.cuda.is_available() and torch.cuda.device_count():
        return [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    return ["cpu"]


#: ``@device_param``: a test run once per device of :func:`accelerators`
device_param = pytest.mark.parametrize("device", accelerators())


def small_on_cpu(device: str) -> bool:
    """Whether a device test runs on the CPU device, where its heavy cases are sized down (a
    smaller deck, fewer rows or games: the same code paths) to keep the suite's time; an
    accelerator gets the full sizes."""
    return torch.device(device).type == "cpu"


def on_device(device: str, *tensors: torch.Tensor) -> None:
    """Each tensor is on ``device``, its index too where one is named: a silent fallback to the CPU,
    or to another GPU, fails."""
    want = torch.device(device)
    for t in tensors:
        assert t.device.type == want.type, (t.device, want)
        assert want.index is None or t.device.index == want.index, (t.device, want)


@contextlib.contextmanager
def no_tf32():
    """Full float32 in matrix products and convolutions: cuDNN uses TF32 for float32 convolutions
    by default, which rounds their inputs to 10-bit mantissas (1e-3 relative: a speed trade, not
    a device error)."""
    old = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


def assert_batch_replays(start: GameState, batch) -> None:
    """Every game of a finished self-play batch, replayed move by move through the scalar engine
    from ``start``: each move legal there, and the end the batch's (points and utility)."""
    a, b = batch.points()
    utility = batch.utility()
    for g in range(batch.n):
        s = start
        for action in batch.actions_of(g):
            assert action in s.legal_actions(), (g, action)
            s = s.apply(action)
        assert s.is_terminal and s.points == (int(a[g]), int(b[g])) and s.utility() == int(utility[g])


def boundary_inputs(n: int, clubs_up_to: int = 6):
    """Random boundary positions for the round-boundary value (pool disjoint from the cards still
    to come; each player's clubs 0..``clubs_up_to``, 7 meaning clinched; last capturer 0..2)."""
    g = torch.Generator().manual_seed(0)
    pool = torch.randint(0, 2**20, (n,), generator=g) << 4
    remaining = torch.randint(0, 2**30, (n,), generator=g) << 20
    top = clubs_up_to + 1
    ca, cb = torch.randint(0, top, (n,), generator=g), torch.randint(0, top, (n,), generator=g)
    last = torch.randint(0, 3, (n,), generator=g)
    return pool & ~remaining, ca, cb, last, remaining


def advance(state: GameState, rng: random.Random, *, to_round: int, to_turn: int = 0) -> GameState:
    """Play random legal actions until (round, turn) is reached."""
    while (state.round, state.turn) < (to_round, to_turn):
        state = state.apply(rng.choice(state.legal_actions()))
    return state


def position(seed: int, round_: int, turn: int = 0) -> GameState:
    """A reproducible position of deck ``seed`` reached by random play."""
    rng = random.Random(seed * 7919 + round_ * 31 + turn)
    return advance(GameState.initial(Deck.from_seed(seed)), rng, to_round=round_, to_turn=turn)


def naive_value(state: GameState) -> int:
    """Plain minimax over the scalar engine, no memo, no keys: the slowest, most literal oracle."""
    if state.is_terminal:
        return state.utility()
    vals = [naive_value(state.apply(a)) for a in state.legal_actions()]
    return max(vals) if state.player == ALEX else min(vals)


def tally_points(deck: Deck, moves) -> list[int]:
    """Both players' points, tallied from a game's moves (``(card, captured mask)`` pairs, or
    ``Action``s) straight from the spec's scoring rules, without the engine: piles, Surs (a
    capture by a non-Jack that empties the pool, rounds 0..4), the final sweep to the last
    capturer, clubs bonus 7, Aces and Jacks 1, 2♣ 2, 10♦ 3. An independent check of
    ``GameState.points`` and ``utility``."""
    pool = set(deck.pool)
    piles: list[set[int]] = [set(), set()]
    surs = [0, 0]
    last = None
    for i, move in enumerate(moves):
        player, rnd = i % 2, i // 8
        card, captured = (move.card, move.captured) if hasattr(move, "card") else move
        taken = {c for c in range(52) if captured >> c & 1}
        assert taken <= pool
        if taken:
            pool -= taken
            piles[player] |= taken | {card}
            last = player
            if not pool and card // 4 != 10 and rnd < 5:
                surs[player] += 1
        else:
            pool.add(card)
    if last is not None:
        piles[last] |= pool
    special = {4: 2, 37: 3}  # 2♣, 10♦
    points = []
    for p in (0, 1):
        pts = sum(1 for c in piles[p] if c // 4 in (0, 10)) + sum(v for c, v in special.items() if c in piles[p])
        pts += 7 if sum(1 for c in piles[p] if c % 4 == 0) >= 7 else 0
        points.append(pts + 5 * surs[p])
    return points


def random_strategy(tree, seed: int) -> dict:
    """A non-uniform strategy on ``tree``: random positive weights per edge, normalized per node."""
    import torch

    from pasur.game.state import TURNS_PER_ROUND

    gen = torch.Generator().manual_seed(seed)
    out = {}
    for rt in tree.rounds:
        for t in range(rt.start_turn, TURNS_PER_ROUND):
            parent = rt.edges(t)[0]
            w = torch.rand(parent.shape[0], generator=gen, dtype=torch.float64) ** 3 + 1e-3
            total = torch.zeros(rt.n_nodes(t), dtype=torch.float64).index_add_(0, parent, w)
            out[(rt.round, t)] = (w / total[parent]).float()
    return out


def scalar_profile_value(tree, strategy: dict, start: GameState, responder: int | None = None) -> float:
    """The future value (Alex minus Bob, from ``start``) of ``strategy`` played on ``tree``, with
    ``responder`` (if any) best-responding: a plain recursion over the scalar engine's histories,
    following each history's node in the tensor tree only to read the strategy's probabilities
    (and checking that the tree's actions there are the engine's legal actions, in order).
    Independent of the tensor solvers' backward passes: the oracle for values and best responses."""
    import torch

    from pasur.game.state import TURNS_PER_ROUND

    layers: dict = {}

    def edges_of(rt, t, node):
        """The edges out of ``node`` in edge order: their indices, children and actions."""
        if (rt.round, t) not in layers:
            parent, child, gt_edge = rt.edges(t)
            order = torch.argsort(parent, stable=True)
            start = torch.searchsorted(parent[order], torch.arange(rt.n_nodes(t) + 1))
            g = rt.gt[t]
            acts = list(zip(g.card.long()[gt_edge].tolist(), g.captured[gt_edge].tolist(), strict=True))
            layers[(rt.round, t)] = (order.tolist(), start.tolist(), child.tolist(), acts)
        order, start, child, acts = layers[(rt.round, t)]
        idx = order[start[node] : start[node + 1]]
        return idx, [child[e] for e in idx], [acts[e] for e in idx]

    def walk(s: GameState, node: int) -> float:
        if s.is_terminal:
            return float(s.utility())
        rt, t = tree.round(s.round), s.turn
        idx, kids, acts = edges_of(rt, t, node)
        legal = s.legal_actions()
        assert acts == [(a.card, a.captured) for a in legal], (s.stage, acts)
        vals = []
        for c, a in zip(kids, legal, strict=True):
            nxt = s.apply(a)
            if t + 1 == TURNS_PER_ROUND and s.round < 5:
                c = int(rt.link[c])  # the next round's root
            vals.append(walk(nxt, c))
        if responder is not None and s.player == responder:
            return max(vals) if responder == ALEX else min(vals)
        p = strategy[(s.round, t)][idx].double().tolist()
        return sum(pi * v for pi, v in zip(p, vals, strict=True))

    from pasur.solve.reference import banked_diff

    return walk(start, 0) - banked_diff(start)


def uniform_strategy(tree) -> dict:
    """Every decision of ``tree`` played uniformly: a strategy to write a table from without solving."""
    out = {}
    for rt in tree.rounds:
        for t in range(rt.start_turn, 8):
            parent = rt.edges(t)[0]
            out[(rt.round, t)] = 1.0 / torch.bincount(parent)[parent].float()
    return out
