"""The tensor engine against the scalar engine and the reference solver, on small games.

Small games are the last one or two rounds of several decks, reached by random play, and
mid-round positions. Every check is exact (values are integers or exact rationals in float).
"""

from __future__ import annotations

import random

import pytest
import torch

from helpers import position, random_strategy, scalar_profile_value
from pasur.common.memory import TreeTooLargeError
from pasur.game.cards import JACK, Deck, mask_of, parse_card
from pasur.game.rules import legal_actions
from pasur.game.state import ALEX, TURNS_PER_ROUND, GameState
from pasur.solve.actions import layer_actions, numeric_subsets
from pasur.solve.card_codes import compress_gme, replay_gme
from pasur.solve.exact import (
    best_response,
    exploitability,
    nash_conv,
    pure_strategy,
    solve_exact,
    strategy_value,
    uniform_strategy,
)
from pasur.solve.infoset import infoset_tensor
from pasur.solve.ops import popcount
from pasur.solve.reference import ReferenceSolver, banked_diff, club_key, future_key
from pasur.solve.tree import build_tree

MODES = ("paper", "compact")
# (seed, round, turn) of small games: last round, last two rounds, and mid-round positions;
# (16, 4, 4) has Surs, (72, 5, 0) a Queen or King with two captures to choose from, (3, 5, 4)
# a line with no capture to the end, so that the final sweep goes to a capturer from before
# (see the coverage test at the end)
SMALL = [(s, 5, 0) for s in range(4)] + [(s, 4, 4) for s in range(4, 7)] + [(7, 5, 3), (8, 4, 0)]
SMALL += [(16, 4, 4), (72, 5, 0), (3, 5, 4)]


# -- scalar oracles -------------------------------------------------------------------------


def replay(start: GameState, actions) -> GameState:
    """The state after ``actions``; the last card of round 5 is played without the final sweep,
    matching the tensor tree's terminal layer."""
    s = start
    for i, a in enumerate(actions):
        last = i == len(actions) - 1
        s = s.play(a) if last and s.round == 5 and s.turn == TURNS_PER_ROUND - 1 else s.apply(a)
    return s


def scalar_layer_counts(start: GameState, mode: str) -> list[int]:
    """Nodes per layer, counted with the scalar engine under each mode's node identity."""

    def inherited(s: GameState):
        return club_key(s.clubs), s.last_capturer

    if mode == "compact":

        def key(s, root, hist):
            return (s.hands, s.pool, club_key(s.clubs), s.last_capturer)
    else:

        def key(s, root, hist):
            return (root, hist)

    counts = []
    layer = {key(start, (start.pool, inherited(start)), ()): (start, (start.pool, inherited(start)), ())}
    while True:
        counts.append(len(layer))
        nxt = {}
        for s, root, hist in layer.values():
            if s.turn == TURNS_PER_ROUND:  # end of round: deal, merge roots by (pool, inherited score)
                if s.round == 5:
                    return counts
                c = s.end_round()
                r = (c.pool, inherited(c))
                nxt[key(c, r, ())] = (c, r, ())
                continue
            for a in s.legal_actions():
                c = s.play(a)
                h = (*hist, (a.card, a.captured))
                nxt[key(c, root, h)] = (c, root, h)
        layer = nxt


def scalar_expectation(s: GameState, player: int | None) -> float:
    """Future value when ``player`` best-responds (None: nobody) and the other plays uniformly."""
    if s.is_terminal:
        return 0.0
    base = banked_diff(s)
    vals = []
    for a in s.legal_actions():
        c = s.apply(a)
        end = c.utility() - banked_diff(c) if c.is_terminal else 0
        vals.append(banked_diff(c) - base + end + scalar_expectation(c, player))
    if player is not None and s.player == player:
        return max(vals) if player == ALEX else min(vals)
    return sum(vals) / len(vals)


# -- kernels --------------------------------------------------------------------------------


