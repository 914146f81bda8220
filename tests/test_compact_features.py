"""The compact tree's state features (issue 47): one row per edge, the same in play as in the
table, and different from the paper tree's rows of the same decision in exactly the named columns."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from helpers import position, uniform_strategy
from pasur.game.cards import CLUB_MASK, Deck
from pasur.game.state import GameState
from pasur.play.selfplay import BatchRandom, BatchState, TreeTracker
from pasur.solve.card_codes import HAND_CODE, POOL_CODE
from pasur.solve.infoset import CAPTURED_EARLIER, FEATURE_SETS, edge_features, infoset_tensor
from pasur.solve.ops import popcount
from pasur.solve.strategy_io import FEATURE_COLUMNS, write_strategy_table
from pasur.solve.tree import build_tree, normalize_clubs

#: card codes that say where a card is and nothing of the round's history
PLACE_CODES = {0, *HAND_CODE, POOL_CODE, CAPTURED_EARLIER}


def _layer_rows(tree, rt, t, features) -> np.ndarray:
    parent, child, gt_edge = rt.edges(t)
    return features(tree, rt.round, t, parent, child, gt_edge).numpy()


def _child_infosets(tree, r, t, parent, child, gt_edge):
    """The features compact rows had before issue 47: the child's infoset (one history's codes)."""
    return infoset_tensor(tree, r, t + 1, child)


def _shared_rows(tree, features) -> int:
    """Rows of the tree's table that another edge of the same layer has too."""
    shared = 0
    for rt in tree.rounds:
        for t in range(rt.start_turn, 8):
            rows = _layer_rows(tree, rt, t, features)
            shared += rows.shape[0] - np.unique(rows, axis=0).shape[0]
    return shared


@pytest.mark.parametrize(("seed", "first_round"), [(36, 0), (5, 2)])
def test_every_edge_of_a_compact_tree_has_its_own_row(seed, first_round):
    """A model scores rows: two edges (different decisions, or actions) with one row would get one
    probability. The state features tell every edge of a compact tree apart (a whole deal's, and
    one from round 2 of another deck); the features compact rows had before (the child's
    infoset) did not, which this test shows too."""
    start = GameState.initial(Deck.from_seed(seed)) if first_round == 0 else position(seed, first_round, 0)
    tree = build_tree(start, "compact", infosets=True)
    assert _shared_rows(tree, edge_features) == 0
    assert _shared_rows(tree, _child_infosets) > 0


@pytest.mark.parametrize("seed", [1, 7])
def test_compact_rows_are_the_paper_rows_of_the_same_decision_but_for_the_named_columns(seed):
    """Games of random play followed on both trees: at every move, the compact table's row and the
    paper table's row of the edge taken differ only where docs say (pasur.solve.infoset): card
    columns whose paper code is a history code of this round (a card played or captured), and the
    score columns (the decision's own score, not the one inherited at the round's start). Where
    the paper code says where a card is, both agree; the compact row's score columns are the
    game's clubs (normalized) and last capturer before the move."""
    start = position(seed, 3, 0)
    trees = {mode: build_tree(start, mode, infosets=True) for mode in ("paper", "compact")}
    n = 16
    state = BatchState.from_state(start, n)
    trackers = {mode: TreeTracker(tree, n) for mode, tree in trees.items()}
    agent = BatchRandom(seed)
    history_columns_differ = False
    while not state.is_terminal:
        actions = state.legal_actions()
        pick = agent.choose(state, actions)
        first = torch.cumsum(actions.brf, 0) - actions.brf
        rows = {}
        for mode, tree in trees.items():
            state.tracker = trackers[mode]
            edge = state.tracker.edges_of_games(state.round, state.turn, pick - first[actions.row[pick]])
            parent, child, gt_edge = (x[edge] for x in tree.round(state.round).edges(state.turn))
            rows[mode] = edge_features(tree, state.round, state.turn, parent, child, gt_edge)
        paper, compact = rows["paper"], rows["compact"]
        place = torch.tensor([[int(c) in PLACE_CODES for c in row] for row in paper[:, :52]])
        assert torch.equal(paper[:, :52][place], compact[:, :52][place])
        history_columns_differ |= bool((paper[:, :52] != compact[:, :52]).any())
        assert torch.equal(paper[:, 55:], compact[:, 55:])
        ca, cb = normalize_clubs(popcount(state.piles[0] & CLUB_MASK), popcount(state.piles[1] & CLUB_MASK))
        assert torch.equal(compact[:, 52:55].long(), torch.stack([ca, cb, state.last], 1).long())
        trackers["paper"].advance(state.round, state.turn, pick - first[actions.row[pick]])
        state.tracker = trackers["compact"]
        state.apply(actions, pick)
    assert history_columns_differ


