"""Glicko-2 against Glickman's worked example, its properties and input checks; the AI levels'
Bradley-Terry fit on hand-computed and simulated results; reading the committed arena results."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from pasur.web.ratings import (
    SCALE,
    PairResult,
    Rating,
    arena_pairs,
    expected_score,
    fit_levels,
    from_glicko2,
    g,
    level_ratings,
    rate,
    to_glicko2,
)

REPO = Path(__file__).resolve().parents[2]
ARENA_20 = REPO / "results" / "arena-20"
PREREG = REPO / "results" / "arena-prereg-heuristic-greedy" / "run"

# Glickman, "Example of the Glicko-2 system": a player at 1500 / 200 / 0.06 beats 1400 / 30 and
# loses to 1550 / 100 and 1700 / 300, tau = 0.5
PLAYER = Rating(1500, 200, 0.06)
GAMES = [(1400, 30, 1), (1550, 100, 0), (1700, 300, 0)]


# ----------------------------------------------------------------------------- Glicko-2


def test_paper_example_scale_and_table():
    """The paper's Step 2 and its table of mu_j, phi_j, g(phi_j) and E, to their printed places."""
    assert to_glicko2(1500, 200) == (0.0, pytest.approx(1.1513, abs=5e-5))
    table = [(-0.5756, 0.1727, 0.9955, 0.639), (0.2878, 0.5756, 0.9531, 0.432), (1.1513, 1.7269, 0.7242, 0.303)]
    for (r, rd, _), (mu_j, phi_j, g_j, e) in zip(GAMES, table, strict=True):
        m, p = to_glicko2(r, rd)
        assert (round(m, 4), round(p, 4)) == (mu_j, phi_j)
        assert round(g(p), 4) == g_j
        assert round(expected_score(0.0, m, p), 3) == e
    assert from_glicko2(*to_glicko2(1234.5, 67.8)) == (pytest.approx(1234.5), pytest.approx(67.8))


def test_paper_example_update():
    """The paper prints mu' = -0.2069, phi' = 0.8722, r' = 1464.06, RD' = 151.52, sigma' = 0.05999.
    Unrounded they are -0.206941, 0.872199, 1464.0507, 151.5165, 0.0599960: each within one unit
    of the printed last place (the paper's r' is its rounded mu' converted, and its sigma' is cut,
    not rounded, at five places)."""
    new = rate(PLAYER, GAMES, tau=0.5)
    mu, phi = to_glicko2(new.rating, new.rd)
    assert (round(mu, 4), round(phi, 4)) == (-0.2069, 0.8722)
    assert abs(new.rating - 1464.06) < 0.01 and abs(new.rd - 151.52) < 0.01
    assert abs(new.volatility - 0.05999) < 1e-5 and math.floor(new.volatility * 1e5) == 5999
    r, rd = from_glicko2(-0.2069, 0.8722)
    assert (round(r, 2), round(rd, 2)) == (1464.06, 151.52)
    assert (round(new.rating, 4), round(new.rd, 4), round(new.volatility, 7)) == (1464.0507, 151.5165, 0.059996)


def test_paper_steps_3_and_4():
    """v = 1.7785 and Delta = -0.4834 as printed follow from the paper's table rounded (g to four
    places, E to three); from unrounded values they are 1.7790 and -0.4839, as :func:`rate` uses."""
    g_j, e_j, s_j = (0.9955, 0.9531, 0.7242), (0.639, 0.432, 0.303), (1, 0, 0)
    v = 1 / sum(a * a * e * (1 - e) for a, e in zip(g_j, e_j, strict=True))
    delta = v * sum(a * (s - e) for a, e, s in zip(g_j, e_j, s_j, strict=True))
    assert (round(v, 4), round(delta, 4)) == (1.7785, -0.4834)
    v, delta = _v_delta()
    assert (round(v, 4), round(delta, 4)) == (1.7790, -0.4839)


