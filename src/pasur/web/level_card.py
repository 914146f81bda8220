"""The AI levels' card: their fixed ratings and each level's margin over the next weaker one,
fitted from the committed arena results and shipped with the package.

Fitting (:func:`pasur.web.ratings.level_ratings`) needs the arena's files under ``results/``,
which an installed wheel lacks. So the fit is written once into ``level-card.json`` beside this
module (``pasur web-levels --write``), with the SHA-256 of every file it read, and the server, the
ladder, the page's level list and ``pasur play --help`` read the card. A test refits the card from
``results/`` and requires the shipped one to equal it, so the card cannot drift from its sources.

>>> card = load_card()
>>> card["anchor"], card["levels"][1]["level"], card["levels"][1]["rating"]
('greedy', 'greedy', 1500.0)
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from itertools import pairwise
from pathlib import Path

from pasur.web.levels import LEVELS
from pasur.web.ratings import ANCHOR, ANCHOR_RATING, level_ratings

#: the card shipped with the package
CARD = Path(__file__).with_name("level-card.json")
#: the repository the arena folders are named relative to (the card names them so)
REPO = Path(__file__).resolve().parents[3]
#: the committed arena results the card is fitted from, relative to the repository
ARENA_FOLDERS = (
    "results/arena-20",
    "results/arena-prereg-heuristic-greedy/run",
    "results/arena-prereg-levels/run",
    "results/arena-prereg-policy-heuristic/run",
    "results/arena-prereg-policy-level/run",
    "results/arena-prereg-combined/run",
    "results/arena-prereg-best/run",
)
MODEL = "Bradley-Terry (Elo) by maximum likelihood over the arena's hands; rd: robust standard error"
#: decimals kept in the card (ratings to 0.01, margins to 0.001 points)
RATING_PLACES, MARGIN_PLACES = 2, 3


def arena_path(folder: str | Path, root: Path = REPO) -> Path:
    """An arena folder as given when absolute, else relative to the repository the package sits
    in (``root``), never to the working directory: the server and the CLI find the same files
    wherever they are started from."""
    path = Path(folder)
    return path if path.is_absolute() else root / path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _margins(folders: Sequence[Path], levels: Mapping[str, str], shown: Sequence[str]) -> list[dict]:
    """Each level's margin per deal (points per game, the mean over the deal's two seatings) over
    the level just below it, from the folder whose pair of those two agents played the most deals
    (the first such folder on a tie); a level with no such pair has no entry."""
    names = list(levels)
    out = []
    for lower, upper in pairwise(names):
        best = None
        for folder, name in zip(folders, shown, strict=True):
            results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
            for p in results["pairs"]:
                if {p["a"], p["b"]} != {levels[upper], levels[lower]} or levels[upper] == levels[lower]:
                    continue
                sign = 1.0 if p["a"] == levels[upper] else -1.0
                lo, hi = (sign * x for x in p["ci95"])
                row = {
                    "level": upper,
                    "agent": levels[upper],
                    "over": lower,
                    "over_agent": levels[lower],
                    "margin": round(sign * p["margin"], MARGIN_PLACES),
                    "ci95": [round(min(lo, hi), MARGIN_PLACES), round(max(lo, hi), MARGIN_PLACES)],
                    "deals": p["deals"],
                    "source": name,
                }
                if best is None or row["deals"] > best["deals"]:
                    best = row
        if best is not None:
            out.append(best)
    return out


def build_card(
    folders: Sequence[str | Path] = ARENA_FOLDERS, *, levels: Mapping[str, str] | None = None, root: Path = REPO
) -> dict:
    """The card of ``levels`` (default: the page's) fitted from the arena ``folders`` (relative
    to ``root``, or absolute): every level's rating, RD (robust standard error) and hands, the
    margins over the next weaker level, and the files read with their SHA-256."""
    levels = dict(LEVELS if levels is None else levels)
    paths = [arena_path(f, root) for f in folders]
    shown = [str(f) for f in folders]
    missing = [s for p, s in zip(paths, shown, strict=True) if not (p / "results.json").is_file()]
    if missing:
        raise ValueError(f"no arena results in {missing[0]} (results.json)")
    fitted = level_ratings(paths, levels=levels)
    return {
        "what": "the AI levels' fixed ratings and margins, fitted from committed arena results (pasur web-levels)",
        "anchor": ANCHOR,
        "anchor_rating": ANCHOR_RATING,
        "model": MODEL,
        "levels": [
            {
                "level": name,
                "agent": levels[name],
                "rating": round(f.rating, RATING_PLACES),
                "rd": round(f.se_robust, RATING_PLACES),
                "se": round(f.se, RATING_PLACES),
                "hands": f.games,
            }
            for name, f in fitted.items()
        ],
        "margins": _margins(paths, levels, shown),
        "sources": [
            {"folder": s, "files": {n: _sha256(p / n) for n in ("results.json", "deals.csv")}}
            for p, s in zip(paths, shown, strict=True)
        ],
    }


def write_card(card: dict, path: Path = CARD) -> None:
    """Write ``card`` whole or not at all (a temporary file renamed over the old one)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def load_card(path: Path = CARD) -> dict:
    """The shipped card (or the one at ``path``), checked for the fields its readers use."""
    card = json.loads(path.read_text(encoding="utf-8"))
    for row in card["levels"]:
        if not (isinstance(row["level"], str) and math.isfinite(row["rating"]) and row["rd"] >= 0):
            raise ValueError(f"{path}: a bad level row {row!r}")
    return card


def margin_text(row: Mapping) -> str:
    """One margin in words: ``+5.67 points per game over greedy (95 % interval +5.14 to +6.19, 500 deals)``."""
    lo, hi = row["ci95"]
    return (
        f"{row['margin']:+.2f} points per game over {row['over']} "
        f"(95 % interval {lo:+.2f} to {hi:+.2f}, {row['deals']:,} deals)"
    )


def margins_help(path: Path = CARD) -> str:
    """The levels' margins for a command's help, or an empty text when there is no card."""
    try:
        rows = load_card(path)["margins"]
    except (OSError, ValueError, KeyError):
        return ""
    return "; ".join(f"{r['level']}: {margin_text(r)}" for r in rows)


def level_margins(levels: Mapping[str, str], path: Path = CARD) -> dict[str, dict]:
    """The card's margins for ``levels`` (name -> agent spec), keyed by the stronger level: only
    where both levels of a margin are in ``levels`` as the same agents the card measured and are
    next to each other there; {} without a card."""
    try:
        card = load_card(path)
    except (OSError, ValueError, KeyError):
        return {}
    names = list(levels)
    below = {upper: lower for lower, upper in pairwise(names)}
    out = {}
    for r in card["margins"]:
        same = levels.get(r["level"]) == r["agent"] and levels.get(r["over"]) == r["over_agent"]
        if same and below.get(r["level"]) == r["over"]:
            out[r["level"]] = {k: r[k] for k in ("over", "margin", "ci95", "deals")}
    return out