def test_tables_say_which_features_they_hold(tmp_path):
    """The table's metadata names its features, so a fit can refuse a compact table of an older
    version (whose rows were one history's codes)."""
    start = position(3, 5, 0)
    for mode in ("paper", "compact"):
        tree = build_tree(start, mode, infosets=True)
        uniform = uniform_strategy(tree)
        path = tmp_path / f"{mode}.parquet"
        write_strategy_table(path, tree, uniform, "d")
        meta = pq.read_schema(path).metadata
        assert meta[b"pasur.features"].decode() == FEATURE_SETS[mode]
        assert pq.read_schema(path).names[:58] == FEATURE_COLUMNS


def test_compact_tables_and_models_of_an_older_version_are_refused(tmp_path):
    """A compact table whose rows are one history's codes (no ``pasur.features`` in its metadata),
    or a model fitted on one, would play against features it never saw: refused by name."""
    import json

    from pasur.common.errors import PasurInputError
    from pasur.learn.models import ModelParams, card_path, fit_model, load_model, save_model
    from pasur.solve.cfr import CFRParams
    from pasur.solve.rounds import solve_cfr

    start = position(4, 4, 0)
    tree = build_tree(start, "compact", infosets=True)
    path = tmp_path / "new.parquet"
    write_strategy_table(path, tree, solve_cfr(tree, CFRParams(method="dcfr", iterations=10)).strategy, "d")
    old = tmp_path / "old.parquet"
    table = pq.read_table(path)
    meta = {k: v for k, v in table.schema.metadata.items() if k != b"pasur.features"}
    pq.write_table(table.replace_schema_metadata(meta), old)
    params = ModelParams(rounds=2, max_depth=2, row_weights="uniform")
    with pytest.raises(PasurInputError, match=r"old\.parquet: its compact-tree features.*solve and fit again"):
        fit_model([old], params)
    model = fit_model([path], params)
    assert model.card["feature_set"] == "state"
    save_model(model, tmp_path / "m.ubj")
    card = json.loads(card_path(tmp_path / "m.ubj").read_text())
    del card["feature_set"]
    card_path(tmp_path / "m.ubj").write_text(json.dumps(card))
    with pytest.raises(PasurInputError, match=r"m\.ubj: its compact-tree features are 'history'"):
        load_model(tmp_path / "m.ubj")


def test_state_codes_and_the_actions_codes_on_rows_written_by_hand():
    """Each paper code's place, written out: hands and the pool as they are, a card laid this round
    back to the pool, a card that captured or was captured gone; then the action's own codes on top
    (Bob, turn 2: his card -3 when laid, 107 when it captures, each captured card -30)."""
    from pasur.solve.infoset import mark_action, state_codes

    paper = torch.tensor([[100, 105, 110, 2, -1, 111, 108, 20, -19, -127, 0, 10]], dtype=torch.int8)
    place = torch.tensor([[100, 105, 110, 110, 110, -127, -127, -127, -127, -127, 0, -127]], dtype=torch.int8)
    cards = torch.zeros((1, 52), dtype=torch.int8)
    cards[:, :12] = paper
    got = state_codes(cards)
    assert torch.equal(got[:, :12], place) and not got[:, 12:].any()
    laid = mark_action(got.clone(), torch.tensor([1]), torch.tensor([0]), pair=2, player=1)
    assert laid[0, 1] == -3 and torch.equal(laid[:, 2:12], place[:, 2:])
    took = mark_action(got.clone(), torch.tensor([1]), torch.tensor([(1 << 2) | (1 << 3)]), pair=2, player=1)
    assert took[0, 1] == 107 and took[0, 2] == -30 and took[0, 3] == -30 and torch.equal(took[:, 4:12], place[:, 4:])
