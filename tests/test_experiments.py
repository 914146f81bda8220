"""The paper's experiments on a few small decks (inline sweeps), the per-deck pipeline, and the
``fit`` / ``experiment`` / model ``selfplay`` commands."""

from __future__ import annotations

import csv
import json
import math
import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pasur.cli import app
from pasur.common.errors import PasurInputError
from pasur.game.cards import NamedDeck, random_deck
from pasur.game.state import GameState
from pasur.play.selfplay import BatchStrategy, play_batch
from pasur.solve.cfr import CFRParams
from pasur.solve.strategy_io import read_strategy_table
from pasur.study import experiments as ex
from pasur.study.pipeline import DeckJob, dealt_counts, run_deck
from test_selfplay import replay_utility


def compact_tree(nd: NamedDeck):
    from pasur.solve.tree import build_tree

    return build_tree(GameState.initial(nd.deck), "compact")


INLINE = {"engine": "inline", "progress": False}
SMALL_SEEDS = (36, 24, 20)  # the smallest compact trees among seeds 0..39 (86-89 k nodes)
runner = CliRunner()


def decks(*seeds: int) -> list[NamedDeck]:
    return [NamedDeck(f"seed-{s}", random_deck(random.Random(s))) for s in seeds]


def read_csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_dealt_counts_are_the_hands_over_the_game():
    nd = decks(36)[0]
    c = dealt_counts(nd)
    alex = [card for r in range(6) for card in nd.deck.hand(0, r)]
    assert c["alex_jacks"] == sum(1 for card in alex if card >> 2 == 10)
    assert c["alex_clubs"] == sum(1 for card in alex if card & 3 == 0)
    assert c["alex_jacks"] + c["bob_jacks"] + c["pool_jacks"] == 4
    assert c["alex_clubs"] + c["bob_clubs"] + c["pool_clubs"] == 13


def test_pipeline_record_and_files(tmp_path):
    nd = decks(36)[0]
    job = DeckJob(games=300, matchups=("table-vs-table", "table-vs-random"), fit=True, model_params={"rounds": 5})
    rec = run_deck(nd, job, tmp_path / "d", None)
    from pasur.solve.reference import ReferenceSolver

    assert rec["exact_value"] == ReferenceSolver(nd.deck).value(GameState.initial(nd.deck))
    # |value - exact value| <= NashConv = 2 x exploitability (docs/conventions.md)
    assert abs(rec["value"] - rec["exact_value"]) <= rec["nash_conv"] + 1e-6
    assert rec["exploitability"] <= job.cfr.target_exploitability
    assert {"strategy.parquet", "model.ubj", "model.card.json", "record.json", "matchups.json"} <= {
        p.name for p in (tmp_path / "d").iterdir()
    }
    assert json.loads((tmp_path / "d" / "record.json").read_text()) == rec
    # the fair value is Alex's win rate in the table-vs-table games: replay those games (same
    # strategy file, same seeds) and count the wins through the scalar engine
    strategy = read_strategy_table(tmp_path / "d" / "strategy.parquet", tree := compact_tree(nd))
    seed = job.sample_seed * 1000
    batch = play_batch(nd.deck, BatchStrategy(strategy, seed), BatchStrategy(strategy, seed + 1), 300, tree=tree)
    wins = sum(replay_utility(nd.deck, batch, i) > 0 for i in range(300))
    assert rec["fair_value_from"] == "table-vs-table" and rec["fair_value"] == wins / 300
    # a table that is neither kept nor fitted is not written (nor its features built)
    lean = run_deck(nd, DeckJob(keep_table=False), tmp_path / "e", None)
    assert not (tmp_path / "e" / "strategy.parquet").exists() and lean["strategy_rows"] is None


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"cfr": CFRParams(method="reference")}, "unknown CFR method"),
        ({"tree": "flat"}, "unknown tree mode"),
        ({"games": -1}, "--games"),
        ({"matchups": ("model-vs-random",), "games": 5}, "needs a model: add --fit"),
        ({"cfr": None, "fit": True}, "--fit needs a CFR method"),
        ({"cfr": None, "games": 5}, "--games needs a CFR method"),
        ({"cfr": CFRParams(alpha=-1)}, "DCFR alpha"),
        ({"fit": True, "model_params": {"depth": 2}}, "unknown model parameter"),
        ({"matchups": ("x",)}, "unknown matchup"),
    ],
)
def test_bad_jobs_are_refused(kw, message):
    with pytest.raises(PasurInputError, match=message):
        DeckJob(**kw).check()


