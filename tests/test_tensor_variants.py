"""The tensor engine (:mod:`pasur.solve`) under every rule variant, against the scalar engine.

For each small row of :data:`pasur.game.variants.VARIANTS` and several decks: the tensor tree of
the initial state holds, layer by layer, exactly the scalar engine's states (compact mode: the
reference solver's future keys; paper mode: the round's root and history), with the scalar legal
actions and the exact value at every node; ``solve_exact`` gives the reference solver's value and
CFR converges to it. ``test_the_decks_exercise_every_constant_of_the_variant`` checks that these
decks are ones where the variant's constants change the value, so an engine that played them by
the standard game's constants fails the value checks.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck
from pasur.game.rules import Action
from pasur.game.state import ALEX, GameState
from pasur.game.variants import STANDARD, VARIANTS, Variant
from pasur.solve.actions import layer_actions
from pasur.solve.cfr import CFRParams
from pasur.solve.exact import best_response, nash_conv, solve_exact, strategy_value, uniform_strategy
from pasur.solve.infoset import infoset_tensor
from pasur.solve.reference import ReferenceSolver, banked_diff, club_key
from pasur.solve.rounds import solve_cfr
from pasur.solve.strategy_io import read_strategy_table, write_strategy_table
from pasur.solve.tree import build_forest, build_tree

ROWS = [name for name in VARIANTS if name != "standard"]
MODES = ("compact", "paper")
#: decks of each row; 9 is micro's first with a Sur (test_the_decks_exercise_every_constant_of_the_variant)
SEEDS = (0, 1, 2, 9)


def initial(name: str, seed: int) -> GameState:
    return GameState.initial(Deck.from_seed(seed, VARIANTS[name]))


# -- the scalar engine's layers ---------------------------------------------------------------


def root_key(s: GameState) -> tuple:
    """A round's root as both trees know it: the dealt state's cards and clubs (as far as the
    bonus is concerned) and last capturer."""
    return ("root", s.round, s.hands, s.pool, club_key(s.clubs, s.variant.clubs_for_bonus), s.last_capturer)


def node_key(mode: str, s: GameState, root: tuple, history: tuple) -> tuple:
    """A node's identity within its layer: compact nodes are future states, paper nodes the
    round's root and the actions played in the round since."""
    if not history:
        return root
    if mode == "compact":
        return ("state", s.hands, s.pool, club_key(s.clubs, s.variant.clubs_for_bonus), s.last_capturer)
    return ("history", root, history)


def scalar_layers(start: GameState, mode: str) -> list[set]:
    """The node keys of every layer (round by round, turns 0..2 x hand size), walked with the
    scalar engine's ``legal_actions`` and ``play`` (the last card of a round without the deal
    or the final sweep, as the tree's last layer of a round)."""
    v = start.variant
    layer = {root_key(start): (start, root_key(start), ())}
    out = []
    while True:
        out.append(set(layer))
        nxt = {}
        for s, root, hist in layer.values():
            if s.turn == v.turns_per_round:  # the round's last layer: deal, merge into roots
                if s.round == v.final_round:
                    return out
                dealt = s.end_round()
                nxt[root_key(dealt)] = (dealt, root_key(dealt), ())
                continue
            for a in s.legal_actions():
                c, h = s.play(a), (*hist, (a.card, a.captured))
                nxt[node_key(mode, c, root, h)] = (c, root, h)
        layer = nxt


def replay(start: GameState, path: list[Action]) -> tuple[GameState, tuple, tuple]:
    """The state at the end of ``path`` (its last card played, not yet dealt on or swept), the
    actions of its round and the round's root key."""
    s, root, hist = start, root_key(start), ()
    for a in path:
        if s.turn == s.variant.turns_per_round:  # the previous card ended a round: deal
            s = s.end_round()
            root, hist = root_key(s), ()
        s, hist = s.play(a), (*hist, (a.card, a.captured))
    return s, hist, root


