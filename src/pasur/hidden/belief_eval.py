"""Held-out evaluation of beliefs over the opponent's hand: learned, soft-greedy, uniform.

Each model is a distribution over the opponent's whole hand (exactly ``n`` of the ``N`` unseen
cards), so all three are scored the same way:

- **log-likelihood**: the log-probability (nats) each model gives the opponent's true hand, the
  mean over positions (higher is better; the uniform prior scores ``-log C(N, n)``);
- **calibration**: every unseen card of every position is a forecast ``P(card in hand)`` (the
  model's marginal) and an outcome; forecasts are binned (:data:`EDGES`) and the mean forecast of each
  bin set beside the observed frequency; ``ece`` is the count-weighted mean gap.

The soft-greedy belief is today's ``:infer`` model (:mod:`pasur.hidden.inference`: the opponent
picks an action with probability ∝ exp(0.7 x the points it banks), only this round's moves count),
computed here exactly over every hand it can hold, not from 20 weighted worlds.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from itertools import combinations
from pathlib import Path

import numpy as np
import torch

from pasur.game.cards import cards_of
from pasur.game.rules import Action, card_actions, immediate_points
from pasur.hidden.belief import BeliefModel, hand_log_likelihood, informative, marginals, opponent_steps, replay
from pasur.hidden.infostate import InfoState

MODELS = ("uniform", "soft-greedy", "learned")
#: forecast bins: narrow where most forecasts are (a card is in a hand of 1 to 4 among 10 to 44)
EDGES = (0.0, 0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
#: bins with fewer cards are not drawn (their frequency is noise); they stay in the JSON
MIN_DRAWN = 50


@lru_cache(maxsize=64)
def _combos(n_cards: int, n: int) -> np.ndarray:
    return np.array(list(combinations(range(n_cards), n)), dtype=np.int64).reshape(-1, n)


@lru_cache(maxsize=200_000)
def _z(card: int, pool: int, round_: int, beta: float) -> float:
    """Sum over ``card``'s legal actions of exp(beta x points banked)."""
    return sum(math.exp(beta * immediate_points(a, pool, round_)) for a in card_actions(card, pool))


def soft_greedy(info: InfoState, hand: int, beta: float = 0.7) -> tuple[float, np.ndarray]:
    """The exact soft-greedy posterior: the log-probability of ``hand`` and the marginals ``[52]``."""
    unseen = np.array(cards_of(info.unseen))
    n = info.opponent_hand_size
    steps = opponent_steps(info)
    combos = _combos(unseen.size, n)
    logp = np.zeros(len(combos))
    true_idx = np.flatnonzero([(hand >> int(c)) & 1 for c in unseen])
    true_logp = 0.0
    for s, (card, captured, pool) in enumerate(steps):
        z = np.array([_z(int(c), pool, info.round, beta) for c in unseen])
        later = sum(_z(c, pool, info.round, beta) for c, _, _ in steps[s:])  # still held at step s
        banked = beta * immediate_points(Action(card, captured), pool, info.round)
        logp += banked - np.log(later + z[combos].sum(1))
        true_logp += banked - math.log(later + z[true_idx].sum())
    top = logp.max()
    log_z = top + math.log(np.exp(logp - top).sum())
    p = np.exp(logp - log_z)
    marg = np.zeros(52)
    marg[unseen] = np.bincount(combos.ravel(), weights=np.repeat(p, n), minlength=unseen.size)
    return true_logp - log_z, marg


def uniform(info: InfoState) -> tuple[float, np.ndarray]:
    big, n = info.unseen.bit_count(), info.opponent_hand_size
    marg = np.zeros(52)
    marg[cards_of(info.unseen)] = n / big
    return -math.log(math.comb(big, n)), marg


