"""A policy-value network for the hidden-hand game, and the agent that plays by it (issue 27, part 2).

From an :class:`~pasur.hidden.infostate.InfoState` only (the public history and the observer's own
cards), the network gives a distribution over the legal actions and the expected final margin
(the observer's points minus the opponent's at the end of the game), and a value for each legal
action (the hint button's numbers).

**Input.** Per state: which of five places each card is in as the observer sees it (own hand, pool,
own pile, the opponent's pile, unseen), the cards the opponent played this round, the same as
counts per rank, and the round, turn, seat, hand sizes, clubs (and the clubs race's expected
bonus), points, Surs and the last capturer. Per legal action: the card played and the cards
taken (as bits and per rank), what it banks now (points, a Sur, clubs, cards, its worth in the
clubs race), the pool it leaves, and the opponent's expected best reply to that pool when it has
to reply this round (exact under a uniform belief, as the heuristic player computes it). Nothing
else is read: the features are a function of the information state (the tests check that two
worlds that differ only in hidden cards give identical features and outputs).

**Network.** A state encoder (two layers of 128) feeds a value head (the rest of the game's
margin) and a per-action scoring head: each legal action is scored from (state encoding, action
features) by one shared network that gives a logit and a value; the policy is the softmax of
the logits over the legal actions only, so it puts no mass on anything else and handles action
sets of any size. 133,443 parameters (0.5 MB); about half a millisecond per move on one core,
most of it building the features.

Training: :mod:`pasur.hidden.policy_train`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from torch import nn

from pasur.game.cards import JACK, KING, N_CLUBS, QUEEN, cards_of, clubs_in, points_in, rank, suit
from pasur.game.rules import Action, immediate_points, is_sur
from pasur.game.state import TURNS_PER_ROUND
from pasur.hidden.agents import HiddenAgent
from pasur.hidden.belief import card_options
from pasur.hidden.heuristic import club_race, club_worth, expected_max
from pasur.hidden.infostate import InfoState
from pasur.hidden.weights import load_net, save_checked
from pasur.hidden.worlds import info_seed

#: the weights shipped with the package (written by ``pasur hidden-train policy``)
DEFAULT_WEIGHTS = Path(__file__).with_name("policy-weights.pt")
#: card sets of a state, as masks: own hand, pool, own pile, opponent's pile, unseen, opponent's cards this round
STATE_MASKS = 6
#: card sets of an action: the card played, the cards taken, the pool it leaves
ACTION_MASKS = 3
STATE_DENSE = 6 + 8 + 1 + 5 + 5 + 14
ACTION_DENSE = 13 + 4 + 12
#: inputs of the state encoder: the masks' bits and rank counts, and the dense features
STATE_IN = STATE_MASKS * (52 + 13) + STATE_DENSE
ACTION_IN = ACTION_MASKS * (52 + 13) + ACTION_DENSE
#: the value heads' unit (points); outputs are multiplied by it
SCALE = 10.0


def _rank_matrix() -> np.ndarray:
    m = np.zeros((52, 13), np.float32)
    for c in range(52):
        m[c, rank(c)] = 1
    return m


RANKS = _rank_matrix()
SHIFTS = np.arange(52, dtype=np.int64)


@lru_cache(maxsize=200_000)
def _reply_value(card: int, pool: int, round_: int, clubs_opp: int, clubs_me: int) -> float:
    """What the opponent's ``card`` could bank on ``pool``: its best points, plus the clubs race's
    worth of the most clubs it can take (as the heuristic player's reply, per card; one card of a
    rank stands for the others, which capture alike and differ at most in a card's own points)."""
    cap, best, _, clubs, _ = card_options(card, pool, round_)
    if not cap:
        return 0.0
    return best + club_worth(int(clubs), clubs_opp, clubs_me)


def features(info: InfoState) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Action]]:
    """``(state masks [STATE_MASKS] int64, state dense [STATE_DENSE], action masks [A, ACTION_MASKS]
    int64, action dense [A, ACTION_DENSE], the legal actions)`` of a state where the observer is to
    move. Nothing but ``info`` is read; :func:`expand` makes the network's input of them."""
    me = info.player
    opp = 1 - me
    opp_round = 0
    for m in info.moves:
        if m.round == info.round and m.player == opp:
            opp_round |= 1 << m.card
    unseen = info.unseen
    masks = np.array([info.hand, info.pool, info.piles[me], info.piles[opp], unseen, opp_round], np.int64)
    clubs_me, clubs_opp = info.clubs[me], info.clubs[opp]
    pts = info.points
    g = np.zeros(STATE_DENSE, np.float32)
    g[min(info.round, 5)] = 1
    g[6 + min(info.turn, 7)] = 1
    g[14] = me
    g[15 + min(info.hand.bit_count(), 4)] = 1
    g[20 + min(info.opponent_hand_size, 4)] = 1
    left = N_CLUBS - clubs_me - clubs_opp
    g[25:39] = (clubs_me / 7, clubs_opp / 7, club_race(clubs_me, clubs_opp, left) / 7, pts[me] / 20, pts[opp] / 20,
                info.margin / 10, info.surs[me], info.surs[opp], info.last_capturer == me,
                info.last_capturer == opp, info.last_capturer is None, points_in(info.pool) / 10,
                info.pool.bit_count() / 10, unseen.bit_count() / 52)  # fmt: skip
    actions = info.legal_actions()
    n_reply = info.opponent_hand_size if info.turn + 1 < TURNS_PER_ROUND else 0
    reps: list[tuple[int, int]] = []  # (a card of each unseen rank, how many of that rank are unseen)
    if n_reply:
        by_rank: dict[int, list[int]] = {}
        for c in cards_of(unseen):
            by_rank.setdefault(rank(c), []).append(c)
        reps = [(cs[0], len(cs)) for cs in by_rank.values()]
    am = np.zeros((len(actions), ACTION_MASKS), np.int64)
    ad = np.zeros((len(actions), ACTION_DENSE), np.float32)
    more = info.hand.bit_count() > 1
    for j, a in enumerate(actions):
        taken = a.captured | (1 << a.card) if a.captured else 0
        pool = info.pool & ~a.captured if a.captured else info.pool | (1 << a.card)
        got = clubs_in(taken)
        am[j] = (1 << a.card, a.captured, pool)
        r = rank(a.card)
        ad[j, r] = 1
        ad[j, 13 + suit(a.card)] = 1
        pts_now = immediate_points(a, info.pool, info.round)
        worth = club_worth(got, clubs_me, clubs_opp)
        if n_reply:
            mine_after = clubs_me + got
            vals = []
            for c, k in reps:  # a rank's cards capture alike; one of them stands for all
                vals += [_reply_value(c, pool, info.round, clubs_opp, mine_after)] * k
            reply = expected_max(vals, n_reply)
        else:
            reply = 0.0
        ad[j, 17:29] = (a.captured == 0, pts_now / 10, is_sur(a, info.pool, info.round), got / 4,
                        taken.bit_count() / 5, worth / 7, reply / 10, (pts_now + worth - reply) / 10,
                        r == JACK and more, r in (QUEEN, KING), points_in(pool) / 10,
                        pool.bit_count() / 10)  # fmt: skip
    return masks, g, am, ad, actions


