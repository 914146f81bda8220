"""``pasur variants`` and ``pasur hidden-solve``: the variant table with its sizes, the exact
solve's outputs, and one-line refusals before any work."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pasur.cli import app
from pasur.game.variants import VARIANTS
from pasur.hidden.history_tree import SIZES

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_variants_json_lists_every_row_with_its_size():
    r = run("variants", "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert [row["name"] for row in rows] == list(VARIANTS)
    by_name = {row["name"]: row for row in rows}
    assert by_name["standard"]["histories"] is None and by_name["standard"]["cards"] == 52
    for name, (histories, alex, bob) in SIZES.items():
        assert by_name[name]["histories"] == histories and by_name[name]["infosets"] == [alex, bob]
    assert sum(1 for row in rows if (row["histories"] or 0) >= 10**6) >= 1
    assert "tiny" in run("variants").stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--variant", "huge", "--iterations", "2"], "unknown variant 'huge'"),
        (["--variant", "standard", "--iterations", "2"], "far too large"),
        (["--variant", "tiny"], "give --iterations N"),
        (["--variant", "tiny", "--method", "magic", "--iterations", "2"], "unknown method 'magic'"),
        (["--variant", "tiny", "--method", "cfr+", "--alpha", "2", "--iterations", "2"], "--alpha applies only"),
        (["--variant", "tiny", "--target-exploitability", "-1"], "must be a positive number"),
        (["--variant", "tiny", "--iterations", "2", "--overwrite"], "--overwrite applies only"),
        (["--variant", "tiny", "--method", "hs-dcfr", "--target-exploitability", "0.1"], "give --iterations"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle):
    r = run("hidden-solve", *args)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), r.output
    assert needle in lines[0] and "building" not in r.stderr


def test_an_existing_output_folder_is_refused_before_any_work(tmp_path):
    (tmp_path / "x.txt").write_text("mine")
    r = run("hidden-solve", "--variant", "tiny", "--iterations", "2", "--out", str(tmp_path))
    assert r.exit_code == 2 and "did not write" in r.stderr and "building" not in r.stderr


def test_hidden_solve_writes_the_average_strategy_and_a_summary(tmp_path):
    out = tmp_path / "tiny"
    r = run("hidden-solve", "--variant", "tiny", "--method", "cfr+", "--iterations", "3", "--out", str(out), "--json")
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["exploitability"] == summary["exploitability"] == pytest.approx(summary["nash_conv"] / 2)
    assert (summary["variant"], summary["method"], summary["iterations"]) == ("tiny", "cfr+", 3)
    assert [summary["histories"], *summary["infosets"]] == list(SIZES["tiny"])
    table = pq.read_table(out / "strategy.parquet").to_pydict()
    assert len(table["player"]) == summary["strategy_rows"]
    totals: dict = {}
    for p, i, prob in zip(table["player"], table["infoset"], table["probability"], strict=True):
        totals[p, i] = totals.get((p, i), 0.0) + prob
    assert max(abs(t - 1) for t in totals.values()) < 1e-12
    assert [sum(1 for p, _ in totals if p == q) for q in (0, 1)] == summary["infosets"]
    assert all(seen.startswith("pool ") for seen in table["seen"])  # what the player saw, from the deal on


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--variant", "micro", "--agent", "pimc:20:belief"], "does not apply to a small variant yet"),
        (["--variant", "micro", "--agent", "optimal"], "sees every card"),
        (["--variant", "micro", "--agent", "ismcts:20"], "ismcts:N:game applies"),
        (["--variant", "micro", "--agent", "nobody"], "nobody"),
        (["--variant", "standard", "--agent", "greedy"], "far too large"),
        (["--variant", "micro", "--agent", "greedy", "--equilibrium-target", "0"], "positive number"),
    ],
)
def test_hidden_exploit_refuses_in_one_line(args, needle):
    r = run("hidden-exploit", *args)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), r.output
    assert needle in lines[0] and "building" not in r.stderr


def test_hidden_exploit_measures_greedy_against_best_responses_and_the_equilibrium():
    r = run("hidden-exploit", "--variant", "micro", "--agent", "greedy", "--json")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["exploitability"] == pytest.approx(rep["nash_conv"] / 2) and rep["exploitability"] > 0.01
    assert rep["nash_conv"] == pytest.approx(
        rep["best_response_to_agent_as_bob"] - rep["best_response_to_agent_as_alex"]
    )
    assert rep["equilibrium_exploitability"] <= 1e-3
    # against the equilibrium a pure, exploitable agent cannot gain more than the equilibrium's slack
    assert rep["margin_vs_equilibrium"] <= 2 * rep["equilibrium_exploitability"]


def test_hidden_exploit_measures_the_equilibrium_and_its_pure_version():
    r = run("hidden-exploit", "--variant", "micro", "--agent", "equilibrium,equilibrium:pure,greedy", "--json", "-q")
    assert r.exit_code == 0, r.output
    eq, pure, greedy = json.loads(r.stdout)
    assert [x["agent"] for x in (eq, pure, greedy)] == ["equilibrium", "equilibrium:pure", "greedy"]
    assert eq["exploitability"] == pytest.approx(eq["equilibrium_exploitability"])
    assert eq["exploitability"] <= 1e-3
    assert eq["margin_vs_equilibrium"] == pytest.approx(0.0, abs=1e-12)
    assert greedy["exploitability"] > max(eq["exploitability"], pure["exploitability"])


def test_hidden_exploit_measures_openspiels_ismcts_with_rollouts_to_the_end():
    r = run("hidden-exploit", "--variant", "duo", "--agent", "ismcts:30:game,random", "--json", "-q")
    assert r.exit_code == 0, r.output
    ismcts, random_ = json.loads(r.stdout)
    assert ismcts["agent"] == "ismcts:30:game" and ismcts["exploitability"] < random_["exploitability"]
