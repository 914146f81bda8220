"""Rule variants as data (``pasur.game.variants``): the standard row is the spec's constants, each
small row keeps the rules, and the scalar engine and the hidden game play every variant by them."""

from __future__ import annotations

import random

import pytest

from pasur.common.errors import PasurInputError
from pasur.game import cards
from pasur.game.cards import JACK, Deck, rank
from pasur.game.rules import legal_actions
from pasur.game.state import GameState
from pasur.game.variants import SMALL as SMALL_ROWS
from pasur.game.variants import STANDARD, VARIANTS, Variant, get_variant
from pasur.hidden.game import HiddenGame
from pasur.hidden.infostate import InfoState, VariantInfoState
from pasur.hidden.worlds import sample_worlds, world_state

#: the small variants that keep the game's character
SMALL = [v.name for v in SMALL_ROWS]
#: every row but the standard one (micro too: one card per hand, for checks against OpenSpiel)
ROWS = [name for name in VARIANTS if name != "standard"]


def test_standard_row_is_the_spec_constants():
    v = get_variant("standard")
    assert v is STANDARD and v.is_standard
    assert v.cards == tuple(range(52)) and v.deck_mask == cards.ALL_CARDS
    assert [v.card_points(c) for c in range(52)] == [cards.card_points(c) for c in range(52)]
    assert v.club_mask == cards.CLUB_MASK
    assert (v.clubs_for_bonus, v.clubs_bonus, v.sur_points) == (cards.CLUBS_FOR_BONUS, cards.CLUBS_BONUS, 5)
    assert (v.pool_size, v.hand_size, v.deals) == (cards.POOL_SIZE, cards.HAND_SIZE, cards.N_ROUNDS)
    assert v.match_target == 62
    rng = random.Random(0)
    for _ in range(200):
        mask = rng.getrandbits(52)
        assert v.points_in(mask) == cards.points_in(mask)


def test_at_least_two_small_variants_with_the_games_character():
    assert len(SMALL) >= 2
    for name in SMALL:
        v = get_variant(name)
        assert not v.is_standard and v.deals >= 2 and v.hand_size >= 2
        assert JACK in v.ranks and (11 in v.ranks or 12 in v.ranks) and len(v.suits) >= 2  # Jacks; Q or K pair
        values = [r + 1 for r in v.ranks if r < JACK]
        assert any(a + b == 11 for a in values for b in values)  # numeric cards sum to 11
        assert v.n_clubs >= 3 and v.clubs_for_bonus > v.n_clubs // 2  # a race for the majority of the clubs
        assert v.sur_points > 0 and v.total_card_points > 0


def test_unknown_variant_is_refused_naming_the_known_ones():
    with pytest.raises(PasurInputError, match=r"unknown variant 'huge'.*standard.*tiny"):
        get_variant("huge")


def test_a_row_whose_deals_do_not_use_the_deck_is_refused():
    with pytest.raises(PasurInputError, match="10 cards, but the deals use 12"):
        Variant("bad", "", (0, 4, 5, 10, 12), (0, 1), 2, 2, 4, ((0, 1),), 3, 5, 3)
    with pytest.raises(PasurInputError, match="point card is not in the deck"):
        Variant("bad", "", (0, 4, 5, 10, 12), (0, 1), 2, 2, 2, ((51, 1),), 3, 5, 3)


@pytest.mark.parametrize("name", ROWS)
def test_decks_of_a_variant_hold_its_cards_and_no_jack_in_the_pool(name):
    v = get_variant(name)
    for seed in range(200):
        d = Deck.from_seed(seed, v)
        assert sorted(d.cards) == list(v.cards)
        assert not any(rank(c) == JACK for c in d.pool)
        dealt = d.pool_mask
        for r in range(v.deals):
            for p in (0, 1):
                assert len(d.hand(p, r)) == v.hand_size and not dealt & d.hand_mask(p, r)
                dealt |= d.hand_mask(p, r)
        assert dealt == v.deck_mask
    with pytest.raises(PasurInputError, match=f"not in the {name} deck"):
        Deck((51, *v.cards[1:]), v)
    with pytest.raises(PasurInputError, match=f"a deck has {v.n_cards} cards"):
        Deck(v.cards[:-1], v)


def _tally(state: GameState) -> tuple[int, int]:
    """The points of a finished game from the piles, by the variant's constants (independently)."""
    v = state.variant
    out = []
    for p in (0, 1):
        pile = state.piles[p]
        pts = sum(pts for c, pts in v.point_cards if pile >> c & 1) + v.sur_points * state.surs[p]
        clubs = sum(1 for c in v.cards if c % 4 == 0 and pile >> c & 1)
        out.append(pts + (v.clubs_bonus if clubs >= v.clubs_for_bonus else 0))
    return out[0], out[1]


