"""The arena's agents on the small variants (issue 41, items 4-5): the heuristic player reads the
rules from its information state's variant, plays legal complete games of every small variant
from what it has seen only, and its exact exploitability is measured on ``micro`` and ``duo``."""

from __future__ import annotations

import json

import pytest
import torch
from test_variants_cfr import _brute_force_best_response
from typer.testing import CliRunner

from pasur.cli import app
from pasur.game.cards import Deck, parse_card
from pasur.game.rules import Action
from pasur.game.variants import SMALL, get_variant
from pasur.hidden.exact_cfr import HiddenCFR, HiddenCFRConfig, solve
from pasur.hidden.exact_exploit import agent_table, exploit_report, info_state, not_applicable
from pasur.hidden.game import HiddenGame, observe
from pasur.hidden.heuristic import HeuristicAgent
from pasur.hidden.history_tree import build_tree
from pasur.hidden.infostate import VariantInfoState
from pasur.hidden.worlds import sample_worlds, world_state

SMALL_NAMES = [v.name for v in SMALL] + ["micro", "duo"]


def _hidden(game: HiddenGame, player: int) -> int:
    """The cards ``player`` may not see: the opponent's hand and the undealt cards."""
    return game.state.hands[1 - player] | game.state.undealt()


@pytest.mark.parametrize("name", SMALL_NAMES)
def test_the_heuristic_plays_legal_complete_games_of_every_small_variant(name):
    v, agent = get_variant(name), HeuristicAgent()
    for seed in range(6):
        game = HiddenGame(Deck.from_seed(seed, v))
        while not game.is_terminal:
            info = game.observation(game.mover)
            assert type(info) is VariantInfoState and info.variant == v
            action = agent.choose(info)
            assert action in info.legal_actions()
            game.apply(action)  # the referee checks legality too
        assert len(game.moves) == 2 * v.hand_size * v.deals


@pytest.mark.parametrize("name", ["tiny", "mini"])
def test_the_heuristic_sees_no_hidden_card_and_plays_the_same_in_worlds_it_cannot_tell_apart(name):
    """What it is handed holds no card of the opponent's hand or the undealt ones, and a game
    whose hidden cards are dealt otherwise (a sampled world, replayed by the referee) gives it the
    same information state, hence the same values and choice."""
    v, agent, checked = get_variant(name), HeuristicAgent(), 0
    for seed in range(4):
        game = HiddenGame(Deck.from_seed(seed, v))
        while not game.is_terminal:
            p = game.mover
            info, hidden = game.observation(p), _hidden(game, p)
            assert info.unseen == hidden
            assert (info.hand | info.pool | info.initial_pool | info.piles[0] | info.piles[1]) & hidden == 0
            assert all(((1 << m.card) | m.captured) & hidden == 0 for m in info.moves)
            worlds = sample_worlds(info, 4, seed=seed)
            for k in range(worlds.k):
                other = world_state(info, worlds, k)
                again = observe(other, game.moves, p)
                assert again == info
                assert agent.action_values(again) == agent.action_values(info)
                checked += 1
            game.apply(agent.choose(info))
    assert checked > 50


# one deal of tiny played by hand: (deck in dealing order: Alex's and Bob's first hands, then the
# second ones; the moves, as (card, captured cards) by turn)
TINY_DECK = "KC TC KD AD JC AC JD TD"
TINY_MOVES = [("KC", ""), ("KD", "KC"), ("TC", ""), ("AD", "TC"), ("JC", ""), ("JD", "JC"), ("AC", ""), ("TD", "AC")]
# the heuristic's value (its final margin expected) of the only legal move, worked by hand with
# tiny's scoring (Aces and Jacks 1, 10C 2, 10D 3, a Sur 3 and none in the last deal, 5 for 3 of
# the 4 clubs; the clubs still out go to either player with probability 1/2):
TINY_VALUES = {
    # Alex lays 10C on an empty pool, 3 behind (Bob's KD took the pool's KC: a Sur); Bob holds one
    # of AC AD TD JC JD and takes the most: AC a Sur (1 + 2 + 3, clubs 2 of 3 left: 5 - 1.875), AD
    # a Sur (6 + 3.75 - 1.875), TD nothing, JC no Sur (3 + 3.125), JD (3 + 1.875):
    # -3 - (9.125 + 7.875 + 0 + 6.125 + 4.875) / 5
    2: -3 - 5.6,
    # Bob's last card of the first deal, 3 ahead: AD takes 10C, a Sur (1 + 2 + 3), his second club
    # of 3 out (clubs margin 1.875 -> 3.75); Alex has no card left to reply
    3: 3 + 6 + 1.875,
    # Bob's last card of the game: 10D takes AC (3 + 1, no Sur in the last deal), his margin so far
    # two Surs (6), AD 10C JC JD (5) and the clubs bonus (KC 10C JC: 5), already won
    7: 16 + 4,
}


def test_the_heuristic_values_moves_by_its_variant_s_scoring():
    v, agent = get_variant("tiny"), HeuristicAgent()
    game = HiddenGame(Deck.parse(TINY_DECK, v))
    for turn, (card, captured) in enumerate(TINY_MOVES):
        info = game.observation(game.mover)
        taken = sum(1 << parse_card(c) for c in captured.split())
        action = Action(parse_card(card), taken)
        assert action in info.legal_actions()
        if turn in TINY_VALUES:  # the last card in hand: one move, its value alone
            assert info.legal_actions() == [action]
            assert agent.action_values(info) == [(action, pytest.approx(TINY_VALUES[turn], abs=1e-12))]
        game.apply(action)
    assert game.is_terminal