def test_stump_split_and_table16_rows():
    recs = [{"alex_jacks": j, "alex_clubs": c, "v": float(c > 5) + j} for j in (0, 1) for c in range(2, 10)]
    rows = ex.split_table(recs, "v")
    assert [(r["jacks"], r["clubs"], r["decks"]) for r in rows] == [
        (0, "≤ 5", 4),
        (0, "> 5", 4),
        (1, "≤ 5", 4),
        (1, "> 5", 4),
    ]
    assert [r["mean"] for r in rows] == [0.0, 1.0, 1.0, 2.0]
    assert ex.stump_split(np.array([3, 3]), np.array([1.0, 2.0])) is None


def test_table16_on_a_few_decks(tmp_path):
    summary = ex.table16(decks(*SMALL_SEEDS), tmp_path / "t16", DeckJob(games=200), INLINE)
    assert summary["decks"] == 3 and summary["agent"] == "table"
    rows = read_csv(tmp_path / "t16" / "table16-decks.csv")
    assert len(rows) == 3
    for r in rows:
        assert 0 <= float(r["fair_value"]) <= 1
        assert float(r["exact_win"]) == (1.0 if int(r["exact_value"]) > 0 else 0.0)
    assert sum(int(r["decks"]) for r in read_csv(tmp_path / "t16" / "table16-fair-value.csv")) == 3
    md = (tmp_path / "t16" / "table16.md").read_text()
    assert "| jacks | clubs | decks | mean | std |" in md
    assert (tmp_path / "t16" / "table16-fair-vs-exact.png").stat().st_size > 0
    # a rerun resumes: nothing is solved again
    before = (tmp_path / "t16" / "sweep" / "decks" / "seed-36" / "record.json").stat().st_mtime_ns
    ex.table16(decks(*SMALL_SEEDS), tmp_path / "t16", DeckJob(games=200), INLINE)
    assert (tmp_path / "t16" / "sweep" / "decks" / "seed-36" / "record.json").stat().st_mtime_ns == before


def test_figure15_bands_over_decks(tmp_path):
    job = DeckJob(cfr=CFRParams(iterations=20, check_every=10))
    summary = ex.figure15(decks(36, 24), tmp_path / "f15", job, INLINE)
    rows = read_csv(tmp_path / "f15" / "figure15.csv")
    assert len(rows) == 6 * 3 * 2  # rounds x measures (MSE, exploitability, NashConv) x checkpoints
    assert {r["decks"] for r in rows} == {"2"}
    assert summary["iterations"] == 20
    assert (tmp_path / "f15" / "figure15.png").exists()
    # exploitability = NashConv / 2 (docs/conventions.md), in the table and in the summary
    by = {(r["round"], r["iteration"], r["measure"]): (float(r["mean_log10"]), float(r["std_log10"])) for r in rows}
    checked = 0
    for (k, it, m), (v, _) in by.items():
        nash, sd = by[(k, it, "nash_conv")]
        if m == "exploitability" and nash > -8 and sd < 1:  # (both decks above the plot's floor of 1e-12)
            assert v == pytest.approx(nash - math.log10(2), abs=1e-9)
            checked += 1
    assert checked >= 6
    final = summary["round_5_final_exploitability_geomean"]
    assert summary["round_5_final_nash_conv_geomean"] == pytest.approx(2 * final)
    # traces written before the convention (their exploitability was NashConv) read relabelled
    for deck in ("seed-36", "seed-24"):
        path = tmp_path / "f15" / "sweep" / "decks" / deck / "traces.parquet"
        t = pq.read_table(path)
        old = {"round": t["round"], "iteration": t["iteration"], "exploitability": t["nash_conv"],
               "mean_exploitability": t["mean_nash_conv"], "mse_to_final": t["mse_to_final"]}  # fmt: skip
        pq.write_table(pa.table(old), path)
    again = ex.figure15(decks(36, 24), tmp_path / "f15", job, INLINE)
    assert again == summary and read_csv(tmp_path / "f15" / "figure15.csv") == rows
    with pytest.raises(PasurInputError, match="fixed --iterations"):
        ex.figure15(decks(36), tmp_path / "f15b", DeckJob(), INLINE)


