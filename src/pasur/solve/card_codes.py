"""The paper's game tensor ``t_gme`` [M, 3, m] and its compression ``t_cmp`` [M, m].

``t_gme`` row 0 is the owner of each in-play card (1 Alex's hand, 2 Bob's hand, 3 pool,
0 gone); rows 1 and 2 are Alex's and Bob's history in the round: at turn pair ``k`` (0..3)
the card played gets ``k+1`` and every card captured ``10(k+1)``. ``t_cmp`` folds the three
rows into one int8 code per card (CodeSnippet 6; the codes are listed in docs/paper-notes.md).

The tree builder keeps ``t_cmp`` up to date incrementally (:func:`update_cmp`), which is all
the infosets need; :func:`replay_gme` rebuilds ``t_gme`` layer by layer from the tree's edges
with the paper's ApplyActions (CodeSnippet 1), and the tests check that compressing it gives
the incremental ``t_cmp`` at every layer.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

HAND_CODE = (100, 105)  # t_cmp of a card in Alex's / Bob's hand
POOL_CODE = 110  # t_cmp of a card in the pool since the round began


def owner_codes(hands: list[torch.Tensor], pool: torch.Tensor, inp: torch.Tensor, codes=(1, 2, 3)) -> torch.Tensor:
    """[M, m] int8: ``codes`` for cards in Alex's hand, Bob's hand and the pool, else 0."""
    out = torch.zeros((pool.shape[0], inp.shape[0]), dtype=torch.int8, device=pool.device)
    for code, mask in zip(codes, (hands[0], hands[1], pool), strict=True):
        out[((mask.unsqueeze(1) >> inp) & 1).bool()] = code
    return out


def initial_cmp(hands, pool, inp) -> torch.Tensor:
    """``t_cmp`` at the start of a round (no history): 100, 105, 110 or 0."""
    return owner_codes(hands, pool, inp, codes=(*HAND_CODE, POOL_CODE))


def update_cmp(cmp: torch.Tensor, cpos, cap_rows, is_cap, player: int, i_trn: int) -> torch.Tensor:
    """``t_cmp`` of the children (rows already gathered from their parents), in place.

    The played card becomes ``±(k+1)`` when laid and ``110 ± (k+1)`` when it captures; a
    captured card gains ``±10(k+1)``, from 0 if it had been in the pool since the round began.
    (+ for Alex, - for Bob; ``k`` = ``i_trn``.)"""
    s = 1 - 2 * player
    k = i_trn + 1
    rows = torch.arange(cmp.shape[0], device=cmp.device)
    cmp[rows, cpos] = torch.where(is_cap, POOL_CODE + s * k, s * k).to(torch.int8)
    sel = cap_rows.bool()
    old = cmp[sel]
    cmp[sel] = (torch.where(old == POOL_CODE, 0, old) + s * 10 * k).to(torch.int8)
    return cmp


def apply_actions(gme: torch.Tensor, cpos, cap_rows, is_cap, player: int, i_trn: int) -> None:
    """ApplyActions (CodeSnippet 1) in place, its lay/capture mask corrected (the paper adds the
    played card to the pool on captures; it belongs there only when laid)."""
    rows = torch.arange(gme.shape[0], device=gme.device)
    gme[rows, 0, cpos] = torch.where(is_cap, 0, 3).to(torch.int8)
    gme[:, 0, :] *= 1 - cap_rows
    gme[rows, 1 + player, cpos] += i_trn + 1
    gme[:, 1 + player, :] += (10 * (i_trn + 1)) * cap_rows


def compress_gme(gme: torch.Tensor) -> torch.Tensor:
    """``t_cmp`` from ``t_gme`` (CodeSnippet 6)."""
    owner = gme[:, 0, :]
    cmp = gme[:, 1, :] - gme[:, 2, :]
    gone_small = (owner == 0) & (cmp != 0) & (cmp.abs() < 5)
    cmp = torch.where(gone_small, POOL_CODE + cmp, cmp)
    cmp = torch.where((owner == 3) & (cmp == 0), POOL_CODE, cmp)
    cmp = torch.where((owner == 1) & (cmp == 0), HAND_CODE[0], cmp)
    cmp = torch.where((owner == 2) & (cmp == 0), HAND_CODE[1], cmp)
    return cmp.to(torch.int8)


def replay_gme(tree, r: int) -> Iterator[tuple[int, torch.Tensor]]:
    """``(turn, t_gme)`` for every layer of round ``r`` of a paper-mode tree, rebuilt from the
    round's roots and its edges with ApplyActions."""
    rt = tree.round(r)
    if tree.mode != "paper":
        raise ValueError("t_gme belongs to the paper tree (compact nodes merge different histories)")
    inp = torch.tensor(rt.inp, dtype=torch.int64, device=tree.device)
    pos = torch.full((52,), -1, dtype=torch.int64, device=tree.device)
    pos[inp] = torch.arange(inp.shape[0], device=tree.device)
    gme = torch.zeros((len(rt.root_pools), 3, inp.shape[0]), dtype=torch.int8, device=tree.device)
    gme[:, 0, :] = owner_codes([h.expand_as(rt.root_pools) for h in rt.root_hands], rt.root_pools, inp)
    yield rt.start_turn, gme
    for t in rt.play_turns:
        layer = rt.gt[t]
        parent, card, captured = layer.parent.long(), layer.card.long(), layer.captured
        gme = gme[parent]
        cap_rows = ((captured.unsqueeze(1) >> inp) & 1).to(torch.int8)
        apply_actions(gme, pos[card], cap_rows, captured != 0, t & 1, t // 2)
        yield t + 1, gme
