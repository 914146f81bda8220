"""``pasur poker experiment bufp-*`` end to end on Kuhn (seconds): outputs written, runs shared and
resumed through the checkpoints, numbers checked against OpenSpiel (CFR's exploitability) and a
state-by-state evaluation of OpenSpiel's Kuhn tree (the cross-play tables, forced or not)."""

from __future__ import annotations

import csv
import json

import pyspiel
import pytest
from bufp_bruteforce import subgame_value
from open_spiel.python.algorithms import cfr, exploitability
from poker_cli import root
from typer.testing import CliRunner

from pasur.poker.engine import Engine
from pasur.poker.fictitious import FictitiousPlay
from pasur.poker.openspiel import export_policy
from pasur.poker.run import make_solver
from pasur.poker.solvers import CFRConfig

ITERATIONS = 20


def run(*args: str):
    return CliRunner().invoke(root, ["poker", "experiment", *args])


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bufp")
    for name in ("bufp-convergence", "bufp-total"):
        r = run(name, "--game", "kuhn", "--iterations", str(ITERATIONS), "--out", str(folder), "-q")
        assert r.exit_code == 0, r.output
    return folder


def test_figures_are_written_and_cfr_matches_openspiel(out):
    for stem in ("exploitability", "total-exploitability"):
        assert (out / f"{stem}.png").stat().st_size > 1000
        assert "| BUFP(EF) |" in (out / f"{stem}.md").read_text()
    rows = list(csv.DictReader((out / "exploitability.csv").open()))
    assert {r["method"] for r in rows} == {"cfr", "bufp-x", "bufp-ef", "xfp"}
    last = {r["method"]: float(r["exploitability"]) for r in rows if int(r["iteration"]) == ITERATIONS}
    game = pyspiel.load_game("kuhn_poker")
    solver = cfr.CFRSolver(game)
    for _ in range(ITERATIONS):
        solver.evaluate_and_update_policy()
    assert last["cfr"] == pytest.approx(exploitability.exploitability(game, solver.average_policy()), abs=1e-12)
    total = list(csv.DictReader((out / "total-exploitability.csv").open()))
    assert all(float(r["total_exploitability_max"]) <= float(r["total_exploitability"]) + 1e-12 for r in total)


def _policy(engine, method: str):
    s = make_solver(engine, CFRConfig(method="cfr")) if method == "cfr" else FictitiousPlay(engine, method)
    s.iterate(ITERATIONS)
    return export_policy(engine, s.average_policy())


def _value(p0: dict, p1: dict, forced: int | None) -> float:
    """Player 0's payoff walking OpenSpiel's Kuhn tree; its infostates are "<card><history>", the
    history's length telling who acts. ``forced``: player 0's action at the root (0 pass, 1 bet)."""
    table = {k: (p0 if len(k) % 2 else p1)[k] for k in p0}
    if forced is not None:
        table |= {c: [[a, float(a == forced)] for a in (0, 1)] for c in "012"}
    return subgame_value([(pyspiel.load_game("kuhn_poker").new_initial_state(), 1.0)], 0, table, best=False)


def test_crossplay_tables_and_resume(out):
    r = run("bufp-crossplay", "--game", "kuhn", "--iterations", str(ITERATIONS), "--out", str(out), "--json")
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    engine = Engine("kuhn")
    pols = {m: _policy(engine, m) for m in ("cfr", "bufp-ef", "bufp-x")}
    for key, forced in (("table1", None), ("table2", 0), ("table2b", 1)):
        for a, row in summary[key]["cells"].items():
            for b, mb in row.items():
                assert mb == pytest.approx(1000 * _value(pols[a], pols[b], forced), abs=1e-9), (key, a, b)
    assert (out / "crossplay.png").is_file() and "Table 2" in (out / "crossplay.md").read_text()
    # a longer run resumes the checkpoints; a shorter one is refused in one line
    r = run("bufp-convergence", "--game", "kuhn", "--iterations", str(ITERATIONS + 5), "--out", str(out), "--json")
    assert r.exit_code == 0, r.output
    assert {m: f["iteration"] for m, f in json.loads(r.stdout)["final"].items()} == dict.fromkeys(
        ("cfr", "bufp-x", "bufp-ef", "xfp"), ITERATIONS + 5
    )
    r = run("bufp-total", "--game", "kuhn", "--iterations", str(ITERATIONS), "--out", str(out), "-q")
    assert r.exit_code == 2 and r.output.startswith("error: ") and r.output.count("\n") == 1, r.output
    r = run("bufp-total", "--game", "leduc", "--iterations", "50", "--out", str(out), "-q")
    assert r.exit_code == 2 and "holds runs of kuhn" in r.output, r.output


def test_crossplay_takes_the_authors_method(tmp_path):
    """``bufp-crossplay --methods`` adds the authors' BUFP to Tables 1, 2 and 2b (issue 30): its
    cells equal OpenSpiel's tree walked state by state, its local regret (the authors' loss) is
    listed, and a list without CFR and BUFP(EF) (the paper's comparison) is refused."""
    methods = ("cfr", "bufp-ef", "bufp-authors")
    args = ("--game", "kuhn", "--iterations", str(ITERATIONS), "--methods", ",".join(methods))
    r = run("bufp-crossplay", *args, "--out", str(tmp_path / "t"), "--json")
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    engine = Engine("kuhn")
    pols = {m: _policy(engine, m) for m in methods}
    for key, forced in (("table1", None), ("table2", 0), ("table2b", 1)):
        assert set(summary[key]["cells"]) == set(methods)
        for a in methods:
            for b in methods:
                mb = summary[key]["cells"][a][b]
                assert mb == pytest.approx(1000 * _value(pols[a], pols[b], forced), abs=1e-9), (key, a, b)
    assert summary["local_regret"]["bufp-authors"] > 0
    md = (tmp_path / "t" / "crossplay.md").read_text()
    assert "| BUFP (authors' code) P1 |" in md and "| local regret, the authors' loss (chips) |" in md
    r = run("bufp-crossplay", *args[:4], "--methods", "cfr,bufp-authors", "--out", str(tmp_path / "x"), "-q")
    assert r.exit_code == 2 and "must include cfr and bufp-ef" in r.output and not (tmp_path / "x").exists()


def test_experiments_are_listed():
    r = run("--list")
    assert r.exit_code == 0
    assert all(n in r.output for n in ("bufp-convergence", "bufp-total", "bufp-crossplay"))


def test_methods_side_by_side_give_what_they_give_one_after_another(tmp_path):
    """--workers 2 runs the methods in worker processes (reporting progress through a queue):
    the same traces as running them in turn in this process."""
    traces = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        r = run("bufp-convergence", "--game", "kuhn", "--iterations", str(ITERATIONS), "--workers", workers,
                "--out", str(out), "-q")  # fmt: skip
        assert r.exit_code == 0, r.output
        with (out / "exploitability.csv").open() as f:
            traces[workers] = sorted(
                (row["method"], int(row["iteration"]), float(row["exploitability"])) for row in csv.DictReader(f)
            )
    assert traces["1"] and traces["1"] == traces["2"]