PAPER_CSV = """,Deck,MM_WINS,MM_SCORES,MR_WINS,MR_SCORES,RM_WINS,RM_SCORES,RR_WINS,RR_SCORES
0,0,31.82,-1.907,96.8,13.9196,4.52,-8.952,66.06,5.3268
1,1,0.64,-15.7046,80.98,6.0078,0.0,-21.2372,17.86,-7.3714
"""


def test_figure14_with_models_beside_the_papers_recorded_self_play(tmp_path):
    """Figure 14 with models, on decks read from a deck tensor like the paper's, its MM.csv beside
    our matchups: each deck's numbers are the paper's row of the same index and our own games,
    averages with intervals."""
    import torch

    two = decks(36, 24)
    pt = tmp_path / "decks_10000.pt"
    torch.save(torch.tensor([list(nd.deck.cards) for nd in two]), pt)
    (tmp_path / "MM.csv").write_text(PAPER_CSV)
    from pasur.game.cards import read_deck_file

    job = DeckJob(games=100, fit=True, model_params={"rounds": 5, "max_depth": 4})
    summary = ex.figure14(read_deck_file(pt), tmp_path / "f14", job, INLINE, paper_results=tmp_path / "MM.csv")
    figure = read_csv(tmp_path / "f14" / "figure14.csv")
    assert len(figure) == 2
    assert {"model_vs_model_win", "model_vs_random_mean", "random_vs_model_tie"} <= set(figure[0])
    assert summary["agent"] == "model" and 0 <= summary["model-vs-random"]["mean_win_rate"] <= 1
    assert (tmp_path / "f14" / "figure14.png").exists()
    rows = read_csv(tmp_path / "f14" / "figure14-paper.csv")
    assert [(r["deck_id"], r["paper_deck"]) for r in rows] == [("decks_10000-0", "0"), ("decks_10000-1", "1")]
    assert [float(r["MR_paper"]) for r in rows] == [13.9196, 6.0078]
    assert [float(r["RM_paper"]) for r in rows] == [-8.952, -21.2372]
    for r in rows:
        games = json.loads((tmp_path / "f14" / "sweep" / "decks" / r["deck_id"] / "matchups.json").read_text())
        assert set(games) == {"model-vs-model", "model-vs-random", "random-vs-model", "random-vs-random",
                              "table-vs-random", "random-vs-table"}  # fmt: skip
        assert float(r["RR_ours"]) == games["random-vs-random"]["mean"]
        assert float(r["TR_ours"]) == games["table-vs-random"]["mean"]
        assert int(float(r["exact_value"])) == int(float(r["exact_value"]))
    paper = summary["paper"]
    assert paper["decks"] == 2
    assert paper["MR"]["paper"] == pytest.approx((13.9196 + 6.0078) / 2)
    assert paper["RM"]["ours"] == pytest.approx(np.mean([float(r["RM_ours"]) for r in rows]))
    halves = [float(r["MM_half"]) for r in rows]
    assert paper["MM"]["ours_half95"] == pytest.approx(np.sqrt(sum(h * h for h in halves)) / 2)
    gap = np.mean([abs(float(r["MM_ours"]) - float(r["exact_value"])) for r in rows])
    assert paper["MM_distance_to_exact"] == pytest.approx(gap)
    assert paper["checks"]["MM within 1.5 points of the exact value"] == (gap <= 1.5)
    for who in ("ours", "paper"):
        miss = [float(r[f"MM_{who}"]) - float(r["exact_value"]) for r in rows]
        signed = paper[f"MM_{who}_minus_exact"]
        assert signed["mean"] == pytest.approx(np.mean(miss))
        counts = (sum(m < -0.5 for m in miss), sum(m > 0.5 for m in miss))
        assert (signed["decks_below"], signed["decks_above"]) == counts
    text = (tmp_path / "f14" / "figure14-paper.md").read_text()
    assert "| model vs random (MR) |" in text and f"{(13.9196 + 6.0078) / 2:+.2f}" in text


