"""The tensorized open-hand game tree of a deck, built layer by layer (paper section 2).

A *layer* is a (round, turn) pair: turn ``t`` (0..8) counts the cards played in the round;
Alex moves on even turns. Two modes, one interface (:class:`~pasur.solve.gametree.RoundTree`):

``paper``
    The paper's decomposition. Inside a round the *game tree* (GT) holds card states with
    their within-round history; it is a tree: every action makes a new node. The history is
    kept as ``t_cmp`` [M, m] per layer; the paper's ``t_gme`` [M, 3, m] (owner row and the two
    action-history rows) is rebuilt from the edges on request (:mod:`pasur.solve.card_codes`).
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

Both modes give every solver the same view, the data types of :mod:`pasur.solve.gametree`:
per layer, edges ``(parent, child, gt_edge)`` into the next layer, and per GT edge its action
and reward; at the end of a round either a link to the next round's roots or, after round 5,
the terminal value (final sweep and clubs bonus). This module builds paper-mode rounds itself
and leaves compact rounds to :mod:`pasur.solve.compact`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from pasur.common.errors import PasurInputError
from pasur.common.memory import MemoryGuard
from pasur.game.state import GameState
from pasur.game.variants import STANDARD, Variant
from pasur.solve.actions import card_points_of, unique_row_actions
from pasur.solve.card_codes import initial_cmp, update_cmp
from pasur.solve.compact import build_compact
from pasur.solve.deals import Deals, pair_unique
from pasur.solve.gametree import GameTree, GTLayer, RoundTree, final_value
from pasur.solve.ops import first_occurrence, inverse_unique, popcount, repeat_blocks_index

Mode = Literal["paper", "compact"]
MODES: tuple[str, ...] = ("paper", "compact")

# last capturer codes in tensors: 0 nobody, 1 Alex, 2 Bob (the paper's "Last Picker")
NOBODY = 0
#: terminal nodes valued at once at the end of round 5 (bounds the transient memory)
END_CHUNK = 1 << 22


@dataclass
class _Frontier:
    """Per-node state of the current layer while a round is built (int64 tensors)."""

    hands: list[torch.Tensor]  # [2] x [M] card masks
    pool: torch.Tensor
    clubs: list[torch.Tensor]  # paper: clubs taken this round; compact: effective clubs (normalized)
    last: torch.Tensor  # paper: last capturer this round; compact: effective last capturer
    cmp: torch.Tensor | None = None  # t_cmp [M, m] int8 (paper mode with infosets)
    #: forests: each node's deal class (which future deals it faces); None for one start
    world: torch.Tensor | None = None

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
            None if self.world is None else self.world[idx],
        )


def normalize_clubs(
    ca: torch.Tensor, cb: torch.Tensor, *, variant: Variant = STANDARD
) -> tuple[torch.Tensor, torch.Tensor]:
    """Clubs as far as the future is concerned: (7, 0) or (0, 7) once the bonus is clinched
    (``variant.clubs_for_bonus`` for 7)."""
    need = variant.clubs_for_bonus
    a_won, b_won = ca >= need, cb >= need
    ca = torch.where(a_won, need, torch.where(b_won, 0, ca))
    cb = torch.where(b_won, need, torch.where(a_won, 0, cb))
    return ca, cb


def tree_variant(starts: Sequence[GameState]) -> Variant:
    """The variant the starts are played under: one for all, and one the tensor engine can encode
    (a hand's cards in 4 bits of a key and in the card codes' turn pairs, clubs in 3 bits)."""
    variant = starts[0].variant
    if any(s.variant != variant for s in starts):
        raise PasurInputError("the starts of a forest must share one variant")
    if variant.hand_size > 4 or variant.clubs_for_bonus > 7:
        raise PasurInputError(
            f"variant {variant.name}: the tensor engine takes hands of at most 4 cards and a clubs "
            "threshold of at most 7"
        )
    return variant


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
        self.variant = STANDARD  # the rules of the tree being built (its starts')

    # -- public ---------------------------------------------------------------------------
    def build(self, start: GameState) -> GameTree:
        return self.build_forest([start])

    def build_forest(self, starts: Sequence[GameState]) -> GameTree:
        """One tree over several starts at the same (round, turn); see :func:`build_forest`."""
        starts = tuple(starts)
        if not starts:
            raise ValueError("a forest needs at least one start")
        if len({(s.round, s.turn) for s in starts}) != 1:
            raise ValueError("the starts of a forest must be at the same round and turn")
        if starts[0].is_terminal:
            raise ValueError("the start state is terminal: there is no tree to build")
        self.variant = variant = tree_variant(starts)
        t0 = time.perf_counter()
        dev = self.device
        first = starts[0]
        deals = Deals(starts, dev)
        lcs = [0 if s.last_capturer is None else s.last_capturer + 1 for s in starts]
        clubs = torch.tensor([s.clubs for s in starts], dtype=torch.int64, device=dev).reshape(-1, 2)
        k = len(starts)
        frontier = _Frontier(
            hands=[torch.tensor([s.hands[p] for s in starts], dtype=torch.int64, device=dev) for p in range(2)],
            pool=torch.tensor([s.pool for s in starts], dtype=torch.int64, device=dev),
            clubs=[torch.zeros(k, dtype=torch.int64, device=dev) for _ in range(2)],
            last=torch.zeros(k, dtype=torch.int64, device=dev),
            world=deals.world(first.round),
        )
        scores = None
        root_fgm = None
        if self.mode == "paper":
            ca, cb, flag = _paper_score(*normalize_clubs(clubs[:, 0], clubs[:, 1], variant=variant), variant)
            rows = torch.stack([ca, cb, flag, torch.tensor(lcs, device=dev)], 1)
            uscores, sid = torch.unique(rows, dim=0, return_inverse=True)
            scores = uscores.to(torch.int8)
            root_fgm = torch.stack([torch.arange(k, device=dev), sid], 1).to(torch.int32)
        else:
            frontier.clubs = list(normalize_clubs(clubs[:, 0], clubs[:, 1], variant=variant))
            frontier.last = torch.tensor(lcs, dtype=torch.int64, device=dev)
            return build_compact(self, starts, deals, frontier, t0)
        rounds: list[RoundTree] = []
        turn = first.turn
        for r in range(first.round, variant.deals):
            if r > first.round:
                frontier.hands = deals.hands_of(r, frontier.pool, frontier.world)
            rt, frontier, scores, root_fgm = self._build_round(r, turn, deals, frontier, scores, root_fgm)
            rounds.append(rt)
            turn = 0
        tree = GameTree(self.mode, dev, first, rounds, starts=starts)
        tree.seconds = time.perf_counter() - t0
        return tree

    # -- one round (paper mode; compact rounds: pasur.solve.compact) -------------------------
    def _build_round(self, r, start_turn, deals: Deals, frontier: _Frontier, scores, root_fgm):
        t_start = time.perf_counter()
        dealt = deals.dealt[r]
        dev = self.device
        inp_mask = 0
        for x in torch.unique(frontier.pool).tolist():
            inp_mask |= x
        for p in range(2):
            for c in dealt[p]:
                inp_mask |= 1 << c
        inp = [c for c in range(52) if (inp_mask >> c) & 1]
        variant = self.variant
        rt = RoundTree(
            round=r, start_turn=start_turn, mode=self.mode, inp=inp, scores=scores, end_turn=variant.turns_per_round
        )
        pos = torch.full((52,), -1, dtype=torch.int64, device=dev)
        pos[torch.tensor(inp, dtype=torch.int64, device=dev)] = torch.arange(len(inp), device=dev)
        inp_t = torch.tensor(inp, dtype=torch.int64, device=dev)
        rt.root_pools = frontier.pool
        rt.root_hands = [h if frontier.world is not None else h[:1] for h in frontier.hands]
        if self.history:
            frontier.cmp = initial_cmp(frontier.hands, frontier.pool, inp_t)
        rt.fgm[start_turn] = root_fgm
        c_scr = torch.bincount(root_fgm[:, 0].long(), minlength=frontier.n)

        for t in rt.play_turns:
            p = t & 1
            layer = GTLayer(n=frontier.n)
            self._keep_infosets(layer, frontier)
            rt.gt[t] = layer
            la, inv = unique_row_actions(frontier.hands[p], frontier.pool, dealt[p], r, inp_mask, variant=variant)
            brf = la.brf[inv]
            n_children = int(brf.sum())
            n_fgm = int((c_scr * brf).sum())
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
                self.progress(r, t + 1, rt.n_nodes(t + 1))

        last_layer = GTLayer(n=frontier.n)
        self._keep_infosets(last_layer, frontier)
        rt.gt[rt.end_turn] = last_layer
        frontier, scores, root_fgm = self._end_round(rt, frontier, deals)
        rt.seconds = time.perf_counter() - t_start
        return rt, frontier, scores, root_fgm

    def _keep_infosets(self, layer: GTLayer, frontier: _Frontier) -> None:
        if self.history:
            layer.cmp = frontier.cmp

    def _end_round(self, rt: RoundTree, frontier: _Frontier, deals: Deals):
        """Paper mode: link the round's terminal nodes to the next round's roots (CodeSnippet 7),
        or value them."""
        variant = self.variant
        r = rt.round
        # paper mode: new inherited score of every terminal FGT node, from unique (score, running) pairs
        fgm = rt.fgm[rt.end_turn]
        sc = rt.scores.long()
        if r == variant.final_round:  # the sweep depends on each node's pool: value every node, in chunks
            self._final_values(rt, frontier)
            return frontier, None, None
        g, s = fgm[:, 0].long(), fgm[:, 1].long()
        # running score of the round, packed: clubs (< 16 each) and last capturer (< 4)
        run_key = frontier.clubs[0] | (frontier.clubs[1] << 4) | (frontier.last << 8)
        pair = (s << 10) | run_key[g]
        upair, pair_inv = torch.unique(pair, return_inverse=True)
        first = first_occurrence(pair_inv, upair.shape[0])
        ps, pg = s[first], g[first]  # representative (score, GT node) of each pair
        ca, cb = _inherited_clubs(sc[ps], variant)
        ca, cb = normalize_clubs(ca + frontier.clubs[0][pg], cb + frontier.clubs[1][pg], variant=variant)
        last = torch.where(frontier.last[pg] != NOBODY, frontier.last[pg], sc[ps, 3])
        new_scores = torch.stack([*_paper_score(ca, cb, variant), last], 1)
        uscores, score_id = torch.unique(new_scores, dim=0, return_inverse=True)
        fgm_score = score_id[pair_inv]  # per terminal FGT node
        if frontier.world is None:
            upools, pool_id = torch.unique(frontier.pool, return_inverse=True)
            uworld = None
        else:  # a root is (next deal class, pool)
            world = deals.nxt[r][frontier.world]
            _, pool_id = pair_unique(world, frontier.pool)
            rep = first_occurrence(pool_id, int(pool_id.max()) + 1)
            upools, uworld = frontier.pool[rep], world[rep]
        root_key = pool_id[g] * uscores.shape[0] + fgm_score
        uroot, link = torch.unique(root_key, return_inverse=True)  # sorted: grouped by pool id
        rt.link = link.to(torch.int32)
        root_fgm = torch.stack([uroot // uscores.shape[0], uroot % uscores.shape[0]], 1).to(torch.int32)
        nxt = _Frontier(
            hands=[torch.zeros_like(upools), torch.zeros_like(upools)],
            pool=upools,
            clubs=[torch.zeros_like(upools), torch.zeros_like(upools)],
            last=torch.zeros_like(upools),
            world=uworld,
        )
        return nxt, uscores.to(torch.int8), root_fgm

    def _final_values(self, rt: RoundTree, frontier: _Frontier) -> None:
        """Paper mode, last round: the future value (sweep and clubs bonus) of every terminal FGT
        node, in chunks (bounds the transient memory)."""
        variant, fgm, sc = self.variant, rt.fgm[rt.end_turn], rt.scores.long()
        pool_clubs = popcount(frontier.pool & variant.club_mask)
        pool_points = card_points_of(frontier.pool, variant=variant)
        rt.terminal_value = torch.empty(fgm.shape[0], dtype=torch.float32, device=self.device)
        for lo in range(0, fgm.shape[0], END_CHUNK):
            g, s = fgm[lo : lo + END_CHUNK, 0].long(), fgm[lo : lo + END_CHUNK, 1].long()
            ca, cb = _inherited_clubs(sc[s], variant)
            ca, cb = normalize_clubs(ca + frontier.clubs[0][g], cb + frontier.clubs[1][g], variant=variant)
            last = torch.where(frontier.last[g] != NOBODY, frontier.last[g], sc[s, 3])
            value = final_value(ca, cb, last, pool_clubs[g], pool_points[g], variant=variant)
            rt.terminal_value[lo : lo + END_CHUNK] = value


def _inherited_clubs(scores: torch.Tensor, variant: Variant = STANDARD) -> tuple[torch.Tensor, torch.Tensor]:
    """Normalized clubs of paper scores rows (Alex clubs, Bob clubs, flag, ...)."""
    need, flag = variant.clubs_for_bonus, scores[:, 2]
    ca = torch.where(flag == 1, need, torch.where(flag == 2, 0, scores[:, 0]))
    cb = torch.where(flag == 2, need, torch.where(flag == 1, 0, scores[:, 1]))
    return ca, cb


def _paper_score(
    ca: torch.Tensor, cb: torch.Tensor, variant: Variant = STANDARD
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Normalized clubs as the paper's (Alex clubs, Bob clubs, 7-clubs flag): counts reset once
    clinched (at the variant's ``clubs_for_bonus``)."""
    need = variant.clubs_for_bonus
    flag = torch.where(ca >= need, 1, torch.where(cb >= need, 2, 0))
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


def build_forest(
    starts: Sequence[GameState],
    mode: Mode = "compact",
    device: str | torch.device = "cpu",
    *,
    memory_limit: int | None = None,
    progress=None,
) -> GameTree:
    """One tree over several starts at the same (round, turn), each with its own deck (its own
    future deals), hands, pool, piles and scores: the worlds of a perfect-information Monte Carlo
    search, solved in one batched pass. Root ``k`` is node ``k`` of the first layer; nodes merge
    (compact mode) only within a *deal class* (starts with the same cards to come), or, at the end
    of a round, when the deals of the rounds after it coincide. ``build_tree(start)`` is the
    one-start case. No infosets are kept (their features assume one deck)."""
    return TreeBuilder(mode, device, infosets=False, memory_limit=memory_limit, progress=progress).build_forest(starts)
