"""Ratings: Glicko-2 for people, and the AI levels' fixed ratings measured in the arena.

**Glicko-2** as Glickman's "Example of the Glicko-2 system" (Boston University, 2012; revised
2022) defines it, step by step: a rating, an RD and a volatility; one rating period's update
against a list of (opponent's rating, opponent's RD, score); the new volatility by the Illinois
algorithm with the system constant ``tau`` and tolerance 1e-6; a player who did not play only
sees their RD grow. Written here rather than taken from PyPI: the one Glicko-2 package with any
use there (``glicko2`` 2.1, January 2024) is a fork of Ryan Kirkman's 2009 ``pyglicko2``:
mutable players fed parallel lists, the system constant a class attribute, no check of any
input; the others are alpha releases or unmaintained. The algorithm is short and the paper's
worked example tests it (``tests/web/test_ratings.py``).

>>> p = rate(Rating(1500, 200, 0.06), [(1400, 30, 1), (1550, 100, 0), (1700, 300, 0)])
>>> round(p.rating, 2), round(p.rd, 2), round(p.volatility, 6)
(1464.05, 151.52, 0.059996)

The paper prints 1464.06, 151.52 and 0.05999: its r' is its mu' rounded to -0.2069 and then
converted, its sigma' is cut at five places; each agrees to one unit of its last printed place.

**AI levels** (:func:`fit_levels`, :func:`level_ratings`) stand at fixed ratings on the same
scale: the Bradley-Terry (Elo) logistic model, P(A beats B) = 1 / (1 + exp(-(r_A - r_B) / 173.7178)),
which is Glicko-2's expected score when the opponent's RD is 0, fitted by maximum likelihood to
the arena's *hands* (each game of a duplicate deal scored 1, ½ or 0 for A by the sign of A's
points minus B's), with one level fixed (the anchor). Why hands: a hand is the one result the
arena measures exactly and a person plays; a rated match then counts each of its hands as one
game of its rating period, so people and AI levels are rated in the same unit (``docs/ratings.md``).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pasur.web.levels import LEVELS

#: the Glicko-2 scale's unit (the paper's constant, 400 / ln 10 to four places)
SCALE = 173.7178
#: an unrated player (Step 1 of the paper)
DEFAULT_RATING, DEFAULT_RD, DEFAULT_VOLATILITY = 1500.0, 350.0, 0.06
#: the system constant (the paper's example uses 0.5; it suggests 0.3 to 1.2)
TAU = 0.5
#: the volatility iteration's convergence tolerance (the paper's epsilon)
TOLERANCE = 1e-6
#: the level fixed by default, and its rating: ``greedy`` plays in every committed arena, and a
#: new player (1500, Glicko's unrated default) is presumed to play about as well as it does
ANCHOR, ANCHOR_RATING = "greedy", 1500.0


def _finite(name: str, x: float) -> float:
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {x!r}")
    return x


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating, RD (rating deviation) and volatility, on the Glicko scale."""

    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_RD
    volatility: float = DEFAULT_VOLATILITY

    def __post_init__(self) -> None:
        _finite("a rating", self.rating)
        if not _finite("an RD", self.rd) > 0:
            raise ValueError(f"an RD must be positive, got {self.rd!r}")
        if not _finite("a volatility", self.volatility) > 0:
            raise ValueError(f"a volatility must be positive, got {self.volatility!r}")


def to_glicko2(rating: float, rd: float) -> tuple[float, float]:
    """(mu, phi) on the Glicko-2 scale (Step 2)."""
    return (rating - DEFAULT_RATING) / SCALE, rd / SCALE


def from_glicko2(mu: float, phi: float) -> tuple[float, float]:
    """(rating, RD) back on the Glicko scale (Step 8)."""
    return SCALE * mu + DEFAULT_RATING, SCALE * phi