def tree_layers(tree, start: GameState, mode: str, solution, reference: ReferenceSolver) -> list[set]:
    """The node keys of every layer of ``tree``, each node replayed from its path in the scalar
    engine, where its legal actions and value are checked on the way."""
    out = []
    v = start.variant
    for rt in tree.rounds:
        for t in rt.turns:
            keys = set()
            for node in range(rt.n_nodes(t)):
                s, hist, root = replay(start, tree.path_to(rt.round, t, node))
                if t == 0 and rt.round > start.round:  # a root: the dealt state
                    s, hist = s.end_round(), ()
                    root = root_key(s)
                keys.add(node_key(mode, s, root, hist))
                value = float(solution.values[(rt.round, t)][node])
                if t == v.turns_per_round:
                    ended = s.end_round()
                    want = ended.utility() if ended.is_terminal else reference.value(ended)
                    assert value == want - banked_diff(s), (rt.round, t, node)
                    continue
                assert tree.out_actions(rt.round, t, node) == s.legal_actions(), (rt.round, t, node)
                assert value == reference.value(s) - banked_diff(s), (rt.round, t, node)
            assert len(keys) == rt.n_nodes(t), (rt.round, t)  # no two nodes of one state or history
            out.append(keys)
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ROWS)
def test_the_tensor_tree_holds_the_scalar_engines_states_layer_by_layer(name, seed, mode):
    start = initial(name, seed)
    tree = build_tree(start, mode)
    v = VARIANTS[name]
    assert tree.variant is v and [rt.round for rt in tree.rounds] == list(range(v.deals))
    assert all(rt.turns == range(v.turns_per_round + 1) for rt in tree.rounds)
    want = scalar_layers(start, mode)
    got = tree_layers(tree, start, mode, solve_exact(tree), ReferenceSolver(start.deck))
    assert [len(x) for x in got] == [len(x) for x in want]
    assert got == want


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ROWS)
def test_exact_value_is_the_reference_solvers(name, mode):
    for seed in range(8):
        start = initial(name, seed)
        assert solve_exact(build_tree(start, mode)).game_value() == ReferenceSolver(start.deck).value(start), seed


@pytest.mark.parametrize("mode", MODES)
def test_infoset_rows_hold_the_variants_clubs(mode):
    """Columns 52..54 of the last deal's infoset rows: the clubs as the variant's bonus sees them
    (its threshold, once clinched) and the last capturer; in the paper tree those at the deal's
    start, in the compact tree the node's own. (mini's deck 3 has lines where the bonus is
    clinched in the first deal; tiny's never have.)"""
    clinched = 0
    for name, seed in [("mini", 0), ("mini", 3), ("tiny", 0), ("tiny", 1)]:
        start = initial(name, seed)
        tree, need = build_tree(start, mode), start.variant.clubs_for_bonus
        rt = tree.rounds[-1]
        for t in range(1, rt.end_turn + 1):
            for node, row in enumerate(infoset_tensor(tree, rt.round, t).tolist()):
                path = tree.path_to(rt.round, t, node)
                s, hist, _ = replay(start, path)
                if mode == "paper":  # the score inherited at the deal's start
                    s = replay(start, path[: len(path) - len(hist)])[0].end_round()
                ca, cb = club_key(s.clubs, need)
                assert row[52:56] == [ca, cb, 0 if s.last_capturer is None else s.last_capturer + 1, rt.round]
                assert row[56:] == [(t - 1) // 2, (t - 1) % 2]
                clinched += need in (ca, cb)
    assert clinched  # (some rows have a clinched bonus)


# -- the constants matter on these decks ---------------------------------------------------------


def mutations(v: Variant) -> dict[str, Variant]:
    """The row with one scoring constant put back to the standard game's (the point cards: the
    standard game's scoring cards that are in this deck, at their standard points)."""
    fields = {
        "sur_points": {"sur_points": STANDARD.sur_points},
        "clubs_bonus": {"clubs_bonus": STANDARD.clubs_bonus},
        "clubs_for_bonus": {"clubs_for_bonus": STANDARD.clubs_for_bonus},
        "point_cards": {"point_cards": tuple((c, p) for c, p in STANDARD.point_cards if v.deck_mask >> c & 1)},
    }
    if v.deals == 1:
        del fields["sur_points"]  # no Sur in a one-deal game (its only deal is the last)
    return {what: dataclasses.replace(v, name=f"{v.name}-{what}", **f) for what, f in fields.items()}


def future_values(deck: Deck, v: Variant) -> list[int]:
    """The reference solver's future value (Alex minus Bob, from there on) of every state of
    every line of ``deck`` played under ``v``, in one fixed order (the legal actions and the
    states do not depend on the scoring)."""
    d = Deck(deck.cards, v)
    ref, out, stack = ReferenceSolver(d), [], [GameState.initial(d)]
    while stack:
        s = stack.pop()
        out.append(ref.value(s) - banked_diff(s))
        stack.extend(c for c in (s.apply(a) for a in s.legal_actions()) if not c.is_terminal)
    return out


@pytest.mark.parametrize("name", ROWS)
def test_the_decks_exercise_every_constant_of_the_variant(name):
    """For each scoring constant, some state of the decks of the layer-by-layer test is valued
    differently under the standard game's constant, so a tensor engine that used it would fail
    that test (it checks every node's value)."""
    v = VARIANTS[name]
    decks = [Deck.from_seed(seed, v) for seed in SEEDS]
    values = [future_values(d, v) for d in decks]
    for what, other in mutations(v).items():
        assert any(future_values(d, other) != want for d, want in zip(decks, values, strict=True)), (name, what)


def test_surs_count_before_the_variants_last_deal_only():
    """A♣ takes 10♦, the pool's only card: a Sur in micro's first deal (of two), none in its last
    or in duo's only deal (where the standard game's last deal, the sixth, would count one)."""
    hand, pool = torch.tensor([1 << 0]), torch.tensor([1 << 37])  # A♣; 10♦
    points = {}
    for name, rnd in (("micro", 0), ("micro", 1), ("duo", 0)):
        la = layer_actions(hand, pool, [0], rnd, variant=VARIANTS[name])
        assert la.captured.tolist() == [1 << 37]
        points[(name, rnd)] = (int(la.points[0]), bool(la.sur[0]))
    # A♣ 1 + 10♦ 3 card points, and a Sur 3
    assert points == {("micro", 0): (7, True), ("micro", 1): (4, False), ("duo", 0): (4, False)}


# -- expectations, best responses and CFR ---------------------------------------------------------


def scalar_expectation(s: GameState, player: int | None) -> float:
    """Future value when ``player`` best-responds (None: nobody) and the other plays uniformly."""
    base = banked_diff(s)
    vals = []
    for a in s.legal_actions():
        c = s.apply(a)
        future = c.utility() - banked_diff(c) if c.is_terminal else scalar_expectation(c, player)
        vals.append(banked_diff(c) - base + future)
    if player is not None and s.player == player:
        return max(vals) if player == ALEX else min(vals)
    return sum(vals) / len(vals)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ROWS)
