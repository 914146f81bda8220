"""XGBoost strategy models: fit, save and reload; refusal of bad files; the model agent's
infoset features against the tree's; model play replayed in the scalar engine."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from helpers import assert_batch_replays, position, uniform_strategy
from pasur.common.errors import PasurInputError
from pasur.learn.models import BatchModel, ModelParams, card_path, fit_model, load_model, save_model
from pasur.play.infosets import InfosetTracker
from pasur.play.selfplay import BatchRandom, BatchState, TreeTracker, play_batch
from pasur.solve.cfr import CFRParams
from pasur.solve.infoset import edge_features
from pasur.solve.rounds import solve_cfr
from pasur.solve.strategy_io import FEATURE_COLUMNS, write_strategy_table
from pasur.solve.tree import build_tree

SMALL = ModelParams(rounds=8, max_depth=4, row_weights="uniform")


def _table(tmp_path, seed: int, mode: str = "compact", name: str | None = None):
    start = position(seed, 4, 0)
    tree = build_tree(start, mode, infosets=True)
    res = solve_cfr(tree, CFRParams(method="dcfr", iterations=30))
    path = tmp_path / (name or f"s{seed}-{mode}.parquet")
    write_strategy_table(path, tree, res.strategy, f"deck-{seed}")
    return start, tree, path


def test_fit_save_and_reload_give_the_same_predictions(tmp_path):
    _, _, path = _table(tmp_path, 3)
    model = fit_model([path], SMALL)
    card = save_model(model, tmp_path / "m.ubj")
    assert card == tmp_path / "m.card.json"
    back = load_model(tmp_path / "m.ubj")
    x = np.stack([pq.read_table(path).column(c).to_numpy() for c in FEATURE_COLUMNS], 1).astype(np.float32)
    assert np.array_equal(model.predict(x), back.predict(x))
    c = json.loads(card.read_text())
    assert c["kind"] == "per-deck" and c["tree_mode"] == "compact"
    assert c["parameters"]["min_split_loss"] == 1.0 and c["parameters"]["rounds"] == 8
    # measured on the held-out decision points, then refit on every row
    assert c["training"]["rows_used"] == pq.read_metadata(path).num_rows and c["validation"]["rows"] > 0
    assert 0 <= c["validation"]["agreement"] <= 1 and c["validation"]["rmse"] > 0
    # the JSON format round-trips as well
    save_model(model, tmp_path / "m.json")
    assert np.allclose(load_model(tmp_path / "m.json").predict(x), model.predict(x), atol=1e-4)


def test_the_target_is_a_hundred_times_the_probability(tmp_path):
    """A model with many rounds fits a table's rows to within a few points of 100 × σ."""
    _, _, path = _table(tmp_path, 3)
    model = fit_model([path], ModelParams(rounds=200, max_depth=8, validation_fraction=0, row_weights="uniform"))
    t = pq.read_table(path)
    x = np.stack([t.column(c).to_numpy() for c in FEATURE_COLUMNS], 1).astype(np.float32)
    y = 100 * t.column("probability").to_numpy()
    assert np.sqrt(np.mean((model.predict(x) - y) ** 2)) < 0.6 * y.std()
    assert model.card["validation"]["rmse"] is None


def test_multi_deck_model_is_judged_on_unseen_decks(tmp_path):
    paths = [_table(tmp_path, s)[2] for s in (3, 4, 6)]
    model = fit_model(paths[:2], SMALL, validation_tables=paths[2:])
    card = model.card
    assert card["kind"] == "multi-deck"
    assert set(card["validation"]["per_deck"]) == {"deck-6"}
    assert card["validation"]["rows"] == pq.read_metadata(paths[2]).num_rows
    assert card["training"]["rows_used"] == sum(pq.read_metadata(p).num_rows for p in paths[:2])
    with pytest.raises(PasurInputError, match="also a training deck"):
        fit_model(paths[:2], SMALL, validation_tables=paths[1:2])


def test_tables_of_different_tree_modes_are_not_mixed(tmp_path):
    _, _, a = _table(tmp_path, 3, "compact")
    _, _, b = _table(tmp_path, 4, "paper")
    with pytest.raises(PasurInputError, match="different tree modes"):
        fit_model([a, b], SMALL)