def test_no_games_only_the_rd_grows():
    """Step 6 alone: phi* = sqrt(phi^2 + sigma^2); by hand, 200 -> 200.27 (phi 1.15130 -> 1.15286)."""
    new = rate(PLAYER, [])
    assert (new.rating, new.volatility) == (1500, 0.06)
    assert round(new.rd, 2) == 200.27
    assert new.rd == pytest.approx(SCALE * math.hypot(200 / SCALE, 0.06))
    assert rate(rate(PLAYER, []), []).rd > new.rd  # and keeps growing while idle


def _f(x, delta, phi, v, a, tau):
    ex = math.exp(x)
    return ex * (delta**2 - phi**2 - v - ex) / (2 * (phi**2 + v + ex) ** 2) - (x - a) / tau**2


def _v_delta():
    """Steps 3 and 4 of the example, transcribed."""
    mu, _ = to_glicko2(PLAYER.rating, PLAYER.rd)
    terms = [(g(p), expected_score(mu, m, p), s) for m, p, s in ((*to_glicko2(r, rd), s) for r, rd, s in GAMES)]
    v = 1 / sum(gj**2 * e * (1 - e) for gj, e, _ in terms)
    return v, v * sum(gj * (s - e) for gj, e, s in terms)


@pytest.mark.parametrize("tau", [0.3, 0.5, 1.2])
def test_volatility_is_the_root_of_f(tau):
    """The Illinois iteration's sigma' against an independent bisection on the paper's f."""
    phi = PLAYER.rd / SCALE
    v, delta = _v_delta()
    a = math.log(0.06**2)
    lo, hi = a - 20, a + 20  # f is decreasing: positive far left, negative far right
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _f(mid, delta, phi, v, a, tau) > 0 else (lo, mid)
    assert rate(PLAYER, GAMES, tau=tau).volatility == pytest.approx(math.exp(lo / 2), rel=1e-6)


def test_the_new_rd_uses_the_new_volatility():
    """Step 7: 1 / phi'^2 = 1 / (phi^2 + sigma'^2) + 1 / v, with sigma' the new volatility (a
    surprising period and tau 1.2, so that sigma' is far from sigma)."""
    p, games = Rating(1500, 30, 0.06), [(2200, 30, 1)] * 10
    new = rate(p, games, tau=1.2)
    assert new.volatility > 0.07
    phi, phi_j = p.rd / SCALE, 30 / SCALE
    e = expected_score(0.0, 700 / SCALE, phi_j)
    v = 1 / (10 * g(phi_j) ** 2 * e * (1 - e))
    assert (SCALE / new.rd) ** 2 == pytest.approx(1 / (phi**2 + new.volatility**2) + 1 / v, rel=1e-12)


def test_a_win_raises_a_loss_lowers_a_draw_between_equals_keeps():
    p = Rating(1600, 120, 0.06)
    assert rate(p, [(1600, 120, 1)]).rating > 1600 > rate(p, [(1600, 120, 0)]).rating
    assert rate(p, [(1600, 120, 0.5)]).rating == pytest.approx(1600, abs=1e-9)
    # a draw with a stronger player is a gain, with a weaker one a loss
    assert rate(p, [(1800, 50, 0.5)]).rating > 1600 > rate(p, [(1400, 50, 0.5)]).rating
    # beating a stronger player is worth more than beating a weaker one
    assert rate(p, [(1800, 50, 1)]).rating - 1600 > rate(p, [(1400, 50, 1)]).rating - 1600 > 0


def test_equal_players_gain_what_the_other_loses():
    a = b = Rating(1530, 90, 0.07)
    win, loss = rate(a, [(b.rating, b.rd, 1)]), rate(b, [(a.rating, a.rd, 0)])
    assert win.rating - 1530 == pytest.approx(1530 - loss.rating, abs=1e-9)
    assert (win.rd, win.volatility) == (pytest.approx(loss.rd), pytest.approx(loss.volatility))


