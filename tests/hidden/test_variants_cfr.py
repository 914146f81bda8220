"""The exact hidden-hand CFR of a small variant (``pasur.hidden.history_tree``,
``pasur.hidden.exact_cfr``): the tree is the scalar engine's game, its information sets are the
players' :class:`InfoState`, CFR+ and DCFR converge, the best response equals a brute-force one,
and a planted exploitable agent is measured exploitable."""

from __future__ import annotations

from itertools import combinations, pairwise

import numpy as np
import pytest
import torch

from helpers import device_param, on_device
from pasur.common import regret
from pasur.game.cards import JACK, Deck, cards_of, mask_of, rank
from pasur.game.state import GameState
from pasur.game.variants import get_variant
from pasur.hidden.agents import HiddenAgent
from pasur.hidden.exact_cfr import ALL_METHODS, HiddenCFR, HiddenCFRConfig, solve
from pasur.hidden.exact_exploit import agent_table, exploit_report, info_state
from pasur.hidden.game import HiddenGame, observe
from pasur.hidden.history_tree import SIZES, build_tree
from pasur.hidden.infostate import Move


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny():
    return build_tree("tiny")


def test_the_small_trees_have_the_listed_sizes(tiny):
    assert (tiny.n_histories, *tiny.n_infosets) == SIZES["tiny"]
    for name in ("micro", "duo"):
        tree = build_tree(name)
        assert (tree.n_histories, *tree.n_infosets) == SIZES[name]
    for above, level in zip(tiny.levels, tiny.levels[1:], strict=False):
        if above.kind == "chance":  # each deal's probabilities add up to 1
            totals = np.bincount(level.parent, weights=level.prob, minlength=len(above))
            assert np.allclose(totals, 1.0)


# ---------------------------------------------------------------- the tree is the scalar engine's game


def _path(tree, level: int, node: int) -> list[tuple[int, int]]:
    """(level, node) from the root's child down to ``node``."""
    out = []
    while level > 0:
        out.append((level, node))
        node = int(tree.levels[level].parent[node])
        level -= 1
    return out[::-1]


def _descend(tree, level: int, node: int) -> int:
    """A terminal node below ``node`` (first children)."""
    while level + 1 < len(tree.levels):
        node = int(np.searchsorted(tree.levels[level + 1].parent, node))
        level += 1
    return node


def _deck(tree, terminal: int) -> Deck:
    """The deal of a terminal history, read off both players' last information sets."""
    v, last = tree.variant, len(tree.levels) - 1
    hands: dict[tuple[int, int], int] = {}
    pool = 0
    for lv, n in _path(tree, last, terminal)[:-1]:
        level = tree.levels[lv]
        if level.kind in ("alex", "bob"):
            p = ("alex", "bob").index(level.kind)
            deals = [e for e in tree.seen(p, int(level.infoset[n])) if e[0] in ("deal", "hand")]
            pool = deals[0][1]
            for r, e in enumerate(deals):
                hands[p, r] = e[-1]
    cards = cards_of(pool)
    for r in range(v.deals):
        cards += cards_of(hands[0, r]) + cards_of(hands[1, r])
    return Deck(tuple(cards), v)


def _replay(tree, level: int, node: int):
    """The scalar engine's game along the path to ``node``: checks each decision's legal actions
    against its information set's, and returns the game there and the mover's information set."""
    game = HiddenGame(_deck(tree, _descend(tree, level, node)))
    for lv, n in _path(tree, level, node)[1:]:
        above = tree.levels[lv - 1]
        if above.kind in ("alex", "bob"):
            p = ("alex", "bob").index(above.kind)
            parent = int(tree.levels[lv].parent[n])
            acts = tree.actions[p][int(above.infoset[parent])]
            assert list(acts) == game.state.legal_actions() and game.mover == p
            game.apply(acts[int(tree.levels[lv].edge[n])])
    return game


def test_terminal_histories_replay_in_the_scalar_engine_to_their_values(tiny):
    rng = np.random.default_rng(0)
    last = len(tiny.levels) - 1
    for z in rng.choice(len(tiny.levels[last]), 300, replace=False).tolist():
        game = _replay(tiny, last, z)
        assert game.is_terminal and game.state.utility() == tiny.levels[last].value[z]