def test_numeric_subsets_are_the_papers_2764():
    subs = numeric_subsets()
    assert len(subs) == 2764 and len(set(subs)) == 2764
    sizes = {}
    for s in subs:
        cards = [c for c in range(40) if s >> c & 1]
        assert sum(c // 4 + 1 for c in cards) == 11
        sizes[len(cards)] = sizes.get(len(cards), 0) + 1
    assert sizes == {2: 80, 3: 440, 4: 976, 5: 920, 6: 320, 7: 28}


def test_popcount():
    xs = [0, 1, 2**52 - 1, 0b1011, 2**62 + 5]
    assert popcount(torch.tensor(xs)).tolist() == [bin(x).count("1") for x in xs]


def test_layer_actions_match_scalar_rules_row_by_row():
    rng = random.Random(0)
    for trial in range(40):
        cards = list(range(52))
        rng.shuffle(cards)
        dealt = cards[:4]
        hands, pools = [], []
        for _ in range(25):  # a batch of rows sharing the mover's dealt cards
            k = rng.randint(1, 4)
            hand = mask_of(rng.sample(dealt, k))
            laid = [c for c in dealt if not hand >> c & 1 and rng.random() < 0.5]
            pools.append(mask_of(cards[4 : 4 + rng.randint(0, 12)] + laid))
            hands.append(hand)
        la = layer_actions(torch.tensor(hands), torch.tensor(pools), dealt, trial % 6)
        got = list(zip(la.row.tolist(), la.card.tolist(), la.captured.tolist(), strict=True))
        want = [
            (i, a.card, a.captured)
            for i, (h, p) in enumerate(zip(hands, pools, strict=True))
            for a in legal_actions(h, p)
        ]
        assert got == want
        assert la.brf.tolist() == [len(legal_actions(h, p)) for h, p in zip(hands, pools, strict=True)]


def test_layer_actions_points_clubs_and_sur():
    C = parse_card
    # 7C takes the whole pool {4D}: a Sur (5) in round 2; no Sur in round 5. JH takes 4D but is no Sur.
    la = layer_actions(
        torch.tensor([mask_of([C("7C"), C("JH")])]), torch.tensor([mask_of([C("4D")])]), [C("7C"), C("JH")], 2
    )
    by_card = {c: (p, k) for c, p, k in zip(la.card.tolist(), la.points.tolist(), la.clubs.tolist(), strict=True)}
    assert by_card[C("7C")] == (5, 1) and by_card[C("JH")] == (1, 0)
    la5 = layer_actions(torch.tensor([mask_of([C("7C")])]), torch.tensor([mask_of([C("4D")])]), [C("7C")], 5)
    assert la5.points.tolist() == [0]


# -- the tree against the scalar engine ---------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("seed", "rnd", "turn"), SMALL)
def test_nodes_per_layer_match_the_scalar_engine(mode, seed, rnd, turn):
    s = position(seed, rnd, turn)
    tree = build_tree(s, mode)
    counts = [rt.n_nodes(t) for rt in tree.rounds for t in rt.turns]
    assert counts == scalar_layer_counts(s, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("seed", "rnd", "turn"), SMALL[:5])
def test_every_node_has_the_scalar_legal_actions_and_exact_value(mode, seed, rnd, turn):
    s = position(seed, rnd, turn)
    tree = build_tree(s, mode)
    sol = solve_exact(tree)
    ref = ReferenceSolver(s.deck)
    for rt in tree.rounds:
        for t in rt.turns:
            n = rt.n_nodes(t)
            for node in range(0, n, max(1, n // 40)):  # about 40 nodes per layer
                state = replay(s, tree.path_to(rt.round, t, node))
                value = float(sol.values[(rt.round, t)][node])
                if rt.round == 5 and t == TURNS_PER_ROUND:  # terminal: the sweep and bonus to come
                    assert value == state.end_round().utility() - banked_diff(state)
                    continue
                if t < TURNS_PER_ROUND:  # (at turn 8, replay has already dealt the next round)
                    assert tree.out_actions(rt.round, t, node) == state.legal_actions()
                assert value == ref.value(state) - banked_diff(state)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("seed", "rnd", "turn"), SMALL)
def test_root_value_equals_the_reference_solver(mode, seed, rnd, turn):
    s = position(seed, rnd, turn)
    assert solve_exact(build_tree(s, mode)).game_value() == ReferenceSolver(s.deck).value(s)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("seed", "rnd", "turn"), [(0, 5, 0), (3, 5, 0), (5, 4, 4), (6, 4, 4)])
def test_expectations_and_best_responses_match_scalar(mode, seed, rnd, turn):
    """Uniform play and best responses to it: catches edges wired to the wrong parent or
    terminal values given to the wrong node, which minimax alone can miss."""
    s = position(seed, rnd, turn)
    tree = build_tree(s, mode)
    uni = uniform_strategy(tree)
    want = {who: scalar_expectation(s, who) for who in (None, 0, 1)}  # each walk once: the slow part
    assert strategy_value(tree, uni) == pytest.approx(want[None], abs=1e-4)
    br_a = best_response(tree, uni, 0).root_value
    br_b = best_response(tree, uni, 1).root_value
    assert br_a == pytest.approx(want[0], abs=1e-4)
    assert br_b == pytest.approx(want[1], abs=1e-4)
    oracle = want[0] - want[1]
    assert nash_conv(tree, uni) == pytest.approx(oracle, abs=1e-4) and oracle > 0
    assert exploitability(tree, uni) == pytest.approx(oracle / 2, abs=1e-4)  # docs/conventions.md


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("seed", "rnd", "turn"), [(0, 5, 0), (6, 4, 4), (1, 5, 2)])
def test_best_responses_to_a_random_strategy_match_the_scalar_oracle(mode, seed, rnd, turn):
    """A non-uniform strategy, where a wrong edge-to-probability wiring cannot hide behind
    symmetry: its value, both best responses and its exploitability from the tensor passes
    equal a plain recursion over the scalar engine's histories."""
    s = position(seed, rnd, turn)
    tree = build_tree(s, mode)
    sigma = random_strategy(tree, seed=seed + 17)
    want = {who: scalar_profile_value(tree, sigma, s, who) for who in (None, 0, 1)}
    assert strategy_value(tree, sigma) == pytest.approx(want[None], abs=1e-4)
    assert best_response(tree, sigma, 0).root_value == pytest.approx(want[0], abs=1e-4)
    assert best_response(tree, sigma, 1).root_value == pytest.approx(want[1], abs=1e-4)
    assert nash_conv(tree, sigma) == pytest.approx(want[0] - want[1], abs=1e-4)
    assert exploitability(tree, sigma) == pytest.approx((want[0] - want[1]) / 2, abs=1e-4)
    assert want[1] < want[None] < want[0]


