"""The RL environments of the hidden-hand game (``pasur.rl``): PettingZoo's and Gymnasium's own
checkers, observations that hold no hidden card, legal masks equal to the scalar engine's legal
actions, seeded resets, and the rewards the game's utility."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

from pasur import rl
from pasur.game.cards import Deck
from pasur.game.variants import VARIANTS, get_variant
from pasur.hidden.encoding import N_ACTIONS, OBS_SIZE, action_id, action_of, encode, n_actions
from pasur.hidden.game import HiddenGame
from pasur.hidden.worlds import sample_worlds, world_deck

NAMES = list(VARIANTS)


def _random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def test_the_action_space_is_the_openspiel_ids():
    assert n_actions() == N_ACTIONS


@pytest.mark.parametrize("variant", NAMES)
def test_pettingzoo_api_test_passes(variant):
    api_test(rl.aec_env(variant=variant, seed=0), num_cycles=60)


@pytest.mark.parametrize("variant", NAMES)
def test_gymnasium_check_env_passes(variant):
    check_env(rl.gym_env(variant=variant), skip_render_check=False)


@pytest.mark.parametrize("variant", NAMES)
def test_masks_are_the_scalar_engines_legal_actions_and_rewards_the_utility(variant):
    """Random legal play to the end in the AEC env: at every step the mover's mask is exactly the
    ids of the scalar engine's legal actions in the full state (and each id maps back to its
    action), the other seat's mask is empty; at the end the rewards are the utility, zero-sum."""
    rng = np.random.default_rng(1)
    env = rl.aec_env(variant=variant, seed=3)
    for _ in range(2):
        env.reset()
        while not env.terminations["alex"]:
            state = env.table.game.state
            mover, other = env.agent_selection, {"alex": "bob", "bob": "alex"}[env.agent_selection]
            mask = env.observe(mover)["action_mask"]
            expected = sorted(action_id(a) for a in state.legal_actions())
            assert np.flatnonzero(mask).tolist() == expected
            assert sorted(action_of(i, state.pool) for i in expected) == state.legal_actions()
            assert not env.observe(other)["action_mask"].any()
            env.step(_random_legal(mask, rng))
        u = env.table.utility()
        assert env.rewards == {"alex": u, "bob": -u}


def _play_some(game: HiddenGame, moves: int, rng: np.random.Generator) -> None:
    for _ in range(moves):
        acts = game.state.legal_actions()
        game.apply(acts[int(rng.integers(len(acts)))])


@pytest.mark.parametrize("variant", ["standard", "mini", "tiny"])
@pytest.mark.parametrize("moves", [0, 3, 9])
def test_an_observation_holds_no_hidden_card(variant, moves):
    """Worlds the player cannot tell apart (another opponent hand, other undealt cards, the same
    moves) give that player the very same observation through the environment; the opponent,
    whose hand differs, sees a different one."""
    v = get_variant(variant)
    moves = min(moves, v.pool_size + 2 * v.hand_size * v.deals - v.pool_size - 1)
    rng = np.random.default_rng(moves)
    env = rl.aec_env(variant=variant, seed=moves)
    env.reset()
    _play_some(env.table.game, moves, rng)
    for seat, agent in enumerate(("alex", "bob")):
        info = env.table.info(seat)
        mine = env.observe(agent)["observation"]
        worlds = sample_worlds(info, 4, rng=rng)
        changed = 0
        for k in range(4):
            deck = world_deck(info, int(worlds.opp_hand[k]), [int(c) for c in worlds.undealt[k]])
            other = rl.aec_env(variant=variant)
            other.reset(seed=0)
            other.table.game = HiddenGame(deck)
            for mv in env.table.game.moves:
                other.table.game.apply(mv.action)
            assert np.array_equal(other.observe(agent)["observation"], mine)
            opp_state = other.table.game.state.hands[1 - seat]
            if opp_state != env.table.game.state.hands[1 - seat]:
                changed += 1
                assert not np.array_equal(
                    other.observe(("alex", "bob")[1 - seat])["observation"],
                    env.observe(("alex", "bob")[1 - seat])["observation"],
                )
        assert changed > 0 or info.opponent_hand_size == 0 or info.unseen.bit_count() == info.opponent_hand_size