def g(phi: float) -> float:
    """How much an opponent's uncertainty (phi) damps what a game against them says."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / math.pi**2)


def expected_score(mu: float, mu_j: float, phi_j: float) -> float:
    """The expected score against an opponent at (mu_j, phi_j), on the Glicko-2 scale."""
    return 1.0 / (1.0 + math.exp(-g(phi_j) * (mu - mu_j)))


def _games(results: Iterable[Sequence[float]]) -> list[tuple[float, float, float]]:
    games = []
    for item in results:
        r_j, rd_j, s = item
        r_j, rd_j, s = _finite("a rating", r_j), _finite("an RD", rd_j), _finite("a score", s)
        if rd_j < 0:  # 0 is allowed: an opponent whose rating is known exactly (the AI anchor)
            raise ValueError(f"an opponent's RD must not be negative, got {rd_j!r}")
        if not 0.0 <= s <= 1.0:
            raise ValueError(f"a score is from 0 (loss) to 1 (win), got {s!r}")
        games.append((r_j, rd_j, s))
    return games


def _volatility(sigma: float, phi: float, v: float, delta: float, tau: float, tol: float) -> float:
    """Step 5: the new volatility, the root of f by the Illinois algorithm (regula falsi)."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        d = phi * phi + v + ex
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * d * d) - (x - a) / (tau * tau)

    lo = a
    if delta * delta > phi * phi + v:
        hi = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        hi = a - k * tau
    f_lo, f_hi = f(lo), f(hi)
    for _ in range(10_000):
        if abs(hi - lo) <= tol:
            return math.exp(lo / 2.0)
        c = lo + (lo - hi) * f_lo / (f_hi - f_lo)
        f_c = f(c)
        if f_c * f_hi <= 0:  # the root is between c and hi: the bracket moves
            lo, f_lo = hi, f_hi
        else:  # the Illinois step: halve the stale end's value so that it moves next time
            f_lo /= 2.0
        hi, f_hi = c, f_c
    raise ArithmeticError("the Glicko-2 volatility iteration did not converge")  # pragma: no cover


def rate(player: Rating, results: Iterable[Sequence[float]], *, tau: float = TAU, tol: float = TOLERANCE) -> Rating:
    """The player's rating after one rating period against ``results``: (opponent's rating,
    opponent's RD, score 1 / 0.5 / 0) per game, the opponents' ratings as at the period's start.
    No games: only the RD grows (Step 6 alone)."""
    if not (_finite("tau", tau) > 0 and _finite("the tolerance", tol) > 0):
        raise ValueError(f"tau and the tolerance must be positive, got {tau!r} and {tol!r}")
    games = _games(results)
    mu, phi = to_glicko2(player.rating, player.rd)
    sigma = player.volatility
    if not games:
        return Rating(player.rating, SCALE * math.sqrt(phi * phi + sigma * sigma), sigma)
    terms = []
    for r_j, rd_j, s in games:
        mu_j, phi_j = to_glicko2(r_j, rd_j)
        terms.append((g(phi_j), expected_score(mu, mu_j, phi_j), s))
    v = 1.0 / sum(gj * gj * e * (1.0 - e) for gj, e, _ in terms)  # Step 3
    improvement = sum(gj * (s - e) for gj, e, s in terms)
    delta = v * improvement  # Step 4
    sigma_new = _volatility(sigma, phi, v, delta, tau, tol)  # Step 5
    phi_star = math.sqrt(phi * phi + sigma_new * sigma_new)  # Step 6
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)  # Step 7
    mu_new = mu + phi_new * phi_new * improvement
    rating, rd = from_glicko2(mu_new, phi_new)
    return Rating(rating, rd, sigma_new)


# ----------------------------------------------------------------------------- AI levels


@dataclass(frozen=True, slots=True)
class PairResult:
    """A's hands against B: wins, ties and losses. ``deals``, optional: per duplicate deal,
    (A's score summed over its games, its number of games), for standard errors that do not
    take the two hands of one deal as independent."""

    a: str
    b: str
    wins: int
    ties: int
    losses: int
    deals: tuple[tuple[float, int], ...] | None = None

    def __post_init__(self) -> None:
        if self.a == self.b:
            raise ValueError(f"a pair needs two players, got {self.a!r} twice")
        if min(self.wins, self.ties, self.losses) < 0 or self.games == 0:
            raise ValueError(f"{self.a} against {self.b}: counts must be >= 0 and not all 0")
        if self.deals is not None and (
            sum(n for _, n in self.deals) != self.games
            or not math.isclose(sum(s for s, _ in self.deals), self.score, abs_tol=1e-9)
        ):
            raise ValueError(f"{self.a} against {self.b}: the deals do not add up to the counts")

    @property
    def games(self) -> int:
        return self.wins + self.ties + self.losses

    @property
    def score(self) -> float:
        return self.wins + 0.5 * self.ties