@pytest.mark.parametrize(
    ("content", "needle"),
    [(",Deck,MM_WINS\n0,0,1\n", "not the paper's MM.csv"), (PAPER_CSV.replace("13.9196", "x"), "not a number")],
)
def test_paper_results_that_are_not_the_papers_are_refused(tmp_path, content, needle):
    (tmp_path / "MM.csv").write_text(content)
    with pytest.raises(PasurInputError, match=needle):
        ex.read_paper_results(tmp_path / "MM.csv")
    r = runner.invoke(
        app,
        ["experiment", "figure14", "--seed", "36", "--games", "10", "--fit", "--out", str(tmp_path / "o"),
         "--paper-results", str(tmp_path / "MM.csv")],
    )  # fmt: skip
    assert r.exit_code == 2 and needle in r.output and not (tmp_path / "o").exists()


def test_figure12_counts_both_trees_and_the_ones_over_the_limit(tmp_path):
    summary = ex.figure12(decks(36, 24), tmp_path / "f12", INLINE, paper_memory_limit=2**20)
    rows = read_csv(tmp_path / "f12" / "figure12.csv")
    assert [int(r["compact_nodes"]) for r in rows] == [86411, 87154]
    assert summary["paper_not_built"] == 2 and summary["compact"]["decks"] == 2
    assert (tmp_path / "f12" / "figure12.png").exists() and "| compact | 2 |" in (
        tmp_path / "f12" / "figure12.md"
    ).read_text()


def test_figure16_first_turn_strategy(tmp_path):
    nd = decks(36)[0]
    summary = ex.figure16(nd, tmp_path / "f16", DeckJob(cfr=CFRParams(iterations=None, target_exploitability=0.005)))
    rows = read_csv(tmp_path / "f16" / "table15.csv")
    assert len(rows) == len(GameState.initial(nd.deck).legal_actions()) == summary["moves"]
    assert abs(sum(float(r["sigma"]) for r in rows) - 1) < 1e-3
    assert (tmp_path / "f16" / "figure16.png").exists()


def test_cli_fit_selfplay_and_experiment(tmp_path):
    r = runner.invoke(app, ["solve", "--seed", "36", "--method", "dcfr", "--out", str(tmp_path / "s"), "--quiet"])
    assert r.exit_code == 0, r.output
    table = tmp_path / "s" / "strategy.parquet"
    r = runner.invoke(app, ["fit", str(table), "--out", str(tmp_path / "m.ubj"), "--rounds", "5", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["kind"] == "per-deck"
    r = runner.invoke(app, ["fit", str(table), "--out", str(tmp_path / "m.ubj")])
    assert r.exit_code == 2 and "exists" in r.output
    r = runner.invoke(
        app,
        [
            *("selfplay", "--seed", "36", "--alex", "model", "--model", str(tmp_path / "m.ubj")),
            *("--bob", "random", "--games", "50", "--json"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["games"] == 50
    r = runner.invoke(app, ["selfplay", "--seed", "36", "--alex", "model", "--games", "5"])
    assert r.exit_code == 2 and "needs --model" in r.output
    r = runner.invoke(app, ["selfplay", "--seed", "36", "--alex", f"model:{tmp_path / 'none.ubj'}"])
    assert r.exit_code == 2 and "model file not found" in r.output
    r = runner.invoke(app, ["fit", str(tmp_path / "none.parquet"), "--out", str(tmp_path / "n.ubj")])
    assert r.exit_code == 2 and "strategy table not found" in r.output
    r = runner.invoke(app, ["experiment", "figure99", "--decks", "1", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "unknown experiment" in r.output
    r = runner.invoke(
        app,
        [
            *("experiment", "table16", "--decks", "2", "--seed", "36", "--games", "50", "--engine", "inline"),
            *("--out", str(tmp_path / "t"), "--quiet", "--json"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["decks"] == 2
