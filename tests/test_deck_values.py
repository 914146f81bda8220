"""Many decks at once (issue 43, item 4): forests of decks give each deck's exact value and its
own node count, as one deck alone does; ``pasur deck-values`` resumes and refuses bad input."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from helpers import device_param
from pasur.cli import app
from pasur.game.cards import seed_decks
from pasur.game.state import GameState
from pasur.game.variants import get_variant
from pasur.solve.batch_values import nodes_per_root, solve_batch, solve_decks
from pasur.solve.exact import solve_exact
from pasur.solve.reference import solve_deck
from pasur.solve.tree import build_forest, build_tree
from pasur.study.deck_values import Pool, deck_hash, run_deck_values

#: small standard decks (seeds with compact trees of 10^4 to 10^5 nodes)
DECKS = seed_decks(4, seed=20)


def _alone(nd) -> tuple[float, int]:
    tree = build_tree(GameState.initial(nd.deck), "compact", infosets=False)
    return solve_exact(tree).game_value(), tree.n_nodes


@pytest.fixture(scope="module")
def alone() -> list[tuple[float, int]]:
    return [_alone(nd) for nd in DECKS]


@device_param
def test_a_forest_gives_each_deck_its_value_and_nodes_as_alone(alone, device):
    values, nodes, seconds = solve_batch(DECKS, device, budget=None)
    assert values == [v for v, _ in alone]
    assert nodes == [n for _, n in alone]
    assert seconds > 0


def test_decks_share_only_final_nodes_and_each_counts_them():
    """After the last round no deals remain, so the forest merges equal end states of different
    decks; each deck still counts them, as its own tree does."""
    tree = build_forest([GameState.initial(nd.deck) for nd in DECKS], "compact")
    per_root = nodes_per_root(tree)
    assert sum(per_root) > tree.n_nodes  # some end states are shared
    assert per_root == [_alone(nd)[1] for nd in DECKS]


def test_a_forest_over_its_budget_is_split_down_to_single_decks(alone):
    rows = [dv for batch in solve_decks(DECKS, [10, 11, 12, 13], batch=4, budget=1_000) for dv in batch]
    assert [dv.index for dv in rows] == [10, 11, 12, 13]
    assert [dv.batch_decks for dv in rows] == [1, 1, 1, 1]
    assert [(dv.value, dv.nodes) for dv in rows] == alone


def test_forests_within_budget_keep_their_decks_together(alone):
    rows = [dv for batch in solve_decks(DECKS, range(4), batch=2, budget=None) for dv in batch]
    assert [dv.batch_decks for dv in rows] == [2, 2, 2, 2]
    assert [(dv.value, dv.nodes) for dv in rows] == alone
    assert sum(dv.seconds for dv in rows[:2]) == pytest.approx(rows[0].batch_seconds)


def test_batched_values_of_small_variant_decks_are_the_reference_solvers():
    decks = seed_decks(6, seed=0, variant=get_variant("mini"))
    rows = [dv for batch in solve_decks(decks, range(6), batch=3) for dv in batch]
    assert [dv.value for dv in rows] == [solve_deck(nd.deck)[0] for nd in decks]


def test_a_rerun_skips_the_decks_already_in_the_file(tmp_path):
    out = tmp_path / "v.parquet"
    pool = [Pool("cpu", 1, 2)]
    first = run_deck_values(DECKS[:2], out, pool, budget=None)
    assert (first["solved"], first["skipped"]) == (2, 0)
    table = pq.read_table(out).to_pylist()
    table[0]["value"] = 99.0  # a value no deck has: kept only if the deck is not solved again
    pq.write_table(pa.Table.from_pylist(table), out)
    done: list[int] = []
    second = run_deck_values(DECKS, out, pool, budget=None, on_done=done.append)
    assert (second["solved"], second["skipped"], sum(done)) == (2, 2, 2)
    rows = pq.read_table(out).to_pylist()
    assert [r["deck_id"] for r in rows] == [nd.id for nd in DECKS]
    assert rows[0]["value"] == 99.0


def test_a_time_limit_stops_before_the_next_forest_and_keeps_what_is_done(tmp_path):
    out = tmp_path / "v.parquet"
    run_deck_values(DECKS[:1], out, [Pool("cpu", 1, 1)], budget=None)
    info = run_deck_values(DECKS, out, [Pool("cpu", 1, 1)], budget=None, time_limit=0.0)
    assert (info["solved"], info["left"], info["stopped"]) == (0, 3, "time limit")
    assert [r["deck_id"] for r in pq.read_table(out).to_pylist()] == [DECKS[0].id]


def test_from_end_takes_the_last_decks_first(tmp_path, monkeypatch):
    import pasur.study.deck_values as dv

    order: list[int] = []
    real = dv.solve_group

    def spy(decks, indices, *args):
        order.extend(indices)
        return real(decks, indices, *args)

    monkeypatch.setattr(dv, "solve_group", spy)
    out = tmp_path / "v.parquet"
    run_deck_values(DECKS, out, [Pool("cpu", 1, 1)], budget=None, from_end=True)
    assert order == [3, 2, 1, 0]
    assert [r["deck_id"] for r in pq.read_table(out).to_pylist()] == [nd.id for nd in DECKS]  # sorted on writing


def test_rows_carry_the_dealt_jacks_and_clubs(tmp_path):
    out = tmp_path / "v.parquet"
    run_deck_values(DECKS[:1], out, [Pool("cpu", 1, 1)], budget=None)
    row = pq.read_table(out).to_pylist()[0]
    deck = DECKS[0].deck
    alex = [c for r in range(6) for c in deck.hand(0, r)]
    bob = [c for r in range(6) for c in deck.hand(1, r)]
    assert row["alex_jacks"] == sum(c // 4 == 10 for c in alex)
    assert row["alex_clubs"] == sum(c % 4 == 0 for c in alex)
    assert row["bob_clubs"] == sum(c % 4 == 0 for c in bob)
    assert row["alex_clubs"] + row["bob_clubs"] + row["pool_clubs"] <= 13
    assert row["deck_hash"] == deck_hash(DECKS[0]) and row["index"] == 0
    assert str(deck) not in str(row)  # the deck itself is not in the file


def test_worker_processes_give_the_values_of_this_process(tmp_path, alone):
    out = tmp_path / "v.parquet"
    info = run_deck_values(DECKS[:3], out, [Pool("cpu", 2, 1)], budget=None)
    assert info["solved"] == 3
    rows = pq.read_table(out).to_pylist()
    assert [(r["value"], r["nodes"]) for r in rows] == alone[:3]


runner = CliRunner()


def _cli(*args: str):
    return runner.invoke(app, ["deck-values", *args])


def test_cli_writes_values_and_resumes(tmp_path):
    out = tmp_path / "sub" / "values.parquet"
    r = _cli("--seed", "20", "--decks", "2", "--out", str(out), "--quiet")
    assert r.exit_code == 0, r.output
    assert "2 decks solved, 0 already in" in r.output
    r = _cli("--seed", "20", "--decks", "3", "--out", str(out), "--quiet")
    assert "1 decks solved, 2 already in" in r.output
    assert len(pq.read_table(out)) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", "1", "--decks", "2", "--workers", "0"], "invalid value for '--workers'"),
        (["--seed", "1", "--decks", "2", "--batch", "0"], "invalid value for '--batch'"),
        (["--seed", "1", "--decks", "2", "--device", "tpu"], "unknown device 'tpu'"),
        (["--seed", "1", "--decks", "2", "--memory-limit", "-1"], "--memory-limit must be a positive"),
        ([], "give the decks"),
    ],
)
def test_cli_refuses_bad_options_in_one_line(tmp_path, args, message):
    r = _cli(*args, "--out", str(tmp_path / "v.parquet"))
    assert r.exit_code == 2
    assert r.output.startswith("error: ") and message in r.output
    assert r.output.count("\n") == 1
    assert not (tmp_path / "v.parquet").exists()


def test_cli_refuses_an_output_it_did_not_write(tmp_path):
    folder = tmp_path / "dir"
    folder.mkdir()
    r = _cli("--seed", "1", "--out", str(folder))
    assert r.exit_code == 2 and "is a folder" in r.output
    other = tmp_path / "notes.parquet"
    other.write_text("not parquet")
    r = _cli("--seed", "1", "--out", str(other))
    assert r.exit_code == 2 and "is not a deck-values Parquet" in r.output
    assert other.read_text() == "not parquet"


def test_cli_refuses_another_deck_under_a_stored_id(tmp_path):
    out = tmp_path / "v.parquet"
    assert _cli("--seed", "20", "--out", str(out), "--quiet").exit_code == 0
    rows = pq.read_table(out).to_pylist()
    rows[0]["deck_hash"] = deck_hash(seed_decks(1, seed=21)[0])  # another deck stored under seed-20
    pq.write_table(pa.Table.from_pylist(rows), out)
    r = _cli("--seed", "20", "--out", str(out), "--quiet")
    assert r.exit_code == 2 and "another deck under the id seed-20" in r.output


def test_table16_exact_columns_split_the_win_share_and_average_values_on_the_same_sides(tmp_path):
    from pasur.study.deck_table16 import exact_rows, main, markdown

    recs = [
        {"alex_jacks": 2, "alex_clubs": c, "exact_value": v, "exact_win": float(v > 0)}
        for c, v in ((3, -5.0), (4, -3.0), (7, 4.0), (8, 6.0), (8, 0.0))
    ]
    rows = exact_rows(recs)
    assert [(r["clubs"], r["decks"], r["wins"], r["value"]) for r in rows] == [
        ("≤ 4", 2, 0.0, -4.0),
        ("> 4", 3, 2 / 3, 10 / 3),
    ]
    assert "| 2 | mine | > 4 | 3 | 0.67 | 3.33 (3.06) |" in markdown({"mine": recs})
    lost = [{"alex_jacks": 0, "alex_clubs": c, "exact_value": v, "exact_win": 0.0} for c, v in ((1, -9.0), (2, -1.0))]
    assert [(r["clubs"], r["value"]) for r in exact_rows(lost)] == [("≤ 1", -9.0), ("> 1", -1.0)]  # the value's split
    assert main([str(tmp_path / "t.md")]) == 2
    assert main([str(tmp_path / "t.md"), f"x={tmp_path / 'missing.parquet'}"]) == 2


def test_merging_runs_keeps_each_deck_once_and_refuses_disagreement(tmp_path):
    from pasur.study.deck_values import COLUMNS, write_rows
    from pasur.study.deck_values_merge import main

    def row(i: int, value: float) -> dict:
        return {c: 0 for c in COLUMNS} | {"index": i, "deck_id": f"d-{i}", "deck_hash": "h", "value": value}

    write_rows(tmp_path / "a.parquet", [row(0, 1.0), row(1, 2.0)])
    write_rows(tmp_path / "b.parquet", [row(1, 2.0), row(2, 3.0)])
    write_rows(tmp_path / "c.parquet", [row(2, -3.0)])
    out = tmp_path / "all.parquet"
    assert main([str(out), str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]) == 0
    assert [r["value"] for r in pq.read_table(out).to_pylist()] == [1.0, 2.0, 3.0]
    assert main([str(out), str(tmp_path / "b.parquet"), str(tmp_path / "c.parquet")]) == 2
