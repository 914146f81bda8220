"""The tensorized open-hand game tree of a deck, built layer by layer (paper section 2).

A *layer* is a (round, turn) pair: turn ``t`` (0..8) counts the cards played in the round;
Alex moves on even turns. Two modes, one interface (:class:`RoundTree`):

``paper``
    The paper's decomposition. Inside a round the *game tree* (GT) holds card states with
    their within-round history; it is a tree: every action makes a new node. The history is
    kept as ``t_cmp`` [M, m] per layer; the paper's ``t_gme`` [M, 3, m] (owner row and the two
    action-history rows) is rebuilt from the edges on request (:mod:`pasur.solve.gme`).
    The *Full Game Tree* (FGT) pairs each GT node with the inherited scores of its root
    (``t_fgm`` [Q, 2] = (GT node, score id), ``t_scr`` [S, 4]); its edges ``t_edg`` come from
    RepeatBlocks. Between rounds, unique
    end-of-round pools and new scores give the next round's roots and the linkage ``t_lnk``
    (CodeSnippet 7). The inherited score is (Alex clubs, Bob clubs, 7-clubs flag, last
    capturer): the paper's code keys on the first three; the last capturer is added because
    our rules carry it across rounds, and without it the tree would not be exact.

``compact``
    Lossless state merging: a node is (cards, clubs as far as the bonus is concerned, last
    capturer), merged by ``unique`` at every layer, so transpositions inside a round merge
    too. Accumulated points are not part of a node: every edge carries the points it banks
    (``reward``, Alex minus Bob), and a node's value is the *future* point difference. The
    tree becomes a DAG with the states of the reference solver (:mod:`pasur.solve.reference`).

Both modes give every solver the same view: per layer, edges ``(parent, child, gt_edge)``
into the next layer, and per GT edge its action and reward; at the end of a round either a
link to the next round's roots or, after round 5, the terminal value (final sweep and
clubs bonus).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

import torch

from pasur.common.memory import MemoryGuard
from pasur.game.cards import CLUB_MASK, CLUBS_BONUS, CLUBS_FOR_BONUS, N_ROUNDS
from pasur.game.rules import Action
from pasur.game.state import FINAL_ROUND, TURNS_PER_ROUND, GameState
from pasur.solve.actions import card_points_of, unique_row_actions
from pasur.solve.gme import initial_cmp, update_cmp
from pasur.solve.ops import first_occurrence, inverse_unique, popcount, repeat_blocks_index

Mode = Literal["paper", "compact"]
MODES: tuple[str, ...] = ("paper", "compact")

# last capturer codes in tensors: 0 nobody, 1 Alex, 2 Bob (the paper's "Last Picker")
NOBODY = 0
#: terminal nodes valued at once at the end of round 5 (bounds the transient memory)
END_CHUNK = 1 << 22


@dataclass
class GTLayer:
    """Game-tree nodes at one turn, and the edges to the next turn (absent at turn 8).

    ``parent``/``child`` index nodes of this and the next layer; ``card``, ``captured``
    (mask) and ``reward`` (points banked, Alex minus Bob) describe each edge's action.
    In paper mode ``child`` is ``None``: edge ``e`` creates child node ``e``.
    """

    n: int
    parent: torch.Tensor | None = None  # int32 [E]
    child: torch.Tensor | None = None  # int32 [E] (compact only)
    card: torch.Tensor | None = None  # int8 [E]
    captured: torch.Tensor | None = None  # int64 [E]
    reward: torch.Tensor | None = None  # int8 [E]
    cmp: torch.Tensor | None = None  # t_cmp [n, m] int8 (compact: of one representative history)
    #: compact mode: each node's (Alex clubs, Bob clubs, last capturer), clubs 7/0 once clinched
    node_scores: torch.Tensor | None = None

    @property
    def n_edges(self) -> int:
        return 0 if self.parent is None else int(self.parent.shape[0])


@dataclass
class RoundTree:
    """One round of the tree: layers ``start_turn..8``.

    Paper mode adds the FGT per layer: ``fgm[t]`` [Q, 2] int32 (GT node, score id), sorted by
    GT node, and ``edg[t]`` [Q] int32 (parent FGT node in layer ``t-1``), with inherited
    scores ``scores`` [S, 4] int8 (Alex clubs, Bob clubs, flag, last capturer). In compact
    mode FGT and GT coincide.
    """

    round: int
    start_turn: int
    mode: str
    inp: list[int]  # the round's in-play cards (columns of t_gme / t_cmp)
    gt: dict[int, GTLayer] = field(default_factory=dict)
    fgm: dict[int, torch.Tensor] = field(default_factory=dict)
    edg: dict[int, torch.Tensor] = field(default_factory=dict)
    scores: torch.Tensor | None = None
    #: terminal FGT node -> root FGT node of the next round (rounds 0..4)
    link: torch.Tensor | None = None
    #: terminal FGT node -> future value (final sweep + clubs bonus), round 5 only
    terminal_value: torch.Tensor | None = None
    #: the round's root card states: pools [R] and the two hands (masks)
    root_pools: torch.Tensor | None = None
    root_hands: list[torch.Tensor] | None = None
    seconds: float = 0.0

    @property
    def turns(self) -> range:
        return range(self.start_turn, TURNS_PER_ROUND + 1)

    def n_nodes(self, t: int) -> int:
        """Solver nodes (FGT nodes) at turn ``t``."""
        return int(self.fgm[t].shape[0]) if self.mode == "paper" else self.gt[t].n

    def edges(self, t: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Edges from turn ``t`` to ``t+1`` as (parent node, child node, GT edge) int64 tensors."""
        if self.mode == "paper":
            fgm = self.fgm[t + 1]
            parent = self.edg[t + 1].long()
            child = torch.arange(fgm.shape[0], device=fgm.device)
            return parent, child, fgm[:, 0].long()
        g = self.gt[t]
        return g.parent.long(), g.child.long(), torch.arange(g.n_edges, device=g.parent.device)

    def nbytes(self) -> int:
        total = 0
        for g in self.gt.values():
            for x in (g.parent, g.child, g.card, g.captured, g.reward, g.cmp):
                total += 0 if x is None else x.element_size() * x.numel()
        for d in (self.fgm, self.edg):
            total += sum(x.element_size() * x.numel() for x in d.values())
        for g in self.gt.values():
            total += 0 if g.node_scores is None else g.node_scores.numel()
        for x in (self.scores, self.link, self.terminal_value):
            total += 0 if x is None else x.element_size() * x.numel()
        return total