def score(model: BeliefModel, games: dict[str, np.ndarray], batch: int = 256) -> dict[str, np.ndarray]:
    """Per held-out position (every informative decision, both seats): round, opponent moves seen
    this round, and each model's log-likelihood; per unseen card: round, truth and each forecast."""
    infos, hands, game_of = [], [], []
    for j, (deck, moves) in enumerate(zip(games["decks"], games["moves"], strict=True)):
        for i0, i1, state in replay(deck, moves):
            for p, info in ((0, i0), (1, i1)):
                if informative(info):
                    infos.append(info)
                    hands.append(state.hands[1 - p])
                    game_of.append(j)
    pos: dict[str, list] = {"round": [], "steps": [], "game": game_of[:0], **{m: [] for m in MODELS}}
    cards: dict[str, list] = {"round": [], "truth": [], **{m: [] for m in MODELS}}
    for lo in range(0, len(infos), batch):
        part, hs = infos[lo : lo + batch], hands[lo : lo + batch]
        lg, mask, n = model.logits(part)
        truth = torch.tensor([[h >> c & 1 for c in range(52)] for h in hs], dtype=torch.bool)
        ll = hand_log_likelihood(lg.double(), mask, n, truth).numpy()
        mg = marginals(lg.double(), mask, n).numpy()
        for j, (info, h) in enumerate(zip(part, hs, strict=True)):
            u_ll, u_m = uniform(info)
            s_ll, s_m = soft_greedy(info, h)
            pos["round"].append(info.round)
            pos["game"].append(game_of[lo + j])
            pos["steps"].append(len(opponent_steps(info)))
            for name, v in zip(MODELS, (u_ll, s_ll, float(ll[j])), strict=True):
                pos[name].append(v)
            idx = cards_of(info.unseen)
            cards["round"] += [info.round] * len(idx)
            cards["truth"] += [h >> c & 1 for c in idx]
            for name, m in zip(MODELS, (u_m, s_m, mg[j]), strict=True):
                cards[name] += m[idx].tolist()
    return {**{f"pos_{k}": np.array(v) for k, v in pos.items()}, **{f"card_{k}": np.array(v) for k, v in cards.items()}}


def calibration(p: np.ndarray, y: np.ndarray) -> dict:
    """Per forecast bin: count, mean forecast and observed frequency; and the ECE."""
    b = np.clip(np.searchsorted(EDGES, p, side="right") - 1, 0, len(EDGES) - 2)
    rows, gap = [], 0.0
    for k in range(len(EDGES) - 1):
        sel = b == k
        if sel.any():
            mp, fy = float(p[sel].mean()), float(y[sel].mean())
            rows.append({"bin": [EDGES[k], EDGES[k + 1]], "count": int(sel.sum()), "forecast": round(mp, 4),
                         "observed": round(fy, 4)})  # fmt: skip
            gap += sel.sum() * abs(mp - fy)
    return {"bins": rows, "ece": round(gap / max(1, len(p)), 4)}


def gain(s: dict[str, np.ndarray], sel: np.ndarray) -> list[float]:
    """The learned model's mean log-likelihood minus the soft-greedy one's over the positions
    ``sel``, with a 95 % interval over games (positions of one game are not independent): the
    games' mean differences, 1.96 sd / sqrt(games)."""
    d = s["pos_learned"][sel] - s["pos_soft-greedy"][sel]
    games = s["pos_game"][sel]
    per = np.array([d[games == g].sum() for g in np.unique(games)])
    counts = np.array([(games == g).sum() for g in np.unique(games)])
    mean = d.mean()
    # ratio estimator over games: the variance of per-game sums around mean x count
    half = 1.96 * np.sqrt(((per - mean * counts) ** 2).sum() / (len(per) * (len(per) - 1))) / counts.mean()
    return [round(float(mean), 4), round(float(half), 4)]


