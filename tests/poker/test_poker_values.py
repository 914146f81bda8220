"""Known numbers: game values, best responses (against brute force), NashConv of uniform play."""

from __future__ import annotations

import itertools

import pytest
import torch

from pasur.poker.engine import Engine
from pasur.poker.evaluator import strength
from pasur.poker.games import get_game
from pasur.poker.measures import best_response_policy, best_response_values, evaluate, game_value
from pasur.poker.openspiel import export_policy
from pasur.poker.policy import TabularPolicy
from pasur.poker.run import solve
from pasur.poker.solvers import CFRConfig


@pytest.fixture(scope="module")
def kuhn():
    return Engine("kuhn")


@pytest.fixture(scope="module")
def leduc():
    return Engine("leduc")


def test_uniform_nash_conv(kuhn, leduc):
    """OpenSpiel's numbers: NashConv of the uniform policy is 11/12 (Kuhn), 4.747222... (Leduc)."""
    assert evaluate(kuhn, TabularPolicy(kuhn)).nash_conv == pytest.approx(11 / 12, abs=1e-14)
    ev = evaluate(leduc, TabularPolicy(leduc))
    assert ev.nash_conv == pytest.approx(1709 / 360, abs=1e-13)
    assert ev.exploitability == pytest.approx(ev.nash_conv / 2, abs=1e-15)


def kuhn_equilibrium(engine: Engine, alpha: float) -> TabularPolicy:
    """Kuhn's equilibrium family (first player bets a Jack with probability alpha <= 1/3)."""
    t = engine.tree
    pol = TabularPolicy(engine)
    tab = torch.zeros_like(pol.tables[0])
    # rows of the decision nodes, columns J, Q, K (strength order = card order)
    bet = {
        "": [alpha, 0.0, 3 * alpha],  # first player: bet (else check)
        "cr": [0.0, alpha + 1 / 3, 1.0],  # first player facing a bet: call (else fold)
        "c": [1 / 3, 0.0, 1.0],  # second player after a check: bet
        "r": [0.0, 1 / 3, 1.0],  # second player facing a bet: call
    }
    for hist, probs in bet.items():
        n = t.history.index(hist)
        row = t.decision_index[n]
        facing = bool(t.legal[n, 0])
        for card, p in enumerate(probs):
            if facing:
                tab[row, 1, card], tab[row, 0, card] = p, 1 - p
            else:
                tab[row, 2, card], tab[row, 1, card] = p, 1 - p
    pol.tables = [tab]
    return pol


@pytest.mark.parametrize("alpha", [0.0, 0.2, 1 / 3])
def test_kuhn_equilibrium_value_and_zero_exploitability(kuhn, alpha):
    ev = evaluate(kuhn, kuhn_equilibrium(kuhn, alpha))
    assert ev.value == pytest.approx(-1 / 18, abs=1e-15)
    assert abs(ev.nash_conv) < 1e-14


# ------------------------------------------------------------------ brute force on Kuhn


def kuhn_payoff(bet_prob: dict[str, float]) -> float:
    """Player 0's expected payoff: plain recursion over the 6 deals (bet_prob: infostate -> P(bet))."""

    def play(c0, c1, h):
        if h in ("cc", "rc", "crc"):  # showdown (check-check, bet-call, check-bet-call)
            stake = 1 if h == "cc" else 2
            return stake if c0 > c1 else -stake
        if h == "rf":
            return 1
        if h == "crf":
            return -1
        card = c0 if len(h) % 2 == 0 else c1
        p = bet_prob[f"{card}{h}"]
        facing = h.endswith("r")
        return p * play(c0, c1, h + ("c" if facing else "r")) + (1 - p) * play(c0, c1, h + ("f" if facing else "c"))

    return sum(play(c0, c1, "") for c0, c1 in itertools.permutations(range(3), 2)) / 6


def test_kuhn_best_response_equals_brute_force_over_pure_strategies(kuhn):
    policy = solve(kuhn, CFRConfig(method="cfr+"), iterations=7, check_every=7).policy
    table = export_policy(kuhn, policy)  # OpenSpiel keys: card + "p"/"b" actions
    probs = {k.replace("p", "c").replace("b", "r") if k else k: dict(v).get(1, 0.0) for k, v in table.items()}
    # our infostate keys, card first then history with c/r letters; after a bet "c" means call
    own = {0: [f"{c}{h}" for c in range(3) for h in ("", "cr")], 1: [f"{c}{h}" for c in range(3) for h in ("c", "r")]}
    br = best_response_values(kuhn, policy)
    for p in (0, 1):
        best = -1e9
        for pure in itertools.product((0.0, 1.0), repeat=6):
            strat = dict(probs)
            strat.update(dict(zip(own[p], pure, strict=True)))
            v = kuhn_payoff(strat)
            best = max(best, v if p == 0 else -v)
        assert br[p] == pytest.approx(best, abs=1e-14)
    # and the best-response policy achieves it
    for p in (0, 1):
        b = best_response_policy(kuhn, policy, p)
        v = game_value(kuhn, b)
        assert (v if p == 0 else -v) == pytest.approx(br[p], abs=1e-14)


