"""The exact hidden-hand solver checked by OpenSpiel on the same game: ``python_pasur`` with the
variant as its game parameter, on the smallest rows (``micro``: two deals of one card; ``duo``:
one deal of two). OpenSpiel deals card by card and walks its own tree; it must find the same
information sets, the same exploitability of any of our tables, and the same CFR, CFR+, Linear
CFR and DCFR iterates."""

from __future__ import annotations

import functools

import pytest
import torch
from open_spiel.python.algorithms import cfr, discounted_cfr, exploitability

from pasur.game.cards import Deck
from pasur.game.variants import get_variant
from pasur.hidden.exact_cfr import HiddenCFR, HiddenCFRConfig
from pasur.hidden.exact_openspiel import as_openspiel_policy, row_index
from pasur.hidden.game import HiddenGame
from pasur.hidden.history_tree import build_tree, seen_key
from pasur.hidden.openspiel import action_id, load_game

CHECK_ROWS = ("micro", "duo")


@functools.cache
def _checked(name: str):
    """The row's tree, its OpenSpiel game, and every OpenSpiel decision state's
    (information state string, player, InfoState)."""
    game = load_game(name)
    return build_tree(name), game, _decision_states(game)


@pytest.fixture(scope="module", params=CHECK_ROWS)
def micro(request):
    return _checked(request.param)


def _decision_states(game):
    """Every OpenSpiel decision state's (information state string, player, InfoState)."""
    out, todo = [], [game.new_initial_state()]
    while todo:
        s = todo.pop()
        if s.is_terminal():
            continue
        if s.is_chance_node():
            todo += [s.child(a) for a, _ in s.chance_outcomes()]
            continue
        p = s.current_player()
        out.append((s.information_state_string(p), p, s.info(p)))
        todo += [s.child(a) for a in s.legal_actions()]
    return out


def test_the_variant_is_a_game_parameter_and_openspiel_deals_its_deck():
    game = load_game("tiny")
    assert game.get_parameters() == {"variant": "tiny"} and load_game().get_parameters() == {"variant": "standard"}
    s = game.new_initial_state()
    dealt = []
    while s.is_chance_node():
        outcomes = s.chance_outcomes()
        assert sum(p for _, p in outcomes) == pytest.approx(1.0)
        dealt.append(outcomes[len(dealt) % len(outcomes)][0])
        s.apply_action(dealt[-1])
    v = get_variant("tiny")
    assert len(dealt) == v.pool_size + 2 * v.hand_size and set(dealt) <= set(v.cards)
    rest = [c for c in v.cards if c not in dealt]
    assert s.gs == HiddenGame(Deck((*dealt, *rest), v)).state.with_(deck=s.gs.deck)


def test_openspiel_finds_exactly_our_information_sets(micro):
    tree, _, states = micro
    rows = row_index(tree)
    by_string: dict = {}
    for text, p, info in states:
        assert by_string.setdefault(text, rows[p, seen_key(info)]) == rows[p, seen_key(info)]
    assert len(by_string) == len(set(by_string.values())) == sum(tree.n_infosets)


def test_openspiel_measures_the_same_exploitability_of_our_tables(micro):
    tree, game, _ = micro
    solver = HiddenCFR(tree, HiddenCFRConfig("dcfr"))
    solver.iterate(4)
    for table in (
        solver.average_policy(),
        torch.nn.functional.one_hot(torch.zeros(solver.n_rows, dtype=torch.int64), solver.A).double(),
    ):
        ours = solver.exploitability(table)
        theirs = exploitability.exploitability(game, as_openspiel_policy(game, tree, table))
        assert ours == pytest.approx(theirs, abs=1e-9) and ours > 0


_SOLVERS = {
    "cfr": cfr.CFRSolver,
    "cfr+": cfr.CFRPlusSolver,
    "lcfr": discounted_cfr.LCFRSolver,
    "dcfr": discounted_cfr.DCFRSolver,
}


@pytest.mark.parametrize(
    ("row", "method"),
    # every method on micro; on duo (one deal of two cards: its OpenSpiel tree walk is slower) the
    # method that discounts and weights its average, so its every step differs from plain CFR's
    [("micro", m) for m in _SOLVERS] + [("duo", "dcfr")],
)
def test_openspiels_cfr_and_ours_agree_iterate_by_iterate(row, method):
    tree, game, decisions = _checked(row)
    solver_class = _SOLVERS[method]
    rows = row_index(tree)
    states = {text: (p, rows[p, seen_key(info)]) for text, p, info in decisions}
    assert sum(len(a) > 1 for side in tree.actions for a in side) >= 4  # choices to disagree on
    ours, theirs = HiddenCFR(tree, HiddenCFRConfig(method)), solver_class(game)
    for _ in range(4):
        ours.iterate(1)
        theirs.evaluate_and_update_policy()
        avg, their_avg = ours.average_policy(), theirs.average_policy()
        for text, (p, row) in states.items():
            acts = tree.actions[p][row - (0 if p == 0 else tree.n_infosets[0])]
            probs = their_avg.policy_for_key(text)
            for k, a in enumerate(acts):
                assert float(avg[row, k]) == pytest.approx(float(probs[action_id(a)]), abs=1e-9)
    assert ours.exploitability(avg) == pytest.approx(exploitability.exploitability(game, their_avg), abs=1e-9)
