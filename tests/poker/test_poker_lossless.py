"""``pasur poker experiment lossless``: a two-card game solved on every suit-isomorphism class with
the kernel's methods; its exploitability equals the measures module's, its value interval is the
best responses', a rerun resumes, and what cannot run is refused in one line."""

from __future__ import annotations

import csv
import itertools
import json

import pytest
import torch
from poker_cli import root
from typer.testing import CliRunner

from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.engine import Engine
from pasur.poker.experiments import checkpoints, lossless
from pasur.poker.measures import best_response_values
from pasur.poker.solvers import CFRConfig, CFRSolver

torch.set_num_threads(1)


def run(*args: str):
    return CliRunner().invoke(root, ["poker", "experiment", "lossless", *args])


def test_lossless_runs_measures_and_resumes(tmp_path):
    out = tmp_path / "ll"
    args = ("--game", "numeral211-tiny", "--methods", "dcfr,pcfr+", "--out", str(out), "--json", "-q")
    r = run(*args, "--dtype", "float64", "--iterations", "4")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert set(s["final_mbg"]) == {"dcfr", "pcfr+"} and s["classes"] == [16, 84, 420]
    rows = list(csv.DictReader((out / "lossless.csv").open()))
    assert {(x["method"], int(x["iteration"])) for x in rows} == {(m, i) for m in ("dcfr", "pcfr+") for i in (1, 2, 4)}
    # independently (float64 is exact): the core's CFR with the same method and updates, and the
    # measures module's best responses
    engine = Engine("numeral211-tiny", iso=True)
    ref = CFRSolver(engine, CFRConfig(method="dcfr", updates="alternating"))
    ref.iterate(4)
    b0, b1 = best_response_values(engine, ref.average_policy())
    last = next(x for x in rows if x["method"] == "dcfr" and x["iteration"] == "4")
    assert float(last["br0"]) == pytest.approx(b0, abs=1e-9) and float(last["br1"]) == pytest.approx(b1, abs=1e-9)
    assert float(last["value_low"]) == pytest.approx(-b1, abs=1e-9)
    assert float(last["exploitability_mbg"]) == pytest.approx(1000 * (b0 + b1) / 2 / 5, abs=1e-6)
    best = s["best"]
    v = s["value"]
    assert v["low"] <= v["high"] and v["width_nash_conv"] == pytest.approx(2 * s["final_mbg"][best] * 5 / 1000)
    # resume to 8: the earlier points are kept, and the runs go on (every method improves)
    r = run(*args, "--dtype", "float64", "--iterations", "8")
    assert r.exit_code == 0, r.output
    rows2 = list(csv.DictReader((out / "lossless.csv").open()))
    old = {(x["method"], x["iteration"]): x["exploitability_mbg"] for x in rows}
    assert all(old[k] == x["exploitability_mbg"] for x in rows2 if (k := (x["method"], x["iteration"])) in old)
    for m in ("dcfr", "pcfr+"):
        trace = [float(x["exploitability_mbg"]) for x in rows2 if x["method"] == m]
        assert len(trace) == 4 and trace[-1] < 0.5 * trace[0], (m, trace)
    # and the resumed run is the uninterrupted one: the checkpoint (mapped, copied into the tables)
    # restores every table, the predictive variant's current strategy included
    fresh = tmp_path / "fresh"
    r = run(*args[:-4], "--out", str(fresh), "-q", "--dtype", "float64", "--iterations", "8")
    assert r.exit_code == 0, r.output
    keep = ("method", "iteration", "br0", "br1")
    rows3 = list(csv.DictReader((fresh / "lossless.csv").open()))
    assert [[x[k] for k in keep] for x in rows3] == [[x[k] for k in keep] for x in rows2]
    r = run(*args, "--dtype", "float32", "--iterations", "8")  # one precision per folder
    assert r.exit_code == 2 and "float64 run" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output


