"""Batched self-play: N games of one deck at once, on tensors (device-agnostic).

All games of a batch move in lockstep (every turn each game plays one card), so the round
and turn are shared while hands, pool, piles, Surs and last capturer are per game (int64 card
masks, as in the tensor tree of :mod:`pasur.solve.tree`). Legal actions for the whole batch
come from :func:`pasur.solve.actions.layer_actions`, in the scalar engine's order; a batch agent
picks, for every game, one of its actions in one call.

>>> from pasur.game.cards import Deck
>>> games = play_batch(Deck.from_seed(3), BatchGreedy(), BatchRandom(seed=1), n_games=4)
>>> games.utility().shape
torch.Size([4])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import torch

from pasur.game.cards import CLUB_MASK, CLUBS_BONUS, CLUBS_FOR_BONUS, JACK, SUR_POINTS, Deck
from pasur.game.rules import Action
from pasur.game.state import ALEX, FINAL_ROUND, TURNS_PER_ROUND, GameState
from pasur.play.infosets import InfosetTracker
from pasur.solve.actions import LayerActions, card_points_of, unique_row_actions
from pasur.solve.ops import popcount


@dataclass
class BatchState:
    """The state of N games of one deck at the same (round, turn)."""

    deck: Deck
    round: int
    turn: int
    hands: list[torch.Tensor]  # 2 x [N] int64 masks
    pool: torch.Tensor
    piles: list[torch.Tensor]
    surs: list[torch.Tensor]
    last: torch.Tensor  # 0 nobody, 1 Alex, 2 Bob
    history: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)  # (card, captured) per turn
    #: with a tree: every game's node in it (``TreeTracker``), for agents that play from the tree
    tracker: TreeTracker | None = None
    #: every game's infoset codes per feature mode (``InfosetTracker``), for agents that score
    #: infosets (models)
    infosets: dict[str, InfosetTracker] = field(default_factory=dict)

    @classmethod
    def initial(cls, deck: Deck, n: int, device: str | torch.device = "cpu") -> BatchState:
        def full(x: int) -> torch.Tensor:
            return torch.full((n,), x, dtype=torch.int64, device=device)

        return cls(
            deck,
            0,
            0,
            [full(deck.hand_mask(0, 0)), full(deck.hand_mask(1, 0))],
            full(deck.pool_mask),
            [full(0), full(0)],
            [full(0), full(0)],
            full(0),
        )

    @classmethod
    def from_state(cls, start: GameState, n: int, device: str | torch.device = "cpu") -> BatchState:
        """``n`` copies of a scalar state (any round, any turn)."""

        def full(x: int) -> torch.Tensor:
            return torch.full((n,), x, dtype=torch.int64, device=device)

        return cls(
            start.deck,
            start.round,
            start.turn,
            [full(h) for h in start.hands],
            full(start.pool),
            [full(p) for p in start.piles],
            [full(s) for s in start.surs],
            full(0 if start.last_capturer is None else start.last_capturer + 1),
        )

    @property
    def n(self) -> int:
        return int(self.pool.shape[0])

    @property
    def player(self) -> int:
        return self.turn & 1

    @property
    def is_terminal(self) -> bool:
        return self.round == FINAL_ROUND and self.turn == TURNS_PER_ROUND

    def legal_actions(self) -> LayerActions:
        """Every game's legal actions (``row`` = game), computed once per distinct (hand, pool)."""
        p = self.player
        la, inv = unique_row_actions(self.hands[p], self.pool, list(self.deck.hand(p, self.round)), self.round)
        return la.expand(inv)[0]

    def apply(self, actions: LayerActions, choice: torch.Tensor) -> None:
        """Play, in every game, the action of index ``choice[g]`` (into ``actions``), in place."""
        if self.tracker is not None:
            row = actions.row[choice]
            self.tracker.advance(self.round, self.turn, choice - torch.cumsum(actions.brf, 0)[row] + actions.brf[row])
        self._play(actions.card[choice], actions.captured[choice], actions.sur[choice])

    def apply_in_tree(self, k: torch.Tensor) -> None:
        """Play, in every game, the ``k[g]``-th legal action of its node in the tree (the batch
        follows a tree): the actions come from the tree's edges, no legal-action search."""
        card, captured = self.tracker.advance(self.round, self.turn, k)
        if self.round < FINAL_ROUND:
            sur = (captured == self.pool) & (captured != 0) & ((card >> 2) != JACK)
        else:
            sur = torch.zeros_like(captured, dtype=torch.bool)
        self._play(card, captured, sur)

    def _play(self, card: torch.Tensor, captured: torch.Tensor, sur: torch.Tensor) -> None:
        p = self.player
        bit = torch.ones_like(card) << card
        is_cap = captured != 0
        self.hands[p] = self.hands[p] & ~bit
        self.piles[p] = torch.where(is_cap, self.piles[p] | captured | bit, self.piles[p])
        self.pool = torch.where(is_cap, self.pool & ~captured, self.pool | bit)
        self.surs[p] = self.surs[p] + sur.long()
        self.last = torch.where(is_cap, p + 1, self.last)
        self.history.append((card, captured))
        for tracker in self.infosets.values():
            tracker.advance(self, card, captured)
        self.turn += 1
        if self.turn == TURNS_PER_ROUND:
            if self.round < FINAL_ROUND:
                self.round += 1
                self.turn = 0
                self.hands = [torch.full_like(self.pool, self.deck.hand_mask(q, self.round)) for q in (0, 1)]
                for tracker in self.infosets.values():
                    tracker.start_round(self)
            else:  # the final sweep to the last capturer of the whole game
                for q in (0, 1):
                    self.piles[q] = torch.where(self.last == q + 1, self.piles[q] | self.pool, self.piles[q])
                self.pool = torch.where(self.last != 0, 0, self.pool)

    def points(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Points so far of Alex and Bob in every game (the clubs bonus once clinched)."""
        clubs = [popcount(pile & CLUB_MASK) for pile in self.piles]
        out = []
        for q in (0, 1):
            bonus = torch.where(clubs[q] >= CLUBS_FOR_BONUS, CLUBS_BONUS, 0)
            out.append(card_points_of(self.piles[q]) + SUR_POINTS * self.surs[q] + bonus)
        return out[0], out[1]

    def utility(self) -> torch.Tensor:
        """Alex's points minus Bob's in every game."""
        a, b = self.points()
        return a - b

    def actions_of(self, game: int) -> list[Action]:
        """The actions played so far in one game (for replays in the scalar engine)."""
        return [Action(int(c[game]), int(k[game])) for c, k in self.history]


class BatchAgent(Protocol):
    name: str

    def choose(self, state: BatchState, actions: LayerActions) -> torch.Tensor:
        """For every game, the index (into ``actions``) of the action to play."""
        ...


def _first_index(actions: LayerActions) -> torch.Tensor:
    return torch.cumsum(actions.brf, 0) - actions.brf


class BatchRandom:
    """Uniform over each game's legal actions, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.gen: torch.Generator | None = None

    def generator(self, device: torch.device) -> torch.Generator:
        """The agent's generator, made (and seeded) on first use on ``device``."""
        if self.gen is None:
            self.gen = torch.Generator(device=device)
            self.gen.manual_seed(self.seed if self.seed is not None else torch.seed())
        return self.gen

    def choose(self, state: BatchState, actions: LayerActions) -> torch.Tensor:
        dev = actions.brf.device
        u = torch.rand(state.n, generator=self.generator(dev), device=dev)
        pick = torch.minimum((u * actions.brf).long(), actions.brf - 1)
        return _first_index(actions) + pick

    def choose_in_tree(self, state: BatchState) -> torch.Tensor:
        """The same draw as :meth:`choose`, with the node's degree as the number of actions."""
        deg = state.tracker.degree(state.round, state.turn)
        u = torch.rand(state.n, generator=self.generator(deg.device), device=deg.device)
        return torch.minimum((u * deg).long(), deg - 1)


class BatchGreedy:
    """The scalar :class:`pasur.play.agents.GreedyAgent`, for a batch: most immediate points, then
    clubs taken, then cards taken, then the first action in (card, captured) order."""

    name = "greedy"

    def choose(self, state: BatchState, actions: LayerActions) -> torch.Tensor:
        taken = torch.where(actions.captured != 0, actions.captured | (1 << actions.card), 0)
        score = (actions.points * 64 + actions.clubs) * 64 + popcount(taken)
        best = torch.full((state.n,), -1, dtype=torch.int64, device=score.device)
        best.scatter_reduce_(0, actions.row, score, "amax")
        idx = torch.arange(score.shape[0], device=score.device)
        cand = torch.where(score == best[actions.row], idx, score.shape[0])
        first = torch.full((state.n,), score.shape[0], dtype=torch.int64, device=score.device)
        return first.scatter_reduce_(0, actions.row, cand, "amin")


class BatchExact:
    """Optimal play from the exact reference solver: one answer per distinct game state."""

    name = "exact"

    def __init__(self) -> None:
        from pasur.play.agents import ExactAgent

        self._scalar = ExactAgent()

    def choose(self, state: BatchState, actions: LayerActions) -> torch.Tensor:
        first = _first_index(actions).tolist()
        answers: dict[tuple, int] = {}
        out = []
        hands = [h.tolist() for h in state.hands]
        pool, piles = state.pool.tolist(), [p.tolist() for p in state.piles]
        surs, last = [s.tolist() for s in state.surs], state.last.tolist()
        cards, caps = actions.card.tolist(), actions.captured.tolist()
        brf = actions.brf.tolist()
        for g in range(state.n):
            key = (hands[0][g], hands[1][g], pool[g], piles[0][g], piles[1][g], surs[0][g], surs[1][g], last[g])
            if key not in answers:
                s = GameState(
                    state.deck,
                    state.round,
                    state.turn,
                    (hands[0][g], hands[1][g]),
                    pool[g],
                    (piles[0][g], piles[1][g]),
                    (surs[0][g], surs[1][g]),
                    None if last[g] == 0 else last[g] - 1,
                )
                a = self._scalar.choose(s)
                lo = first[g]
                answers[key] = next(j for j in range(brf[g]) if (cards[lo + j], caps[lo + j]) == (a.card, a.captured))
            out.append(first[g] + answers[key])
        return torch.tensor(out, dtype=torch.int64, device=actions.brf.device)


@dataclass
class _Layer:
    """A tree layer as self-play walks it: edges in (parent, legal-action) order, the start and
    number of each node's edges, and per edge its child (through the link at a round's end),
    card and captured cards."""

    order: torch.Tensor
    start: torch.Tensor
    deg: torch.Tensor
    child: torch.Tensor
    card: torch.Tensor
    captured: torch.Tensor
    search_steps: int  # halvings that narrow any node's edges to one


#: bytes of per-layer self-play tables (:func:`tree_layer`, the strategy agent's cumulative sums)
#: kept on a tree between batches. A tail deck's paper tree needs about 70 bytes an edge of them,
#: 17 GB on a 248 M-node tree: past the budget a layer's tables are made again for each batch.
SELFPLAY_CACHE_BYTES = 4 * 2**30


class _TreeCache:
    """The self-play tables of one tree, kept while they fit :data:`SELFPLAY_CACHE_BYTES`. Games
    walk the layers in order, batch after batch, so a full cache keeps the first layers it met and
    takes no more (evicting the oldest would drop exactly the next batch's first layers); past it,
    the last table of each kind is kept aside, for the other calls of the same turn."""

    def __init__(self) -> None:
        self.entries: dict = {}
        self.nbytes = 0
        self.last: dict = {}  # kind (the key's first item) -> (key, value), outside the budget

    @staticmethod
    def of(tree) -> _TreeCache:
        cache = tree.__dict__.get("_selfplay_cache")
        if cache is None:
            cache = tree.__dict__["_selfplay_cache"] = _TreeCache()
        return cache

    def get(self, key):
        hit = self.entries.get(key)
        if hit is None and key[0] in self.last and self.last[key[0]][0] == key:
            hit = self.last[key[0]][1]
        return hit

    def put(self, key, value, tensors) -> None:
        distinct = {id(x): x for x in tensors}.values()  # (a paper layer's children are its order)
        size = sum(x.element_size() * x.numel() for x in distinct)
        if self.nbytes + size <= SELFPLAY_CACHE_BYTES:
            self.entries[key] = value
            self.nbytes += size
        else:
            self.last[key[0]] = (key, value)


def tree_layer(tree, r: int, t: int) -> _Layer:
    """The layer (round ``r``, turn ``t``) of ``tree`` for self-play, kept on the tree while the
    budget allows (:class:`_TreeCache`)."""
    cache = _TreeCache.of(tree)
    hit = cache.get(("layer", r, t))
    if hit is None:
        rt = tree.round(r)
        link = rt.link.long() if t + 1 == TURNS_PER_ROUND and rt.link is not None else None  # to the next round
        if rt.mode == "compact":  # edges already grouped by parent, in legal order
            parent, child, gt_edge = rt.edges(t)
            order = torch.arange(parent.shape[0], device=parent.device)
            child = child if link is None else link[child]
        else:
            # sorted by (parent, GT edge), from the tree's int32 columns: no int64 copies of a
            # tail deck's 90 M-edge layer; a child is its edge, so the children in that order
            # are the order itself
            parent, gt_edge = rt.edg[t + 1], rt.fgm[t + 1][:, 0]
            key = parent.long() * (int(gt_edge.max()) + 1) + gt_edge
            order = torch.argsort(key)
            del key
            child = order if link is None else torch.index_select(link, 0, order)
        deg = torch.bincount(parent, minlength=rt.n_nodes(t))
        g = torch.index_select(gt_edge, 0, order)
        del parent, gt_edge
        layer = rt.gt[t]
        steps = (int(deg.max()) - 1).bit_length() if deg.numel() else 0
        start = torch.cumsum(deg, 0) - deg
        card = torch.index_select(layer.card.long(), 0, g)
        hit = _Layer(order, start, deg, child, card, torch.index_select(layer.captured, 0, g), steps)
        del g
        cache.put(("layer", r, t), hit, (hit.order, hit.start, hit.deg, hit.child, hit.card, hit.captured))
    return hit


class TreeTracker:
    """Follows every game of a batch through a tensor tree (built from the deck's initial state):
    the node of each game, and each node's out-edges in legal-action order."""

    def __init__(self, tree, n: int) -> None:
        self.tree = tree
        self.node = torch.zeros(n, dtype=torch.int64, device=tree.device)

    def out_edges(self, r: int, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(edge indices sorted by (parent, action order), start of each parent's run)."""
        layer = tree_layer(self.tree, r, t)
        return layer.order, layer.start

    def degree(self, r: int, t: int) -> torch.Tensor:
        """Legal actions of every game at its node."""
        return tree_layer(self.tree, r, t).deg[self.node]

    def edges_of_games(self, r: int, t: int, k: torch.Tensor) -> torch.Tensor:
        """The edge of the ``k``-th legal action of every game at its node."""
        order, start = self.out_edges(r, t)
        return order[start[self.node] + k]

    def advance(self, r: int, t: int, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Move every game along its ``k``-th action (and through the link at a round's end);
        returns the (card, captured) each game played."""
        layer = tree_layer(self.tree, r, t)
        pos = torch.index_select(layer.start, 0, self.node).add_(k)
        self.node = torch.index_select(layer.child, 0, pos)
        return torch.index_select(layer.card, 0, pos), torch.index_select(layer.captured, 0, pos)


class BatchStrategy:
    """Plays a solved strategy (probabilities on the tree's edges, e.g. read from a strategy
    table), sampling each game's action from its node's distribution."""

    name = "table"

    def __init__(self, strategy: dict, seed: int | None = None) -> None:
        self.strategy = strategy
        self.sampler = BatchRandom(seed)

    def probabilities(self, state: BatchState, actions: LayerActions) -> torch.Tensor:
        """Per action, the strategy's probability of it at its game's node (float64)."""
        tracker = state.tracker
        if tracker is None:
            raise ValueError("a strategy agent needs the batch to follow the tree (play_batch(..., tree=...))")
        order, start = tracker.out_edges(state.round, state.turn)
        first = _first_index(actions)
        k = torch.arange(actions.row.shape[0], device=first.device) - first[actions.row]
        edge = order[start[tracker.node[actions.row]] + k]
        return self.strategy[(state.round, state.turn)].to(first.device)[edge].double()

    def choose(self, state: BatchState, actions: LayerActions) -> torch.Tensor:
        return sample_per_game(self.probabilities(state, actions), actions, self.sampler, state.n)

    def choose_in_tree(self, state: BatchState) -> torch.Tensor:
        """For every game, the index of its action among its node's legal actions: inverse CDF
        on one uniform per game, over the node's edges in legal order (as :func:`sample_per_game`)."""
        tracker = state.tracker
        layer = tree_layer(tracker.tree, state.round, state.turn)
        cum, base, total = self._cdf(tracker.tree, state.round, state.turn, layer)
        node = tracker.node
        s = torch.index_select(layer.start, 0, node)
        hi = s + torch.index_select(layer.deg, 0, node) - 1
        u = torch.rand(state.n, generator=self.sampler.generator(s.device), device=s.device, dtype=torch.float64)
        if layer.search_steps == 0:  # one legal action everywhere
            return torch.zeros_like(s)
        target = torch.index_select(base, 0, node).add_(u.mul_(torch.index_select(total, 0, node)))
        # the first edge of the node whose cumulative probability passes the target (the last
        # one if none does): a binary search inside each node's few edges
        lo = s
        for _ in range(layer.search_steps):
            mid = (lo + hi) >> 1
            right = torch.index_select(cum, 0, mid) <= target
            lo = torch.where(right, mid + 1, lo)
            hi = torch.where(right, hi, mid)
        return lo - s

    def _cdf(self, tree, r: int, t: int, layer: _Layer):
        """The strategy's cumulative probabilities over the layer's edges, and per node the value
        before its first edge and its total; kept on the tree per strategy while the budget allows."""
        cache = _TreeCache.of(tree)
        key = ("cdf", id(self.strategy), r, t)
        hit = cache.get(key)
        if hit is None or hit[0] is not self.strategy:
            p = self.strategy[(r, t)].to(layer.order.device)[layer.order].double()
            cum = torch.cumsum(p, 0)
            base = cum[layer.start] - p[layer.start]
            total = cum[layer.start + layer.deg - 1] - base
            hit = (self.strategy, cum, base, total)
            cache.put(key, hit, hit[1:])
        return hit[1:]


def sample_per_game(p: torch.Tensor, actions: LayerActions, sampler: BatchRandom, n: int) -> torch.Tensor:
    """For every game, an action sampled from ``p`` (per action, summing to 1 over each game's
    actions), by inverse CDF on one uniform per game (CodeSnippet 9's scheme)."""
    first = _first_index(actions)
    cum = torch.cumsum(p, 0)
    base = cum[first] - p[first]
    total = cum[first + actions.brf - 1] - base
    u = torch.rand(n, generator=sampler.generator(first.device), device=first.device, dtype=torch.float64)
    target = base + u * total
    pick = torch.searchsorted(cum, target, right=True)
    return torch.minimum(torch.maximum(pick, first), first + actions.brf - 1)


BATCH_AGENTS = {"random": BatchRandom, "greedy": BatchGreedy, "exact": BatchExact}


def play_batch(
    deck: Deck,
    alex: BatchAgent,
    bob: BatchAgent,
    n_games: int,
    device: str | torch.device = "cpu",
    tree=None,
    start: GameState | None = None,
) -> BatchState:
    """Play ``n_games`` games of ``deck`` to the end; the final batch state holds every result.
    With ``start`` the games begin there instead of the deck's deal. With ``tree`` (built from
    the same start) every game follows its node in it; agents with a ``feature_mode`` (models)
    get every game's infoset codes kept for them."""
    if start is None:
        state = BatchState.initial(deck, n_games, device)
    elif start.deck != deck:
        raise ValueError("the start state is of another deck")
    else:
        state = BatchState.from_state(start, n_games, device)
    if tree is not None:
        state.tracker = TreeTracker(tree, n_games)
    agents = (alex, bob)
    for agent in agents:
        mode = getattr(agent, "feature_mode", None)
        if mode is not None and mode not in state.infosets:
            state.infosets[mode] = InfosetTracker(state, mode)
    in_tree = state.tracker is not None and all(hasattr(a, "choose_in_tree") for a in agents)
    while not state.is_terminal:
        if in_tree:  # both agents play from the tree: its edges are the legal actions
            state.apply_in_tree(agents[state.player].choose_in_tree(state))
            continue
        actions = state.legal_actions()
        state.apply(actions, agents[state.player].choose(state, actions))
    return state


__all__ = [
    "ALEX",
    "BATCH_AGENTS",
    "BatchExact",
    "BatchGreedy",
    "BatchRandom",
    "BatchState",
    "BatchStrategy",
    "TreeTracker",
    "play_batch",
]
