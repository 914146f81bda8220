"""The infoset tensor [Q, 58] of the paper (CodeSnippet 8), one row per full-game-tree node, and
the features of a strategy table's rows (:func:`edge_features`).

Columns 0..51, one per card: the compressed state code of the node (``t_cmp``, codes in
docs/paper-notes.md: 100/105 in Alex's/Bob's hand, 110 in the pool since the round began,
history codes for cards played or captured this round), -127 for a card dealt in an earlier
round and no longer in play, 0 for a card not dealt yet.
Columns 52..54, the score context: Alex's clubs (7, the variant's ``clubs_for_bonus``, once he
has clinched the bonus), Bob's clubs (likewise), the last capturer (0 nobody, 1 Alex, 2 Bob).
In the paper tree it is the score inherited at the start of the round (the paper has three slots for its four score
columns; ours hold the whole inherited key); in the compact tree, the node's own score so far.
In the compact tree a node merges several histories; its card codes are those of one of them.
Columns 55..57: round, turn (0..3) and player (0 Alex, 1 Bob) of the action that led to the node.

A strategy table's row is an edge (a decision and one of its actions). In the paper tree its
features are the paper's: the infoset of the node the edge leads to. A compact node merges
histories, and the card codes of one of them say nothing of the others, so a model trained on
them meets other codes in play (issue 47: 3 to 11 points of the table's margin lost). A compact
row therefore holds its *state features* (:data:`FEATURE_SETS`, :func:`to_state_features`): what
the compact tree keys its nodes on, the same for every history a node merges, and still one row
per edge:

- the card columns say where each card is after the action: 100/105 in Alex's/Bob's hand, 110 in
  the pool (laid this round or before), -127 gone, 0 not dealt yet; except the card just played
  and the cards it captured, which keep the paper's codes of this turn (``±k`` laid, ``110 ± k``
  capturing, ``±10k`` captured), so the action is in the row;
- columns 52..54 hold the score context of the *decision* (the parent node: clubs normalized once
  the bonus is clinched, last capturer), which a capture would otherwise overwrite.

From such a row the parent's hands, pool and score and the action can be read back, so two edges
of a compact tree never share a row (a test checks it). Paper and compact rows of one decision
differ in exactly those columns: cards played or captured earlier in the round (history codes
against pool or gone), a captured card's earlier history, and columns 52..54 (the score inherited
at the round's start against the decision's own); the tests map one onto the other.
"""

from __future__ import annotations

import torch

from pasur.game.cards import Deck
from pasur.solve.card_codes import HAND_CODE, POOL_CODE
from pasur.solve.gametree import GameTree

N_FEATURES = 58
CAPTURED_EARLIER = -127
#: what a strategy table's features are, by tree mode (the table's ``pasur.features`` metadata and a
#: model card's ``feature_set``): the paper's history codes, or the compact tree's state features
FEATURE_SETS = {"paper": "history", "compact": "state"}


def dealt_before(deck: Deck, r: int) -> int:
    """Mask of the cards dealt before round ``r`` (``t_dlt``): the initial pool and earlier hands."""
    m = deck.pool_mask
    for k in range(min(r, deck.variant.deals)):
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
    if not rt.start_turn < t <= rt.end_turn:
        raise ValueError(
            f"turn {t}: infosets describe nodes after an action (turns {rt.start_turn + 1}..{rt.end_turn})"
        )
    dev = tree.device
    layer = rt.gt[t]
    if tree.mode == "paper":
        fgm = rt.fgm[t] if nodes is None else rt.fgm[t][nodes]
        gt_node = fgm[:, 0].long()
        sc = rt.scores.long()[fgm[:, 1].long()]
        flag, need = sc[:, 2], tree.variant.clubs_for_bonus
        score = torch.stack(
            [torch.where(flag == 1, need, sc[:, 0]), torch.where(flag == 2, need, sc[:, 1]), sc[:, 3]], 1
        ).to(torch.int8)
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


def state_codes(cards: torch.Tensor) -> torch.Tensor:
    """Card columns [N, 52] of the paper's codes turned into where each card is: 100/105 in a hand,
    110 in the pool (there since the round began, or laid this round), -127 gone, 0 not dealt."""
    mag = cards.to(torch.int16).abs()
    in_pool = (cards == POOL_CODE) | ((mag >= 1) & (mag <= 4))
    kept = in_pool | (cards == HAND_CODE[0]) | (cards == HAND_CODE[1]) | (cards == 0)
    out = torch.where(in_pool, POOL_CODE, cards)
    return torch.where(kept, out, CAPTURED_EARLIER).to(torch.int8)


def mark_action(
    cards: torch.Tensor, card: torch.Tensor, captured: torch.Tensor, pair: int, player: int
) -> torch.Tensor:
    """The paper's codes of one action (per row: the card played, the mask of cards it captured, by
    ``player`` at turn ``pair``) written over state codes [N, 52], in place: ``±k`` for a card laid,
    ``110 ± k`` for one that captures, ``±10k`` for each card captured (+ Alex, - Bob, ``k = pair + 1``)."""
    s, k = 1 - 2 * player, pair + 1
    rows = torch.arange(cards.shape[0], device=cards.device)
    all_cards = torch.arange(52, device=cards.device)
    taken = ((captured.unsqueeze(1) >> all_cards) & 1).bool()
    cards[taken] = 10 * s * k
    cards[rows, card.long()] = torch.where(captured != 0, POOL_CODE + s * k, s * k).to(torch.int8)
    return cards


def to_state_features(inf, card, captured, decision_score) -> torch.Tensor:
    """Rows [N, 58] of the paper's features, all of one layer (round, turn, player), turned into
    state features in place, given each row's action (card, captured mask) and the score context
    of its decision ([N, 3]: clubs, normalized, and last capturer)."""
    if inf.shape[0] == 0:
        return inf
    pair, player = int(inf[0, 56]), int(inf[0, 57])
    inf[:, :52] = mark_action(state_codes(inf[:, :52]), card, captured, pair, player)
    inf[:, 52:55] = decision_score.to(torch.int8)
    return inf


def edge_features(tree: GameTree, r: int, t: int, parent: torch.Tensor, child: torch.Tensor, gt_edge) -> torch.Tensor:
    """[E, 58] int8: the strategy-table features of edges of (round ``r``, turn ``t``) given by their
    ``parent`` and ``child`` nodes and their index ``gt_edge`` among the game-tree layer's edges
    (:meth:`RoundTree.edge_chunk`): the child's infoset in the paper tree, state features in the
    compact tree (where the child's codes are those of any history that reaches it, and the edge's
    own action is written over them)."""
    inf = infoset_tensor(tree, r, t + 1, child)
    if tree.mode == "compact":
        layer = tree.round(r).gt[t]
        to_state_features(inf, layer.card[gt_edge], layer.captured[gt_edge], layer.node_scores[parent.long()])
    return inf