@dataclass(frozen=True, slots=True)
class FittedRating:
    """A player's maximum-likelihood rating, its standard error under the model (hands
    independent), and the robust one (sandwich, duplicate deals as clusters); 0 for the anchor."""

    name: str
    rating: float
    se: float
    se_robust: float
    games: int


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for m in graph[todo.pop()] - seen:
            seen.add(m)
            todo.append(m)
    return seen


def _check_identifiable(names: list[str], pairs: Sequence[PairResult], anchor: str) -> None:
    """A finite maximum exists iff the graph 'i scored something against j' is strongly
    connected (Zermelo; Ford): otherwise some player's likelihood grows without bound."""
    linked = {n: set() for n in names}
    beat = {n: set() for n in names}  # beat[i]: the j that i won or tied against
    for p in pairs:
        linked[p.a].add(p.b)
        linked[p.b].add(p.a)
        if p.wins or p.ties:
            beat[p.a].add(p.b)
        if p.losses or p.ties:
            beat[p.b].add(p.a)
    beaten_by = {n: {m for m in names if n in beat[m]} for n in names}
    checks = (
        (linked, "played no chain of games linking them to"),
        (beat, "never lost or tied, even through other players, to"),
        (beaten_by, "never won or tied, even through other players, against"),
    )
    for graph, what in checks:
        out = [n for n in names if n not in _reach(graph, anchor)]
        if out:
            raise ValueError(f"no finite rating: {', '.join(out)} {what} {anchor}; play them against closer players")


