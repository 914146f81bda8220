"""The vectorized engine: the betting tree times private-hand ranges, level by level.

At every public node (a betting history and a board of its round) each player has a vector over
the private hands that miss the board: the probability that the player's own strategy reaches the
node with that hand (*reach*), and the counterfactual value of holding it there (*value*: the
expectation over the opponent's hands and future cards, weighted by the opponent's reach and
chance). Hands that meet the opponent's are removed in the terminal utilities
(:mod:`pasur.poker.showdown`).

One level of one round (every betting sequence at that depth, every board of the round, every
hand) is one set of tensor operations: the forward pass multiplies the parents' reach by the
acting player's edge probabilities; the backward pass combines the children's values: the acting
player's by its strategy (``sigma``: expected values, CFR) or by the best action (``max``: a
best response; a hand at a node, with its round's board, is a whole information set, so the max
is per hand), the other player's by a sum (its strategy is already in its reach). Round
boundaries are chance nodes: reach is gathered from the parent board, values summed over every
actual child board (through the suit relabelling of :mod:`pasur.poker.boards`). The last round, by
far the largest, is processed in chunks of boards, so memory stays bounded on Numeral211.

A *policy* is any object with ``edge_probs(r, row_lo, child_slot, b0, b1) -> [n, Bc, H]``: the
probability of each child edge (``child_slot = node * 3 + action``, nodes counted from decision
row ``row_lo`` of round ``r``) on boards ``b0:b1``. A *hook* ``hook(LevelData)`` sees each level's
decision nodes after its backward step: the solvers accumulate regrets and average strategies
there, BUFP can read beliefs and best-response values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from pasur.poker.boards import RoundBoards
from pasur.poker.games import PokerGame, get_game
from pasur.poker.showdown import RoundCards
from pasur.poker.tree import FOLDED, N_ACTIONS, SHOWDOWN, BettingTree

#: default budget for one chunk of last-round boards (reach, values and transients)
CHUNK_BYTES = 384 * 2**20


@dataclass
class Level:
    """One depth of one round. Its slots (node ids) are ordered decision nodes first, then fold
    terminals, showdown terminals and nodes that begin the next round, so each kind is a slice."""

    nodes: torch.Tensor  # [n] node ids
    par: torch.Tensor | None  # [n] index of the parent in the previous level's slots
    child_slot: torch.Tensor | None  # [n] parent * A + action: the slot in the parent's actions
    pdec: torch.Tensor | None  # [n] index of the parent among the previous level's decision slots
    n_dec: int
    n_fold: int
    n_show: int
    n_cont: int
    row_lo: int  # decision rows of the round: [row_lo, row_lo + n_dec)
    actor: int  # who acts at this level's decision slots (-1 if none)
    legal: torch.Tensor  # [n_dec, A]
    fold_stake: torch.Tensor  # [n_fold, 2] chips won by each player (negative: lost)
    show_stake: torch.Tensor  # [n_show] chips each player has in (won or lost)
    cont_root: torch.Tensor  # [n_cont] their index among the next round's roots

    @property
    def fold(self) -> slice:
        return slice(self.n_dec, self.n_dec + self.n_fold)

    @property
    def show(self) -> slice:
        return slice(self.n_dec + self.n_fold, self.n_dec + self.n_fold + self.n_show)

    @property
    def cont(self) -> slice:
        return slice(self.n_dec + self.n_fold + self.n_show, None)


@dataclass
class LevelData:
    """What a hook sees at one level's decision nodes (for the acting player ``actor``)."""

    round: int
    row_lo: int  # the nodes are decision rows row_lo:row_hi of the round
    row_hi: int
    actor: int
    b0: int  # on boards b0:b1 of the round
    b1: int
    child_slot: torch.Tensor  # [n_children]: node * A + action of each child edge (node local)
    q: torch.Tensor  # [n_children, Bc, H] the actor's counterfactual value of each child edge
    value: torch.Tensor  # [m, Bc, H] the actor's counterfactual value of each node
    reach: torch.Tensor | None  # [m, Bc, H] the actor's own reach (when the traversal kept it)
    opp_reach: torch.Tensor | None  # [m, Bc, H] the opponent's reach (likewise)
    edge_probs: torch.Tensor | None  # [n_children, Bc, H] the actor's probability of each edge