def summarize(s: dict[str, np.ndarray]) -> dict:
    """Mean log-likelihood and calibration per round (and over all rounds), and the
    log-likelihood by the number of the opponent's moves seen this round."""
    out: dict = {"by_round": {}, "by_steps": {}}
    groups = [(str(r), s["pos_round"] == r, s["card_round"] == r) for r in sorted(set(s["pos_round"].tolist()))]
    groups.append(("all", np.ones_like(s["pos_round"], bool), np.ones_like(s["card_round"], bool)))
    for key, ps, cs in groups:
        out["by_round"][key] = {
            "positions": int(ps.sum()),
            "games": len(np.unique(s["pos_game"][ps])),
            "log_likelihood": {m: round(float(s[f"pos_{m}"][ps].mean()), 4) for m in MODELS},
            "learned_minus_soft_greedy": gain(s, ps),
            "calibration": {m: calibration(s[f"card_{m}"][cs], s["card_truth"][cs]) for m in MODELS},
        }
    for k in sorted(set(s["pos_steps"].tolist())):
        ps = s["pos_steps"] == k
        out["by_steps"][str(k)] = {
            "positions": int(ps.sum()),
            "log_likelihood": {m: round(float(s[f"pos_{m}"][ps].mean()), 4) for m in MODELS},
            "learned_minus_soft_greedy": gain(s, ps),
        }
    return out


def table(summary: dict) -> str:
    """The Markdown tables by round and by the opponent's moves seen (docs/hidden.md copies them)."""
    head = (
        "| round | positions | uniform | soft-greedy | learned | learned − soft-greedy (95 % interval over games) "
        "| ECE uniform | ECE soft-greedy | ECE learned |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = []
    for key, r in summary["by_round"].items():
        ll, cal = r["log_likelihood"], r["calibration"]
        g, h = r["learned_minus_soft_greedy"]
        lines.append(
            f"| {key} | {r['positions']:,} | {ll['uniform']:.3f} | {ll['soft-greedy']:.3f} | {ll['learned']:.3f} | "
            f"{g:+.3f} ± {h:.3f} | {cal['uniform']['ece']:.4f} | {cal['soft-greedy']['ece']:.4f} | "
            f"{cal['learned']['ece']:.4f} |"
        )
    head2 = (
        "| opponent's moves seen this round | positions | uniform | soft-greedy | learned "
        "| learned − soft-greedy |\n|---|---:|---:|---:|---:|---:|\n"
    )
    lines2 = []
    for key, r in summary["by_steps"].items():
        ll = r["log_likelihood"]
        g, h = r["learned_minus_soft_greedy"]
        lines2.append(
            f"| {key} | {r['positions']:,} | {ll['uniform']:.3f} | {ll['soft-greedy']:.3f} | {ll['learned']:.3f} | "
            f"{g:+.3f} ± {h:.3f} |"
        )
    return head + "\n".join(lines) + "\n\n" + head2 + "\n".join(lines2) + "\n"


def plot(summary: dict, path: Path) -> None:
    """Calibration curves, one panel per round and one for all rounds (bins of at least
    :data:`MIN_DRAWN` cards; forecasts above 0.6 are rare)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(summary["by_round"])
    fig, axes = plt.subplots(2, (len(keys) + 1) // 2, figsize=(3.2 * ((len(keys) + 1) // 2), 6.4), squeeze=False)
    for ax, key in zip(axes.ravel(), keys, strict=False):
        for m, style in zip(MODELS, ("s:", "^--", "o-"), strict=True):
            bins = [b for b in summary["by_round"][key]["calibration"][m]["bins"] if b["count"] >= MIN_DRAWN]
            ax.plot([b["forecast"] for b in bins], [b["observed"] for b in bins], style, label=m, ms=4)
        ax.plot([0, 0.6], [0, 0.6], color="grey", lw=0.5)
        ax.set_title(f"round {key}" if key != "all" else "all rounds", fontsize=9)
        ax.set_xlim(0, 0.6)
        ax.set_ylim(0, 0.6)
        ax.set_xlabel("forecast P(card in hand)", fontsize=8)
        ax.set_ylabel("observed frequency", fontsize=8)
    for ax in axes.ravel()[len(keys) :]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write(summary: dict, meta: dict, folder: Path) -> None:
    """``results.json``, ``table.md`` and ``calibration.png`` in ``folder``."""
    from pasur.common.outputs import atomic_path, write_text_atomic

    write_text_atomic(folder / "results.json", json.dumps({**meta, **summary}, indent=1) + "\n")
    write_text_atomic(folder / "table.md", table(summary))
    with atomic_path(folder / "calibration.png") as tmp:
        plot(summary, tmp)
