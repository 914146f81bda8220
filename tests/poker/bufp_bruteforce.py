"""Brute force for the BUFP tests, independent of the engine: beliefs by Bayes' rule over the
histories of each information set, and the subgame best-response gain at each of them, by
walking a game tree state by state (OpenSpiel's, or :class:`OneCardPoker` below).

A state needs ``is_terminal``, ``is_chance_node``, ``chance_outcomes``, ``child``,
``current_player``, ``legal_actions``, ``information_state_string(player)``, ``returns`` and
``history_str``; a policy is ``{infostate: [(action, probability), ...]}``.
"""

from __future__ import annotations

from collections import defaultdict


def infosets(root, table) -> dict[str, list]:
    """Each information set's states with their weight: chance times the opponent's reach."""
    out = defaultdict(list)
    stack = [(root, [1.0, 1.0])]
    while stack:
        s, w = stack.pop()
        if s.is_terminal():
            continue
        if s.is_chance_node():
            stack += [(s.child(a), [x * p for x in w]) for a, p in s.chance_outcomes()]
            continue
        pl = s.current_player()
        key = s.information_state_string(pl)
        out[key].append((s, w[pl]))
        probs = dict(table[key])
        for a in s.legal_actions():
            nw = list(w)
            nw[1 - pl] *= probs[a]  # the acting player's probability weighs the other's beliefs
            stack.append((s.child(a), nw))
    return out


def subgame_value(items, player, table, best: bool) -> float:
    """Weighted value for ``player`` of the states ``items`` (state, weight): following
    ``table``, or best-responding at ``player``'s information sets below (one choice per
    information set, for all its states together)."""
    total = 0.0
    groups = defaultdict(list)
    stack = list(items)
    while stack:
        s, w = stack.pop()
        if s.is_terminal():
            total += w * s.returns()[player]
        elif s.is_chance_node():
            stack += [(s.child(a), w * p) for a, p in s.chance_outcomes()]
        elif s.current_player() != player or not best:
            probs = dict(table[s.information_state_string(s.current_player())])
            stack += [(s.child(a), w * probs[a]) for a in s.legal_actions() if probs[a] > 0]
        else:
            groups[s.information_state_string(player)].append((s, w))
    for g in groups.values():
        total += max(
            subgame_value([(s.child(a), w) for s, w in g], player, table, True) for a in g[0][0].legal_actions()
        )
    return total


def gains(root, table) -> dict[str, tuple[float, dict[str, float], bool]]:
    """Per information set: the subgame best-response gain given beliefs, the beliefs (history ->
    probability), and whether Bayes' rule was silent (then every deal of the set counts alike:
    the chance prior, as all deals are equally likely in these games)."""
    out = {}
    for key, items in infosets(root, table).items():
        player = items[0][0].current_player()
        total = sum(w for _, w in items)
        fallback = total <= 0
        if fallback:
            items = [(s, 1.0) for s, _ in items]
            total = float(len(items))
        best = subgame_value(items, player, table, True) / total
        play = subgame_value(items, player, table, False) / total
        out[key] = (best - play, {s.history_str(): w / total for s, w in items}, fallback)
    return out


class OneCardPoker:
    """One betting round, one private card each from ``n`` cards, the higher card winning:
    Kuhn poker (``n=3``), a two-card game where each player sees the other's card (``n=2``:
    perfect information), with ``max_bets`` bets plus raises. Actions 0 fold, 1 check/call,
    2 bet/raise; information states ``"<card>:<history>"``."""

    def __init__(self, n: int, max_bets: int = 1, ante: int = 1, bet: int = 1, cards=(), history: str = "") -> None:
        self.n, self.max_bets, self.ante, self.bet = n, max_bets, ante, bet
        self.cards, self.history = tuple(cards), history

    def _contrib(self) -> list[int]:
        c, p = [self.ante, self.ante], 0
        for a in self.history:
            if a == "c":
                c[p] = c[1 - p]
            elif a == "r":
                c[p] = c[1 - p] + self.bet
            p = 1 - p
        return c

    def is_chance_node(self) -> bool:
        return len(self.cards) < 2

    def chance_outcomes(self):
        rest = [c for c in range(self.n) if c not in self.cards]
        return [(c, 1.0 / len(rest)) for c in rest]

    def child(self, a):
        if self.is_chance_node():
            return OneCardPoker(self.n, self.max_bets, self.ante, self.bet, (*self.cards, a), self.history)
        return OneCardPoker(self.n, self.max_bets, self.ante, self.bet, self.cards, self.history + "fcr"[a])

    def is_terminal(self) -> bool:
        h = self.history
        return h.endswith("f") or h.endswith("cc") or (h.endswith("c") and "r" in h)

    def current_player(self) -> int:
        return len(self.history) % 2

    def legal_actions(self) -> list[int]:
        c, p = self._contrib(), self.current_player()
        facing = c[1 - p] > c[p]
        return ([0] if facing else []) + [1] + ([2] if self.history.count("r") < self.max_bets else [])

    def information_state_string(self, player: int) -> str:
        return f"{self.cards[player]}:{self.history}"

    def history_str(self) -> str:
        return f"{self.cards}:{self.history}"

    def returns(self) -> list[float]:
        c = self._contrib()
        if self.history.endswith("f"):
            folder = (len(self.history) - 1) % 2
            win = 1 - folder
        else:
            win = 0 if self.cards[0] > self.cards[1] else 1
        return [c[1 - win] if p == win else -c[p] for p in (0, 1)]


def table_from_engine(engine, policy) -> dict:
    """Our one-round, one-card policy as ``{"<card>:<history>": [(action, p), ...]}``."""
    t = engine.tree
    out = {}
    for i, node in enumerate(t.round_decisions[0]):
        for k in range(engine.Hr[0]):
            card = int(engine.boards.hands[int(engine.hand_ids[0][0, k])][0])
            probs = policy.tables[0][i, :, k]
            out[f"{card}:{t.history[node]}"] = [(a, float(probs[a])) for a in range(3) if t.legal[node, a]]
    return out


def backward_induction(state, out: dict | None = None) -> tuple[list[float], dict]:
    """Subgame-perfect values of a perfect-information game (each information set one state):
    returns the root's values and ``{infostate: {action: value for the actor}}`` at every
    decision state, reached or not."""
    out = {} if out is None else out
    if state.is_terminal():
        return list(state.returns()), out
    if state.is_chance_node():
        total = [0.0, 0.0]
        for a, p in state.chance_outcomes():
            v, _ = backward_induction(state.child(a), out)
            total = [t + p * x for t, x in zip(total, v, strict=True)]
        return total, out
    pl = state.current_player()
    kids = {a: backward_induction(state.child(a), out)[0] for a in state.legal_actions()}
    out[state.information_state_string(pl)] = {a: v[pl] for a, v in kids.items()}
    best = max(kids, key=lambda a: kids[a][pl])
    return kids[best], out