def test_the_observation_changes_with_the_players_own_hand():
    """Swap one card of Alex's first hand with one of Bob's: Alex's observation at the deal changes
    (his hand plane and what he has not seen), Bob's too."""
    deck = Deck.from_seed(4)
    cards = list(deck.cards)
    a, b = deck.variant.pool_size, deck.variant.pool_size + deck.variant.hand_size
    cards[a], cards[b] = cards[b], cards[a]
    swapped = Deck(tuple(cards))
    for seat in (0, 1):
        one, two = HiddenGame(deck).observation(seat), HiddenGame(swapped).observation(seat)
        assert not np.array_equal(encode(one), encode(two))
        assert np.array_equal(encode(one)[:52].nonzero()[0], sorted(c for c in range(52) if one.hand >> c & 1))


@pytest.mark.parametrize("variant", ["standard", "tiny"])
def test_seeded_resets_reproduce(variant):
    def run(env, seed):
        env.reset(seed=seed)
        rng, trace = np.random.default_rng(0), []
        while not env.terminations[env.agent_selection]:
            obs = env.observe(env.agent_selection)
            trace.append(obs["observation"].copy())
            env.step(_random_legal(obs["action_mask"], rng))
        return env.table.deck, trace, dict(env.rewards)

    env = rl.aec_env(variant=variant)
    first, again, other = run(env, 7), run(env, 7), run(env, 8)
    assert first[0] == again[0] and first[2] == again[2]
    assert all(np.array_equal(x, y) for x, y in zip(first[1], again[1], strict=True))
    assert first[0] != other[0]
    # the constructor's seed seeds the first reset without one
    assert rl.aec_env(variant=variant, seed=11).table.deck is None
    e1, e2 = rl.aec_env(variant=variant, seed=11), rl.aec_env(variant=variant, seed=11)
    e1.reset(), e2.reset()
    assert e1.table.deck == e2.table.deck


@pytest.mark.parametrize("seat", [0, 1])
def test_gym_env_plays_the_opponent_and_pays_the_learners_margin(seat):
    """The opponent (greedy) moves itself, from its own information state: the learner only ever
    sees its own turns; the final reward is the learner's margin; a seeded reset replays."""
    from pasur.hidden.agents import GreedyAgent

    env = rl.gym_env(opponent="greedy", seat=seat, variant="standard")
    rng = np.random.default_rng(seat)
    obs, info = env.reset(seed=5)
    first_obs, done, turns = obs.copy(), False, 0
    while not done:
        assert env.table.mover == seat and obs.shape == (OBS_SIZE,)
        assert np.array_equal(obs, encode(env.table.info(seat)))
        moves_before = len(env.table.game.moves)
        obs, reward, done, truncated, info = env.step(_random_legal(info["action_mask"], rng))
        for mv in env.table.game.moves[moves_before + 1 :]:  # the opponent's replies: greedy's choices
            assert mv.player == 1 - seat
        turns += 1
    u = env.table.utility()
    assert reward == (u if seat == 0 else -u) and not truncated
    assert turns == 24
    assert all(
        GreedyAgent().choose(_info_before(env.table.deck, env.table.game.moves, k)) == mv.action
        for k, mv in enumerate(env.table.game.moves)
        if mv.player != seat
    )
    assert np.array_equal(env.reset(seed=5)[0], first_obs)


def _info_before(deck, moves, k):
    g = HiddenGame(deck)
    for mv in moves[:k]:
        g.apply(mv.action)
    return g.observation(g.mover)


def test_an_illegal_action_ends_the_game_with_the_penalty():
    env = rl.gym_env(variant="tiny", seed=0)
    _obs, info = env.reset()
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, done, _, info = env.step(illegal)
    assert done and reward == env.illegal_reward and info["illegal_action"]
    aec = rl.aec_env(variant="tiny", seed=0)
    aec.reset()
    aec.step(illegal)
    assert aec.rewards == {"alex": aec.illegal_reward, "bob": -aec.illegal_reward}


@pytest.mark.parametrize("variant", ["mini", "micro"])
def test_any_registry_agent_can_be_the_opponent(variant):
    env = rl.gym_env(opponent="random", seat=1, variant=variant, opponent_seed=3)
    _obs, info = env.reset(seed=0)
    assert env.table.info(1).turn == 1 and info["action_mask"].any()