def test_bad_model_files_are_refused_by_name(tmp_path):
    _, _, path = _table(tmp_path, 3)
    model = fit_model([path], SMALL)
    target = tmp_path / "m.ubj"
    save_model(model, target)
    with pytest.raises(PasurInputError, match=r"model file not found: .*nope\.ubj"):
        load_model(tmp_path / "nope.ubj")
    # truncated
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    with pytest.raises(PasurInputError, match=r"m\.ubj: the file does not match its card"):
        load_model(target)
    # not a model at all, with a card that vouches for it
    target.write_bytes(b"not a model")
    card = json.loads(card_path(target).read_text())
    import hashlib

    card["model_sha256"] = hashlib.sha256(b"not a model").hexdigest()
    card_path(target).write_text(json.dumps(card))
    with pytest.raises(PasurInputError, match=r"m\.ubj: not a readable XGBoost model"):
        load_model(target)
    # incompatible card
    save_model(model, target)
    card = json.loads(card_path(target).read_text())
    card["features"] = card["features"][:-1]
    card_path(target).write_text(json.dumps(card))
    with pytest.raises(PasurInputError, match="incompatible model"):
        load_model(target)
    card_path(target).write_text("{")
    with pytest.raises(PasurInputError, match=r"m\.card\.json: not a readable model card"):
        load_model(target)
    card_path(target).unlink()
    with pytest.raises(PasurInputError, match=r"its card m\.card\.json is missing"):
        load_model(target)
    with pytest.raises(PasurInputError, match=r"ends in \.ubj or \.json"):
        save_model(model, tmp_path / "m.bin")


def test_bad_tables_and_parameters_are_refused(tmp_path):
    with pytest.raises(PasurInputError, match="strategy table not found"):
        fit_model([tmp_path / "missing.parquet"], SMALL)
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"PAR1 garbage")
    with pytest.raises(PasurInputError, match=r"junk\.parquet: not a readable Parquet"):
        fit_model([junk], SMALL)
    import pyarrow as pa

    pq.write_table(pa.table({"x": [1]}), tmp_path / "other.parquet")
    with pytest.raises(PasurInputError, match=r"other\.parquet: not a pasur strategy table"):
        fit_model([tmp_path / "other.parquet"], SMALL)
    with pytest.raises(PasurInputError, match="unknown model parameter 'depth'"):
        ModelParams.from_dict({"depth": 3})
    with pytest.raises(PasurInputError, match="--rounds"):
        ModelParams(rounds=0).check()


@pytest.mark.parametrize("mode", ["paper", "compact"])
@pytest.mark.parametrize("seed", [1, 2, 7])
def test_batch_infoset_features_are_the_trees(mode, seed):
    """The features the model agent scores are the strategy table's rows, every column, in both
    tree modes (the compact tree's are state features: the same whatever history reached a node)."""
    start = position(seed, 4, 0)
    tree = build_tree(start, mode, infosets=True)
    state = BatchState.from_state(start, 40)
    state.tracker = TreeTracker(tree, 40)
    tracker = InfosetTracker(state, mode)
    state.infosets[mode] = tracker
    agent = BatchRandom(seed)
    while not state.is_terminal:
        actions = state.legal_actions()
        pick = agent.choose(state, actions)
        features = tracker.children(state, actions)[pick]
        first = torch.cumsum(actions.brf, 0) - actions.brf
        edge = state.tracker.edges_of_games(state.round, state.turn, pick - first[actions.row[pick]])
        parent, child, gt_edge = (x[edge] for x in tree.round(state.round).edges(state.turn))
        expected = edge_features(tree, state.round, state.turn, parent, child, gt_edge)
        assert torch.equal(features, expected)
        state.apply(actions, pick)


