"""Search with the policy-value network (``pasur.hidden.combined``, issue 27 item 3): the options
parse and refuse bad values, the agents play legal full games, the opponent's past information
states are rebuilt exactly, and the policy-weighted worlds depend only on what the observer sees."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck
from pasur.hidden.combined import CombinedAgent, opponent_views, policy_opponent_weights
from pasur.hidden.game import HiddenGame
from pasur.hidden.heuristic import HeuristicAgent
from pasur.hidden.pimc import PIMCAgent
from pasur.hidden.policy import default_policy
from pasur.hidden.registry import make_agent
from pasur.hidden.worlds import sample_worlds, world_deck, world_state


@pytest.mark.parametrize(
    ("spec", "keys"),
    [
        ("ispimc:3:infer:pv0.3", {"value_weight": 0.3}),
        ("ispimc:3:pl0.5:infer", {"logp_weight": 0.5}),
        ("ispimc:3:infer:top3", {"top": 3}),
        ("ispimc:3:popp", {"opponent": True, "temperature": 1.0}),
        ("pimc:3:popp0.5:pv1", {"opponent": True, "temperature": 0.5, "value_weight": 1.0}),
    ],
)
def test_the_options_build_a_combined_agent(spec, keys):
    agent = make_agent(spec, seed=1)
    assert type(agent) is CombinedAgent and agent.name == spec
    for key, value in keys.items():
        assert getattr(agent, key) == value
    assert agent.infer == ("infer" in spec)


def test_agents_without_the_options_are_unchanged():
    for spec in ("ispimc:3:infer", "pimc:3", "ispimc:3:belief"):
        assert type(make_agent(spec)) is PIMCAgent


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ispimc:3:pv", ":pv needs a number above 0"),
        ("ispimc:3:pv-1", ":pv needs a number above 0"),
        ("ispimc:3:plx", ":pl needs a number above 0"),
        ("ispimc:3:pl0", ":pl needs a number above 0"),
        ("ispimc:3:pv1e3", ":pv needs a number above 0"),
        ("ispimc:3:top0", ":topN needs N an integer from 1 to 20"),
        ("ispimc:3:top", ":topN needs N an integer from 1 to 20"),
        ("ispimc:3:top2.5", ":topN needs N an integer from 1 to 20"),
        ("ispimc:3:poppx", ":popp needs a number above 0"),
        ("ispimc:3:popp:infer", ":popp replaces :infer"),
        ("ispimc:3:popp:belief", ":popp replaces :infer"),
        ("ispimc:3:pv0.1:pv0.2", ":pv given twice"),
        ("ispimc:3:pq0.1", "unknown option 'pq0.1'"),
    ],
)
def test_bad_values_are_refused(spec, message):
    with pytest.raises(PasurInputError, match=message):
        make_agent(spec)


@pytest.mark.parametrize("spec", ["ispimc:4:infer:pv0.3:top2", "ispimc:4:popp:pl0.5"])
def test_full_games_are_legal(spec):
    agent, other = make_agent(spec, seed=2), HeuristicAgent()
    for seat in (0, 1):
        game = HiddenGame(Deck.from_seed(5))
        while not game.is_terminal:
            p = game.mover
            info = game.observation(p)
            action = (agent if p == seat else other).choose(info)
            assert action in info.legal_actions()
            game.apply(action)  # the referee checks legality too


def test_the_opponents_past_views_are_its_real_observations():
    checked = 0
    for seed in (0, 1):
        game, player, seen = HiddenGame(Deck.from_seed(seed)), HeuristicAgent(), {}
        while not game.is_terminal:
            p = game.mover
            seen[len(game.moves)] = game.observation(p)
            for view, move, later in opponent_views(game.observation(1 - p)):
                true = seen[len(view.moves)]
                assert replace(view, hand=true.hand) == true and view.hand == 0
                assert later & true.hand == later and move.card in cards(later)
                checked += 1
            game.apply(player.choose(game.observation(p)))
    assert checked > 100


def cards(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


def test_the_policy_weights_depend_only_on_what_the_observer_sees():
    """Two full games the observer cannot tell apart (a sampled world replayed) give the same
    information state, hence the same worlds and the same weights."""
    model, player = default_policy(), HeuristicAgent()
    game = HiddenGame(Deck.from_seed(7))
    for _ in range(5):  # Alex, Bob, Alex, Bob, Alex: Bob has moved twice this round
        game.apply(player.choose(game.observation(game.mover)))
    info = game.observation(0)  # Alex, who has seen Bob's two moves of this round
    assert len(opponent_views(info)) == 2
    other = sample_worlds(info, 1, seed=11)  # another deck consistent with what Alex saw
    twin = HiddenGame(world_deck(info, int(other.opp_hand[0]), other.undealt[0].tolist()))
    for m in game.moves:
        twin.apply(m.action)
    assert twin.state.hands[1] != game.state.hands[1] or twin.state.deck != game.state.deck
    assert twin.observation(0) == info
    worlds = sample_worlds(info, 8, seed=3, balanced=True)
    a = policy_opponent_weights([info], [worlds], model)[0].weight
    b = policy_opponent_weights([twin.observation(0)], [worlds], model)[0].weight
    assert np.array_equal(a, b) and a.max() == 1.0 and (a > 0).all()
    assert len(set(a.round(12))) > 1  # the opponent's moves do say something
    # the world's own replay agrees: every move of the opponent is legal with its hand
    for j in range(worlds.k):
        world_state(info, worlds, j)


def test_no_opponent_move_this_round_leaves_the_weights_alone():
    info = HiddenGame(Deck.from_seed(4)).observation(0)
    worlds = sample_worlds(info, 5, seed=1)
    out = policy_opponent_weights([info], [worlds], default_policy())[0]
    assert np.array_equal(out.weight, worlds.weight)


def test_the_prior_only_reorders_close_actions():
    """With a tiny weight the combined agent plays as the search does; its values stay margins."""
    game = HiddenGame(Deck.from_seed(9))
    info = game.observation(0)
    plain = PIMCAgent(4, mode="consistent", seed=1, infer=True)
    tiny = CombinedAgent(4, mode="consistent", seed=1, infer=True, value_weight=1e-9)
    va, vb = plain.action_values(info), tiny.action_values(info)
    assert [a for a, _ in va] == [a for a, _ in vb]
    assert np.allclose([v for _, v in va], [v for _, v in vb], atol=1e-6)
    assert plain.choose(info) == tiny.choose(info)


def test_the_log_prior_moves_the_choice_but_not_the_margins():
    """``:pl``'s values are the search's margins (what a hint shows and training reads); the
    agent plays the best of margin + L x log p, computed here from the network directly."""
    model, player = default_policy(), HeuristicAgent()
    plain = PIMCAgent(4, mode="consistent", seed=1, infer=True)
    prior = CombinedAgent(4, mode="consistent", seed=1, infer=True, logp_weight=0.5, policy=model)
    game, checked = HiddenGame(Deck.from_seed(12)), 0
    while not game.is_terminal:
        info = game.observation(game.mover)
        if len(info.legal_actions()) > 1:
            margins = plain.action_values(info)
            assert prior.action_values(info) == margins
            actions, p, _, _ = model.evaluate([info])[0]
            logp = dict(zip(actions, np.log(np.maximum(p, 1e-12)), strict=True))
            score = [(a, v + 0.5 * logp[a]) for a, v in margins]
            got = prior.scores_batch([info])[0]
            assert [a for a, _ in got] == [a for a, _ in score]
            assert [s for _, s in got] == pytest.approx([s for _, s in score], abs=1e-12)
            best = max(s for _, s in score)
            assert prior.choose(info) == next(a for a, s in score if s == best)
            checked += 1
        game.apply(player.choose(info))
    assert checked > 10
