"""A learned belief over the opponent's hand, and worlds sampled from it.

:mod:`pasur.hidden.worlds` treats every unseen card alike; :mod:`pasur.hidden.inference` reweighs
worlds by a hand-set soft-greedy model. Here a small network learns from played games how the
opponent's moves of this round reveal its hand (issue 27, part 1).

The input is built from an :class:`~pasur.hidden.infostate.InfoState` only. Per card: its rank,
suit and points, and, for each move the opponent made this round, what that card could have done
on the pool of that moment (capture or not, its best points, a Sur, clubs) beside what the move
actually banked; per state: round, the opponent's hand size, seat, clubs. Earlier rounds say
nothing about the current hand (every hand is played out whole), so only their totals enter.

Before the opponent moves in a round its hand is a uniform draw from the unseen cards (past play
never depended on it), and each of its moves multiplies the odds of a hand by the likelihood of
that move. The network keeps that shape: a card's logit is a sum over the opponent's moves of this
round of one shared network's output for (card, move), so with no move yet the belief is exactly
uniform, and each move adds its evidence.

The network gives each unseen card a weight ``w_c = exp(logit_c)`` and the belief over hands is
the conditional Bernoulli distribution ``P(H) ∝ prod_{c in H} w_c`` over hands of exactly the
opponent's size ``n``, drawn from the unseen cards. Unlike independent per-card probabilities it
is a true distribution over hands: its normalizer is the elementary symmetric polynomial
``e_n(w)`` (a small dynamic programme), so the exact log-likelihood of a hand is the training loss,
the marginals ``P(c in H)`` (its gradient) sum to ``n``, and whole hands are sampled exactly, card
by card, from the same programme. The rest of the unseen cards go to the undealt stock in uniform
order (nothing seen orders them).

Consistency: the rules make each card's legal actions depend on the card and the pool only
(must-capture is per card), so every past move of the opponent stays legal whatever else it
holds, and any ``n`` unseen cards form a consistent world, as in :mod:`pasur.hidden.worlds`;
:func:`check_consistent` verifies it for sampled worlds anyway.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from torch import nn

from pasur.game.cards import HAND_SIZE, JACK, cards_of, clubs_in, points_in, rank, suit
from pasur.game.rules import Action, card_actions, immediate_points, is_sur
from pasur.hidden.infostate import InfoState
from pasur.hidden.weights import load_net, save_checked
from pasur.hidden.worlds import Worlds, _masks, every_hand, info_seed

#: the weights shipped with the package (written by ``pasur hidden-train belief``)
DEFAULT_WEIGHTS = Path(__file__).with_name("belief-weights.pt")
STEPS = 4  # opponent moves in a round, at most
STEP_FEATURES = 12
IDENTITY = 13 + 4 + 1  # rank, suit, points
CARD_FEATURES = IDENTITY + STEPS * STEP_FEATURES  # and per opponent move of this round
GLOBAL_FEATURES = 6 + 5 + 1 + 1 + 5 + 2
LOGIT_CLIP = 20.0


def _card_table() -> np.ndarray:
    t = np.zeros((52, 17 + 1), np.float32)
    for c in range(52):
        t[c, rank(c)] = 1
        t[c, 13 + suit(c)] = 1
        t[c, 17] = points_in(1 << c) / 3
    return t


CARD_TABLE = _card_table()


@lru_cache(maxsize=200_000)
def card_options(card: int, pool: int, round_: int) -> tuple[float, float, float, float, float]:
    """What ``card`` could do on ``pool``: (captures at all, best points, a Sur possible, most
    clubs taken, most cards taken); the cache serves every observer of the same round."""
    best = sur = clubs = taken = 0
    cap = 0
    for a in card_actions(card, pool):
        if not a.captured:
            continue
        cap = 1
        best = max(best, immediate_points(a, pool, round_))
        sur = max(sur, int(is_sur(a, pool, round_)))
        got = a.captured | (1 << card)
        clubs = max(clubs, clubs_in(got))
        taken = max(taken, got.bit_count())
    return float(cap), float(best), float(sur), float(clubs), float(taken)


def opponent_steps(info: InfoState) -> list[tuple[int, int, int]]:
    """The opponent's moves of this round as (card, captured, pool before the move)."""
    mine = [m for m in info.moves if m.round == info.round]
    pool, pools = info.pool, []
    for m in reversed(mine):  # undo the round's moves to recover the pool before each
        pool = pool | m.captured if m.captured else pool & ~(1 << m.card)
        pools.append(pool)
    pools.reverse()
    opp = 1 - info.player
    return [(m.card, m.captured, p) for m, p in zip(mine, pools, strict=True) if m.player == opp]


