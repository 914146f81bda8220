"""Card abstractions: keyings that map each (board, private hand) of a round to a bucket.

Three built in, all suit-symmetric (so they run on the suit-isomorphic engine):

* ``isomorphic``: the lossless classes of (board, hand) under suit permutations (Numeral211's
  round 1 has 100: 10 pairs, 45 suited and 45 offsuit rank pairs);
* ``ehs``: expected hand strength against a uniformly random opponent hand, rolled out to the
  last round (``E[win] + E[tie] / 2``), cut into buckets of equal weight (quantiles over all
  actual (board, hand) pairs);
* ``strength``: the isomorphism classes merged where their hand strength is equal (the paper's
  100 / 2,250 / 3,957 on Numeral211; :mod:`pasur.poker.embedding.strength`).

``abstraction(engine, "iso,ehs:225,ehs:396")`` builds one per round from a spec; any other bucketing
(k-means, EMD, an embedding's argmax) is a bucket table per round given to
:meth:`pasur.poker.policy.Keying.from_buckets`.
"""

from __future__ import annotations

import numpy as np
import torch

from pasur.common.errors import PasurInputError
from pasur.poker.embedding.classes import isomorphic_classes
from pasur.poker.policy import Keying


def hand_strength(engine, r: int) -> np.ndarray:
    """Expected hand strength of every (listed board, position) of round ``r`` against a
    uniformly random compatible opponent hand, over every completion of the board."""
    R = engine.R
    last = R - 1
    cards = engine.cards[last]
    nb, H = engine.n_boards[last], engine.Hr[last]
    ones = torch.ones(1, nb, H, dtype=engine.dtype, device=engine.device)
    wl = cards.win_minus_lose(ones, 0, nb)
    comp = cards.compatible(ones, 0, nb)
    values = (0.5 + wl / (2 * comp))[0]  # [B, H]
    counts = torch.ones_like(values)
    for rr in range(last, r, -1):
        pv = torch.zeros(1, 2, engine.n_boards[rr - 1], engine.Hr[rr - 1], dtype=engine.dtype, device=engine.device)
        engine._expand_to_parent(rr, torch.stack([values, counts])[None], 0, engine.n_boards[rr], pv)
        values, counts = pv[0, 0], pv[0, 1]
    return (values / counts).cpu().numpy()


def quantile_buckets(values: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """Exactly ``k`` buckets ``0..k-1`` of about equal total weight, by value (equal values share
    a bucket; boundaries move to the next distinct value where ties would empty a bucket)."""
    v = np.round(values, 12).reshape(-1)
    w = np.broadcast_to(weights, values.shape).reshape(-1).astype(np.float64)
    uniq, inv = np.unique(v, return_inverse=True)
    n = len(uniq)
    if n < k:
        raise PasurInputError(f"only {n} distinct strengths, fewer than {k} buckets")
    cum = np.cumsum(np.bincount(inv, weights=w))
    starts = np.searchsorted(cum, cum[-1] * np.arange(1, k) / k, side="right")  # first value of buckets 1..k-1
    for j in range(1, k - 1):
        starts[j] = max(starts[j], starts[j - 1] + 1)
    starts[0] = max(starts[0], 1)
    for j in range(k - 2, -1, -1):
        starts[j] = min(starts[j], n - (k - 1 - j))
        if j:
            starts[j - 1] = min(starts[j - 1], starts[j] - 1)
    bucket_of_value = np.searchsorted(starts, np.arange(n), side="right")
    return bucket_of_value[inv].reshape(values.shape)


def abstraction(engine, spec: str) -> Keying:
    """A keying from a spec, one item per round: ``iso`` (lossless classes), ``ehs:K``,
    ``strength`` or ``strength:READING`` (the isomorphism classes merged where their strength is
    equal, :mod:`pasur.poker.embedding.strength`; ``strength`` is the paper's reading), or
    ``lossless`` (every board and hand; only if every round is). A spec of one ``strength`` item
    stands for every round."""
    items = [s.strip() for s in spec.split(",")]
    if len(items) == 1 and items[0].startswith("strength"):
        items = items * engine.R
    if len(items) != engine.R:
        raise PasurInputError(f"abstraction {spec!r}: one item per round ({engine.R}) needed")
    if all(s == "lossless" for s in items):
        return Keying.lossless_for(engine)
    keys, n_keys = [], []
    strength = {}  # reading -> its classes, made once
    for r, item in enumerate(items):
        if item == "strength" or item.startswith("strength:"):
            from pasur.poker.embedding import strength as st

            reading = item[9:] or "paper"
            if reading not in st.READINGS:
                raise PasurInputError(f"abstraction item {item!r}: strength:R with R one of {', '.join(st.READINGS)}")
            if reading not in strength:
                space = st.strength_space(engine)
                strength[reading] = (space, st.strength_classes(space, reading))
            space, classes = strength[reading]
            tab = classes[r][space.rounds[r].of_position]
        elif item in ("iso", "lossless"):
            if item == "lossless" and engine.iso:
                raise PasurInputError("a lossless round needs the engine with iso=False; use 'iso'")
            tab = (
                isomorphic_classes(engine, r)
                if item == "iso"
                else np.arange(engine.n_boards[r] * engine.Hr[r]).reshape(engine.n_boards[r], -1)
            )
        elif item.startswith("ehs:"):
            try:
                k = int(item[4:])
            except ValueError:
                raise PasurInputError(f"abstraction item {item!r}: ehs:K with K an integer") from None
            if k < 1:
                raise PasurInputError(f"abstraction item {item!r}: K must be positive")
            mult = engine.boards.mult[r][:, None]
            tab = quantile_buckets(hand_strength(engine, r), mult, k)
        else:
            raise PasurInputError(f"abstraction item {item!r}: use iso, lossless, ehs:K or strength")
        keys.append(torch.as_tensor(tab, dtype=torch.int64, device=engine.device))
        n_keys.append(int(tab.max()) + 1)
    return Keying(keys, n_keys, lossless=False, name=spec)
