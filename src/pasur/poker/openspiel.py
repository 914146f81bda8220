"""OpenSpiel-compatible tabular policies for Kuhn and Leduc poker.

OpenSpiel keys a tabular policy by information-state strings and action ids: Kuhn
(``kuhn_poker``): the card and the actions so far, ``"0pb"`` (``p`` pass = check or fold,
``b`` bet = bet or call; action 0 = pass, 1 = bet); Leduc (``leduc_poker``):
``"[Observer: 1][Private: 5][Round 2][Player: 1][Pot: 10][Money: 93 97][Public: 0][Round1: 2 1][Round2: 2]"``
(action 0 fold, 1 check or call, 2 bet or raise; money from a stack of 100). Cards have the
same ids in both projects (``rank * suits + suit``). Here a policy is exported as
``{infostate: [[action, probability], ...]}`` (what OpenSpiel's ``TabularPolicy.to_dict()`` gives
and ``pyspiel.TabularPolicy(dict)`` takes), and imported from the same shape, so strategies move
both ways without OpenSpiel installed; :func:`to_pyspiel` builds the OpenSpiel object when it is.
"""

from __future__ import annotations

import numpy as np
import torch

from pasur.common.errors import PasurInputError
from pasur.poker.policy import TabularPolicy
from pasur.poker.tree import CALL, FOLD, RAISE

STACK = 100  # OpenSpiel's Leduc starting money


def _check(engine) -> str:
    name = engine.game.openspiel
    if name not in ("kuhn_poker", "leduc_poker"):
        raise PasurInputError(f"game {engine.game.name!r} has no OpenSpiel counterpart (kuhn and leduc do)")
    if engine.iso:
        raise PasurInputError("OpenSpiel policies list every board: use the engine with iso=False")
    return name


def _facing(engine, node: int) -> bool:
    c = engine.tree.contrib[node]
    p = engine.tree.actor[node]
    return bool(c[1 - p] > c[p])


def action_ids(engine, node: int) -> dict[int, int]:
    """Our action (FOLD, CALL, RAISE) -> OpenSpiel's action id, at a decision node."""
    if engine.game.openspiel == "kuhn_poker":
        return {FOLD: 0, CALL: 1 if _facing(engine, node) else 0, RAISE: 1}
    return {FOLD: 0, CALL: 1, RAISE: 2}


def _history_ids(engine, node: int) -> list[list[int]]:
    """OpenSpiel action ids per round along the path to ``node``."""
    t = engine.tree
    path = []
    n = node
    while t.parent[n] >= 0:
        path.append((int(t.parent[n]), int(t.action[n])))
        n = int(t.parent[n])
    rounds: list[list[int]] = [[] for _ in range(engine.R)]
    for m, a in reversed(path):
        rounds[int(t.round[m])].append(action_ids(engine, m)[a])
    return rounds


def infostate(engine, node: int, board: list[int], hand: list[int]) -> str:
    """OpenSpiel's information-state string of the player to act at ``node``."""
    t = engine.tree
    p = int(t.actor[node])
    hist = _history_ids(engine, node)
    if engine.game.openspiel == "kuhn_poker":
        return f"{hand[0]}" + "".join("pb"[a] for a in hist[0])
    r = int(t.round[node])
    c = t.contrib[node]
    s = f"[Observer: {p}][Private: {hand[0]}][Round {r + 1}][Player: {p}][Pot: {int(c.sum())}]"
    s += f"[Money: {STACK - int(c[0])} {STACK - int(c[1])}]"
    if r >= 1:
        s += f"[Public: {board[0]}]"
    s += f"[Round1: {' '.join(map(str, hist[0]))}][Round2: {' '.join(map(str, hist[1]))}]"
    return s