def features(info: InfoState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cards [52, CARD_FEATURES], glob [GLOBAL_FEATURES], mask [52])`` of one information state;
    rows of cards the observer has seen are zero and masked out. Nothing but ``info`` is read."""
    unseen = cards_of(info.unseen)
    x = np.zeros((52, CARD_FEATURES), np.float32)
    x[:, :18] = CARD_TABLE
    steps = opponent_steps(info)
    for j, (card, captured, pool) in enumerate(steps[:STEPS]):
        a = Action(card, captured)
        actual = immediate_points(a, pool, info.round)
        lo = 18 + j * STEP_FEATURES
        x[:, lo] = 1
        x[:, lo + 1] = actual / 10
        x[:, lo + 2] = 0 if captured else 1
        x[:, lo + 3] = 1 if rank(card) == JACK else 0  # the move was a Jack
        held = [c for c, _, _ in steps[j + 1 :]]  # cards it held then and played later (known)
        x[:, lo + 4] = max((card_options(c, pool, info.round)[1] for c in held), default=0) / 10
        for c in unseen:
            cap, best, sur, clubs, taken = card_options(c, pool, info.round)
            x[c, lo + 5 : lo + STEP_FEATURES] = (cap, best / 10, sur, clubs / 4, taken / 4, (best - actual) / 10,
                                                 float(best > actual))  # fmt: skip
    mask = np.zeros(52, bool)
    mask[unseen] = True
    x[~mask] = 0
    g = np.zeros(GLOBAL_FEATURES, np.float32)
    g[min(info.round, 5)] = 1
    g[6 + min(info.opponent_hand_size, 4)] = 1
    g[11] = info.player
    g[12] = len(unseen) / 52
    g[13 + min(len(steps), 4)] = 1
    ca, cb = info.clubs
    mine, theirs = (ca, cb) if info.player == 0 else (cb, ca)
    g[18], g[19] = mine / 7, theirs / 7
    return x, g, mask


def batch_features(infos: list[InfoState]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Stacked :func:`features` and the opponent's hand sizes, as tensors."""
    parts = [features(i) for i in infos]
    x = torch.from_numpy(np.stack([p[0] for p in parts]))
    g = torch.from_numpy(np.stack([p[1] for p in parts]))
    m = torch.from_numpy(np.stack([p[2] for p in parts]))
    n = torch.tensor([i.opponent_hand_size for i in infos], dtype=torch.int64)
    return x, g, m, n


