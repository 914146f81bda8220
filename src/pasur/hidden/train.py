"""Fitting the boundary value (:mod:`pasur.hidden.boundary`) backwards from the last round.

1. Positions at the end of rounds 0..4 come from games of the heuristic and greedy players (with
   some random moves, for variety).
2. For round 4 down to 0: each position gets ``deals`` random deals of the next round from its
   undealt cards; that round is solved open-hand (:func:`~pasur.hidden.roundsolve.solve_round`,
   many positions in one batch), exactly to the end in round 5 and with the network already
   fitted for the next boundary before; its value is the target, and a network is fitted to the
   targets of this boundary (mean squared error, a tenth of the positions held out).

What it learns is the expected value of the next rounds when each round is played open-hand
but its deal is unknown: the quantity a round-horizon PIMC search needs at the boundary.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from pasur.game.cards import Deck
from pasur.game.state import FINAL_ROUND, GameState
from pasur.hidden.boundary import BoundaryNet, LearnedBoundary, features
from pasur.hidden.epochs import run_epochs
from pasur.hidden.game import HiddenGame
from pasur.hidden.roundsolve import Roots, solve_round
from pasur.solve.tree import normalize_clubs


def collect_positions(games: int, seed: int = 0) -> dict[int, np.ndarray]:
    """Per boundary round r (0..4): rows (pool, Alex clubs, Bob clubs, last, remaining) at the
    end of round r of ``games`` games (heuristic or greedy seats, 15 % random moves)."""
    from pasur.hidden.agents import GreedyAgent
    from pasur.hidden.heuristic import HeuristicAgent

    rng = random.Random(seed)
    players = [HeuristicAgent(), GreedyAgent()]
    rows: dict[int, list] = {r: [] for r in range(FINAL_ROUND)}
    for _ in range(games):
        deck = Deck.from_seed(rng.randrange(2**31))
        seats = (rng.choice(players), rng.choice(players))
        game = HiddenGame(deck)
        while not game.is_terminal:
            s = game.state
            if rng.random() < 0.15:
                action = rng.choice(s.legal_actions())
            else:
                action = seats[s.player].choose(game.observation(s.player))
            game.apply(action)
            after = game.state
            if after.turn == 0 and after.round > s.round:  # a new deal: record the boundary
                rows[s.round].append(_boundary_row(after))
    return {r: np.array(v, dtype=np.int64) for r, v in rows.items()}


def _boundary_row(s: GameState) -> list[int]:
    ca, cb = s.clubs
    last = 0 if s.last_capturer is None else s.last_capturer + 1
    return [s.pool, ca, cb, last, s.hands[0] | s.hands[1] | s.undealt()]


def _deal(remaining: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random next-round deal from each row's undealt cards: Alex's hand, Bob's, what is left."""
    alex, bob = np.zeros(len(remaining), np.int64), np.zeros(len(remaining), np.int64)
    for i, m in enumerate(remaining.tolist()):
        cards = [c for c in range(52) if (m >> c) & 1]
        pick = rng.permutation(cards)[:8]
        alex[i] = sum(1 << int(c) for c in pick[:4])
        bob[i] = sum(1 << int(c) for c in pick[4:])
    return alex, bob, remaining & ~(alex | bob)


def targets(
    rows: np.ndarray, round_: int, next_value, deals: int, rng: np.random.Generator, chunk: int = 2048
) -> np.ndarray:
    """Values of the round after boundary ``round_`` from ``rows``, one per row and deal."""
    rows = np.repeat(rows, deals, axis=0)
    out = np.empty(len(rows))
    for lo in range(0, len(rows), chunk):
        part = rows[lo : lo + chunk]
        alex, bob, left = _deal(part[:, 4], rng)
        t = lambda x: torch.as_tensor(np.ascontiguousarray(x), dtype=torch.int64)  # noqa: E731
        roots = Roots(
            round=round_ + 1,
            turn=0,
            hands=(t(alex), t(bob)),
            pool=t(part[:, 0]),
            clubs=(t(part[:, 1]), t(part[:, 2])),
            last=t(part[:, 3]),
            remaining=t(left),
            group=torch.arange(len(part)),
            weight=torch.ones(len(part), dtype=torch.float64),
        )
        sol = solve_round(roots, next_value)
        out[lo : lo + len(part)] = torch.nan_to_num(sol.q, nan=float("-inf")).amax(1).numpy()
    return out


def fit(net: nn.Module, x: torch.Tensor, y: torch.Tensor, epochs: int, seed: int) -> dict:
    """Adam on mean squared error, a tenth held out; returns the held-out RMSE and the RMSE of
    predicting the mean."""
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(x), generator=g)
    n_val = max(1, len(x) // 10)
    val, tr = perm[:n_val], perm[n_val:]
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-5)
    run_epochs(net, opt, tr, g, epochs, 256, lambda b: nn.functional.mse_loss(net(x[b]).squeeze(1), y[b]))
    with torch.no_grad():
        rmse = float(nn.functional.mse_loss(net(x[val]).squeeze(1), y[val]).sqrt())
        base = float((y[val] - y[tr].mean()).pow(2).mean().sqrt())
    return {"val_rmse": round(rmse, 3), "val_rmse_of_mean": round(base, 3), "samples": len(x)}


def train_boundary(
    games: int = 12_000,
    deals: int = 2,
    epochs: int = 30,
    seed: int = 0,
    hidden: int = 128,
    on_step: Callable[[str], None] | None = None,
) -> tuple[LearnedBoundary, dict]:
    """The whole procedure of the module docstring; returns the boundary and a report."""
    say = on_step or (lambda _: None)
    torch.manual_seed(seed)
    t0 = time.perf_counter()
    say(f"playing {games:,} games for positions")
    positions = collect_positions(games, seed)
    net = BoundaryNet(hidden)
    learned = LearnedBoundary(net)
    rng = np.random.default_rng(seed)
    report: dict = {"games": games, "deals": deals, "epochs": epochs, "seed": seed, "rounds": {}}
    for r in reversed(range(FINAL_ROUND)):
        say(f"boundary after round {r}: solving round {r + 1} for {len(positions[r]) * deals:,} deals")
        rows = positions[r]
        y = targets(rows, r, None if r + 1 == FINAL_ROUND else learned, deals, rng)
        rep = np.repeat(rows, deals, axis=0)
        cols = [torch.as_tensor(np.ascontiguousarray(rep[:, i]), dtype=torch.int64) for i in range(5)]
        ca, cb = normalize_clubs(cols[1], cols[2])
        x = features(cols[0], ca, cb, cols[3], cols[4])
        net.train()
        report["rounds"][r] = {
            **fit(net.nets[r], x, torch.as_tensor(y, dtype=torch.float32), epochs, seed),
            "mean_target": round(float(y.mean()), 3),
        }
        net.eval()
        say(f"boundary after round {r}: {report['rounds'][r]}")
    report["seconds"] = round(time.perf_counter() - t0, 1)
    return learned, report