def _entries(engine):
    """Every information set: (round, row, board index, position, node, board cards, hand cards)."""
    t = engine.tree
    bd = engine.boards
    for r in range(engine.R):
        for row, node in enumerate(t.round_decisions[r]):
            for b, board in enumerate(bd.boards[r]):
                for j, h in enumerate(bd.hand_ids[r][b]):
                    yield r, row, b, j, int(node), board.tolist(), bd.hands[h].tolist()


def export_policy(engine, policy) -> dict[str, list[list[float]]]:
    """``{infostate: [[action_id, probability], ...]}`` for every information set."""
    _check(engine)
    probs = [policy.probs(r, 0, engine.n_rows[r], 0, engine.n_boards[r]).cpu().numpy() for r in range(engine.R)]
    t = engine.tree
    out: dict[str, list[list[float]]] = {}
    for r, row, b, j, node, board, hand in _entries(engine):
        ids = action_ids(engine, node)
        legal = [a for a in (FOLD, CALL, RAISE) if t.legal[node, a]]
        out[infostate(engine, node, board, hand)] = [[ids[a], float(probs[r][row, a, b, j])] for a in legal]
    return out


def _unwrap(engine, table: dict) -> dict:
    """The bare table of the CLI's wrapped form ``{"game", "policy"}``; a bare table as it is."""
    if not (isinstance(table, dict) and set(table) == {"game", "policy"} and isinstance(table["policy"], dict)):
        return table
    if table["game"] != engine.game.openspiel:
        raise PasurInputError(f"a policy of {table['game']!r}, not of {engine.game.openspiel!r}")
    return table["policy"]


def import_policy(engine, table: dict) -> TabularPolicy:
    """Our lossless policy from ``{infostate: [[action_id, probability], ...]}`` (or ``{infostate:
    {action_id: probability}}``), or from the CLI's ``policy.openspiel.json`` as loaded, which
    wraps that table as ``{"game": ..., "policy": {...}}`` (its game must be ``engine``'s); every
    information set must be there."""
    _check(engine)
    table = _unwrap(engine, table)
    pol = TabularPolicy(engine)
    tabs = [x.clone() for x in pol.tables]
    t = engine.tree
    for r, row, b, j, node, board, hand in _entries(engine):
        key = infostate(engine, node, board, hand)
        if key not in table:
            raise PasurInputError(f"the policy has no entry for information state {key!r}")
        entry = table[key]
        pairs = entry.items() if isinstance(entry, dict) else entry
        by_id = {int(a): float(p) for a, p in pairs}
        ids = action_ids(engine, node)
        col = b * engine.Hr[r] + j
        vals = np.zeros(3)
        for a in (FOLD, CALL, RAISE):
            if t.legal[node, a]:
                vals[a] = by_id.get(ids[a], 0.0)
        total = vals.sum()
        if not np.isfinite(total) or total <= 0 or (vals < 0).any():
            raise PasurInputError(f"information state {key!r}: probabilities must be >= 0 with a positive sum")
        tabs[r][row, :, col] = torch.as_tensor(vals / total, dtype=engine.dtype)
    pol.tables = [x.to(engine.device) for x in tabs]
    return pol


def to_pyspiel(engine, policy):
    """OpenSpiel's python ``TabularPolicy`` holding ``policy`` (needs ``open_spiel``)."""
    import pyspiel
    from open_spiel.python import policy as os_policy

    game = pyspiel.load_game(_check(engine))
    tp = os_policy.TabularPolicy(game)
    for key, pairs in export_policy(engine, policy).items():
        row = tp.state_lookup[key]
        tp.action_probability_array[row] = 0.0
        for a, p in pairs:
            tp.action_probability_array[row, int(a)] = p
    return tp


def from_pyspiel(engine, os_pol) -> TabularPolicy:
    """Our policy from an OpenSpiel python ``TabularPolicy``."""
    return import_policy(
        engine,
        {k: list(enumerate(os_pol.action_probability_array[i].tolist())) for k, i in os_pol.state_lookup.items()},
    )
