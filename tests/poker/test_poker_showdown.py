"""The O(n log n) showdown and the fold masses against brute force over hand pairs (O(n^2))."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pasur.poker.engine import Engine


def brute(engine, r, pi, b):
    """W - L and compatible mass of every position of board ``b`` against range ``pi`` [H_r]."""
    bd = engine.boards
    ids = bd.hand_ids[r][b]
    masks = bd.hand_masks[ids]
    s = bd.strength[b][ids] if r == engine.R - 1 else None
    wl = np.zeros(len(ids))
    comp = np.zeros(len(ids))
    for i in range(len(ids)):
        ok = (masks & masks[i]) == 0
        comp[i] = pi[ok].sum()
        if s is not None:
            wl[i] = (pi[ok] * np.sign(s[i] - s[ok])).sum()
    return wl, comp


@pytest.mark.parametrize("name", ["leduc5", "numeral211-r5", "numeral211-tiny"])
def test_showdown_and_fold_masses_match_brute_force(name):
    e = Engine(name)
    rng = np.random.default_rng(7)
    last = e.R - 1
    for r in range(e.R):
        nb, H = e.n_boards[r], e.Hr[r]
        boards = [0, nb - 1, nb // 2]
        pi = rng.random((2, nb, H))
        pi[1, :, : H // 3] = 0.0  # some hands out of the range
        t = torch.as_tensor(pi)
        comp = e.cards[r].compatible(t.clone(), 0, nb).numpy()
        wl = e.cards[r].win_minus_lose(t.clone(), 0, nb).numpy() if r == last else None
        for n in range(2):
            for b in boards:
                w_ref, c_ref = brute(e, r, pi[n, b], b)
                np.testing.assert_allclose(comp[n, b], c_ref, rtol=1e-12, atol=1e-12)
                if wl is not None:
                    np.testing.assert_allclose(wl[n, b], w_ref, rtol=1e-12, atol=1e-12)


def test_chunks_of_boards_give_the_same_masses():
    e = Engine("numeral211-r5")
    rng = np.random.default_rng(1)
    last = e.R - 1
    nb, H = e.n_boards[last], e.Hr[last]
    pi = torch.as_tensor(rng.random((3, nb, H)))
    whole = e.cards[last].win_minus_lose(pi.clone(), 0, nb)
    part = e.cards[last].win_minus_lose(pi[:, 5:9].clone(), 5, 9)
    assert torch.equal(whole[:, 5:9], part)