@pytest.mark.parametrize(("mode", "first_round"), [("compact", 0), ("paper", 2)])
def test_features_in_play_are_the_table_rows_over_whole_games(mode, first_round, tmp_path):
    """Games to the end, as the model agent plays them (every turn of every round from
    ``first_round`` on, both seats; the paper tree of a whole deal is 4 million rows, so it starts
    at round 2, after two rounds of inherited score): the features the agent scores for the action
    taken are the strategy table's row of that edge, read back from the Parquet file a model
    trains on, every column in both tree modes."""
    from pasur.game.cards import Deck
    from pasur.game.state import GameState

    deal = GameState.initial(Deck.from_seed(36))  # one of the smallest trees among seeds 0..39
    start = deal if first_round == 0 else position(36, first_round, 0)
    tree = build_tree(start, mode, infosets=True)
    uniform = uniform_strategy(tree)
    path = tmp_path / "t.parquet"
    write_strategy_table(path, tree, uniform, "seed-36")
    table = pq.read_table(path, columns=[*FEATURE_COLUMNS, "edge"]).to_pydict()
    rows = np.stack([np.asarray(table[c]) for c in FEATURE_COLUMNS], 1)
    # the table's rows of each layer (round, turn of the action), indexed by the tree's edge
    layer = rows[:, 55].astype(np.int64) * 8 + rows[:, 56].astype(np.int64) * 2 + rows[:, 57].astype(np.int64)
    edge = np.asarray(table["edge"])
    by_layer = {}
    for k in np.unique(layer):
        at = np.flatnonzero(layer == k)
        by_layer[int(k)] = rows[at[np.argsort(edge[at], kind="stable")]]
    n = 12
    state = BatchState.from_state(start, n)
    state.tracker = TreeTracker(tree, n)
    tracker = InfosetTracker(state, mode)
    state.infosets[mode] = tracker
    agent = BatchRandom(5)
    seen = set()
    while not state.is_terminal:
        actions = state.legal_actions()
        pick = agent.choose(state, actions)
        features = tracker.children(state, actions)[pick].numpy()
        first = torch.cumsum(actions.brf, 0) - actions.brf
        edge = state.tracker.edges_of_games(state.round, state.turn, pick - first[actions.row[pick]])
        expected = by_layer[state.round * 8 + state.turn][edge.numpy()]
        assert np.array_equal(features, expected), (state.round, state.turn)
        seen.add((state.round, state.turn))
        state.apply(actions, pick)
    assert seen == {(r, t) for r in range(first_round, 6) for t in range(8)}


def test_fit_states_the_models_defaults():
    """``pasur fit`` takes its defaults from ModelParams (those the registered run showed keep the
    table's strength: play weights, eta 0.3, 200 rounds, at most 5 M rows) and says them."""
    from typer.testing import CliRunner

    from pasur.cli import app

    text = " ".join(CliRunner().invoke(app, ["fit", "--help"], env={"COLUMNS": "200"}).output.split())
    d = ModelParams()
    assert (d.max_depth, d.learning_rate, d.rounds, d.min_split_loss, d.reg_lambda) == (16, 0.3, 200, 1.0, 0.0)
    assert (d.row_weights, d.max_rows, d.validation_fraction, d.refit) == ("play", 5_000_000, 0.1, True)
    for stated in ("(default 16)", "(default 0.3;", "(default 200;", "(default 1, the paper's)", "(default 0)"):
        assert stated in text, stated
    assert "(default 5,000,000)" in text and "play (the default)" in text and "default 0.1)" in text
    assert d.xgb_params("cpu")["lambda"] == 0.0 and d.xgb_params("cpu")["gamma"] == 1.0


def test_infosets_need_the_rounds_history():
    state = BatchState.from_state(position(1, 4, 2), 3)
    with pytest.raises(ValueError, match="round's first turn"):
        InfosetTracker(state, "compact")


def test_model_games_replay_in_the_scalar_engine(tmp_path):
    start, _, path = _table(tmp_path, 3)
    model = fit_model([path], SMALL)
    assert_batch_replays(start, play_batch(start.deck, BatchModel(model, 1), BatchRandom(2), 30, start=start))


def test_model_probabilities_are_clipped_and_normalized_per_game(tmp_path):
    start, _, path = _table(tmp_path, 3)
    agent = BatchModel(fit_model([path], SMALL), 0)
    state = BatchState.from_state(start, 5)
    state.infosets["compact"] = InfosetTracker(state, "compact")
    actions = state.legal_actions()
    p = agent.probabilities(state, actions)
    assert bool((p >= 0).all())
    sums = torch.zeros(5, dtype=p.dtype).index_add_(0, actions.row, p)
    assert torch.allclose(sums, torch.ones(5, dtype=p.dtype))


