"""HandEbdNet's inputs and targets (appendix D.1, D.2): the hand tensor x and the strength tensor y.

* ``x`` ``[suits, ranks, s]`` for a hand in round ``s``: channel = suit, row = rank (weakest
  first), column = the dealing segment (private cards, then each round's board cards). Channels
  are ordered canonically (D.1): more cards first, ties broken by the channel read round by round,
  strongest rank first (an Ace in round 1 beats a 10 in round 1; any round-1 card beats none).
  Two hands get the same tensor exactly when a suit permutation maps one onto the other.
* ``y`` ``[s, 3]``: for the hand and each of its predecessors (round ``j <= s``), the (lose, draw,
  win) shares against every compatible opponent hand, rolled out uniformly over the remaining
  board cards to the last round (D.2). Computed once per suit-isomorphism class
  (:mod:`pasur.poker.embedding.classes`): a class's children are its next deals, equally likely.
"""

from __future__ import annotations

import numpy as np

from pasur.poker.cards import card_masks


def segments(game, r: int) -> list[int]:
    """Cards per column of a round-``r`` hand tensor: private cards, then each round's board cards
    (rounds that deal no board card, such as pre-flop, add no column beyond the first)."""
    return [game.hole_cards + game.board_cards[0], *game.board_cards[1 : r + 1]]


def hand_tensors(game, hole: np.ndarray, board: np.ndarray, r: int) -> np.ndarray:
    """``[N, suits, ranks, r + 1]`` float32 tensors of ``N`` hands: ``hole`` ``[N, hole_cards]``,
    ``board`` ``[N, visible board cards of round r]`` in dealing order."""
    hole, board = np.asarray(hole, np.int64), np.asarray(board, np.int64)
    N, S, K, cols = len(hole), game.n_suits, game.n_ranks, r + 1
    x = np.zeros((N, S, K, cols), dtype=np.float32)
    cards = np.concatenate([hole, board], axis=1)
    col = np.repeat(np.arange(cols), segments(game, r))
    if cards.shape[1] != len(col):
        raise ValueError(f"round {r + 1} hands have {len(col)} cards, got {cards.shape[1]}")
    rows = np.arange(N)[:, None]
    x[rows, cards % S, cards // S, col[None, :]] = 1.0
    # canonical channel order: count, then the channel's bits (columns first, strongest rank first)
    bits = x[:, :, ::-1, :].transpose(0, 1, 3, 2).reshape(N, S, -1).astype(np.int64)
    code = bits.sum(2)
    for j in range(bits.shape[2]):
        code = code * 2 + bits[:, :, j]
    order = np.argsort(-code, axis=1, kind="stable")
    return np.take_along_axis(x, order[:, :, None, None], axis=1)


def class_tensors(space, r: int) -> np.ndarray:
    """The hand tensor of each class of round ``r`` (its representative's)."""
    bd = space.engine.boards
    rc = space.rounds[r]
    return hand_tensors(space.game, bd.hands[rc.hand], bd.boards[r][rc.board], r)


def terminal_counts(space) -> np.ndarray:
    """``[n_last, 3]`` int64: how many opponent hands that miss the class's cards and the board
    each last-round class loses to, draws with and beats (the same total for every class)."""
    bd = space.engine.boards
    last = space.R - 1
    rc = space.rounds[last]
    out = np.zeros((rc.n, 3), dtype=np.int64)
    for b in np.unique(rc.board):
        ids = bd.hand_ids[last][b]
        st = bd.strength[b, ids]
        masks = card_masks(bd.hands[ids])
        cls = np.nonzero(rc.board == b)[0]
        p = rc.pos[cls]
        ok = (masks[p][:, None] & masks[None, :]) == 0
        mine, theirs = st[p][:, None], st[None, :]
        out[cls] = np.stack(
            [(ok & (mine < theirs)).sum(1), (ok & (mine == theirs)).sum(1), (ok & (mine > theirs)).sum(1)], 1
        )
    return out


def rollout_counts(space) -> list[np.ndarray]:
    """Per round, ``[n_r, 3]`` int64: :func:`terminal_counts` summed over every completion of the
    board (the class's next deals, recursively): the rolled-out shares times a constant of the
    round, so equal shares are equal integers (no rounding in a comparison)."""
    counts = [None] * space.R
    counts[-1] = terminal_counts(space)
    for r in range(space.R - 2, -1, -1):
        counts[r] = counts[r + 1][space.rounds[r].children].sum(1)
    return counts


def terminal_shares(space) -> np.ndarray:
    """``[n_last, 3]`` (lose, draw, win) shares of each last-round class against every opponent
    hand that misses its cards and the board."""
    counts = terminal_counts(space)
    return counts / counts.sum(1, keepdims=True)


def rollout_shares(space) -> list[np.ndarray]:
    """Per round, ``[n_r, 3]``: each class's (lose, draw, win) shares rolled out to the last round."""
    shares = [None] * space.R
    shares[-1] = terminal_shares(space)
    for r in range(space.R - 2, -1, -1):
        shares[r] = shares[r + 1][space.rounds[r].children].mean(1)
    return shares


def strength_tensors(space, r: int, shares: list[np.ndarray] | None = None) -> np.ndarray:
    """``[n_r, r + 1, 3]`` float32: row ``j`` is the shares of the class's round-``j`` predecessor."""
    shares = shares or rollout_shares(space)
    cls = np.arange(space.rounds[r].n)
    rows = [None] * (r + 1)
    for j in range(r, -1, -1):
        rows[j] = shares[j][cls]
        if j:
            cls = space.rounds[j].parent[cls]
    return np.stack(rows, 1).astype(np.float32)