def test_information_sets_are_exactly_the_players_information_states(tiny):
    """Histories of one information set give one InfoState, different sets different ones; and
    no InfoState holds a card of the opponent's hand or of the undealt cards."""
    rng = np.random.default_rng(1)
    seen: dict = {}
    shared = 0  # information sets checked on several histories
    for lv in (2, 3, 7, 9):
        level = tiny.levels[lv]
        p = ("alex", "bob").index(level.kind)
        for i in rng.choice(np.unique(level.infoset), 25, replace=False).tolist():
            members = np.nonzero(level.infoset == i)[0]
            shared += len(members) > 1
            for n in rng.choice(members, min(3, len(members)), replace=False).tolist():
                game = _replay(tiny, lv, n)
                info = game.observation(p)
                hidden = game.state.hands[1 - p] | game.state.undealt()
                assert info.hand & hidden == 0 and all(((1 << m.card) | m.captured) & hidden == 0 for m in info.moves)
                assert seen.setdefault(info, (p, i)) == (p, i)
                assert info_state(tiny, p, i) == info  # rebuilt from what the player has seen alone
    assert len(set(seen.values())) == len(seen) == 4 * 25  # one InfoState per information set
    assert shared > 25


# ---------------------------------------------------------------- convergence


@pytest.mark.parametrize("method", ["cfr+", "dcfr"])
def test_exploitability_decreases_toward_zero_on_tiny(tiny, method):
    solver = HiddenCFR(tiny, HiddenCFRConfig(method))
    measured = [solver.exploitability(solver.average_policy())]
    for _ in range(4):
        solver.iterate(10)
        measured.append(solver.exploitability(solver.average_policy()))
    assert all(b < a for a, b in pairwise(measured))
    assert measured[-1] < measured[0] / 100


@pytest.fixture(scope="module")
def tiny_dcfr(tiny):
    """DCFR on ``tiny`` solved to a thousandth of a point (checked every 10 iterations): the
    solve's test checks the result; the planted agent's test plays against its average policy
    (it only reads the solver: best responses and values change no state of it)."""
    solver = HiddenCFR(tiny, HiddenCFRConfig("dcfr"))
    return solver, solve(solver, 200, target_exploitability=1e-3, check_every=10)


def test_dcfr_reaches_a_thousandth_of_a_point_on_tiny(tiny_dcfr):
    _, result = tiny_dcfr
    assert result.target_met and result.exploitability <= 1e-3
    assert result.nash_conv == pytest.approx(2 * result.exploitability)


@pytest.mark.parametrize("method", ALL_METHODS)
def test_every_method_of_the_regret_kernel_improves_on_uniform(tiny, method):
    solver = HiddenCFR(tiny, HiddenCFRConfig(method, horizon=8))
    before = solver.exploitability(solver.average_policy())
    solver.iterate(8)
    assert solver.exploitability(solver.average_policy()) < before / 4


def test_the_command_lists_every_method():
    from pasur.cli.general import HIDDEN_METHODS

    assert HIDDEN_METHODS == ALL_METHODS == (*regret.METHODS, *regret.PREDICTIVE, *regret.SCHEDULED)


# ---------------------------------------------------------------- best responses


def _lowest_card_table(solver: HiddenCFR) -> torch.Tensor:
    """Every information set plays its first legal action: the lowest card (legal actions are
    sorted by card, then captured cards)."""
    table = torch.zeros(solver.n_rows, solver.A, dtype=torch.float64)
    table[:, 0] = 1.0
    return table


def _every_deal(v):
    """Every deal of the variant as a deck (hands as sets, in dealing order), equally likely."""
    non_jacks = [c for c in v.cards if rank(c) != JACK]

    def hands(rest, k):
        if k == 0:
            yield []
            return
        for h in combinations(sorted(rest), v.hand_size):
            for tail in hands(rest - set(h), k - 1):
                yield [*h, *tail]

    for pool in combinations(non_jacks, v.pool_size):
        for dealt in hands(set(v.cards) - set(pool), 2 * v.deals):
            yield Deck((*pool, *dealt), v)