@pytest.mark.parametrize("mode", MODES)
def test_optimal_strategy_has_zero_exploitability_and_follows_the_reference_line(mode):
    s = position(2, 4, 0)
    tree = build_tree(s, mode)
    sol = solve_exact(tree)
    assert exploitability(tree, pure_strategy(sol)) == 0.0 == nash_conv(tree, pure_strategy(sol))
    # the tensor's optimal line is the reference solver's (same tie-break)
    ref = ReferenceSolver(s.deck)
    line = ref.optimal_line(s)
    node, state = 0, s
    for a in line:
        rt = tree.round(state.round)
        t = state.turn
        parent, child, gt_edge = rt.edges(t)
        best = int(sol.best_edge[(rt.round, t)][node])
        layer = rt.gt[t]
        assert (int(layer.card[best]), int(layer.captured[best])) == (a.card, a.captured)
        e = int(torch.nonzero((parent == node) & (gt_edge == best))[0])
        node = int(child[e])
        state = state.apply(a)
        if state.turn == 0 and not state.is_terminal:  # crossed into the next round
            node = int(rt.link[node])


def test_paper_and_compact_agree_on_every_small_game():
    for seed, rnd, turn in SMALL:
        s = position(seed, rnd, turn)
        paper, compact = (build_tree(s, m) for m in MODES)
        assert solve_exact(paper).root_value == solve_exact(compact).root_value
        assert compact.n_nodes <= paper.n_nodes


def test_tree_from_the_initial_state_of_a_full_deck(reference_decks):
    for nd in reference_decks:
        tree = build_tree(GameState.initial(nd.deck), "compact")
        assert solve_exact(tree).game_value() == nd.value
    # the paper tree of the two smaller reference decks (ref0's takes a few seconds: see the next test)
    for nd in reference_decks[1:]:
        assert solve_exact(build_tree(GameState.initial(nd.deck), "paper")).game_value() == nd.value


def test_paper_tree_of_ref0(reference_decks):
    nd = reference_decks[0]
    tree = build_tree(GameState.initial(nd.deck), "paper", infosets=False)
    assert tree.n_nodes == 19_122_819  # with the last capturer in the inherited score
    assert solve_exact(tree, keep_values=False).game_value() == nd.value


# -- infosets, memory, keys ----------------------------------------------------------------------