@dataclass
class GameTree:
    """The whole tree from a start state: rounds ``start.round..5``; the root is node 0 of the
    first layer of the first round."""

    mode: str
    device: torch.device
    start: GameState
    rounds: list[RoundTree]
    seconds: float = 0.0

    def round(self, r: int) -> RoundTree:
        return self.rounds[r - self.start.round]

    def nbytes(self) -> int:
        return sum(rt.nbytes() for rt in self.rounds)

    def node_counts(self) -> list[dict]:
        """Per round and turn: solver (FGT) nodes and GT nodes."""
        rows = []
        for rt in self.rounds:
            for t in rt.turns:
                rows.append({"round": rt.round, "turn": t, "nodes": rt.n_nodes(t), "gt_nodes": rt.gt[t].n})
        return rows

    @property
    def n_nodes(self) -> int:
        return sum(rt.n_nodes(t) for rt in self.rounds for t in rt.turns)

    @property
    def n_edges(self) -> int:
        """Solver edges (strategy-table rows) over all rounds."""
        return sum(int(rt.edges(t)[0].shape[0]) for rt in self.rounds for t in range(rt.start_turn, TURNS_PER_ROUND))

    def edge_checksum(self) -> str:
        """A digest of the edge structure (per layer: parent, child and action of every edge, and
        the links between rounds), so that a strategy stored per edge is refused on any tree but
        the one it was computed on, even one of the same deck, mode and size."""
        import hashlib

        h = hashlib.blake2b(digest_size=16)
        h.update(self.mode.encode())
        for rt in self.rounds:
            for t in range(rt.start_turn, TURNS_PER_ROUND):
                parent, child, gt_edge = rt.edges(t)
                g = rt.gt[t]
                for x in (parent, child, g.card.long()[gt_edge], g.captured[gt_edge]):
                    h.update(x.to("cpu", torch.int64).contiguous().numpy().tobytes())
            if rt.link is not None:
                h.update(rt.link.to("cpu", torch.int64).contiguous().numpy().tobytes())
        return h.hexdigest()

    def path_to(self, r: int, t: int, node: int) -> list[Action]:
        """The actions of one line from the start state to ``node`` at (round ``r``, turn ``t``)
        (in compact mode a node may have several; this is the first found). For checks and
        debugging: each step scans a layer."""
        actions: list[Action] = []
        while True:
            rt = self.round(r)
            if t == rt.start_turn:
                if r == self.start.round:
                    return actions[::-1]
                node, r, t = int(torch.nonzero(self.round(r - 1).link == node)[0]), r - 1, TURNS_PER_ROUND
                continue
            parent, child, gt_edge = rt.edges(t - 1)
            e = int(torch.nonzero(child == node)[0])
            layer, g = rt.gt[t - 1], int(gt_edge[e])
            actions.append(Action(int(layer.card[g]), int(layer.captured[g])))
            node, t = int(parent[e]), t - 1

    def out_actions(self, r: int, t: int, node: int) -> list[Action]:
        """The actions on the edges out of ``node``, in edge order."""
        rt = self.round(r)
        parent, _, gt_edge = rt.edges(t)
        layer = rt.gt[t]
        return [Action(int(layer.card[g]), int(layer.captured[g])) for g in gt_edge[parent == node].tolist()]