def _bits(masks: np.ndarray) -> np.ndarray:
    """``[..., M]`` int64 masks -> ``[..., M * (52 + 13)]``: each mask's bits, then its counts per rank."""
    bits = ((masks[..., None] >> SHIFTS) & 1).astype(np.float32)
    counts = bits @ RANKS
    return np.concatenate([bits, counts / 4], -1).reshape(*masks.shape[:-1], -1)


def expand(masks: np.ndarray, dense: np.ndarray) -> np.ndarray:
    """The network's input rows of stored masks and dense features (states or actions)."""
    return np.concatenate([_bits(masks), dense.astype(np.float32)], -1)


class PolicyNet(nn.Module):
    """State encoder -> value of the rest of the game; (state encoding, action) -> logit and the
    action's value, by one network shared by every action."""

    def __init__(self, hidden: int = 128, action_hidden: int = 64) -> None:
        super().__init__()
        self.hidden = hidden
        self.action_hidden = action_hidden
        self.state = nn.Sequential(nn.Linear(STATE_IN, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.value = nn.Sequential(nn.Linear(hidden, action_hidden), nn.ReLU(), nn.Linear(action_hidden, 1))
        self.action = nn.Sequential(
            nn.Linear(hidden + ACTION_IN, hidden),
            nn.ReLU(),
            nn.Linear(hidden, action_hidden),
            nn.ReLU(),
            nn.Linear(action_hidden, 2),
        )

    def forward(self, s: torch.Tensor, a: torch.Tensor, owner: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``s [B, STATE_IN]``, ``a [N, ACTION_IN]`` (every legal action of every state, flat),
        ``owner [N]`` (the state of each action) -> ``(logits [N], action values [N], state values
        [B])``, values in units of :data:`SCALE` points of the rest of the game."""
        h = self.state(s)
        out = self.action(torch.cat([h[owner], a], 1))
        return out[:, 0], out[:, 1], self.value(h).squeeze(1)


def group_log_softmax(logits: torch.Tensor, owner: torch.Tensor, n_states: int) -> torch.Tensor:
    """Log-softmax of ``logits`` within each state's actions (``owner``: the state of each)."""
    top = torch.full((n_states,), -torch.inf, dtype=logits.dtype, device=logits.device)
    top = top.scatter_reduce(0, owner, logits.detach(), "amax")
    z = (logits - top[owner]).exp()
    total = torch.zeros(n_states, dtype=logits.dtype, device=logits.device).index_add(0, owner, z)
    return logits - top[owner] - total.log()[owner]


class PolicyModel:
    """The network for information states: policies, values, and its file with a card."""

    def __init__(self, net: PolicyNet, device: str | torch.device = "cpu") -> None:
        self.device = torch.device(device)
        self.net = net.to(self.device).eval()

    @torch.no_grad()
    def evaluate(self, infos: Sequence[InfoState]) -> list[tuple[list[Action], np.ndarray, np.ndarray, float]]:
        """Per state (the observer to move): its legal actions, their probabilities (summing to
        1), their values and the state's value (expected final margins, in points)."""
        if not infos:
            return []
        feats = [features(i) for i in infos]
        s = expand(np.stack([f[0] for f in feats]), np.stack([f[1] for f in feats]))
        a = expand(np.concatenate([f[2] for f in feats]), np.concatenate([f[3] for f in feats]))
        owner = np.repeat(np.arange(len(feats)), [len(f[4]) for f in feats])
        dev = self.device
        owner_t = torch.from_numpy(owner).to(dev)
        logit, q, v = self.net(torch.from_numpy(s).to(dev), torch.from_numpy(a).to(dev), owner_t)
        p = group_log_softmax(logit.double(), owner_t, len(feats)).exp().cpu().numpy()
        q, v = q.double().cpu().numpy() * SCALE, v.double().cpu().numpy() * SCALE
        out, lo = [], 0
        for info, f, vi in zip(infos, feats, v, strict=True):
            hi = lo + len(f[4])
            out.append((f[4], p[lo:hi], info.margin + q[lo:hi], float(info.margin + vi)))
            lo = hi
        return out

    # -- files ---------------------------------------------------------------------------------
    def save(self, path: str | Path, meta: dict | None = None) -> None:
        """PyTorch's format and a JSON card beside it (SHA-256, architecture, how it was trained)."""
        net = self.net
        state = {k: v.cpu() for k, v in net.state_dict().items()}
        blob = {"hidden": net.hidden, "action_hidden": net.action_hidden, "state": state}
        architecture = {
            "hidden": net.hidden,
            "action_hidden": net.action_hidden,
            "state_inputs": STATE_IN,
            "action_inputs": ACTION_IN,
            "parameters": sum(p.numel() for p in net.parameters()),
        }
        save_checked(path, blob, "pasur policy-value network", architecture, meta)

    @classmethod
    def load(cls, path: str | Path = DEFAULT_WEIGHTS, device: str | torch.device = "cpu") -> PolicyModel:
        """The network of a weights file, refused unless its card's SHA-256 matches."""
        return cls(
            load_net(path, "policy", lambda blob: PolicyNet(int(blob["hidden"]), int(blob["action_hidden"]))), device
        )


@lru_cache(maxsize=4)
def default_policy(device: str = "cpu") -> PolicyModel:
    """The shipped policy-value network."""
    return PolicyModel.load(DEFAULT_WEIGHTS, device)


class PolicyAgent(HiddenAgent):
    """Plays by the network: the most probable legal action (first on ties), or, with
    ``sample=True``, an action drawn from the policy (seeded by ``seed`` and the information
    state, so a decision does not depend on batching). ``action_values``: the network's value of
    each legal action (expected final margin)."""

    def __init__(self, model: PolicyModel | None = None, *, sample: bool = False, seed: int = 0,
                 name: str | None = None) -> None:  # fmt: skip
        self.model = model or default_policy()
        self.sample = sample
        self.seed = seed
        self.name = name or ("policy:sample" if sample else "policy")

    def action_values(self, info: InfoState) -> list[tuple[Action, float]]:
        actions, _, q, _ = self.model.evaluate([info])[0]
        return list(zip(actions, q.tolist(), strict=True))

    def policy(self, info: InfoState) -> list[tuple[Action, float]]:
        """Each legal action with its probability."""
        actions, p, _, _ = self.model.evaluate([info])[0]
        return list(zip(actions, p.tolist(), strict=True))

    def value(self, info: InfoState) -> float:
        """The expected final margin of the observer (to move)."""
        return self.model.evaluate([info])[0][3]

    def choose(self, info: InfoState) -> Action:
        return self.choose_batch([info])[0]

    def choose_batch(self, infos: Sequence[InfoState]) -> list[Action]:
        out = []
        for info, (actions, p, _, _) in zip(infos, self.model.evaluate(infos), strict=True):
            if len(actions) == 1:
                out.append(actions[0])
            elif self.sample:
                u = info_seed(info, self.seed).random()
                out.append(actions[min(int(np.searchsorted(np.cumsum(p), u * p.sum())), len(actions) - 1)])
            else:
                out.append(actions[int(np.argmax(p))])
        return out