def test_kuhn_payoff_oracle_agrees_on_the_equilibrium(kuhn):
    table = export_policy(kuhn, kuhn_equilibrium(kuhn, 0.25))
    probs = {k.replace("p", "c").replace("b", "r"): dict(v).get(1, 0.0) for k, v in table.items()}
    assert kuhn_payoff(probs) == pytest.approx(-1 / 18, abs=1e-15)


# ------------------------------------------------------------------ Leduc value


def test_leduc_value_is_certified_by_best_responses(leduc):
    """The game value lies between the best-response values: -BR_1 <= v* <= BR_0. After DCFR the
    interval is narrower than 2e-4 and holds Leduc's known value -0.0856064."""
    r = solve(leduc, CFRConfig(method="dcfr"), iterations=1500, target_exploitability=1e-4, check_every=250)
    br0, br1 = best_response_values(leduc, r.policy)
    assert br0 + br1 < 2e-4
    assert -br1 - 5e-8 <= -0.0856064 <= br0 + 5e-8
    assert r.value == pytest.approx(-0.0856064, abs=2e-4)


# ------------------------------------------------------------------ brute force over deals


def uniform_value_by_recursion(g) -> float:
    """Player 0's expected payoff when both play uniformly at random: every deal (both hands and
    the board cards of every round) played out by plain recursion; no tensors, ranges, suit
    isomorphism or card-removal formulas."""
    n, k = g.n_cards, g.hole_cards
    cache: dict[tuple, int] = {}

    def power(cards):
        key = tuple(sorted(cards))
        if key not in cache:
            cache[key] = strength(g, key)
        return cache[key]

    def value(hands, boards, r, contrib, hist, bets, player):
        facing = contrib[1 - player] > contrib[player]
        acts = (["f"] if facing or g.fold_without_bet else []) + ["c"] + (["r"] if bets < g.max_bets[r] else [])
        total = 0.0
        for a in acts:
            c = list(contrib)
            if a == "f":
                total += c[player] * (-1 if player == 0 else 1)
            elif a == "r":
                c[player] = c[1 - player] + g.bet_sizes[r]
                total += value(hands, boards, r, c, hist + a, bets + 1, 1 - player)
            else:
                c[player] = c[1 - player]
                if not (bets > 0 or hist):  # the first check of the round
                    total += value(hands, boards, r, c, hist + a, bets, 1 - player)
                elif r + 1 < g.n_rounds:
                    total += value(hands, boards, r + 1, c, "", 0, g.first_player[r + 1])
                else:
                    board = [x for seg in boards for x in seg]
                    s0, s1 = power([*hands[0], *board]), power([*hands[1], *board])
                    total += c[0] * ((s0 > s1) - (s0 < s1))
        return total / len(acts)

    total, count = 0.0, 0
    for h0 in itertools.combinations(range(n), k):
        for h1 in itertools.combinations([c for c in range(n) if c not in h0], k):
            deals = [[]]
            for m in g.board_cards:
                nxt = []
                for segs in deals:
                    used = set(h0 + h1).union(*map(set, segs)) if segs else set(h0 + h1)
                    nxt += [[*segs, seg] for seg in itertools.combinations([c for c in range(n) if c not in used], m)]
                deals = nxt
            for segs in deals:
                total += value((h0, h1), segs, 0, (g.ante, g.ante), "", 0, g.first_player[0])
                count += 1
    return total / count


@pytest.mark.parametrize(
    "game",
    [
        get_game("kuhn"),
        get_game("leduc5"),
        get_game("leduc", board_cards=(1, 0)),  # the public card before the first round
        get_game("leduc", board_cards=(1,), bet_sizes=(2,), max_bets=(2,), first_player=(1,)),
        get_game("leduc", fold_without_bet=True),
        get_game("numeral211-tiny", ranks="TJA", max_bets=(1, 2, 1)),
    ],
    ids=["kuhn", "leduc5", "leduc-board-first", "one-round-board", "leduc-free-fold", "numeral-3-ranks"],
)
def test_uniform_value_matches_a_plain_recursion(game):
    expected = uniform_value_by_recursion(game)
    for iso in (False, True):
        e = Engine(game, iso=iso)
        assert game_value(e, TabularPolicy(e)) == pytest.approx(expected, abs=1e-12)


def test_iso_and_full_engines_agree_on_symmetric_strategies():
    from pasur.poker.abstraction import abstraction

    out = []
    for iso in (False, True):
        e = Engine("numeral211-tiny", iso=iso)
        k = abstraction(e, "iso,ehs:6,ehs:8")
        r = solve(e, CFRConfig(method="cfr+"), iterations=5, check_every=5, keying=k)
        out.append((r.value, r.nash_conv))
    assert out[0] == pytest.approx(out[1], abs=1e-12)
