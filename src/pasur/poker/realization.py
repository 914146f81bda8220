"""Own reach (realization weights) of every information set under a policy, forward only.

``x(sigma_u)``: the product of the acting player's own action probabilities on the path to an
information set u (Koller, Megiddo and von Stengel's realization plan). XFP's stepsize weighs
each best response by it; a pure best response's realization is 0 or 1. One pass down the
engine's levels, both players at once, every board of a round together (small games).
"""

from __future__ import annotations

import torch


def own_reach(engine, policy) -> list[torch.Tensor]:
    """Per round ``[rows, keys]``: each decision row's actor's own reach (keys ``board * H +
    hand position``), under ``policy`` (any object with ``edge_probs``)."""
    e = engine
    out = [torch.zeros(e.n_rows[r], e.n_boards[r] * e.Hr[r], dtype=e.dtype, device=e.device) for r in range(e.R)]
    # [slots, player, boards, hands]: each player's own reach at every node of a level
    reach = torch.ones(1, 2, e.n_boards[0], e.Hr[0], dtype=e.dtype, device=e.device)
    for r in range(e.R):
        levels = e.levels[r]
        B = e.n_boards[r]
        nxt = None
        if r + 1 < e.R:
            nxt = torch.zeros(len(e.levels[r + 1][0].nodes), 2, B, e.Hr[r], dtype=e.dtype, device=e.device)
        for d, lv in enumerate(levels):
            if d:
                prev = levels[d - 1]
                x = reach.index_select(0, lv.par)
                x[:, prev.actor] *= policy.edge_probs(r, prev.row_lo, lv.child_slot, 0, B)
                reach = x
            if lv.n_dec:
                out[r][lv.row_lo : lv.row_lo + lv.n_dec] = reach[: lv.n_dec, lv.actor].reshape(lv.n_dec, -1)
            if lv.n_cont:
                nxt[lv.cont_root] = reach[lv.cont]
        if nxt is not None:
            idx = e.root_index[r + 1].reshape(-1)
            reach = nxt.reshape(nxt.shape[0], 2, -1)[:, :, idx].view(nxt.shape[0], 2, e.n_boards[r + 1], e.Hr[r + 1])
    return out