def test_a_cap_on_the_measured_rows_leaves_the_model_as_it_was(tmp_path, monkeypatch):
    """A tail deck's held-out tenth is measured on a share of its decision points only: the model
    (trained on the same rows) is the same, and the card measures a nested subset of the held-out
    decision points, siblings together."""
    import pasur.learn.rows as models

    _, _, path = _table(tmp_path, 3)
    x = np.stack([pq.read_table(path).column(c).to_numpy() for c in FEATURE_COLUMNS], 1).astype(np.float32)
    whole = fit_model([path], SMALL)
    held = whole.card["validation"]["rows"]
    monkeypatch.setattr(models, "MAX_MEASURED_ROWS", held // 3)
    capped = fit_model([path], SMALL)
    assert np.array_equal(whole.predict(x), capped.predict(x))  # the same model
    assert whole.card["training"] == capped.card["training"]
    rows = capped.card["validation"]["rows"]
    assert 0 < rows < held and rows <= held // 3 * 1.5 and capped.card["validation"]["held_rows"] == held
    group = models.read_training_table(path).group  # each row's decision point
    h = models._split_groups(group, SMALL.validation_fraction, SMALL.sample_seed)
    m = models._measured_rows(group, h, SMALL.validation_fraction, SMALL.sample_seed, held // 3)
    assert not (m & ~h).any() and int(m.sum()) == rows  # a subset of the held-out rows
    assert all(m[group == g].all() or not m[group == g].any() for g in np.unique(group[h]))  # siblings together


def test_a_fit_asked_for_on_a_gpu_trains_where_xgboost_can_and_says_so(tmp_path):
    """xgboost-cpu has no CUDA: a sweep run with --device cuda fits its models on the CPU, and the
    card names the CPU (a CUDA build of XGBoost, on a machine with a GPU, names CUDA)."""
    import xgboost as xgb

    _, _, path = _table(tmp_path, 3)
    model = fit_model([path], SMALL, device="cuda")
    assert model.card["parameters"]["device"] == ("cuda" if xgb.build_info().get("USE_CUDA") else "cpu")
    assert fit_model([path], SMALL).card["parameters"]["device"] == "cpu"


def test_a_training_table_reads_its_decision_points_only_when_asked(tmp_path):
    from pasur.learn.models import read_training_table

    _, _, path = _table(tmp_path, 3)
    full, lean = read_training_table(path), read_training_table(path, groups=False)
    assert lean.group is None and full.group is not None and full.group.shape == full.y.shape
    assert np.array_equal(full.y, lean.y) and (full.deck_id, full.mode) == (lean.deck_id, lean.mode) == (
        "deck-3",
        "compact",
    )
    assert np.array_equal(full.y, 100 * pq.read_table(path).column("probability").to_numpy())


def test_the_model_kept_is_refit_on_every_row_after_the_held_out_ones_are_measured(tmp_path):
    """Held-out decision points measure the fit, and are then trained on too: the model kept is the
    one a fit of every row gives (the same predictions), its card the held-out measures; without
    the refit, the model is another (it never saw the held-out decisions)."""
    _, _, path = _table(tmp_path, 3)
    x = np.stack([pq.read_table(path).column(c).to_numpy() for c in FEATURE_COLUMNS], 1).astype(np.float32)
    measured = fit_model([path], SMALL)
    every = fit_model([path], ModelParams(rounds=8, max_depth=4, validation_fraction=0, row_weights="uniform"))
    kept_held_out = fit_model([path], ModelParams(rounds=8, max_depth=4, refit=False, row_weights="uniform"))
    assert np.array_equal(measured.predict(x), every.predict(x))
    assert not np.array_equal(kept_held_out.predict(x), every.predict(x))
    v = measured.card["validation"]
    assert v["measured_before_refit"] and v["rmse"] == kept_held_out.card["validation"]["rmse"]
    assert measured.card["training"]["rows_used"] == every.card["training"]["rows_used"]
