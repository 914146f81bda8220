"""Beliefs and total exploitability against brute force (Bayes' rule over each information set's
histories, subgame best responses by walking the game tree state by state: bufp_bruteforce.py),
on Kuhn, Kuhn with a raise, a two-card perfect-information game and Leduc (OpenSpiel's tree).
Policies are random with exact zeros, so some information sets lie off the path and some have
no Bayes belief (the chance prior then applies)."""

from __future__ import annotations

import dataclasses

import pyspiel
import pytest
import torch
from bufp_bruteforce import OneCardPoker, gains, table_from_engine

from pasur.poker.beliefs import belief_matrix, infoset_values
from pasur.poker.engine import Engine
from pasur.poker.games import get_game
from pasur.poker.policy import TabularPolicy, normalize
from pasur.poker.total_exploitability import total_exploitability

#: one-card variants: (cards, bets plus raises); 2 cards is a perfect-information game
ONE_CARD = {"kuhn": (3, 1), "kuhn-raise": (3, 2), "two-card-raise": (2, 2)}


def one_card_engine(name: str) -> Engine:
    n, bets = ONE_CARD[name]
    return Engine(dataclasses.replace(get_game("kuhn", ranks="JQK"[:n], max_bets=(bets,)), name=name))


def random_policy(engine, seed: int, zeros: float = 0.3) -> TabularPolicy:
    g = torch.Generator().manual_seed(seed)
    legal = [TabularPolicy(engine).legal(r) for r in range(engine.R)]
    tables = []
    for r in range(engine.R):
        t = torch.rand(engine.n_rows[r], 3, engine.n_boards[r] * engine.Hr[r], generator=g, dtype=torch.float64)
        t[torch.rand(t.shape, generator=g) < zeros] = 0.0
        tables.append(t * legal[r][:, :, None])
    return TabularPolicy(engine, tables=normalize(tables, legal))


@pytest.mark.parametrize("name", list(ONE_CARD))
@pytest.mark.parametrize("seed", [0, 1])
def test_total_exploitability_is_brute_force_on_one_card_games(name, seed):
    e = one_card_engine(name)
    n, bets = ONE_CARD[name]
    pol = random_policy(e, seed)
    te = total_exploitability(e, pol)
    bf = gains(OneCardPoker(n, bets), table_from_engine(e, pol))
    t = e.tree
    assert te.n_infosets == len(bf)
    for i, node in enumerate(t.round_decisions[0]):
        for k in range(e.Hr[0]):
            card = int(e.boards.hands[int(e.hand_ids[0][0, k])][0])
            assert float(te.gains[0][i, k]) == pytest.approx(bf[f"{card}:{t.history[node]}"][0], abs=1e-12)
    assert te.total == pytest.approx(sum(g for g, _, _ in bf.values()), abs=1e-11)
    assert te.max == pytest.approx(max(g for g, _, _ in bf.values()), abs=1e-12)
    assert te.n_fallback == sum(f for _, _, f in bf.values())


def test_beliefs_sum_to_one_and_are_bayes_on_kuhn():
    e = one_card_engine("kuhn")
    for seed in range(4):
        pol = random_policy(e, seed, zeros=0.4)
        v = infoset_values(e, pol, mode="sigma")
        beliefs = belief_matrix(e, v, 0)  # [rows, 1, H, H]
        assert torch.allclose(beliefs.sum(-1), torch.ones(()).double())
        bf = gains(OneCardPoker(3), table_from_engine(e, pol))
        t = e.tree
        card = [int(e.boards.hands[int(h)][0]) for h in e.hand_ids[0][0]]
        for i, node in enumerate(t.round_decisions[0]):
            p = int(t.actor[node])
            for k in range(3):
                _, bayes, fallback = bf[f"{card[k]}:{t.history[node]}"]
                assert bool(v.fallback[0][i, k]) == fallback
                for j in range(3):
                    deal = (card[k], card[j]) if p == 0 else (card[j], card[k])
                    want = bayes.get(f"{deal}:{t.history[node]}", 0.0)
                    assert float(beliefs[i, 0, k, j]) == pytest.approx(want, abs=1e-12)


def test_total_exploitability_and_beliefs_are_brute_force_on_leduc():
    """Two rounds, a board card, card removal, the chance prior off the path: OpenSpiel's tree."""
    from pasur.poker.openspiel import export_policy, infostate

    e = Engine("leduc")
    pol = random_policy(e, 7)
    te = total_exploitability(e, pol)
    v = infoset_values(e, pol, mode="sigma")
    bf = gains(pyspiel.load_game("leduc_poker").new_initial_state(), export_policy(e, pol))
    assert te.n_fallback == sum(f for _, _, f in bf.values()) > 0
    t = e.tree
    for r in range(e.R):
        beliefs = belief_matrix(e, v, r)
        for i, node in enumerate(t.round_decisions[r]):
            p = int(t.actor[node])
            for b in range(e.n_boards[r]):
                board = e.boards.boards[r][b].tolist()
                cards = [int(e.boards.hands[int(h)][0]) for h in e.hand_ids[r][b]]
                for k, own in enumerate(cards):
                    gain, bayes, _ = bf[infostate(e, int(node), board, [own])]
                    assert float(te.gains[r][i, b * e.Hr[r] + k]) == pytest.approx(gain, abs=1e-11)
                    # OpenSpiel's history: player 0's card, player 1's card, then actions and the board
                    by_card = {}
                    for h, prob in bayes.items():
                        dealt = [int(x) for x in h.split(", ")[:2]]
                        by_card[dealt[1 - p]] = by_card.get(dealt[1 - p], 0.0) + prob
                    for j, opp in enumerate(cards):
                        assert float(beliefs[i, b, k, j]) == pytest.approx(by_card.get(opp, 0.0), abs=1e-12)
    assert te.total == pytest.approx(sum(g for g, _, _ in bf.values()), rel=1e-12)