class BeliefNet(nn.Module):
    """One network shared by every (card, opponent move of this round): the card's identity, the
    move's features for that card, the move's index and the state's features -> the move's
    evidence for the card; a card's logit is the sum over the moves made (0 with none: uniform)."""

    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.hidden = hidden
        self.mlp = nn.Sequential(
            nn.Linear(IDENTITY + STEP_FEATURES + STEPS + GLOBAL_FEATURES, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        x, g = x.float(), g.float()
        b, c = x.shape[:2]
        steps = x[:, :, IDENTITY:].reshape(b, c, STEPS, STEP_FEATURES)
        parts = [
            x[:, :, None, :IDENTITY].expand(-1, -1, STEPS, -1),
            steps,
            torch.eye(STEPS, device=x.device).expand(b, c, -1, -1),
            g[:, None, None, :].expand(-1, c, STEPS, -1),
        ]
        live = (steps[..., 0] > 0) & (x[:, :, :IDENTITY].abs().sum(2) > 0)[:, :, None]  # moves made, unseen cards
        evidence = torch.zeros(b, c, STEPS, dtype=x.dtype, device=x.device)  # moves not made add nothing
        evidence[live] = self.mlp(torch.cat(parts, 3)[live]).squeeze(1)
        return evidence.sum(2).clamp(-LOGIT_CLIP, LOGIT_CLIP)


def log_esp(logw: torch.Tensor, mask: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """``log e_n(w)`` over the masked cards of each row: the log of the sum, over every hand of
    ``n`` masked cards, of the product of their weights (differentiable)."""
    b = logw.shape[0]
    top = int(n.max()) if b else 0
    neg = torch.finfo(logw.dtype).min / 4
    e = torch.full((b, top + 1), neg, dtype=logw.dtype, device=logw.device)
    e[:, 0] = 0
    for c in range(logw.shape[1]):
        add = torch.logaddexp(e[:, 1:], e[:, :-1] + logw[:, c : c + 1])
        e = torch.cat([e[:, :1], torch.where(mask[:, c : c + 1], add, e[:, 1:])], 1)
    return e.gather(1, n.unsqueeze(1)).squeeze(1)


def hand_log_likelihood(logits: torch.Tensor, mask: torch.Tensor, n: torch.Tensor, hand: torch.Tensor):
    """The log-probability of each row's ``hand`` (bool ``[B, 52]``) under the belief."""
    return (logits * hand).sum(1) - log_esp(logits, mask, n)


def marginals(logits: torch.Tensor, mask: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """``P(c in hand)`` for each card: the gradient of ``log e_n`` in the logits (sums to ``n``)."""
    with torch.enable_grad():
        x = logits.detach().double().requires_grad_(True)
        (grad,) = torch.autograd.grad(log_esp(x, mask, n).sum(), x)
    return (grad * mask).to(logits.dtype)


def sample_hands(logw: np.ndarray, n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` hands of ``n`` of the ``N`` cards (indices ``[k, n]``), drawn exactly from
    ``P(H) ∝ prod w``: card i is taken with probability ``w_i e_{r-1}(w_{>i}) / e_r(w_{>=i})``
    when ``r`` cards are still to take (suffix programme in float64)."""
    size = logw.size
    w = np.exp(logw - logw.max()) if size else logw
    e = np.zeros((size + 1, n + 1))
    e[:, 0] = 1
    for i in range(size - 1, -1, -1):
        e[i, 1:] = e[i + 1, 1:] + w[i] * e[i + 1, :-1]
    left = np.full(k, n)
    out = np.zeros((k, n), np.int64)
    u = rng.random((k, size))
    for i in range(size):
        live = left > 0
        if not live.any():
            break
        r = np.maximum(left, 1)
        p = w[i] * e[i + 1, r - 1] / np.maximum(e[i, r], 1e-300)
        take = live & (u[:, i] < p)
        out[take, n - left[take]] = i
        left = left - take
    if (left != 0).any():
        raise AssertionError("sampled a hand of the wrong size")
    return out


class BeliefModel:
    """The network as a belief: logits, marginals and worlds for information states."""

    name = "belief"

    def __init__(self, net: BeliefNet, device: str | torch.device = "cpu") -> None:
        self.device = torch.device(device)
        self.net = net.to(self.device).eval()

    @torch.no_grad()
    def logits(self, infos: list[InfoState]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(logits [B, 52], mask, n)`` on the CPU."""
        x, g, m, n = batch_features(infos)
        out = self.net(x.to(self.device), g.to(self.device)).cpu()
        return out.masked_fill(~m, 0.0), m, n

    def marginals(self, infos: list[InfoState]) -> np.ndarray:
        """``[B, 52]``: the probability that each card is in the opponent's hand (0 if seen)."""
        lg, m, n = self.logits(infos)
        return marginals(lg, m, n).double().numpy()

    def worlds_batch(self, infos: list[InfoState], k: int, seed: int = 0, *, exhaustive: int = 0) -> list[Worlds]:
        """``k`` worlds per information state, the opponent's hand drawn from the belief (seeded by
        ``seed`` and the state, as :func:`~pasur.hidden.worlds.sample_worlds`). With
        ``exhaustive``, when the opponent can hold at most that many hands: every one, weighted
        by the belief (the exact belief, as ``:exact`` with uniform worlds)."""
        if not infos:
            return []
        lg, _, _ = self.logits(infos)
        out = []
        for info, row in zip(infos, lg.double().numpy(), strict=True):
            rng = info_seed(info, seed)
            unseen = np.array(cards_of(info.unseen), dtype=np.int64)
            n = info.opponent_hand_size
            if math.comb(unseen.size, n) <= exhaustive:
                w = every_hand(info, rng)
                logw = np.array([row[cards_of(int(h))].sum() for h in w.opp_hand])
                out.append(Worlds(w.opp_hand, w.undealt, np.exp(logw - logw.max())))
                continue
            idx = sample_hands(row[unseen], n, k, rng)
            hands = unseen[idx]
            rest = np.stack([rng.permutation(np.setdiff1d(unseen, h, assume_unique=True)) for h in hands])
            opp = _masks(hands) if n else np.zeros(k, np.int64)
            out.append(Worlds(opp, rest, np.ones(k)))
        return out

    def sample_worlds(self, info: InfoState, k: int, seed: int = 0, *, exhaustive: int = 0) -> Worlds:
        return self.worlds_batch([info], k, seed, exhaustive=exhaustive)[0]

    # -- files ---------------------------------------------------------------------------------
    def save(self, path: str | Path, meta: dict | None = None) -> None:
        """PyTorch's format and a JSON card beside it (SHA-256, architecture, how it was trained)."""
        state = {k: v.cpu() for k, v in self.net.state_dict().items()}
        architecture = {"hidden": self.net.hidden, "card_features": CARD_FEATURES, "global_features": GLOBAL_FEATURES}
        save_checked(path, {"hidden": self.net.hidden, "state": state}, "pasur belief model", architecture, meta)

    @classmethod
    def load(cls, path: str | Path = DEFAULT_WEIGHTS, device: str | torch.device = "cpu") -> BeliefModel:
        """The network of a weights file, refused unless its card's SHA-256 matches."""
        return cls(load_net(path, "belief", lambda blob: BeliefNet(int(blob["hidden"]))), device)


@lru_cache(maxsize=4)
def default_belief(device: str = "cpu") -> BeliefModel:
    """The shipped belief model."""
    return BeliefModel.load(DEFAULT_WEIGHTS, device)


def check_consistent(info: InfoState, worlds: Worlds) -> None:
    """Raise unless every world gives the opponent exactly its hand size of unseen cards and the
    undealt stock the rest (then every past move replays: legality is per card and pool)."""
    n, unseen = info.opponent_hand_size, info.unseen
    for j in range(worlds.k):
        h = int(worlds.opp_hand[j])
        rest = _masks(worlds.undealt[j : j + 1])[0] if worlds.undealt.shape[1] else 0
        if h.bit_count() != n or h & ~unseen or int(rest) != unseen & ~h:
            raise AssertionError(f"world {j} is not consistent with the information state")
        if worlds.undealt.shape[1] != unseen.bit_count() - n or n > HAND_SIZE:
            raise AssertionError(f"world {j}: the undealt stock has the wrong size")


def replay(deck, moves):
    """Each decision of a stored game (``deck`` card codes, ``moves`` (card, captured) rows):
    ``(info of seat 0, info of seat 1, the state)`` before the move."""
    from pasur.game.cards import Deck
    from pasur.game.rules import Action
    from pasur.hidden.game import HiddenGame

    g = HiddenGame(Deck(tuple(int(c) for c in deck)))
    for card, captured in moves.tolist():
        yield g.observation(0), g.observation(1), g.state
        g.apply(Action(card, captured))


def informative(info) -> bool:
    """Whether the opponent's hand is uncertain (some hand, and not every unseen card)."""
    n = info.opponent_hand_size
    return 0 < n < info.unseen.bit_count()