class Engine:
    """Public tree x ranges for one game on one device (see the module docstring).

    ``iso``: list one board per suit-isomorphism class (default: on when the boards have two
    cards or more, where it pays; strategies must then be suit-symmetric, which every keying
    built here is, see :mod:`pasur.poker.boards`). Ranges of round ``r`` are ``[B_r, H_r]``:
    the hands that miss each board (``hand_ids[r]``), sorted by strength in the last round.
    """

    def __init__(
        self,
        game: PokerGame | str,
        *,
        iso: bool | None = None,
        device: torch.device | str = "cpu",
        dtype: torch.dtype = torch.float64,
        chunk_bytes: int = CHUNK_BYTES,
    ) -> None:
        self.game = get_game(game) if isinstance(game, str) else game
        g = self.game
        if iso is None:
            iso = sum(g.board_cards) >= 2 and g.n_suits > 1
        self.iso = iso
        self.device = torch.device(device)
        self.dtype = dtype
        self.tree = BettingTree(g)
        self.boards = RoundBoards(g, iso=iso)
        self.R = g.n_rounds
        dev = self.device
        lt = lambda a: None if a is None else torch.as_tensor(a, dtype=torch.int64, device=dev)  # noqa: E731
        self.hand_ids = [lt(h) for h in self.boards.hand_ids]
        self.Hr = [int(h.shape[1]) for h in self.boards.hand_ids]
        self.n_boards = [len(b) for b in self.boards.boards]
        self.mult = [torch.as_tensor(m, dtype=dtype, device=dev) for m in self.boards.mult]
        # reach and values at a listed board carry its multiplicity (the actual boards it stands
        # for), so sums over keys need no per-element weights; see traverse()
        self.mult_ratio = [None] + [
            self.mult[r] / self.mult[r - 1][torch.as_tensor(self.boards.parent[r], device=dev)]
            for r in range(1, self.R)
        ]
        self.root_index = [lt(x) for x in self.boards.root_index]
        self.expand_parent = [lt(x) for x in self.boards.expand_parent]
        self.expand_child = [lt(x) for x in self.boards.expand_child]
        self.expand_pos = [lt(x) for x in self.boards.expand_pos]
        self.weight = self.boards.weight
        self.cards = [RoundCards(self.boards, r, dev, r == self.R - 1, dtype) for r in range(self.R)]
        self.levels = [self._build_levels(r) for r in range(self.R)]
        self.n_rows = [len(d) for d in self.tree.round_decisions]
        nodes_last = sum(int(lv.nodes.numel()) for lv in self.levels[-1])
        per_board = nodes_last * self.Hr[-1] * 6 * (torch.finfo(dtype).bits // 8)
        self.chunk = max(1, min(self.n_boards[-1], chunk_bytes // max(per_board, 1)))

    # ------------------------------------------------------------------ structure

    def _build_levels(self, r: int) -> list[Level]:
        t = self.tree
        dev = self.device
        lt = lambda a: torch.as_tensor(np.asarray(a, dtype=np.int64), device=dev)  # noqa: E731
        roots = t.round_roots(r) if r > 0 else np.array([0])
        next_roots = t.round_roots(r + 1) if r + 1 < self.R else np.zeros(0, dtype=np.int64)
        root_pos = {int(n): i for i, n in enumerate(next_roots)}
        levels: list[Level] = []
        nodes, prev_nodes, prev_ndec, d = np.sort(roots), None, 0, 0
        while len(nodes):
            in_r = (t.round[nodes] == r) if d > 0 else np.ones(len(nodes), bool)
            dec = nodes[in_r & t.is_decision[nodes]]
            fold = nodes[t.kind[nodes] == FOLDED]
            show = nodes[t.kind[nodes] == SHOWDOWN]
            cont = nodes[~in_r]
            slots = np.concatenate([dec, fold, show, cont])
            if prev_nodes is not None:
                pos = {int(n): i for i, n in enumerate(prev_nodes)}
                par = np.array([pos[int(t.parent[n])] for n in slots])
                if (par >= prev_ndec).any():
                    raise AssertionError("a parent must be a decision slot")
                child_slot = par * N_ACTIONS + t.action[slots]
            else:
                par = child_slot = None
            rows = t.decision_index[dec]
            if len(rows) and not np.array_equal(rows, np.arange(rows[0], rows[0] + len(rows))):
                raise AssertionError("decision rows of a level must be contiguous")
            actors = set(t.actor[dec].tolist())
            if len(actors) > 1:
                raise AssertionError("one actor per level")
            c = t.contrib[fold]
            folder = t.actor[fold]
            lost = c[np.arange(len(fold)), folder][:, None]
            stake = np.where(np.arange(2)[None, :] == folder[:, None], -lost, lost)
            levels.append(
                Level(
                    nodes=lt(slots),
                    par=None if par is None else lt(par),
                    child_slot=None if child_slot is None else lt(child_slot),
                    pdec=None if par is None else lt(par),
                    n_dec=len(dec),
                    n_fold=len(fold),
                    n_show=len(show),
                    n_cont=len(cont),
                    row_lo=int(rows[0]) if len(rows) else 0,
                    actor=actors.pop() if actors else -1,
                    legal=torch.as_tensor(t.legal[dec], device=dev),
                    fold_stake=torch.as_tensor(stake, dtype=self.dtype, device=dev),
                    show_stake=torch.as_tensor(t.contrib[show, 0], dtype=self.dtype, device=dev),
                    cont_root=lt([root_pos[int(n)] for n in cont]),
                )
            )
            kids = [int(k) for n in dec for k in t.child[n] if k >= 0]
            prev_nodes, prev_ndec = slots, len(dec)
            nodes = np.array(sorted(kids), dtype=np.int64)
            d += 1
        return levels

    def chunks(self, r: int, chunk: int | None = None) -> list[tuple[int, int]]:
        """Board ranges processed together: the last round in chunks, earlier rounds whole."""
        n = self.n_boards[r]
        if r < self.R - 1:
            return [(0, n)]
        c = chunk or self.chunk
        return [(b, min(n, b + c)) for b in range(0, n, c)]

    # ------------------------------------------------------------------ traversal

    def _zeros(self, *shape) -> torch.Tensor:
        return torch.zeros(*shape, dtype=self.dtype, device=self.device)

    def _forward_round(self, r, policy, root_reach, slots, b0, b1) -> tuple[list, list]:
        """Reach ``[n, S, Bc, H_r]`` (players ``slots``) of every level of round ``r`` on boards
        ``b0:b1``, and the edge probabilities used (``None`` where not needed)."""
        levels = self.levels[r]
        reach, sigs = [root_reach], [None]
        for d in range(1, len(levels)):
            prev, lv = levels[d - 1], levels[d]
            x = reach[-1].index_select(0, lv.par)
            sig = None
            if prev.actor in slots:
                sig = policy.edge_probs(r, prev.row_lo, lv.child_slot, b0, b1)
                x[:, slots.index(prev.actor)].mul_(sig)
            reach.append(x)
            sigs.append(sig)
        return reach, sigs

    def _terminal(self, r, lv: Level, reach, slots, players, b0, b1, out) -> None:
        """Utilities of the level's fold and showdown nodes for ``players``, into ``out``."""
        w = self.weight[r]
        cards = self.cards[r]
        P, bc, H = len(players), b1 - b0, self.Hr[r]
        opp = [slots.index(1 - p) for p in players]
        for part, n, fn, stake in (
            (lv.fold, lv.n_fold, cards.compatible, lv.fold_stake[:, list(players)] * w),
            (lv.show, lv.n_show, cards.win_minus_lose, (lv.show_stake * w)[:, None].expand(-1, P)),
        ):
            if not n:
                continue
            x = reach[part]
            pi = x[:, opp[0]] if P == 1 else x[:, opp].reshape(-1, bc, H)
            u = fn(pi, b0, b1).view(n, P, bc, H)
            torch.mul(u, stake[:, :, None, None], out=out[part])

    def _backward_round(self, r, policy, reach, sigs, slots, players, modes, b0, b1, cont_values, hook) -> torch.Tensor:
        """Values ``[n_roots, P, Bc, H_r]`` of the round's roots on boards ``b0:b1``."""
        levels = self.levels[r]
        P, bc, H = len(players), b1 - b0, self.Hr[r]
        below = None
        for d in range(len(levels) - 1, -1, -1):
            lv = levels[d]
            v = torch.empty(int(lv.nodes.numel()), P, bc, H, dtype=self.dtype, device=self.device)
            self._terminal(r, lv, reach[d], slots, players, b0, b1, v)
            if lv.n_cont:
                torch.index_select(cont_values, 0, lv.cont_root, out=v[lv.cont])
            m = lv.n_dec
            if m:
                child = levels[d + 1]
                vd = v[:m]
                vd.zero_()
                i = players.index(lv.actor) if lv.actor in players else -1
                for j in range(P):
                    if j != i:
                        vd[:, j].index_add_(0, child.pdec, below[:, j])
                if i >= 0:
                    q = below[:, i]
                    sig = sigs[d + 1]
                    if modes[i] == "max":
                        idx = child.pdec[:, None, None].expand_as(q)
                        vd[:, i] = torch.empty_like(vd[:, i]).scatter_reduce_(0, idx, q, "amax", include_self=False)
                    else:
                        if sig is None:
                            sig = policy.edge_probs(r, lv.row_lo, child.child_slot, b0, b1)
                        vd[:, i].index_add_(0, child.pdec, sig * q)
                    if hook is not None:
                        rd = reach[d][:m]
                        own = rd[:, slots.index(lv.actor)] if lv.actor in slots else None
                        opp = rd[:, slots.index(1 - lv.actor)] if 1 - lv.actor in slots else None
                        hook(
                            LevelData(
                                round=r,
                                row_lo=lv.row_lo,
                                row_hi=lv.row_lo + m,
                                actor=lv.actor,
                                b0=b0,
                                b1=b1,
                                child_slot=child.child_slot,
                                q=q,
                                value=vd[:, i],
                                reach=own,
                                opp_reach=opp,
                                edge_probs=sig,
                            )
                        )
            below = v
        return below

    def _root_reach(self, r: int, cont_reach: torch.Tensor, b0: int, b1: int) -> torch.Tensor:
        n, S = cont_reach.shape[:2]
        idx = self.root_index[r][b0:b1]
        return cont_reach.view(n, S, -1)[:, :, idx.reshape(-1)].view(n, S, b1 - b0, self.Hr[r])

    def _expand_to_parent(self, r: int, values: torch.Tensor, b0: int, b1: int, out: torch.Tensor) -> None:
        """Add round ``r`` root values on boards ``b0:b1`` into ``out`` (boards of round ``r - 1``)."""
        ec = self.expand_child[r]
        sel = ((ec >= b0) & (ec < b1)).nonzero().squeeze(1)
        n, P, bc, H = values.shape
        pos = self.expand_pos[r].index_select(0, sel)
        zero = bc * H
        idx = torch.where(pos >= 0, (ec.index_select(0, sel) - b0)[:, None] * H + pos, zero)
        flat = torch.cat([values.reshape(n, P, zero), values.new_zeros(n, P, 1)], dim=2)
        gathered = flat[:, :, idx.reshape(-1)].view(n, P, len(sel), -1)
        out.index_add_(2, self.expand_parent[r].index_select(0, sel), gathered)

    def traverse(
        self, policy, players=(0, 1), modes="sigma", hook=None, chunk=None, reach_players=None
    ) -> torch.Tensor:
        """Root values ``[P]`` of ``players`` (expected payoff, chips per game) under ``policy``.

        ``modes[i]``: ``sigma`` (follow the policy) or ``max`` (best-respond) for ``players[i]``.
        Reach is propagated for the opponents of ``players`` (what the terminal utilities need)
        and, with a hook, for both players (``reach_players`` overrides).

        With suit isomorphism a listed board stands for ``mult`` actual boards: the reach and
        values a hook sees on it are multiplied by ``mult`` (both players' reach, so values too),
        which makes sums over boards and hands (regrets and strategies of a bucket) plain sums.
        Ratios at one board (beliefs, best actions) are unaffected; root values are exact."""
        players = tuple(players)
        if isinstance(modes, str):
            modes = (modes,) * len(players)
        if reach_players is None:
            reach_players = (0, 1) if hook is not None else tuple(sorted({1 - p for p in players}))
        slots = tuple(sorted(set(reach_players) | {1 - p for p in players}))
        S = len(slots)
        R = self.R
        fwd, cont_reach = [], []
        # own reach 1 at the root, times each listed board's multiplicity (round 1 may deal cards)
        root = self.mult[0][None, None, :, None].expand(1, S, -1, self.Hr[0]).clone()
        for r in range(R - 1):
            reach, sigs = self._forward_round(r, policy, root, slots, 0, self.n_boards[r])
            fwd.append((reach, sigs))
            cr = self._zeros(len(self.levels[r + 1][0].nodes), S, self.n_boards[r], self.Hr[r])
            for d, lv in enumerate(self.levels[r]):
                if lv.n_cont:
                    cr[lv.cont_root] = reach[d][lv.cont]
            cont_reach.append(cr)
            if r + 1 < R - 1:
                root = self._root_reach(r + 1, cr, 0, self.n_boards[r + 1])
                root.mul_(self.mult_ratio[r + 1][None, None, :, None])
        P = len(players)
        boundary = None
        total = torch.zeros(P, dtype=self.dtype, device=self.device)
        for r in range(R - 1, -1, -1):
            parent_vals = None
            if r:
                parent_vals = self._zeros(len(self.levels[r][0].nodes), P, self.n_boards[r - 1], self.Hr[r - 1])
            for b0, b1 in self.chunks(r, chunk):
                if r == R - 1:
                    if R > 1:
                        rr = self._root_reach(r, cont_reach[-1], b0, b1)
                        rr.mul_(self.mult_ratio[r][None, None, b0:b1, None])
                    else:
                        rr = root[:, :, b0:b1]
                    reach, sigs = self._forward_round(r, policy, rr, slots, b0, b1)
                else:
                    reach, sigs = fwd[r]
                vals = self._backward_round(r, policy, reach, sigs, slots, players, modes, b0, b1, boundary, hook)
                del reach, sigs
                if r == 0:
                    total = total + vals[0].sum((1, 2))
                if r:
                    vals.div_(self.mult[r][None, None, b0:b1, None])
                    self._expand_to_parent(r, vals, b0, b1, parent_vals)
            if r:
                parent_vals.mul_(self.mult[r - 1][None, None, :, None])
            boundary = parent_vals
        return total