def _brute_force_best_response(v, responder: int, opponent) -> float:
    """The responder's best response to ``opponent`` (an InfoState -> Action function), by the
    scalar engine over every deal, histories grouped by the responder's InfoState, level by level
    from the end (no tree of this module's)."""
    decks = list(_every_deal(v))
    layers = [[(GameState.initial(d), (), 1.0 / len(decks), -1, -1) for d in decks]]
    while not layers[-1][0][0].is_terminal:
        nxt = []
        for n, (s, moves, w, _, _) in enumerate(layers[-1]):
            acts = s.legal_actions() if s.player == responder else [opponent(observe(s, moves, s.player))]
            for a, act in enumerate(acts):
                nxt.append((s.apply(act), (*moves, Move(s.player, s.round, act.card, act.captured)), w, n, a))
        layers.append(nxt)
    values = np.array([s.utility() for s, *_ in layers[-1]], dtype=float)
    sign = 1.0 if responder == 0 else -1.0
    for d in range(len(layers) - 2, -1, -1):
        children = layers[d + 1]
        q: dict = {}
        for (_, _, w, parent, a), val in zip(children, values, strict=True):
            s, moves = layers[d][parent][0], layers[d][parent][1]
            if s.player == responder:
                key = observe(s, moves, responder)
                q.setdefault(key, {}).setdefault(a, 0.0)
                q[key][a] += w * val
        best = {key: max(acts, key=lambda a, key=key: (sign * acts[a], -a)) for key, acts in q.items()}
        values_up = np.zeros(len(layers[d]))
        for (_, _, _, parent, a), val in zip(children, values, strict=True):
            s, moves = layers[d][parent][0], layers[d][parent][1]
            if s.player != responder or best[observe(s, moves, responder)] == a:
                values_up[parent] = val
        values = values_up
    return float(sum(w * val for (_, _, w, _, _), val in zip(layers[0], values, strict=True)))


@pytest.mark.parametrize("responder", [0, 1])
def test_best_response_to_a_pure_policy_equals_brute_force(tiny, responder):
    solver = HiddenCFR(tiny)
    table = _lowest_card_table(solver)
    value, best = solver.best_response(table, responder)
    brute = _brute_force_best_response(tiny.variant, responder, lambda info: info.legal_actions()[0])
    assert value == pytest.approx(brute, abs=1e-9)
    # the responder's pure strategy achieves that value against the policy
    rows = slice(*((0, tiny.n_infosets[0]) if responder == 0 else (tiny.n_infosets[0], solver.n_rows)))
    profile = table.clone()
    profile[rows] = best[rows]
    assert solver.value(profile) == pytest.approx(value, abs=1e-9)


class LowestCardAgent(HiddenAgent):
    """A planted exploitable agent: it always plays its lowest card (its first legal action)."""

    name = "lowest"

    def choose(self, info):
        return info.legal_actions()[0]


def test_an_agent_that_always_plays_its_lowest_card_is_exploitable(tiny_dcfr):
    solver, _ = tiny_dcfr  # an equilibrium to a thousandth of a point, asserted below
    equilibrium = solver.average_policy()
    lowest = agent_table(solver, LowestCardAgent())  # asked at every information set, in batches
    assert torch.equal(lowest, _lowest_card_table(solver))
    assert solver.exploitability(equilibrium) < 1e-3
    assert solver.exploitability(lowest) > 0.5
    # against it, each seat of the best responder wins more than the game's value gives
    v_star = solver.value(equilibrium)
    assert solver.best_response(lowest, 0)[0] > v_star + 0.25
    assert solver.best_response(lowest, 1)[0] < v_star - 0.25
    report = exploit_report(solver, lowest, equilibrium)
    assert report["exploitability"] == pytest.approx(solver.exploitability(lowest))
    assert report["margin_vs_equilibrium"] < -0.1 and report["equilibrium_exploitability"] < 1e-3


def test_mini_is_at_least_a_million_histories():
    assert SIZES["mini"][0] >= 10**6
    v = get_variant("mini")
    assert v.deals_count() == 28 * 28 * 15 * 6 * 1  # pools without a Jack, then the four hands
    assert mask_of(v.cards) == v.deck_mask


# ---------------------------------------------------------------- devices


@device_param
def test_the_solver_runs_on_each_device_as_on_the_cpu(device):
    """Every tensor of the solve on ``device`` (the CPU where torch sees no GPU), its iterates,
    best responses and exploitability those of the CPU's run (float64: to 1e-9)."""
    tree = build_tree("micro")
    runs = []
    for dev in ("cpu", device):
        solver = HiddenCFR(tree, HiddenCFRConfig("dcfr"), device=dev)
        solver.iterate(6)
        avg = solver.average_policy()
        on_device(dev, avg, solver.regret, solver.sigma, *(lv.parent for lv in solver.levels))
        runs.append((avg.cpu(), solver.exploitability(avg), solver.best_response(avg, 0)[0]))
    assert torch.allclose(runs[0][0], runs[1][0], atol=1e-9, rtol=0)
    assert runs[0][1] == pytest.approx(runs[1][1], abs=1e-9) and runs[0][2] == pytest.approx(runs[1][2], abs=1e-9)
