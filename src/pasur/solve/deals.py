"""The deals a forest's starts face (:func:`pasur.solve.tree.build_forest`): per round, which
cards each start holds and will be dealt, grouped into *deal classes*; nodes of different
classes never merge."""

from __future__ import annotations

import torch

from pasur.game.state import GameState


class Deals:
    """The cards each start of a forest will hold, per round. Starts with the same cards to come
    (this round's hands and every later deal) form a *deal class*; a node's future depends on its
    class and its own state alone, so nodes merge only within a class. One start: one class per
    round, and nodes carry no class (``world`` is None)."""

    def __init__(self, starts: tuple[GameState, ...], device: torch.device) -> None:
        r0 = starts[0].round
        self.device = device
        self.r0 = r0
        self.start_class: dict[int, list[int]] = {}
        self.hands: dict[int, list[list[int]]] = {}  # round -> class -> (Alex, Bob) masks
        self.dealt: dict[int, list[list[int]]] = {}  # round -> player -> union of dealt cards
        self.nxt: dict[int, torch.Tensor] = {}  # round -> class -> class of the next round
        self.pos: dict[tuple[int, int], torch.Tensor] = {}  # (round, player) -> [classes, 52] bit of card
        prev = None
        for r in range(starts[0].variant.deals - 1, r0 - 1, -1):  # later rounds first: a class knows its next class
            sigs: dict[tuple, int] = {}
            cls, hands = [], []
            orders = []  # per class and player: the cards in dealing order (bit positions of local_bits)
            for i, s in enumerate(starts):
                if r == r0:
                    now = s.hands
                    order = [[c for c in range(52) if now[p] >> c & 1] for p in range(2)]
                else:
                    now = (s.deck.hand_mask(0, r), s.deck.hand_mask(1, r))
                    order = [list(s.deck.hand(p, r)) for p in range(2)]
                sig = (now, prev[i] if prev is not None else -1)
                if sig not in sigs:
                    sigs[sig] = len(sigs)
                    hands.append(list(now))
                    orders.append(order)
                cls.append(sigs[sig])
            nxt = [0] * len(sigs)
            for i, c in enumerate(cls):
                nxt[c] = prev[i] if prev is not None else 0
            self.start_class[r], self.hands[r] = cls, hands
            self.nxt[r] = torch.tensor(nxt, dtype=torch.int64, device=device)
            if len(hands) == 1:
                self.dealt[r] = orders[0]
            else:
                self.dealt[r] = [sorted({c for o in orders for c in o[p]}) for p in range(2)]
            for p in range(2):
                pos = torch.zeros((len(hands), 52), dtype=torch.int64)
                for k, o in enumerate(orders):
                    for i, c in enumerate(o[p]):
                        pos[k, c] = 4 * p + i
                self.pos[(r, p)] = pos.to(device)
            prev = cls
        self.single = len(starts) == 1

    def local_pos_fn(self, r: int):
        """``f(player, world)``: the player's dealt cards of round ``r`` and each one's bit in the
        hands' local encoding (ints for one start, per-row tensors in a forest)."""

        def f(p: int, world: torch.Tensor | None):
            cards = self.dealt[r][p]
            if world is None:
                return cards, [int(self.pos[(r, p)][0, c]) for c in cards]
            table = self.pos[(r, p)]
            return cards, [table[:, c][world] for c in cards]

        return f

    def local_bit_of(self, r: int, p: int, card: torch.Tensor, world: torch.Tensor | None) -> torch.Tensor:
        """The local bit (0..7) of each of player ``p``'s ``card`` in its deal class at round ``r``."""
        table = self.pos[(r, p)]
        if world is None:
            return table[0][card]
        return table.flatten()[world * 52 + card]

    def world(self, r: int) -> torch.Tensor | None:
        """The deal class of every start at round ``r`` (None for one start)."""
        return None if self.single else torch.tensor(self.start_class[r], dtype=torch.int64, device=self.device)

    def hands_of(self, r: int, like: torch.Tensor, world: torch.Tensor | None) -> list[torch.Tensor]:
        """Hands dealt at the start of round ``r`` to rows of deal classes ``world`` (shaped ``like``)."""
        if world is None:
            return [torch.full_like(like, self.hands[r][0][p]) for p in range(2)]
        table = torch.tensor(self.hands[r], dtype=torch.int64, device=self.device)  # [classes, 2]
        return [table[world, p] for p in range(2)]


def pair_unique(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Unique pairs of small ``a`` and 52-bit ``b`` (non-negative int64): (unique keys, inverse)."""
    if a.numel() and int(a.max()) >= 1 << 11:
        _, b = torch.unique(b, return_inverse=True)
        key = a * (int(b.max()) + 1) + b
    else:
        key = (a << 52) | b
    return torch.unique(key, return_inverse=True)