@pytest.fixture(scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.usefixtures("_one_thread")
@pytest.mark.parametrize("name", ["micro", "duo"])
def test_the_heuristic_s_exact_exploitability_is_its_brute_force_best_responses(name):
    """Its policy, asked at every information set, is its choice there; the exact best responses
    against it equal ones found by brute force with the scalar engine over every deal; and it
    cannot gain against a solved equilibrium more than the equilibrium's slack."""
    assert not_applicable("heuristic") is None
    tree, agent = build_tree(name), HeuristicAgent()
    solver = HiddenCFR(tree, HiddenCFRConfig("dcfr"))
    table = agent_table(solver, agent)
    for p in (0, 1):
        for i in range(tree.n_infosets[p]):
            row = table[solver.row_offset[p] + i]
            assert row.sum() == 1 and row[tree.actions[p][i].index(agent.choose(info_state(tree, p, i)))] == 1
    brute = [_brute_force_best_response(tree.variant, r, agent.choose) for r in (0, 1)]
    assert [solver.best_response(table, r)[0] for r in (0, 1)] == pytest.approx(brute, abs=1e-9)
    equilibrium = solve(solver, 10_000, target_exploitability=1e-3, check_every=10).policy
    report = exploit_report(solver, table, equilibrium)
    assert report["nash_conv"] == pytest.approx(brute[0] - brute[1], abs=1e-9)
    assert report["margin_vs_equilibrium"] <= 2 * report["equilibrium_exploitability"]


def test_pasur_hidden_exploit_measures_the_heuristic():
    r = CliRunner().invoke(app, ["hidden-exploit", "--variant", "duo", "--agent", "heuristic,random", "--json", "-q"])
    assert r.exit_code == 0, r.output
    heuristic, random_ = json.loads(r.stdout)
    assert heuristic["agent"] == "heuristic" and heuristic["variant"] == "duo"
    assert heuristic["exploitability"] == pytest.approx(heuristic["nash_conv"] / 2)
    # a best response wins something from its habits, but far less than from random play
    assert 0 < heuristic["exploitability"] < random_["exploitability"]


# the PIMC family on the small variants (its round solve scores by the variant, the deal boundary
# valued exactly): its own options apply, those that read a network of the standard game do not
PIMC_APPLICABLE = [
    "pimc:8",
    "pimc:8:game",
    "pimc:8:exact",
    "pimc:8:infer",
    "pimc:8:iid",
    "pimc:8:clubs",
    "ispimc:8",
    "ispimc:8:infer",
    "ispimc:8:exact",
    "ispimc2:4",
    "ismcts:20:game",
]
PIMC_REFUSED = [
    ("pimc:8:belief", ":belief reads the learned belief"),
    ("ispimc:8:infer:pv1", ":pv1 reads the policy-value network"),
    ("ispimc:20:infer:pl0.5", ":pl0.5 reads the policy network"),
    ("ispimc:8:top3", ":top3 reads the policy network"),
    ("ispimc:8:popp", ":popp reads the policy network"),
    ("ispimc:8:popp2", ":popp2 reads the policy network"),
    ("ispimc:8:pl0.5@runs/selfplay/policy-weights.pt", ":pl0.5 reads the policy network"),
    ("pimc:8@runs/selfplay/policy-weights.pt", "@FILE gives it a policy network"),
    ("best", "it is ispimc:20:infer:pl0.5, and :pl0.5 reads the policy network"),
    ("ismcts:20", "ismcts:N:game applies"),
    ("policy", "trained on the standard game"),
    ("optimal", "sees every card"),
]


@pytest.mark.parametrize("spec", PIMC_APPLICABLE)
def test_the_pimc_family_applies_to_a_variant_with_its_own_options(spec):
    assert not_applicable(spec) is None


@pytest.mark.parametrize(("spec", "why"), PIMC_REFUSED)
def test_options_that_read_a_network_of_the_standard_game_are_refused_with_the_reason(spec, why):
    reason = not_applicable(spec)
    assert reason is not None and why in reason


def test_pasur_hidden_exploit_measures_pimc_and_ispimc_on_micro():
    r = CliRunner().invoke(
        app, ["hidden-exploit", "--variant", "micro", "--agent", "pimc:4,ispimc:4,random", "--json", "-q"]
    )
    assert r.exit_code == 0, r.output
    pimc, ispimc, random_ = json.loads(r.stdout)
    assert [pimc["agent"], ispimc["agent"]] == ["pimc:4", "ispimc:4"]
    for rep in (pimc, ispimc):
        assert rep["variant"] == "micro" and rep["exploitability"] == pytest.approx(rep["nash_conv"] / 2)
        # a pure policy: never below 0 (up to rounding), and the searches give away no more than random play
        assert -1e-12 <= rep["exploitability"] <= random_["exploitability"]
        assert rep["margin_vs_equilibrium"] <= 2 * rep["equilibrium_exploitability"]


@pytest.mark.parametrize(("spec", "why"), [PIMC_REFUSED[0], PIMC_REFUSED[2], PIMC_REFUSED[8]])
def test_pasur_hidden_exploit_refuses_a_network_option_in_one_line_before_any_work(spec, why):
    r = CliRunner().invoke(app, ["hidden-exploit", "--variant", "micro", "--agent", f"greedy,{spec}"])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), r.output
    assert f"--agent {spec!r} does not apply to a small variant yet" in lines[0] and why in lines[0]
    assert "building" not in r.stderr and r.stdout == ""
