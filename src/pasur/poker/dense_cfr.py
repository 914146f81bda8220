"""Dense CFR for small games: the whole game laid out at once, a few dozen tensor operations per
iteration.

The level-by-level engine spends one set of operations per depth of the betting tree, which is
a few hundred small operations per Leduc iteration: fine for Numeral211, where each one moves
millions of numbers, but slow for Kuhn and Leduc, where Python overhead dominates. Here the whole
game is laid out at once, per history (terminal node, complete board, private hand):

* a player's reach is the product of their action probabilities along the path: one gather of
  all paths (``[Z, B, H, depth]``) and a product;
* terminal utilities are a batched matrix-vector product with the opponent's reach (the payoff
  matrices, with card removal, chance and stakes, are built once per game: ``O(H^2)`` per
  terminal and board, which only small games afford);
* each action's counterfactual value is a sum over the terminals below it of the utility times
  the player's own probabilities *after* the action: reverse cumulative products of the same
  gathered paths, added into the (row, key, action) slots in one ``index_add``.

Rows, keys, updates and the rounding snap are those of :mod:`pasur.poker.solvers` (lossless
keys, all boards listed), with the same update rules (:mod:`pasur.common.regret`), so the
iterates are the same; ``tests/poker`` checks that they are.
"""

from __future__ import annotations

import numpy as np
import torch

from pasur.common import regret as kernel
from pasur.common.errors import PasurInputError
from pasur.poker.cards import card_masks
from pasur.poker.policy import Keying, TabularPolicy
from pasur.poker.solvers import SNAP, CFRConfig, UpdatePasses
from pasur.poker.tree import DECISION, FOLDED, N_ACTIONS

#: dense CFR is used when all histories (nodes x boards x hands x depth) fit this many entries
MAX_ENTRIES = 2_000_000


def dense_size(engine) -> int:
    """Entries of the dense layout of ``engine``'s histories (what :data:`MAX_ENTRIES` bounds)."""
    t, b = engine.tree, engine.boards
    return t.n_nodes * len(b.boards[-1]) * len(b.hands) * (t.max_depth * engine.R + 2) * 2


def dense_supported(engine, keying: Keying | None) -> bool:
    """Whether :class:`DenseCFR` applies: lossless keys, every board listed, a small game."""
    return (keying is None or keying.lossless) and not engine.iso and dense_size(engine) <= MAX_ENTRIES