def fit_levels(
    pairs: Sequence[PairResult], anchor: str, anchor_rating: float = ANCHOR_RATING, *, tol: float = 1e-10
) -> dict[str, FittedRating]:
    """Every player's rating by maximum likelihood of the logistic (Bradley-Terry / Elo) model,
    ties as half a win, ``anchor`` fixed at ``anchor_rating``; Newton's method (the
    log-likelihood is concave). Consecutive levels only (a chain) or a full table alike."""
    import numpy as np  # here, not at the top: the server's Glicko-2 updates do not need it

    names = sorted({p.a for p in pairs} | {p.b for p in pairs})
    if anchor not in names:
        raise ValueError(f"the anchor {anchor!r} plays in none of the results ({', '.join(names)})")
    _check_identifiable(names, pairs, anchor)
    free = [n for n in names if n != anchor]
    col = {n: i for i, n in enumerate(free)}  # the anchor has no column: its rating is fixed
    design = np.zeros((len(pairs), len(free)))  # row p: +1 at A's column, -1 at B's
    for k, p in enumerate(pairs):
        if p.a in col:
            design[k, col[p.a]] = 1.0
        if p.b in col:
            design[k, col[p.b]] = -1.0
    score = np.array([p.score for p in pairs])
    n = np.array([float(p.games) for p in pairs])

    def loglik_grad_hess(th: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        x = design @ th
        q = 1.0 / (1.0 + np.exp(-x))
        ll = float(-(score * np.logaddexp(0.0, -x) + (n - score) * np.logaddexp(0.0, x)).sum())
        return ll, design.T @ (score - n * q), -(design.T * (n * q * (1.0 - q))) @ design

    theta = np.zeros(len(free))  # ratings above the anchor's, on the Glicko-2 scale
    ll, grad, hess = loglik_grad_hess(theta)
    for _ in range(200):
        step = np.linalg.solve(-hess, grad)
        t = 1.0
        while True:  # backtracking: never accept a step that lowers the likelihood
            new = theta + t * step
            ll_new, grad_new, hess_new = loglik_grad_hess(new)
            if ll_new >= ll - 1e-12 or t < 1e-8:
                break
            t /= 2.0
        theta, ll, grad, hess = new, ll_new, grad_new, hess_new
        if np.max(np.abs(t * step), initial=0.0) < tol:
            break
    else:  # pragma: no cover
        raise ArithmeticError("the Bradley-Terry fit did not converge")
    cov = np.linalg.inv(-hess)
    # the sandwich: the score residuals' spread over clusters (deals when known, else each hand)
    q = 1.0 / (1.0 + np.exp(-(design @ theta)))
    spread = np.array(
        [
            sum((s - m * qk) ** 2 for s, m in p.deals)
            if p.deals
            else p.wins * (1 - qk) ** 2 + p.ties * (0.5 - qk) ** 2 + p.losses * qk**2
            for p, qk in zip(pairs, q, strict=True)
        ]
    )
    robust = cov @ ((design.T * spread) @ design) @ cov
    games = {n: sum(p.games for p in pairs if n in (p.a, p.b)) for n in names}
    out = {}
    for name in names:
        i = col.get(name)
        se = 0.0 if i is None else SCALE * math.sqrt(cov[i, i])
        se_r = 0.0 if i is None else SCALE * math.sqrt(max(robust[i, i], 0.0))
        rating = anchor_rating + (0.0 if i is None else SCALE * float(theta[i]))
        out[name] = FittedRating(name, rating, se, se_r, games[name])
    return out


def _sign_score(margin: float) -> float:
    return 1.0 if margin > 0 else 0.5 if margin == 0 else 0.0


def arena_pairs(folder: str | Path) -> list[tuple[PairResult, tuple[int, ...]]]:
    """The hands of an arena's output folder (``results.json`` and ``deals.csv``, as
    ``pasur arena`` writes them), per pair, with the deck seeds they were played on. Each
    deal's two games: A as Alex (``a_as_alex``, Alex's points minus Bob's) and A as Bob
    (``-b_as_alex``). The counts are checked against ``results.json``'s win and tie rates."""
    folder = Path(folder)
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    rows: dict[tuple[str, str], list[dict]] = {}
    with open(folder / "deals.csv", newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            rows.setdefault((row["a"], row["b"]), []).append(row)
    out = []
    for p in results["pairs"]:
        recs = rows.pop((p["a"], p["b"]), [])
        if len(recs) != p["deals"]:
            raise ValueError(
                f"{folder}: {p['a']} against {p['b']}: {len(recs)} deals in deals.csv, {p['deals']} in results.json"
            )
        deals = [(_sign_score(float(r["a_as_alex"])), _sign_score(-float(r["b_as_alex"]))) for r in recs]
        games = [s for d in deals for s in d]
        wins, ties = games.count(1.0), games.count(0.5)
        for what, n, rate_ in (("win", wins, p["win_rate"]), ("tie", ties, p["tie_rate"])):
            if abs(n / len(games) - rate_) > 1e-4:
                raise ValueError(
                    f"{folder}: {p['a']} against {p['b']}: deals.csv's {what} rate is "
                    f"{n / len(games):.4f}, results.json's {rate_}"
                )
        pair = PairResult(p["a"], p["b"], wins, ties, len(games) - wins - ties, tuple((sum(d), 2) for d in deals))
        out.append((pair, tuple(int(r["seed"]) for r in recs)))
    if rows:
        raise ValueError(f"{folder}: deals.csv has pairs results.json lacks: {sorted(rows)}")
    return out


def level_ratings(
    folders: Iterable[str | Path],
    *,
    levels: Mapping[str, str] | None = None,
    anchor: str = ANCHOR,
    anchor_rating: float = ANCHOR_RATING,
) -> dict[str, FittedRating]:
    """The AI levels' ratings from arena output folders, keyed by level name (in the levels'
    order, weakest first). Every pair of every folder enters the fit (an agent that is no level,
    such as ``optimal``, still links the others); a pair's deck played twice (the same folder
    given twice, or overlapping runs) is refused, as its hands would count twice."""
    levels = LEVELS if levels is None else levels
    by_spec = {spec: name for name, spec in levels.items()}
    pairs, seen = [], set()
    for folder in folders:
        for pair, seeds in arena_pairs(folder):
            a, b = by_spec.get(pair.a, pair.a), by_spec.get(pair.b, pair.b)
            for s in seeds:
                key = (frozenset((a, b)), s)
                if key in seen:
                    raise ValueError(f"{folder}: {a} against {b} on deck seed {s} is already counted")
                seen.add(key)
            pairs.append(PairResult(a, b, pair.wins, pair.ties, pair.losses, pair.deals))
    if not pairs:
        raise ValueError("no arena results given")
    fitted = fit_levels(pairs, anchor, anchor_rating)
    return {name: fitted[name] for name in levels if name in fitted}
