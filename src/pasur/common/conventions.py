"""One exploitability convention for both games (docs/conventions.md).

For a two-player zero-sum game and a profile ``sigma``:

* ``nash_conv = BR_0(sigma) + BR_1(sigma)`` (the sum of both players' gains from deviating; in
  Pasur's points: Alex's best response minus Bob's minimizing best response);
* ``exploitability = nash_conv / 2`` (OpenSpiel's ``exploitability``: the mean gain).

Every summary, trace, table and plot carries both, and ``--target-exploitability E`` bounds
the exploitability (so NashConv by ``2 E``). Pasur outputs written before this convention
(a summary, a sweep record or manifest, a traces file) have ``exploitability`` holding NashConv
and no ``nash_conv``: :func:`relabel_summary` and :func:`relabel_columns` read them as
``nash_conv`` with ``exploitability`` halved, so old folders read as before, relabelled.

Poker amounts are in chips per game, or in mb/g: ``1000 * chips / big_blind``, the big blind
of each game given by its preset (:attr:`pasur.poker.games.PokerGame.blind`).

>>> relabel_summary({"exploitability": 0.1, "target": 0.05})
{'exploitability': 0.05, 'target': 0.025, 'nash_conv': 0.1}
>>> relabel_summary({"exploitability": 0.05, "nash_conv": 0.1}) == {"exploitability": 0.05, "nash_conv": 0.1}
True
"""

from __future__ import annotations

#: how the word is used, for summaries and help texts
EXPLOITABILITY = "exploitability = NashConv / 2 (OpenSpiel's convention; docs/conventions.md)"
#: the help text of ``--target-exploitability`` on both sides, after what it bounds
TARGET_HELP = "exploitability = NashConv / 2, the mean of both players' best-response gains (docs/conventions.md)"


def _half(x):
    return None if x is None else x / 2


def is_old(d: dict) -> bool:
    """A Pasur summary or record written before the convention: ``exploitability`` holds NashConv."""
    return "exploitability" in d and "nash_conv" not in d


def relabel_summary(d: dict) -> dict:
    """A Pasur CFR summary (``summary.json``) or sweep record (``record.json``) in the convention:
    an old one (:func:`is_old`) relabelled (``nash_conv`` = its ``exploitability``, which is
    halved, and so are its target and per-round budgets); a new one as is. Returns a new dict."""
    if not is_old(d):
        return d
    out = dict(d)
    out["exploitability"] = _half(d["exploitability"])
    if "target" in d:
        out["target"] = _half(d["target"])
    out["nash_conv"] = d["exploitability"]
    if "exploitability_meaning" in d:
        out["exploitability_meaning"] = d["exploitability_meaning"] + "; relabelled: " + EXPLOITABILITY
    params = d.get("parameters")
    if isinstance(params, dict) and params.get("target_exploitability") is not None:
        out["parameters"] = {**params, "target_exploitability": params["target_exploitability"] / 2}
    if isinstance(d.get("round_exploitability"), list):
        out["round_nash_conv"] = list(d["round_exploitability"])
        out["round_exploitability"] = [_half(x) for x in d["round_exploitability"]]
    if isinstance(d.get("rounds"), list):
        out["rounds"] = [_relabel_round(r) for r in d["rounds"]]
    return out


def _relabel_round(r: dict) -> dict:
    if not isinstance(r, dict) or "nash_conv" in r:
        return r
    out = dict(r)
    for old, new in (("exploitability", "nash_conv"), ("mean_exploitability", "mean_nash_conv")):
        if old in r:
            out[new] = r[old]
            out[old] = _half(r[old])
    if "suffix_gap" in r:
        out["suffix_exploitability"] = _half(r["suffix_gap"])
    if "budget" in r:
        out["budget"] = _half(r["budget"])
    return out


def relabel_columns(columns: dict[str, list]) -> dict[str, list]:
    """Old Pasur columns (a traces file, sweep records or a manifest as ``{name: values}``) in
    the convention: without a ``nash_conv`` column, ``exploitability`` (and
    ``mean_exploitability``) held NashConv; relabelled and halved. New columns as they are."""
    if "exploitability" not in columns or "nash_conv" in columns:
        return columns
    out = dict(columns)
    for old, new in (("exploitability", "nash_conv"), ("mean_exploitability", "mean_nash_conv")):
        if old in columns:
            out[new] = list(columns[old])
            out[old] = [_half(x) for x in columns[old]]
    return out