@pytest.mark.parametrize("name", ROWS)
def test_random_games_follow_the_rules_under_each_variant(name):
    v = get_variant(name)
    for seed in range(150):
        rng = random.Random(seed)
        s = GameState.initial(Deck.from_seed(seed, v))
        turns = 0
        while not s.is_terminal:
            s.check()
            assert s.player == s.turn % 2 and s.round == turns // v.turns_per_round
            acts = s.legal_actions()
            assert acts == legal_actions(s.hands[s.player], s.pool) and acts
            assert all(a.captured & ~s.pool == 0 for a in acts)
            s = s.apply(rng.choice(acts))
            turns += 1
        assert turns == v.deals * v.turns_per_round
        assert s.points == _tally(s) and s.utility() == s.points[0] - s.points[1]
        if s.last_capturer is not None:  # every card ends in a pile
            assert s.piles[0] | s.piles[1] == v.deck_mask and not s.piles[0] & s.piles[1]


@pytest.mark.parametrize("name", ROWS)
def test_information_states_of_a_variant_hold_no_hidden_card(name):
    v = get_variant(name)
    for seed in range(60):
        rng = random.Random(seed)
        g = HiddenGame(Deck.from_seed(seed, v))
        for _ in range(rng.randrange(v.deals * v.turns_per_round)):
            g.apply(rng.choice(g.state.legal_actions()))
        for p in (0, 1):
            info = g.observation(p)
            assert type(info) is VariantInfoState and info.variant == v
            hidden = g.state.hands[1 - p] | g.state.undealt()
            assert info.unseen == hidden and info.opponent_hand_size == g.state.hands[1 - p].bit_count()
            for field in ("hand", "pool", "initial_pool"):
                assert getattr(info, field) & hidden == 0
            assert all(pile & hidden == 0 for pile in info.piles)
            assert all(((1 << m.card) | m.captured) & hidden == 0 for m in info.moves)
            assert info.points == g.state.points
            worlds = sample_worlds(info, 4, seed=seed)
            for k in range(worlds.k):  # every world consistent with it is a full state of the variant
                w = world_state(info, worlds, k)
                assert w.variant == v and w.hands[p] == info.hand and w.pool == info.pool


def test_standard_observations_stay_plain_information_states():
    info = HiddenGame(Deck.from_seed(0)).observation(0)
    assert type(info) is InfoState and info.variant is STANDARD


def test_greedy_keeps_its_standard_choices_and_scores_a_variant_by_its_rules():
    """Under the standard game greedy's choice is the most points now, then clubs, then cards
    (its rule before variants); under a variant, points by the variant's point cards."""
    from pasur.game.cards import clubs_in, parse_card
    from pasur.game.rules import Action, immediate_points
    from pasur.hidden.agents import GreedyAgent

    greedy = GreedyAgent()
    for seed in range(40):
        g, rng = HiddenGame(Deck.from_seed(seed)), random.Random(seed)
        while not g.is_terminal:
            info = g.observation(g.mover)
            acts = info.legal_actions()
            taken = [(a.captured | (1 << a.card)) if a.captured else 0 for a in acts]
            keys = [
                (immediate_points(a, info.pool, info.round), clubs_in(t), t.bit_count())
                for a, t in zip(acts, taken, strict=True)
            ]
            assert greedy.choose(info) == acts[keys.index(max(keys))]
            g.apply(rng.choice(acts))
    # mini: 6D is worth 3 (nothing in the standard game), so greedy's 5C takes it rather than 6C
    mini = get_variant("mini")
    c = parse_card
    deck = Deck.parse("6C 6D 5C KC AC AD 5D JC JD KD", mini)  # pool 6C 6D; Alex 5C KC
    info = HiddenGame(deck).observation(0)
    assert greedy.choose(info) == Action(c("5C"), 1 << c("6D"))
    assert dict(greedy.action_values(info))[Action(c("5C"), 1 << c("6D"))] == 5.0  # 5C 2 + 6D 3


def test_deals_are_counted_as_the_tree_deals_them():
    """Pools without a Jack, then each hand as a set, in dealing order."""
    assert [get_variant(n).deals_count() for n in ("mini", "tiny", "micro", "duo")] == [
        28 * 28 * 15 * 6,  # C(8, 2) pools, then C(8, 2), C(6, 2), C(4, 2), C(2, 2)
        28 * 15 * 6,
        6 * 4 * 3 * 2,
        6 * 6,
    ]


def _minimax(state: GameState) -> int:
    """Plain minimax over the scalar engine, no memo: Alex's final margin under optimal play."""
    if state.is_terminal:
        return state.utility()
    values = [_minimax(state.apply(a)) for a in state.legal_actions()]
    return max(values) if state.player == 0 else min(values)


@pytest.mark.parametrize("name", ROWS)
def test_the_open_hand_reference_solver_plays_each_variant_exactly(name):
    from pasur.solve.reference import ReferenceSolver

    v = get_variant(name)
    for seed in range(12):
        deck = Deck.from_seed(seed, v)
        solver, start = ReferenceSolver(deck), GameState.initial(deck)
        value = solver.value(start)
        assert value == _minimax(start)
        s = start
        for a in solver.optimal_line(start):
            s = s.apply(a)
        assert s.utility() == value