def test_lossless_simultaneous_updates_are_the_cores_vanilla_cfr(tmp_path):
    """``--updates simultaneous``: Figure 5's algorithm on the whole game, the core's iterates; a
    folder keeps one update order."""
    out = tmp_path / "sim"
    args = ("--game", "numeral211-tiny", "--methods", "cfr", "--out", str(out), "-q", "--dtype", "float64")
    r = run(*args, "--updates", "simultaneous", "--iterations", "4", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["updates"] == "simultaneous"
    engine = Engine("numeral211-tiny", iso=True)
    ref = CFRSolver(engine, CFRConfig(method="cfr", updates="simultaneous"))
    ref.iterate(4)
    b0, b1 = best_response_values(engine, ref.average_policy())
    last = list(csv.DictReader((out / "lossless.csv").open()))[-1]
    assert last["iteration"] == "4"
    assert float(last["br0"]) == pytest.approx(b0, abs=1e-9) and float(last["br1"]) == pytest.approx(b1, abs=1e-9)
    alt = CFRSolver(engine, CFRConfig(method="cfr", updates="alternating"))
    alt.iterate(4)
    assert abs(sum(best_response_values(engine, alt.average_policy())) - (b0 + b1)) > 1e-6  # the orders differ
    r = run(*args, "--iterations", "8")  # alternating (the default) in a simultaneous folder
    assert r.exit_code == 2 and "simultaneous updates" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run(*args, "--updates", "sideways", "--iterations", "8")
    assert r.exit_code == 2 and "--updates" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_lossless_refuses_what_it_cannot_run(tmp_path, monkeypatch):
    for args, why in (
        (["--game", "leduc", "--methods", "dcfr"], "two private cards"),
        (["--game", "numeral211-tiny", "--methods", "dcfr,nope"], "--methods"),
        (["--game", "numeral211-tiny", "--methods", "dcfr,dcfr"], "--methods"),
        (["--game", "numeral211-tiny", "--dtype", "float16"], "--dtype"),
    ):
        r = run(*args, "--iterations", "2", "--out", str(tmp_path / "x"))
        assert r.exit_code == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output
    monkeypatch.setattr(lossless, "available_bytes", lambda device: 10 * 2**20)
    r = run("--game", "numeral211-tiny", "--iterations", "2", "--out", str(tmp_path / "y"))
    assert r.exit_code == 2 and "needs about" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output
    assert not (tmp_path / "y" / "lossless.csv").exists()


def test_the_memory_estimate_covers_the_tables():
    engine = Engine("numeral211-tiny", iso=True, dtype=torch.float32)
    space = ClassSpace(engine)
    tables = sum(engine.n_rows[r] * 3 * rc.n for r, rc in enumerate(space.rounds)) * 4 * 3
    est = lossless.memory_estimate(space, engine)
    assert est > tables and lossless.memory_estimate(space, engine, methods=2) > est + tables
    assert lossless.table_values(space, engine) == 196_848


@pytest.mark.parametrize("save_cost", [0.0, 10.0])
def test_checkpoints_are_saved_less_often_when_a_save_is_slow(tmp_path, monkeypatch, save_cost):
    """Each iteration takes 30 s on a fake clock. A save every 60 s; but a save of 10 s would then
    be a sixth of the run, so the interval grows to 10 / SAVE_SHARE = 200 s."""
    clock = [0.0]
    monkeypatch.setattr(checkpoints.time, "monotonic", lambda: clock[0])
    saved = []

    def save(out, ck):
        saved.append((clock[0], ck["iteration"]))
        clock[0] += save_cost

    monkeypatch.setattr(checkpoints, "save_checkpoint", save)
    it = [0]

    def step(k):
        it[0] += k
        clock[0] += 30.0

    ck = {"trace": [], "solver_seconds": 0.0, "measure_seconds": 0.0}
    checkpoints.drive(
        ck, [1, 64], tmp_path, step=step, iteration=lambda: it[0], state=dict, measure=lambda p: {"iteration": p}
    )
    assert [p["iteration"] for p in ck["trace"]] == [1, 64] and saved[-1][1] == 64 and ck["iteration"] == 64
    gaps = [b[0] - (a[0] + save_cost) for a, b in itertools.pairwise(saved[:-1])]
    want = max(checkpoints.SAVE_EVERY_S, save_cost / checkpoints.SAVE_SHARE)
    assert gaps and all(want < g <= want + 30.0 for g in gaps), gaps