# ---------------------------------------------------------------------------------------
# building


@dataclass
class _Frontier:
    """Per-node state of the current layer while a round is built (int64 tensors)."""

    hands: list[torch.Tensor]  # [2] x [M] card masks
    pool: torch.Tensor
    clubs: list[torch.Tensor]  # paper: clubs taken this round; compact: effective clubs (normalized)
    last: torch.Tensor  # paper: last capturer this round; compact: effective last capturer
    cmp: torch.Tensor | None = None  # t_cmp [M, m] int8 (paper mode with infosets)

    @property
    def n(self) -> int:
        return int(self.pool.shape[0])

    def take(self, idx: torch.Tensor) -> _Frontier:
        return _Frontier(
            [h[idx] for h in self.hands],
            self.pool[idx],
            [c[idx] for c in self.clubs],
            self.last[idx],
            None if self.cmp is None else self.cmp[idx],
        )


def normalize_clubs(ca: torch.Tensor, cb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Clubs as far as the future is concerned: (7, 0) or (0, 7) once the bonus is clinched."""
    a_won, b_won = ca >= CLUBS_FOR_BONUS, cb >= CLUBS_FOR_BONUS
    ca = torch.where(a_won, CLUBS_FOR_BONUS, torch.where(b_won, 0, ca))
    cb = torch.where(b_won, CLUBS_FOR_BONUS, torch.where(a_won, 0, cb))
    return ca, cb


def _final_value(ca, cb, last, swept_clubs, swept_points) -> torch.Tensor:
    """Future value at the end of round 5: the sweep of the pool (its clubs and points) to
    ``last`` and the clubs bonus, from effective clubs ``ca``, ``cb`` (normalized) before the sweep."""
    ca = ca + torch.where(last == 1, swept_clubs, 0)
    cb = cb + torch.where(last == 2, swept_clubs, 0)
    bonus = torch.where(ca >= CLUBS_FOR_BONUS, CLUBS_BONUS, torch.where(cb >= CLUBS_FOR_BONUS, -CLUBS_BONUS, 0))
    sweep = torch.where(last == 1, swept_points, torch.where(last == 2, -swept_points, 0))
    return (bonus + sweep).to(torch.float32)


class TreeBuilder:
    """Builds a :class:`GameTree` round by round; see the module docstring for the modes."""

    def __init__(
        self,
        mode: Mode = "compact",
        device: str | torch.device = "cpu",
        *,
        infosets: bool = True,
        memory_limit: int | None = None,
        progress=None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown tree mode {mode!r} (choose from {', '.join(MODES)})")
        self.mode = mode
        self.device = torch.device(device)
        self.history = infosets
        self.guard = MemoryGuard(memory_limit, self.device)
        self.progress = progress  # callable(round, turn, nodes) or None

    # -- public ---------------------------------------------------------------------------
    def build(self, start: GameState) -> GameTree:
        if start.is_terminal:
            raise ValueError("the start state is terminal: there is no tree to build")
        t0 = time.perf_counter()
        dev = self.device
        lc = 0 if start.last_capturer is None else start.last_capturer + 1
        ca, cb = start.clubs
        frontier = _Frontier(
            hands=[torch.tensor([h], dtype=torch.int64, device=dev) for h in start.hands],
            pool=torch.tensor([start.pool], dtype=torch.int64, device=dev),
            clubs=[torch.zeros(1, dtype=torch.int64, device=dev) for _ in range(2)],
            last=torch.zeros(1, dtype=torch.int64, device=dev),
        )
        scores = None
        root_fgm = None
        if self.mode == "paper":
            flag = 1 if ca >= CLUBS_FOR_BONUS else 2 if cb >= CLUBS_FOR_BONUS else 0
            sa, sb = (0, 0) if flag else (ca, cb)
            scores = torch.tensor([[sa, sb, flag, lc]], dtype=torch.int8, device=dev)
            root_fgm = torch.zeros((1, 2), dtype=torch.int32, device=dev)
        else:
            a, b = normalize_clubs(torch.tensor([ca], device=dev), torch.tensor([cb], device=dev))
            frontier.clubs = [a, b]
            frontier.last = torch.tensor([lc], dtype=torch.int64, device=dev)
        rounds: list[RoundTree] = []
        turn = start.turn
        dealt = [[c for c in range(52) if (start.hands[p] >> c) & 1] for p in range(2)]
        for r in range(start.round, N_ROUNDS):
            if r > start.round:
                dealt = [list(start.deck.hand(p, r)) for p in range(2)]
                frontier.hands = [torch.full_like(frontier.pool, start.deck.hand_mask(p, r)) for p in range(2)]
            rt, frontier, scores, root_fgm = self._build_round(r, turn, dealt, frontier, scores, root_fgm)
            rounds.append(rt)
            turn = 0
        tree = GameTree(self.mode, dev, start, rounds)
        tree.seconds = time.perf_counter() - t0
        return tree

    # -- one round -----------------------------------------------------------------------
    def _build_round(self, r, start_turn, dealt, frontier: _Frontier, scores, root_fgm):
        t_start = time.perf_counter()
        dev = self.device
        inp_mask = 0
        for x in torch.unique(frontier.pool).tolist():
            inp_mask |= x
        for p in range(2):
            for c in dealt[p]:
                inp_mask |= 1 << c
        inp = [c for c in range(52) if (inp_mask >> c) & 1]
        rt = RoundTree(round=r, start_turn=start_turn, mode=self.mode, inp=inp, scores=scores)
        pos = torch.full((52,), -1, dtype=torch.int64, device=dev)
        pos[torch.tensor(inp, dtype=torch.int64, device=dev)] = torch.arange(len(inp), device=dev)
        inp_t = torch.tensor(inp, dtype=torch.int64, device=dev)
        rt.root_pools, rt.root_hands = frontier.pool, [h[:1] for h in frontier.hands]
        if self.history:
            frontier.cmp = initial_cmp(frontier.hands, frontier.pool, inp_t)
        c_scr = None
        if self.mode == "paper":
            rt.fgm[start_turn] = root_fgm
            c_scr = torch.bincount(root_fgm[:, 0].long(), minlength=frontier.n)

        for t in range(start_turn, TURNS_PER_ROUND):
            p = t & 1
            layer = GTLayer(n=frontier.n)
            self._keep_infosets(layer, frontier)
            rt.gt[t] = layer
            la, inv = unique_row_actions(frontier.hands[p], frontier.pool, dealt[p], r, inp_mask)
            brf = la.brf[inv]
            n_children = int(brf.sum())
            n_fgm = int((c_scr * brf).sum()) if c_scr is not None else n_children
            self.guard.check(r, t + 1, n_children, n_fgm, self.mode, len(inp), self.history)
            act = inverse_unique(la.brf, inv)  # unique-action index of every edge
            parent = torch.arange(frontier.n, device=dev).repeat_interleave(brf, output_size=n_children)
            card, captured = la.card[act], la.captured[act]
            sign = 1 - 2 * p
            layer.parent = parent.to(torch.int32)
            layer.card = card.to(torch.int8)
            layer.captured = captured
            layer.reward = (sign * la.points[act]).to(torch.int8)

            child = frontier.take(parent)
            bit = torch.ones_like(card) << card
            child.hands[p] = child.hands[p] & ~bit
            is_cap = captured != 0
            child.pool = torch.where(is_cap, child.pool & ~captured, child.pool | bit)
            child.clubs[p] = child.clubs[p] + la.clubs[act]
            child.last = torch.where(is_cap, p + 1, child.last)
            if self.history:
                cap_rows = ((la.captured.unsqueeze(1) >> inp_t) & 1).to(torch.int8)[act]  # [E, m]
                update_cmp(child.cmp, pos[card], cap_rows, is_cap, p, t // 2)
            if self.mode == "compact":
                child.clubs = list(normalize_clubs(*child.clubs))
                child, layer.child = self._merge(child, dealt)
            else:
                c_child = c_scr[parent]
                edg = repeat_blocks_index(c_scr, brf)
                fgm = torch.empty((n_fgm, 2), dtype=torch.int32, device=dev)
                fgm[:, 1] = rt.fgm[t][:, 1][edg]
                fgm[:, 0] = torch.arange(n_children, device=dev, dtype=torch.int32).repeat_interleave(
                    c_child, output_size=n_fgm
                )
                rt.fgm[t + 1], rt.edg[t + 1] = fgm, edg.to(torch.int32)
                c_scr = c_child
            frontier = child
            if self.progress is not None:
                self.progress(r, t + 1, rt.n_nodes(t + 1) if self.mode == "paper" else frontier.n)

        last_layer = GTLayer(n=frontier.n)
        self._keep_infosets(last_layer, frontier)
        rt.gt[TURNS_PER_ROUND] = last_layer
        frontier, scores, root_fgm = self._end_round(rt, frontier)
        rt.seconds = time.perf_counter() - t_start
        return rt, frontier, scores, root_fgm

    def _keep_infosets(self, layer: GTLayer, frontier: _Frontier) -> None:
        if not self.history:
            return
        layer.cmp = frontier.cmp
        if self.mode == "compact":
            layer.node_scores = torch.stack([frontier.clubs[0], frontier.clubs[1], frontier.last], 1).to(torch.int8)

    def _merge(self, child: _Frontier, dealt) -> tuple[_Frontier, torch.Tensor]:
        """Compact mode: merge children with the same future (cards, clubs, last capturer)."""
        local = torch.zeros_like(child.pool)
        for p in range(2):
            for i, c in enumerate(dealt[p]):
                local |= ((child.hands[p] >> c) & 1) << (4 * p + i)
        loc_key = child.pool | (local << 52)  # 60 bits
        _, loc_id = torch.unique(loc_key, return_inverse=True)
        key = (loc_id << 8) | (child.clubs[0] << 5) | (child.clubs[1] << 2) | child.last
        ukey, inv = torch.unique(key, return_inverse=True)
        return child.take(first_occurrence(inv, ukey.shape[0])), inv.to(torch.int32)

    def _end_round(self, rt: RoundTree, frontier: _Frontier):
        """Link the round's terminal nodes to the next round's roots (CodeSnippet 7), or value them."""
        dev = self.device
        r = rt.round
        if self.mode == "compact":
            # turn 8 was merged on (pool, clubs, last capturer): the next round's roots exactly
            if r == FINAL_ROUND:
                pool = frontier.pool
                rt.terminal_value = _final_value(
                    frontier.clubs[0],
                    frontier.clubs[1],
                    frontier.last,
                    popcount(pool & CLUB_MASK),
                    card_points_of(pool),
                )
            else:
                rt.link = torch.arange(frontier.n, dtype=torch.int32, device=dev)
            return frontier, None, None

        # paper mode: new inherited score of every terminal FGT node, from unique (score, running) pairs
        fgm = rt.fgm[TURNS_PER_ROUND]
        sc = rt.scores.long()
        if r == FINAL_ROUND:  # the sweep depends on each node's pool: value every node, in chunks
            pool_clubs, pool_points = popcount(frontier.pool & CLUB_MASK), card_points_of(frontier.pool)
            rt.terminal_value = torch.empty(fgm.shape[0], dtype=torch.float32, device=dev)
            for lo in range(0, fgm.shape[0], END_CHUNK):
                g, s = fgm[lo : lo + END_CHUNK, 0].long(), fgm[lo : lo + END_CHUNK, 1].long()
                ca, cb = _inherited_clubs(sc[s])
                ca, cb = normalize_clubs(ca + frontier.clubs[0][g], cb + frontier.clubs[1][g])
                last = torch.where(frontier.last[g] != NOBODY, frontier.last[g], sc[s, 3])
                rt.terminal_value[lo : lo + END_CHUNK] = _final_value(ca, cb, last, pool_clubs[g], pool_points[g])
            return frontier, None, None
        g, s = fgm[:, 0].long(), fgm[:, 1].long()
        # running score of the round, packed: clubs (< 16 each) and last capturer (< 4)
        run_key = frontier.clubs[0] | (frontier.clubs[1] << 4) | (frontier.last << 8)
        pair = (s << 10) | run_key[g]
        upair, pair_inv = torch.unique(pair, return_inverse=True)
        first = first_occurrence(pair_inv, upair.shape[0])
        ps, pg = s[first], g[first]  # representative (score, GT node) of each pair
        ca, cb = _inherited_clubs(sc[ps])
        ca, cb = normalize_clubs(ca + frontier.clubs[0][pg], cb + frontier.clubs[1][pg])
        last = torch.where(frontier.last[pg] != NOBODY, frontier.last[pg], sc[ps, 3])
        new_scores = torch.stack([*_paper_score(ca, cb), last], 1)
        uscores, score_id = torch.unique(new_scores, dim=0, return_inverse=True)
        fgm_score = score_id[pair_inv]  # per terminal FGT node
        upools, pool_id = torch.unique(frontier.pool, return_inverse=True)
        root_key = pool_id[g] * uscores.shape[0] + fgm_score
        uroot, link = torch.unique(root_key, return_inverse=True)  # sorted: grouped by pool id
        rt.link = link.to(torch.int32)
        root_fgm = torch.stack([uroot // uscores.shape[0], uroot % uscores.shape[0]], 1).to(torch.int32)
        nxt = _Frontier(
            hands=[torch.zeros_like(upools), torch.zeros_like(upools)],
            pool=upools,
            clubs=[torch.zeros_like(upools), torch.zeros_like(upools)],
            last=torch.zeros_like(upools),
        )
        return nxt, uscores.to(torch.int8), root_fgm


def _inherited_clubs(scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Normalized clubs of paper scores rows (Alex clubs, Bob clubs, flag, ...)."""
    flag = scores[:, 2]
    ca = torch.where(flag == 1, CLUBS_FOR_BONUS, torch.where(flag == 2, 0, scores[:, 0]))
    cb = torch.where(flag == 2, CLUBS_FOR_BONUS, torch.where(flag == 1, 0, scores[:, 1]))
    return ca, cb


def _paper_score(ca: torch.Tensor, cb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Normalized clubs as the paper's (Alex clubs, Bob clubs, 7-clubs flag): counts reset once clinched."""
    flag = torch.where(ca >= CLUBS_FOR_BONUS, 1, torch.where(cb >= CLUBS_FOR_BONUS, 2, 0))
    return torch.where(flag != 0, 0, ca), torch.where(flag != 0, 0, cb), flag


def build_tree(
    start: GameState,
    mode: Mode = "compact",
    device: str | torch.device = "cpu",
    *,
    infosets: bool = True,
    memory_limit: int | None = None,
    progress=None,
) -> GameTree:
    """Build the open-hand game tree from ``start`` (usually ``GameState.initial(deck)``).

    ``infosets`` keeps ``t_cmp`` per layer (for the infoset tensor; in compact mode, of one
    representative history per node, and each node's score)."""
    return TreeBuilder(mode, device, infosets=infosets, memory_limit=memory_limit, progress=progress).build(start)