class DenseCFR(UpdatePasses):
    """Dense CFR for small games: the iterates of :class:`pasur.poker.solvers.CFRSolver` (lossless
    keys), its interface (a :class:`pasur.poker.solvers.Solver`), far fewer operations."""

    def __init__(self, engine, config: CFRConfig | None = None) -> None:
        if engine.iso:
            raise PasurInputError("dense CFR lists every board (make the engine with iso=False)")
        self.engine = engine
        self.config = config or CFRConfig()
        self.keying = Keying.lossless_for(engine)
        self.iteration = 0
        self._build()

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        """The flat layout (slots per round: rows x keys x actions, then a 1 and a 0), the index
        tables of the passes, the payoff matrices and the solver's tensors."""
        e = self.engine
        # flat slots: per round, rows x keys x actions
        self.n_keys = [e.n_boards[r] * e.Hr[r] for r in range(e.R)]
        self.offset = np.cumsum([0] + [e.n_rows[r] * self.n_keys[r] * N_ACTIONS for r in range(e.R)])
        F = int(self.offset[-1])
        self.ONE, self.ZERO = F, F + 1
        self.F = F
        valid, keys, paths = self._keys_and_paths()
        term = np.nonzero(e.tree.kind != DECISION)[0]
        self.Z = len(term)
        self._path_indices(term, valid, keys, paths)
        self.mats = self._payoff_matrices(term, valid)
        self._solver_tensors()

    def _keys_and_paths(self) -> tuple[np.ndarray, list[np.ndarray], list[list[tuple[int, int]]]]:
        """Which (final board, hand) pairs are valid ``[BF, H]``; per round, the key of each
        (final board, hand) at that round (its board prefix and hand position); per node, the
        edges (node, action) from the root."""
        e = self.engine
        t, bd, R = e.tree, e.boards, e.R
        BF = e.n_boards[-1]
        self.BF, self.H = BF, len(bd.hands)
        # final boards and their prefixes per round
        prefix = [None] * R
        prefix[R - 1] = np.arange(BF)
        for r in range(R - 1, 0, -1):
            prefix[r - 1] = bd.parent[r][prefix[r]]
        final_mask = card_masks(bd.boards[-1])
        valid = (bd.hand_masks[None, :] & final_mask[:, None]) == 0  # [BF, H]
        # key of (round r, final board, hand)
        keys = []
        for r in range(R):
            pos = bd.pos[r][prefix[r]]  # [BF, H]
            keys.append(np.where(pos >= 0, prefix[r][:, None] * e.Hr[r] + pos, 0))
        # paths: per node, the edges (node, action) from the root
        paths: list[list[tuple[int, int]]] = [[] for _ in range(t.n_nodes)]
        for n in range(1, t.n_nodes):
            paths[n] = [*paths[t.parent[n]], (int(t.parent[n]), int(t.action[n]))]
        return valid, keys, paths

    def _path_indices(self, term: np.ndarray, valid: np.ndarray, keys: list[np.ndarray], paths: list) -> None:
        """Per player, the index tables of a pass: the gather of the path products, the slots the
        values are added to, and the (row, key) of each own decision node member."""
        t, dev = self.engine.tree, self.engine.device
        A, F, BF, H = N_ACTIONS, self.F, self.BF, self.H

        def slot(node: int, a: int) -> np.ndarray:
            r = int(t.round[node])
            row = int(t.decision_index[node])
            return self.offset[r] + (row * self.n_keys[r] + keys[r]) * A + a  # [BF, H]

        def path_index(nodes: np.ndarray, player: int, reverse: bool, depth: int) -> np.ndarray:
            out = np.full((len(nodes), BF, H, depth), self.ONE, dtype=np.int64)
            for i, n in enumerate(nodes):
                own = [(m, a) for m, a in paths[n] if t.actor[m] == player]
                if reverse:
                    own = own[::-1]
                for j, (m, a) in enumerate(own):
                    out[i, :, :, j + (1 if reverse else 0)] = slot(m, a)
                out[i, ~valid, 1 if reverse else 0] = self.ZERO
            return out

        depth = max(1, max(sum(1 for m, _ in p if t.actor[m] == q) for p in paths for q in (0, 1)))
        # int32 indices where they fit: the gathers and the sum read half the index bytes
        largest = max(2 * (F + 2) + F // A + 1, len(term) * BF * H * (depth + 1))
        itype = torch.int32 if largest < 2**31 else torch.int64
        lt = lambda a: torch.as_tensor(a, dtype=itype, device=dev)  # noqa: E731
        self.gather_idx, self.keep_idx, self.add_idx, self.n_reach = [], [], [], []
        for p in (0, 1):
            opp = path_index(term, 1 - p, False, depth + 1)
            own = path_index(term, p, True, depth + 1)  # [1, e_m, ..., e_1]: cumprod = exclusive suffix
            dec = np.nonzero((t.kind == DECISION) & (t.actor == p))[0]
            # our paths to our decision nodes' valid members (the reach of the average strategy)
            own_dec = path_index(dec, p, False, depth + 1)[:, valid].reshape(-1, depth + 1)
            # one gather per pass: our paths to our decision nodes and the opponent's to the
            # terminals (one product), then our reversed paths to the terminals (suffix products)
            self.gather_idx.append(lt(np.concatenate([own_dec.reshape(-1), opp.reshape(-1), own.reshape(-1)])))
            add = np.concatenate([own[..., 1:], np.full((*own.shape[:-1], 1), self.ONE)], axis=-1).reshape(-1)
            # only the suffix products of real edges are summed (the padding's go nowhere), in order
            keep = np.nonzero(add < F)[0]
            self.keep_idx.append(lt(keep))
            # (row, key) of each own decision node member, for the reach of the average strategy
            rk = np.stack([slot(n, 0)[valid] // A for n in dec]) if len(dec) else np.zeros((0, 1), np.int64)
            self.n_reach.append(rk.size)
            # q, |q| and the reach land in one buffer: |q| at an offset of F + 2, the reach at 2 (F + 2)
            self.add_idx.append(lt(np.concatenate([add[keep], add[keep] + F + 2, rk.reshape(-1) + 2 * (F + 2)])))
        self.depth = depth + 1

    def _payoff_matrices(self, term: np.ndarray, valid: np.ndarray) -> list[torch.Tensor]:
        """Per player, the payoff matrices ``[Z * BF, H, H]``: w * stake * (compat or sign * compat)."""
        e = self.engine
        t, bd, BF, H = e.tree, e.boards, self.BF, self.H
        hm = bd.hand_masks
        compat = ((hm[:, None] & hm[None, :]) == 0)[None] & valid[:, :, None] & valid[:, None, :]  # [BF, H, H]
        s = np.where(valid, bd.strength, 0)  # all boards are listed: the last round's boards are the final ones
        sign = np.sign(s[:, :, None] - s[:, None, :])
        w = 1.0 / bd.n_deals
        mats = []
        for p in (0, 1):
            m = np.zeros((self.Z, BF, H, H))
            for i, z in enumerate(term):
                c = t.contrib[z]
                if t.kind[z] == FOLDED:
                    folder = t.actor[z]
                    stake = -c[p] if folder == p else c[folder]
                    m[i] = w * stake * compat
                else:
                    m[i] = w * c[p] * sign * compat
            mats.append(torch.as_tensor(m.reshape(self.Z * BF, H, H), dtype=e.dtype, device=e.device))
        return mats

    def _solver_tensors(self) -> None:
        """The legal actions and row owners per flat (row, key) group, the regrets, the average's
        sums, the current strategy (uniform) and the pass's buffers."""
        e = self.engine
        t, dev, dt, A, F = e.tree, e.device, e.dtype, N_ACTIONS, self.F
        legal, owner = [], []
        for r in range(e.R):
            dec = t.round_decisions[r]
            lg = np.repeat(t.legal[dec], self.n_keys[r], axis=0)  # [rows * keys, A]
            legal.append(lg)
            owner.append(np.repeat(t.actor[dec], self.n_keys[r]))
        legal = np.concatenate(legal) if legal else np.zeros((0, A), bool)
        self.legal = torch.as_tensor(legal, dtype=dt, device=dev)
        owner = np.concatenate(owner)
        # rows of one player (alternating updates discount only those); simultaneous: all rows
        self.mine = [torch.as_tensor(owner == p, device=dev)[:, None] for p in (0, 1)]
        G = F // A
        self.regret = torch.zeros(G, A, dtype=dt, device=dev)
        self.strategy_sum = torch.zeros(G, A, dtype=dt, device=dev)
        self._scratch = torch.empty_like(self.regret)
        self.sigma = torch.empty(F + 2, dtype=dt, device=dev)
        self._matching = kernel.DenseMatching(self.legal, dt)
        self._matching(self.regret, self.sigma[:F].view(G, A))  # uniform
        self.sigma[F], self.sigma[F + 1] = 1.0, 0.0
        # one buffer for the pass: q [F + 2], |q| [F + 2], reach per (row, key) [G + 1]
        self._buf = torch.zeros(2 * (F + 2) + G + 1, dtype=dt, device=dev)
        self._ones = torch.ones(A, 1, dtype=dt, device=dev)
        self._pass_buffers()

    def _pass_buffers(self) -> None:
        """Every intermediate of a pass, and every view of one a pass reads, made once: a Leduc
        pass is a few dozen operations on a few thousand numbers each, so allocating (or even
        slicing) them anew cost as much as computing them."""
        dev, dt, G, A, F2 = self.engine.device, self.engine.dtype, self.F // N_ACTIONS, N_ACTIONS, self.F + 2
        empty = lambda *shape, dtype=dt: torch.empty(*shape, dtype=dtype, device=dev)  # noqa: E731
        self._u = empty(self.Z * self.BF, self.H, 1)
        self._suffix = empty(self.Z, self.BF, self.H, self.depth)  # our suffix products times u
        self._suffix_u = (self._suffix, self._u.view(self.Z, self.BF, self.H, 1), self._suffix.view(-1))
        self._players = [self._player_views(p, empty) for p in (0, 1)]
        self._sig = self.sigma[: self.F].view(G, A)
        self._both = self._buf[: 2 * F2].view(2, F2)[:, : self.F].view(2, G, A)  # q and |q|
        self._reach = self._buf[2 * F2 :][:G, None]
        weighted = empty(2, G, A)  # sigma * q and sigma * |q|
        values = empty(2, G, 1)  # the node's value and its magnitude
        both = self._both
        self._inst_views = (both[0], both[1], weighted, weighted.view(-1, A), values.view(-1, 1), values[0], values[1])
        self._inst, self._abs_inst = empty(G, A), empty(G, A)
        self._noise = empty(G, A)
        self._snap = empty(G, A, dtype=torch.bool)

    def _player_views(self, p: int, empty) -> tuple:
        """Player ``p``'s gather (its index and buffer), the views its products read and write,
        and its sum (the kept suffix products, their magnitudes, the reach: one ``index_add``)."""
        Z, BF, H, D = self.Z, self.BF, self.H, self.depth
        k, n_reach = len(self.keep_idx[p]), self.n_reach[p]
        n_prods = n_reach + Z * BF * H
        g = empty(len(self.gather_idx[p]))
        summed = empty(2 * k + n_prods)  # kept suffix products, |.|, reach products, path products
        prods = summed[2 * k :]
        return (
            self.gather_idx[p],
            g,
            g[: n_prods * D].view(n_prods, D),
            prods,
            prods[n_reach:].view(Z * BF, H, 1),
            self.mats[p],
            g[n_prods * D :].view(Z, BF, H, D),
            self.keep_idx[p],
            summed[:k],
            summed[k : 2 * k],
            self.add_idx[p],
            summed[: 2 * k + n_reach],
        )

    # ------------------------------------------------------------------ iteration

    def _pass(self, players: tuple[int, ...]) -> None:
        """One traversal for ``players`` and their regret and average updates (few, large ops,
        each into a buffer of :meth:`_pass_buffers`).

        Only the updated players' own edges receive action values, so the other rows get a zero
        instantaneous regret without a player mask; illegal actions are masked out."""
        c = self.config
        t = self.iteration
        self._traverse(players)
        sig = self._sig
        inst = self._instantaneous(sig)
        reg = self.regret
        # the scheduled methods discount the updated rows' strategy sums first (once an iteration)
        f = kernel.average_discount(c.method, t, c.gamma, c.horizon)
        if f != 1.0:
            rows = None if len(players) == 2 else self.mine[players[0]]
            self.strategy_sum.mul_(f if rows is None else kernel.row_factor(rows, f, sig))
        if kernel.is_predictive(c.method):
            self.strategy_sum.addcmul_(sig, self._reach, value=kernel.average_weight(c.method, t, c.gamma))
            self._predictive(inst.mul_(self.legal), players)
            return
        reg.addcmul_(inst, self.legal)
        self.strategy_sum.addcmul_(sig, self._reach, value=kernel.average_weight(c.method, t, c.gamma))
        # the discount of iteration t on the updated players' rows; every row when both are
        # updated, and for CFR+ (the other player's rows are already floored: flooring is idempotent)
        mask = None if len(players) == 2 or c.method == "cfr+" else self.mine[players[0]]
        kernel.discount_(
            reg, c.method, t, alpha=c.alpha, beta=c.beta, mask=mask, scratch=self._scratch, horizon=c.horizon
        )
        self._matching(reg, sig)

    def _traverse(self, players: tuple[int, ...]) -> None:
        """The action values ``q`` and their magnitudes ``|q|`` of the players' edges, and their
        reach per (row, key), summed into :attr:`_buf`."""
        buf = self._buf.zero_()
        suffix, u, suffix_flat = self._suffix_u
        for p in players:
            index, g, paths, prods, prods_term, mats, own_paths, keep, kept, kept_abs, add, summed = self._players[p]
            torch.index_select(self.sigma, 0, index, out=g)
            torch.prod(paths, -1, out=prods)
            torch.bmm(mats, prods_term, out=self._u)
            torch.cumprod(own_paths, -1, out=suffix).mul_(u)
            torch.index_select(suffix_flat, 0, keep, out=kept)
            torch.abs(kept, out=kept_abs)
            buf.index_add_(0, add, summed)

    def _instantaneous(self, sig: torch.Tensor) -> torch.Tensor:
        """The instantaneous regrets ``q - sigma . q``, set to 0 where within rounding noise of the
        summed magnitudes (``|q| + sigma . |q|``, not of the possibly cancelling sums)."""
        q, qa, weighted, weighted_rows, values, value, value_abs = self._inst_views
        torch.mul(sig, self._both, out=weighted)
        torch.mm(weighted_rows, self._ones, out=values)
        inst = torch.sub(q, value, out=self._inst)
        noise = torch.add(qa, value_abs, out=self._noise).mul_(SNAP)
        torch.le(torch.abs(inst, out=self._abs_inst), noise, out=self._snap)
        return inst.masked_fill_(self._snap, 0.0)

    def _predictive(self, inst: torch.Tensor, players: tuple[int, ...]) -> None:
        """The predictive variants' update of the updated players' rows: regrets from this pass's
        instantaneous ones, and the next strategy from the regrets and those instantaneous ones
        (the prediction); the other rows keep theirs."""
        c, t = self.config, self.iteration
        G = self.F // N_ACTIONS
        sig = self.sigma[: self.F].view(G, N_ACTIONS)
        new = kernel.predictive_update_(self.regret.clone(), inst, c.method, t, c.alpha)
        explicit = kernel.predicted_regret(new, inst, c.method, t, c.alpha)
        strategy = kernel.regret_matching(explicit, self.legal)
        if len(players) == 2:
            self.regret.copy_(new)
            sig.copy_(strategy)
            return
        mine = self.mine[players[0]]
        self.regret.copy_(torch.where(mine, new, self.regret))
        sig.copy_(torch.where(mine, strategy, sig))

    # ------------------------------------------------------------------ policies

    def _tables(self, flat: torch.Tensor) -> list[torch.Tensor]:
        e = self.engine
        out = []
        for r in range(e.R):
            lo, hi = int(self.offset[r]), int(self.offset[r + 1])
            out.append(flat[lo:hi].view(e.n_rows[r], self.n_keys[r], N_ACTIONS).permute(0, 2, 1).contiguous())
        return out

    @property
    def current(self) -> TabularPolicy:
        return TabularPolicy(self.engine, self.keying, self._tables(self.sigma[: self.F]))

    def average_policy(self) -> TabularPolicy:
        """The average strategy (uniform where a row was never reached)."""
        avg = kernel.normalize(self.strategy_sum, self.legal)
        return TabularPolicy(self.engine, self.keying, self._tables(avg.reshape(-1)))