def expected_codes(start: GameState, path) -> dict[int, int]:
    """The paper's card codes after ``path`` (from a round start), computed card by card from
    Table 11's definitions: 100/105 in a hand, 110 in the pool since the round began, -127
    captured in an earlier round, 0 not dealt; a card played at turn pair k is ±(k+1) if laid,
    110 ±(k+1) if it captured; a captured card adds ±10(k+1) (+ Alex, - Bob)."""
    code = {}
    for c in range(52):
        if start.hands[0] >> c & 1:
            code[c] = 100
        elif start.hands[1] >> c & 1:
            code[c] = 105
        elif start.pool >> c & 1:
            code[c] = 110
        elif (start.piles[0] | start.piles[1]) >> c & 1:
            code[c] = -127
        else:
            code[c] = 0
    for i, a in enumerate(path):
        k, sign = i // 2 + 1, 1 if i % 2 == 0 else -1
        code[a.card] = 110 + sign * k if a.captured else sign * k
        for c in range(52):
            if a.captured >> c & 1:
                code[c] = (0 if code[c] == 110 else code[c]) + sign * 10 * k
    return code


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("seed", "rnd"), [(1, 2), (16, 4), (3, 5)])
def test_infoset_rows_decode_the_history(mode, seed, rnd):
    s = position(seed, rnd, 0)
    tree = build_tree(s, mode)
    for t in range(1, 9):
        rows = infoset_tensor(tree, rnd, t).tolist()
        for node in range(0, len(rows), max(1, len(rows) // 25)):
            row = rows[node]
            path = tree.path_to(rnd, t, node)  # compact: one of the histories the node merges
            assert row[55:] == [rnd, (t - 1) // 2, (t - 1) % 2]
            want = expected_codes(s, path)
            if mode == "paper":
                assert row[:52] == [want[c] for c in range(52)]
            else:  # the same cards are where they are; the history may be another of the merged ones
                for c in range(52):
                    assert (row[c] == 100) == (want[c] == 100) and (row[c] == 105) == (want[c] == 105)
                    assert (row[c] == 0) == (want[c] == 0) and (row[c] == -127) == (want[c] == -127)
            ca, cb = club_key(s.clubs)
            if mode == "paper":
                assert row[52:55] == [ca, cb, 0 if s.last_capturer is None else s.last_capturer + 1]


@pytest.mark.parametrize(("seed", "rnd", "turn"), [(1, 2, 0), (5, 4, 4), (8, 4, 0)])
def test_incremental_cmp_equals_the_papers_gme_compression(seed, rnd, turn):
    """t_cmp kept by the builder == CodeSnippet 6 applied to t_gme replayed with CodeSnippet 1."""
    tree = build_tree(position(seed, rnd, turn), "paper")
    for rt in tree.rounds:
        for t, gme in replay_gme(tree, rt.round):
            assert torch.equal(compress_gme(gme), rt.gt[t].cmp), (rt.round, t)
            assert gme.shape == (rt.gt[t].n, 3, len(rt.inp))


def test_infosets_of_a_mid_round_start_are_refused():
    tree = build_tree(position(1, 5, 3), "paper")
    with pytest.raises(ValueError, match="from turn 0"):
        infoset_tensor(tree, 5, 5)


def test_infosets_need_t_cmp():
    tree = build_tree(position(1, 5, 0), "compact", infosets=False)
    with pytest.raises(ValueError, match="infosets=True"):
        infoset_tensor(tree, 5, 1)


def test_compact_infosets_hold_a_representative_history():
    """A compact node's row is the paper row of one of the histories it merges."""
    s = position(1, 5, 0)
    compact, paper = build_tree(s, "compact"), build_tree(s, "paper")
    for t in range(1, 9):
        rows = infoset_tensor(compact, 5, t)
        paper_rows = {tuple(r) for r in infoset_tensor(paper, 5, t).tolist()}
        assert rows.shape == (compact.round(5).n_nodes(t), 58)
        for node, row in enumerate(rows.tolist()):
            state = replay(s, compact.path_to(5, t, node))
            ca, cb = club_key(state.clubs)
            assert row[52:55] == [ca, cb, 0 if state.last_capturer is None else state.last_capturer + 1]
            if s.clubs == state.clubs and s.last_capturer == state.last_capturer:
                assert tuple(row) in paper_rows  # same score context as the round's start


def test_memory_limit_stops_with_a_clear_message():
    s = GameState.initial(Deck.from_seed(3))
    with pytest.raises(TreeTooLargeError, match=r"round \d, turn \d: .* over the limit of 0.00 GiB"):
        build_tree(s, "paper", memory_limit=1000)


def test_compact_keys_are_the_reference_solvers_states():
    s = position(0, 5, 0)
    tree = build_tree(s, "compact")
    keys = set()
    stack = [s]
    while stack:
        x = stack.pop()
        if x.is_terminal or future_key(x) in keys:
            continue
        keys.add(future_key(x))
        stack.extend(x.apply(a) for a in x.legal_actions())
    assert sum(tree.round(5).n_nodes(t) for t in range(8)) == len(keys)


def test_small_games_cover_jacks_surs_court_choices_and_sweeps():
    """The cross-checked games exercise every rule: Jack captures, Surs, a Queen/King with a
    choice of two, final sweeps, and a sweep to a capturer from before the game's last captures."""
    from pasur.game.cards import KING, QUEEN, rank
    from pasur.game.rules import is_sur

    seen = set()
    for seed, rnd, turn in SMALL:
        stack, visited = [(position(seed, rnd, turn), False)], set()
        while stack:
            s, captured_since_start = stack.pop()
            key = (future_key(s), captured_since_start)
            if s.is_terminal or key in visited:
                continue
            visited.add(key)
            acts = s.legal_actions()
            for a in acts:
                if a.captured and rank(a.card) == JACK:
                    seen.add("jack")
                if is_sur(a, s.pool, s.round):
                    seen.add("sur")
                if rank(a.card) in (QUEEN, KING) and sum(b.card == a.card and b.captured != 0 for b in acts) >= 2:
                    seen.add("court choice")
                captured = captured_since_start or a.captured != 0
                if s.round == 5 and s.turn == TURNS_PER_ROUND - 1 and s.play(a).pool and s.last_capturer is not None:
                    seen.add("sweep" if captured else "sweep to an inherited capturer")
                stack.append((s.apply(a), captured))
    assert seen == {"jack", "sur", "court choice", "sweep", "sweep to an inherited capturer"}, seen


def _no_capture_endgame(last_capturer, *, round_: int) -> GameState:
    """A crafted ending where nobody can capture: every numeric card left is a multiple of 3
    (no set sums to 11) and there is no Jack, Queen or King to play. Round 5: Alex 3C 3D 3H 3S,
    Bob 6C 6D 9C 9D, pool 6H QC KS. With ``round_=4`` the position is round 4, turn 6, with
    Alex holding 6S and Bob 9S. Alex has 6 clubs and Bob 3 in their piles, so the sweep of the
    4 clubs left decides the bonus: 7 to whoever captured last, from before."""
    C = parse_card
    r5 = [C(x) for x in ["3C", "3D", "3H", "3S", "6C", "6D", "9C", "9D"]]
    pool = [C(x) for x in ["6H", "QC", "KS"]]
    r4_left = [C("6S"), C("9S")]
    rest = [c for c in range(52) if c not in r5 + pool + r4_left]
    clubs = [c for c in rest if c % 4 == 0]
    non_clubs = [c for c in rest if c % 4 != 0]
    # the deck: round 5 at 44..51, 6S and 9S in the round 4 hands (39, 43), the rest with the Jacks
    # last so that none is in the initial pool (slots 0..3)
    cards = [None] * 52
    cards[44:52] = r5
    cards[39], cards[43] = r4_left
    fill = sorted(rest + pool, key=lambda c: c // 4 == JACK)
    for i, c in zip((i for i in range(52) if cards[i] is None), fill, strict=True):
        cards[i] = c
    deck = Deck(tuple(cards))
    piles_a = mask_of(clubs[:6]) | mask_of(non_clubs[0::2])
    piles_b = mask_of(clubs[6:]) | mask_of(non_clubs[1::2])
    if round_ == 5:  # 6S and 9S were played in round 4: they are in the piles
        hands = (mask_of(r5[:4]), mask_of(r5[4:]))
        piles = (piles_a | 1 << C("6S"), piles_b | 1 << C("9S"))
        s = GameState(deck, 5, 0, hands, mask_of(pool), piles, (0, 0), last_capturer)
    else:
        hands = (1 << C("6S"), 1 << C("9S"))
        a5, b5 = mask_of(r5[:4]), mask_of(r5[4:])
        s = GameState(
            deck, 4, 6, hands, mask_of(pool), (piles_a & ~(a5 | b5), piles_b & ~(a5 | b5)), (0, 0), last_capturer
        )
    s.check()
    return s


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("round_", [5, 4])
def test_the_final_sweep_goes_to_a_capturer_from_an_earlier_round(mode, round_):
    values = {}
    for last in (None, 0, 1):
        s = _no_capture_endgame(last, round_=round_)
        assert all(not a.captured for a in s.legal_actions())
        exact = ReferenceSolver(s.deck).value(s)
        assert solve_exact(build_tree(s, mode)).game_value() == exact
        values[last] = exact
    # nobody: no sweep, no bonus; Alex: the sweep gives him 10 clubs; Bob: 7 clubs and the bonus
    assert values[0] - values[None] >= 7 and values[None] - values[1] >= 7