def test_larger_rd_moves_more_and_playing_shrinks_it():
    sure, unsure = Rating(1500, 60, 0.06), Rating(1500, 300, 0.06)
    games = [(1500, 80, 1), (1450, 80, 1), (1600, 80, 0.5)]
    assert rate(unsure, games).rating - 1500 > rate(sure, games).rating - 1500 > 0
    assert rate(unsure, games).rd < 300 and rate(sure, games).rd < 60 * 1.01
    # a result against a little-known opponent says less
    assert rate(unsure, [(1500, 30, 1)]).rating > rate(unsure, [(1500, 340, 1)]).rating > 1500


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda: Rating(1500, 0, 0.06), "an RD must be positive, got 0"),
        (lambda: Rating(1500, -5, 0.06), "an RD must be positive, got -5"),
        (lambda: Rating(1500, 200, 0), "a volatility must be positive, got 0"),
        (lambda: Rating(float("nan"), 200, 0.06), "a rating must be a finite number, got nan"),
        (lambda: rate(PLAYER, [(1500, 100, 1.5)]), r"a score is from 0 \(loss\) to 1 \(win\), got 1.5"),
        (lambda: rate(PLAYER, [(1500, 100, -0.1)]), r"a score is from 0 \(loss\) to 1 \(win\), got -0.1"),
        (lambda: rate(PLAYER, [(1500, -1, 1)]), "an opponent's RD must not be negative, got -1"),
        (lambda: rate(PLAYER, [(1500, float("inf"), 1)]), "an RD must be a finite number, got inf"),
        (lambda: rate(PLAYER, GAMES, tau=0), "tau and the tolerance must be positive, got 0 and"),
        (lambda: rate(PLAYER, GAMES, tol=-1), "tau and the tolerance must be positive, got 0.5 and -1"),
    ],
)
def test_bad_input_raises(make, why):
    """Each bad input is refused with its own reason (not any ValueError from anywhere)."""
    with pytest.raises(ValueError, match=f"^{why}"):
        make()


def test_an_exactly_known_opponent_is_allowed():
    """RD 0 for an opponent: the AI anchor, whose rating defines the scale."""
    assert rate(PLAYER, [(1500, 0, 1)]).rating > 1500


# ----------------------------------------------------------------------------- AI levels


def test_two_levels_by_hand():
    """30 wins, 10 ties, 20 losses: score 35 / 60, so r = 173.7178 ln(35 / 25) = 58.45 above the
    anchor, SE = 173.7178 / sqrt(60 (35/60)(25/60)) = 45.49."""
    fit = fit_levels([PairResult("b", "a", 30, 10, 20)], anchor="a", anchor_rating=1000)
    assert fit["a"].rating == 1000 and fit["a"].se == 0
    assert round(fit["b"].rating - 1000, 2) == 58.45
    assert round(fit["b"].se, 2) == 45.49
    assert fit["b"].rating - 1000 == pytest.approx(SCALE * math.log(35 / 25))
    # the reversed pair says the same
    assert fit_levels([PairResult("a", "b", 20, 10, 30)], "a", 1000)["b"].rating == pytest.approx(fit["b"].rating)


def test_consecutive_levels_chain():
    """With results only between neighbours each step is its own pair's logit, and the errors of
    the steps add in quadrature."""
    pairs = [PairResult("l1", "l0", 70, 0, 30), PairResult("l2", "l1", 55, 10, 35)]
    fit = fit_levels(pairs, "l0", 1000)
    step1, step2 = SCALE * math.log(70 / 30), SCALE * math.log(60 / 40)
    se1, se2 = SCALE / math.sqrt(100 * 0.7 * 0.3), SCALE / math.sqrt(100 * 0.6 * 0.4)
    assert fit["l1"].rating == pytest.approx(1000 + step1)
    assert fit["l2"].rating == pytest.approx(1000 + step1 + step2)
    assert (fit["l1"].se, fit["l2"].se) == (pytest.approx(se1), pytest.approx(math.hypot(se1, se2)))


def test_anchor_only_shifts():
    rng = np.random.default_rng(3)
    pairs = [PairResult(a, b, *rng.integers(5, 40, 3)) for a, b in [("x", "y"), ("y", "z"), ("x", "z"), ("z", "w")]]
    one, other = fit_levels(pairs, "x", 1500), fit_levels(pairs, "w", 900)
    shift = one["w"].rating - 900
    for n in "xyzw":
        assert one[n].rating - other[n].rating == pytest.approx(shift)


