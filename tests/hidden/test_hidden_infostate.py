"""An agent sees only its information state: no field reveals a hidden card, states it cannot tell
apart give the same information state, and an agent that tries to look anyway fails."""

from __future__ import annotations

import dataclasses
import gc
import pickle
import random

import pytest

from pasur.game.cards import Deck
from pasur.game.state import GameState
from pasur.hidden.agents import GreedyAgent, HiddenAgent, RandomAgent
from pasur.hidden.game import HiddenGame, observe, play_hidden
from pasur.hidden.infostate import InfoState, Move
from pasur.hidden.worlds import sample_worlds, world_state

FIELDS = {"player", "round", "turn", "hand", "pool", "piles", "surs", "last_capturer", "initial_pool", "moves"}


def _random_game(seed: int, steps: int) -> HiddenGame:
    rng = random.Random(seed)
    g = HiddenGame(Deck.from_seed(seed))
    for _ in range(steps):
        g.apply(rng.choice(g.state.legal_actions()))
    return g


def _hidden(state: GameState, player: int) -> int:
    return state.hands[1 - player] | state.undealt()


def test_fields_are_exactly_what_a_player_sees():
    assert {f.name for f in dataclasses.fields(InfoState)} == FIELDS
    info = HiddenGame(Deck.from_seed(0)).observation(0)
    assert not hasattr(info, "__dict__")  # slots: no attribute can be added to carry more


@pytest.mark.parametrize("seed", range(12))
def test_no_field_holds_a_hidden_card(seed):
    g = _random_game(seed, random.Random(seed).randrange(48))
    for p in (0, 1):
        info = g.observation(p)
        hidden = _hidden(g.state, p)
        assert info.unseen == hidden  # the union is known; which card is where is not
        for name in ("hand", "pool", "initial_pool", "piles"):
            value = getattr(info, name)
            for mask in value if isinstance(value, tuple) else (value,):
                assert mask & hidden == 0, name
        assert all(((1 << m.card) | m.captured) & hidden == 0 for m in info.moves)


@pytest.mark.parametrize("seed", range(6))
def test_states_a_player_cannot_tell_apart_give_the_same_information_state(seed):
    g = _random_game(100 + seed, 5 + 7 * seed)
    p = 1 - g.mover if seed % 2 else g.mover
    info = g.observation(p)
    worlds = sample_worlds(info, 8, seed=seed)
    for k in range(worlds.k):
        other = world_state(info, worlds, k)
        again = observe(other, g.moves, p)
        assert again == info
        assert pickle.dumps(again) == pickle.dumps(info)


def _reachable(obj, limit: int = 10_000) -> list:
    seen, todo, out = set(), [obj], []
    while todo and len(out) < limit:
        x = todo.pop()
        if id(x) in seen or isinstance(x, type):
            continue
        seen.add(id(x))
        out.append(x)
        todo.extend(gc.get_referents(x))
    return out


def test_nothing_reachable_from_an_information_state_is_the_full_state():
    g = _random_game(7, 20)
    info = g.observation(g.mover)
    reach = _reachable(info)
    assert not any(isinstance(x, GameState | Deck | HiddenGame) for x in reach)
    ints = {x for x in reach if isinstance(x, int)}
    assert g.state.hands[1 - g.mover] not in ints or g.state.hands[1 - g.mover] == 0


class PeekingAgent(HiddenAgent):
    """Tries every way in to the other hand."""

    name = "peeker"

    def __init__(self, how: str) -> None:
        self.how = how

    def choose(self, info):
        if self.how == "deck":
            return info.deck
        if self.how == "hands":
            return info.hands[1 - info.player]
        if self.how == "state":
            return info.state
        if self.how == "write":
            info.hand = 0
        if self.how == "smuggle":
            info.secret = 1
        raise AssertionError("unreachable")


@pytest.mark.parametrize("how", ["deck", "hands", "state", "write", "smuggle"])
def test_an_agent_that_peeks_fails(how):
    with pytest.raises((AttributeError, dataclasses.FrozenInstanceError, TypeError)):
        play_hidden(Deck.from_seed(3), (PeekingAgent(how), GreedyAgent()))


class ClaimsToSeeEverything(GreedyAgent):
    """Sets the attribute the open-hand player carries, and would use the full state if given it."""

    omniscient = True

    def choose_open(self, state, moves):
        raise AssertionError("a hidden-hand agent was given the full state")

    def prepare(self, decks):
        raise AssertionError("a hidden-hand agent was given the decks")


def test_an_agent_cannot_grant_itself_the_full_state():
    from pasur.hidden.duplicate import play_duplicates

    result = play_hidden(Deck.from_seed(3), (ClaimsToSeeEverything(), GreedyAgent()))
    assert result.state.is_terminal
    records = play_duplicates([Deck.from_seed(5)], ClaimsToSeeEverything(), GreedyAgent())
    assert len(records) == 1


def test_the_referee_refuses_an_illegal_action():
    class Cheat(HiddenAgent):
        name = "cheat"

        def choose(self, info):  # plays a card it does not hold
            from pasur.game.rules import Action

            return Action(next(c for c in range(52) if not (info.hand >> c) & 1 and not (info.pool >> c) & 1), 0)

    from pasur.game.state import IllegalActionError

    with pytest.raises(IllegalActionError):
        play_hidden(Deck.from_seed(4), (Cheat(), RandomAgent()))


def test_known_hands_of_finished_rounds_and_own_hands():
    g = _random_game(11, 8 * 2 + 3)  # round 2, turn 3
    for p in (0, 1):
        info = g.observation(p)
        for r in (0, 1):
            assert info.dealt(p, r) == g.state.deck.hand_mask(p, r)
            assert info.dealt(1 - p, r) == g.state.deck.hand_mask(1 - p, r)
        assert info.dealt(p, 2) == g.state.deck.hand_mask(p, 2)
        assert info.dealt(1 - p, 2) is None
        assert info.opponent_hand_size == g.state.hands[1 - p].bit_count()
        assert info.points == g.state.points
    assert all(isinstance(m, Move) for m in g.moves)