def test_uniform_play_and_best_responses_match_the_scalar_engine(name, mode):
    for seed in range(2):
        start = initial(name, seed)
        tree = build_tree(start, mode)
        uni = uniform_strategy(tree)
        assert strategy_value(tree, uni) == pytest.approx(scalar_expectation(start, None), abs=1e-4)
        want = {p: scalar_expectation(start, p) for p in (0, 1)}
        for p in (0, 1):
            assert best_response(tree, uni, p).root_value == pytest.approx(want[p], abs=1e-4)
        assert nash_conv(tree, uni) == pytest.approx(want[0] - want[1], abs=1e-4)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ROWS)
def test_cfr_converges_to_the_exact_value(name, mode):
    for seed in range(3):
        tree = build_tree(initial(name, seed), mode)
        exact = solve_exact(tree).root_value
        params = CFRParams(method="dcfr", iterations=None, target_exploitability=2.5e-4, max_iterations=5000)
        res = solve_cfr(tree, params)
        assert res.exploitability < 2.5e-4
        assert res.root_value == pytest.approx(exact, abs=1e-3)


# -- forests and refusals ---------------------------------------------------------------------------


def test_a_forest_of_one_variant_values_each_start():
    starts = [initial("tiny", seed) for seed in range(4)]
    values = solve_exact(build_forest(starts, "compact")).root_values().tolist()
    assert values == [solve_exact(build_tree(s, "compact")).root_value for s in starts]


def test_a_forest_of_two_variants_is_refused():
    with pytest.raises(PasurInputError, match="share one variant"):
        build_forest([initial("micro", 0), initial("duo", 0)], "compact")


def test_a_variant_the_tensor_engine_cannot_encode_is_refused():
    wide = Variant(
        name="wide",
        about="hands of five cards",
        ranks=tuple(range(10)),
        suits=(0, 1),
        hand_size=5,
        deals=2,
        pool_size=0,
        point_cards=((0, 1),),
        clubs_for_bonus=6,
        clubs_bonus=5,
        sur_points=3,
    )
    with pytest.raises(PasurInputError, match="at most 4 cards"):
        build_tree(GameState.initial(Deck.from_seed(0, wide)), "compact")


def test_a_strategy_table_of_a_variant_round_trips_and_is_refused_on_another_variant(tmp_path):
    micro = initial("micro", 2)
    tree = build_tree(micro, "compact")
    res = solve_cfr(tree, CFRParams(method="dcfr", iterations=5))
    path = tmp_path / "micro.parquet"
    write_strategy_table(path, tree, res.strategy, "micro-2")
    back = read_strategy_table(path, tree)
    assert all(torch.equal(back[k], res.strategy[k].cpu()) for k in res.strategy)
    duo = GameState.initial(Deck(micro.deck.cards, VARIANTS["duo"]))  # the same cards, dealt as duo deals
    with pytest.raises(PasurInputError, match="another variant"):
        read_strategy_table(path, build_tree(duo, "compact"))