def test_robust_errors_see_correlated_hands():
    """Both hands of every deal alike: the sandwich doubles the variance (sqrt 2 on the SE); each
    hand its own deal, no ties: it equals the model's SE."""
    alike = PairResult("b", "a", 120, 0, 80, tuple([(2.0, 2)] * 60 + [(0.0, 2)] * 40))
    fit = fit_levels([alike], "a")["b"]
    assert fit.se_robust == pytest.approx(math.sqrt(2) * fit.se)
    single = fit_levels([PairResult("b", "a", 120, 0, 80)], "a")["b"]
    assert single.se_robust == pytest.approx(single.se)
    with pytest.raises(ValueError, match="add up"):
        PairResult("b", "a", 120, 0, 80, ((2.0, 2),) * 100)


TRUE = {"random": 1100.0, "greedy": 1500.0, "heuristic": 1640.0, "pimc": 1665.0, "best": 1680.0}


def _simulate(rng, pairs, games, tie=0.05):
    """Hands scored by the logistic model, a share ``tie`` of them tied (ties keep the expected
    score: P(win) = p - tie/2)."""
    out = []
    for a, b in pairs:
        p = 1 / (1 + math.exp(-(TRUE[a] - TRUE[b]) / SCALE))
        t = min(tie, 2 * p, 2 * (1 - p))
        w, d, _ = rng.multinomial(games, [p - t / 2, t, 1 - p - t / 2])
        out.append(PairResult(a, b, int(w), int(d), int(games - w - d)))
    return out


def test_synthetic_full_table_recovered():
    rng = np.random.default_rng(0)
    names = list(TRUE)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    fit = fit_levels(_simulate(rng, pairs, 4000), "greedy", 1500)
    for n, r in TRUE.items():
        assert abs(fit[n].rating - r) < max(3 * fit[n].se, 1e-9), (n, fit[n], r)
        assert abs(fit[n].rating - r) < 25
    assert [n for n, _ in sorted(fit.items(), key=lambda kv: kv[1].rating)] == names


def test_synthetic_chain_intervals_cover():
    """Consecutive levels only, 400 replications of 1,000 hands per pair: the 95 % intervals
    (rating ± 1.96 SE) hold the true rating about 95 % of the time."""
    rng = np.random.default_rng(1)
    chain = [("random", "greedy"), ("greedy", "heuristic"), ("heuristic", "pimc"), ("pimc", "best")]
    hits = {n: 0 for n in TRUE}
    reps = 400
    for _ in range(reps):
        fit = fit_levels(_simulate(rng, chain, 1000), "greedy", 1500)
        for n in TRUE:
            hits[n] += abs(fit[n].rating - TRUE[n]) <= 1.96 * fit[n].se + 1e-9
    assert hits.pop("greedy") == reps  # the anchor: no error
    for n, h in hits.items():
        assert 0.91 <= h / reps <= 0.99, (n, h)


@pytest.mark.parametrize(
    ("pairs", "anchor", "match"),
    [
        ([PairResult("a", "b", 10, 0, 0)], "b", "never lost"),  # a won every game
        ([PairResult("a", "b", 0, 0, 10)], "b", "never won"),
        ([PairResult("a", "b", 5, 0, 5), PairResult("c", "d", 5, 0, 5)], "a", "no chain"),
        ([PairResult("a", "b", 5, 0, 5), PairResult("c", "b", 7, 0, 0)], "a", "never lost"),
        ([PairResult("a", "b", 5, 0, 5)], "z", "anchor"),
    ],
)
def test_no_finite_maximum_is_refused(pairs, anchor, match):
    with pytest.raises(ValueError, match=match):
        fit_levels(pairs, anchor)


def test_ties_alone_make_equals():
    fit = fit_levels([PairResult("a", "b", 0, 8, 0), PairResult("b", "c", 3, 0, 3)], "a", 1200)
    assert fit["b"].rating == pytest.approx(1200) and fit["c"].rating == pytest.approx(1200)


# ----------------------------------------------------------------------------- arena files


