"""The infoset tensor [Q, 58] of the paper (CodeSnippet 8), one row per full-game-tree node.

Columns 0..51, one per card: the compressed state code of the node (``t_cmp``, codes in
docs/paper-notes.md: 100/105 in Alex's/Bob's hand, 110 in the pool since the round began,
history codes for cards played or captured this round), -127 for a card dealt in an earlier
round and no longer in play, 0 for a card not dealt yet.
Columns 52..54, the score context: Alex's clubs (7 once he has clinched the bonus), Bob's
clubs (likewise), the last capturer (0 nobody, 1 Alex, 2 Bob). In the paper tree it is the
score inherited at the start of the round (the paper has three slots for its four score
columns; ours hold the whole inherited key); in the compact tree, the node's own score so far.
In the compact tree a node merges several histories; its card codes are those of one of them.
Columns 55..57: round, turn (0..3) and player (0 Alex, 1 Bob) of the action that led to the node.
"""

from __future__ import annotations

import torch

from pasur.game.cards import N_ROUNDS, Deck
from pasur.solve.gametree import GameTree

N_FEATURES = 58
CAPTURED_EARLIER = -127


def dealt_before(deck: Deck, r: int) -> int:
    """Mask of the cards dealt before round ``r`` (``t_dlt``): the initial pool and earlier hands."""
    m = deck.pool_mask
    for k in range(min(r, N_ROUNDS)):
        m |= deck.hand_mask(0, k) | deck.hand_mask(1, k)
    return m


def infoset_tensor(tree: GameTree, r: int, t: int, nodes: torch.Tensor | None = None) -> torch.Tensor:
    """``t_inf`` [Q, 58] int8 of the FGT nodes at (round ``r``, turn ``t``), ``t`` in 1..8; with
    ``nodes`` (indices into the layer) only those rows, in that order, so that a caller can walk
    a layer of tens of millions of nodes in bounded memory."""
    rt = tree.round(r)
    if r == tree.start.round and tree.start.turn != 0:
        raise ValueError(
            f"infosets of round {r} need its history from turn 0; this tree starts at turn {tree.start.turn}"
        )
    if rt.gt[t].cmp is None:
        raise ValueError("infoset features need a tree built with infosets=True (t_cmp)")
    if not rt.start_turn < t <= 8:
        raise ValueError(f"turn {t}: infosets describe nodes after an action (turns {rt.start_turn + 1}..8)")
    dev = tree.device
    layer = rt.gt[t]
    if tree.mode == "paper":
        fgm = rt.fgm[t] if nodes is None else rt.fgm[t][nodes]
        gt_node = fgm[:, 0].long()
        sc = rt.scores.long()[fgm[:, 1].long()]
        flag = sc[:, 2]
        score = torch.stack([torch.where(flag == 1, 7, sc[:, 0]), torch.where(flag == 2, 7, sc[:, 1]), sc[:, 3]], 1).to(
            torch.int8
        )
    elif nodes is None:
        gt_node = torch.arange(layer.n, device=dev)
        score = layer.node_scores
    else:
        gt_node = nodes.long()
        score = layer.node_scores[gt_node]
    inf = torch.zeros((gt_node.shape[0], N_FEATURES), dtype=torch.int8, device=dev)
    inp = torch.tensor(rt.inp, dtype=torch.int64, device=dev)
    inf[:, inp] = layer.cmp[gt_node]
    dlt = dealt_before(tree.start.deck, r)
    dlt_t = torch.tensor([(dlt >> c) & 1 for c in range(52)], dtype=torch.bool, device=dev)
    cards = inf[:, :52]
    cards[dlt_t.unsqueeze(0) & (cards == 0)] = CAPTURED_EARLIER
    inf[:, 52:55] = score
    inf[:, 55] = r
    inf[:, 56] = (t - 1) // 2
    inf[:, 57] = (t - 1) % 2
    return inf