def test_arena_pairs_read_the_committed_arena():
    """results/arena-20/table.md: pimc:20 v heuristic 47.5 % / 7.5 % / 45.0 % of 40 hands, v
    greedy 65.0 / 7.5 / 27.5, heuristic v greedy 75.0 / 2.5 / 22.5."""
    got = {(p.a, p.b): (p.wins, p.ties, p.losses, len(p.deals)) for p, _ in arena_pairs(ARENA_20)}
    assert got == {
        ("pimc:20", "heuristic"): (19, 3, 18, 20),
        ("pimc:20", "greedy"): (26, 3, 11, 20),
        ("heuristic", "greedy"): (30, 1, 9, 20),
    }
    seeds = {s for _, ss in arena_pairs(ARENA_20) for s in ss}
    assert seeds == set(range(10000, 10020))


def test_level_ratings_of_the_committed_arenas():
    fit = level_ratings([ARENA_20, PREREG])
    assert list(fit) == ["greedy", "heuristic", "pimc"]  # the levels' order; no arena played random or best
    assert fit["greedy"].rating == 1500 and fit["greedy"].se == 0
    pooled = [p for f in (ARENA_20, PREREG) for p, _ in arena_pairs(f)]
    names = {"pimc:20": "pimc"}
    # the maximum-likelihood conditions, checked by hand from the logistic model: each free level's
    # expected score over all its hands (ties as half a win) is the score it made
    for level in ("heuristic", "pimc"):
        made = expected = 0.0
        hands = 0
        for p in pooled:
            a, b = names.get(p.a, p.a), names.get(p.b, p.b)
            if level not in (a, b):
                continue
            other = b if level == a else a
            n = p.wins + p.ties + p.losses
            made += (p.wins if level == a else p.losses) + p.ties / 2
            expected += n / (1 + math.exp(-(fit[level].rating - fit[other].rating) / SCALE))
            hands += n
        assert expected == pytest.approx(made, abs=1e-6) and fit[level].games == hands
    # heuristic against greedy, 1,040 hands: 715 won, 37 tied, 288 lost, a score of 733.5; the
    # pimc pairs move it a little from that pair's own logit
    assert fit["heuristic"].rating - 1500 == pytest.approx(SCALE * math.log(733.5 / 306.5), abs=5)


def test_the_same_deals_are_not_counted_twice():
    with pytest.raises(ValueError, match="already counted"):
        level_ratings([ARENA_20, ARENA_20])


def _copy(tmp_path: Path) -> Path:
    out = tmp_path / "arena"
    out.mkdir()
    for f in ("results.json", "deals.csv"):
        shutil.copy(ARENA_20 / f, out / f)
    return out


def test_a_folder_whose_files_disagree_is_refused(tmp_path):
    out = _copy(tmp_path)
    res = json.loads((out / "results.json").read_text())
    res["pairs"][0]["win_rate"] = 0.5
    (out / "results.json").write_text(json.dumps(res))
    with pytest.raises(ValueError, match="win rate"):
        arena_pairs(out)


def test_seats_of_a_pair_do_not_matter(tmp_path):
    """The same hands written as B against A (columns swapped, margins negated) rate alike."""
    out = _copy(tmp_path)
    res = json.loads((out / "results.json").read_text())
    for p in res["pairs"]:
        p["a"], p["b"] = p["b"], p["a"]
        p["win_rate"], p["loss_rate"] = p["loss_rate"], p["win_rate"]
    (out / "results.json").write_text(json.dumps(res))
    lines = (out / "deals.csv").read_text().splitlines()
    flipped = [lines[0]]
    for line in lines[1:]:
        a, b, deal, seed, ax, bx, m = line.split(",")
        flipped.append(",".join([b, a, deal, seed, bx, ax, str(-float(m))]))
    (out / "deals.csv").write_text("\n".join(flipped) + "\n")
    one, two = level_ratings([ARENA_20]), level_ratings([out])
    for n in one:
        assert two[n].rating == pytest.approx(one[n].rating)
        assert two[n].se_robust == pytest.approx(one[n].se_robust)
