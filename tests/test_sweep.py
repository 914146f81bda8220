"""Sweeps: Ray and inline give the same results, a killed driver loses no finished deck and
leaves no half-written one, failures are recorded, bad input is refused, and the report reads it all."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pasur.cli import app
from pasur.common.errors import PasurInputError
from pasur.game.cards import seed_decks
from pasur.solve.cfr import CFRParams
from pasur.solve.runs import solve_exact_run
from pasur.study import pipeline, sweep
from pasur.study.manifest import Manifest
from pasur.study.pipeline import DeckJob
from pasur.study.sweep import read_records, run_sweep

runner = CliRunner()
REPO = Path(__file__).resolve().parent.parent
JOB = DeckJob(cfr=CFRParams(iterations=20), games=20)
TIMINGS = ("seconds", "device")


#: the Ray test's decks: random decks with the smallest trees among seeds 0 to 39 (86 to 109
#: thousand nodes, 0.3 to 0.4 of seeds 0 to 2's), so a deck's solve, games and files are quick
SMALL_SEEDS = (36, 24, 20, 11)


def small_decks(n: int) -> list:
    """The first ``n`` decks of :data:`SMALL_SEEDS`, named ``seed-K`` as ``--seed K`` names them."""
    return [seed_decks(1, k)[0] for k in SMALL_SEEDS[:n]]


def _env_with_src() -> dict:
    """The environment of a subprocess that imports this checkout's ``pasur``."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}


def _strip(record: dict) -> dict:
    return {k: v for k, v in record.items() if not k.endswith("seconds") and k not in TIMINGS}


@pytest.fixture(scope="module")
def inline_sweep(tmp_path_factory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("sweeps") / "inline"
    return out, run_sweep(small_decks(3), JOB, out, engine="inline", progress=False)


def _visible_folders(out: Path) -> list[Path]:
    return sorted(p for p in (out / "decks").iterdir() if not p.name.startswith("."))


def test_ray_with_two_workers_matches_inline(ray_here, inline_sweep, tmp_path):
    inline_out, inline_records = inline_sweep
    out = tmp_path / "ray"
    records = run_sweep(small_decks(3), JOB, out, workers=2, progress=False)
    assert [r["deck_id"] for r in records] == ["seed-36", "seed-24", "seed-20"]
    assert [_strip(r) for r in records] == [_strip(r) for r in inline_records]
    # the records carry each deck's own numbers: the exact value of a fresh solve, outside the sweep
    for r, nd in zip(records, small_decks(3), strict=True):
        fresh = solve_exact_run(nd, "compact", "cpu")
        assert (r["deck"], r["exact_value"], r["nodes"]) == (str(nd.deck), fresh["value"], fresh["nodes"])
        assert abs(r["value"] - r["exact_value"]) <= r["nash_conv"] + 1e-6  # NashConv = 2 x exploitability
    for deck_id in ("seed-36", "seed-24", "seed-20"):
        a, b = inline_out / "decks" / deck_id, out / "decks" / deck_id
        assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
        assert pq.read_table(a / "strategy.parquet").equals(pq.read_table(b / "strategy.parquet"))
        assert (a / "matchups.json").read_bytes() == (b / "matchups.json").read_bytes()
    m = Manifest.load(out / "manifest.parquet")
    assert [r["status"] for r in m.rows.values()] == ["done"] * 3
    assert all(r["attempts"] == 1 and r["seconds"] > 0 and r["host"] for r in m.rows.values())
    assert pq.read_table(out / "records.parquet").num_rows == 3
    # a rerun does nothing; a grown deck list runs only the new deck
    again = sweep.sweep(small_decks(4), JOB, out, workers=2, engine="inline", progress=False)
    assert again.summary["skipped"] == 3 and again.summary["ran_done"] == 1 and len(again.records) == 4


#: the sweep's command line with its driver killed (SIGKILL, with the Ray processes of its session)
#: right after its manifest first records two decks done: a fixed point part way, no race
KILLED_AFTER_TWO = """
import os, signal
from pasur.study.manifest import Manifest
save = Manifest.save
def save_then_die(self):
    save(self)
    if self.count("done") >= 2:
        os.killpg(os.getpgrp(), signal.SIGKILL)
Manifest.save = save_then_die
from pasur.cli import main
main()
"""


def test_killed_driver_loses_nothing_and_resumes(tmp_path):
    out = tmp_path / "sweep"
    # four decks of small trees (seeds 36 to 39): two done, two in flight or not started at the kill
    args = ["sweep", "--decks", "4", "--seed", "36", "--method", "exact", "--workers", "2"]
    args += ["--out", str(out), "--quiet"]
    cmd = [sys.executable, "-c", "from pasur.cli import main; main()", *args]
    env = _env_with_src()
    killed = subprocess.Popen(
        [sys.executable, "-c", KILLED_AFTER_TWO, *args],
        env=env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _, err = killed.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(killed.pid, signal.SIGKILL)  # whatever of its session is left
    assert killed.returncode == -signal.SIGKILL, err.decode()[-2000:]
    before = Manifest.load(out / "manifest.parquet")
    done = [k for k, r in before.rows.items() if r["status"] == "done"]
    assert len(done) == 2, "the driver was not killed where the test kills it"
    for folder in _visible_folders(out):  # every visible deck folder is complete
        assert json.loads((folder / "record.json").read_text())["deck_id"] == folder.name
    stamps = {k: (out / "decks" / k / "record.json").stat().st_mtime_ns for k in done}
    # the rerun resumes in one process (no second Ray start): what it skips is the manifest's doing
    rerun = subprocess.run([*cmd, "--engine", "inline"], env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    after = Manifest.load(out / "manifest.parquet")
    assert after.count("done") == 4
    for k in done:
        assert (out / "decks" / k / "record.json").stat().st_mtime_ns == stamps[k]
        assert after.rows[k]["attempts"] == 1
    assert [p.name for p in (out / "decks").iterdir() if p.name.startswith(".")] == []
    assert len(read_records(out)) == 4


def test_failing_decks_are_recorded_and_retried(ray_here, tmp_path):
    out = tmp_path / "sweep"
    job = DeckJob.exact()
    decks = seed_decks(2, 0)
    res = sweep.sweep(decks, job, out, workers=2, memory_limit=1, progress=False)
    assert res.records == [] and res.summary["failed"] == 2 and res.summary["failed_decks"] == ["seed-0", "seed-1"]
    m = Manifest.load(out / "manifest.parquet")
    assert all(r["status"] == "failed" and r["error"].startswith("TreeTooLargeError") for r in m.rows.values())
    assert _visible_folders(out) == []
    skipped = sweep.sweep(decks, job, out, workers=2, progress=False)
    assert skipped.summary["skipped"] == 2 and skipped.summary["failed"] == 2
    retried = sweep.sweep(decks, job, out, workers=2, retry_failed=True, progress=False)
    assert retried.summary["done"] == 2 and len(retried.records) == 2
    assert all(r["attempts"] == 2 and r["error"] is None for r in Manifest.load(out / "manifest.parquet").rows.values())


def test_crashed_worker_is_recorded(ray_here, tmp_path, monkeypatch):
    real = sweep.run_one

    def crash_on_seed_1(deck, job, memory_limit, threads=1):
        if deck["id"] == "seed-1":
            os._exit(1)
        return real(deck, job, memory_limit, threads)

    monkeypatch.setattr(sweep, "run_one", crash_on_seed_1)
    res = sweep.sweep(seed_decks(3, 0), DeckJob.exact(), tmp_path / "s", workers=2, progress=False)
    assert [r["deck_id"] for r in res.records] == ["seed-0", "seed-2"]
    row = Manifest.load(tmp_path / "s" / "manifest.parquet").rows["seed-1"]
    assert row["status"] == "failed" and "Worker" in row["error"]


def test_inline_failure_does_not_stop_the_sweep(tmp_path, monkeypatch):
    real = pipeline.run_deck

    def fail_seed_1(nd, job, folder, memory_limit=None):
        if nd.id == "seed-1":
            raise RuntimeError("boom")
        return real(nd, job, folder, memory_limit)

    monkeypatch.setattr(pipeline, "run_deck", fail_seed_1)
    res = sweep.sweep(seed_decks(3, 0), DeckJob.exact(), tmp_path / "s", engine="inline", progress=False)
    assert res.summary["done"] == 2 and res.summary["failed_decks"] == ["seed-1"]
    assert Manifest.load(tmp_path / "s" / "manifest.parquet").rows["seed-1"]["error"].startswith("RuntimeError: boom")


# a driver whose deck kills it (os._exit: no handler, no ``finally``, as the OOM killer), or that
# gets SIGTERM, in a process of its own
_DYING_DRIVER = """
import os, signal, sys
from pathlib import Path
from pasur.game.cards import seed_decks
from pasur.study import sweep
from pasur.study.pipeline import DeckJob
victim, how, out, n = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
real = sweep.run_one
def run_one(deck, job, memory_limit, threads=1):
    if deck["id"] == victim:
        os._exit(137) if how == "kill" else os.kill(os.getpid(), signal.SIGTERM)
    return real(deck, job, memory_limit, threads)
sweep.run_one = run_one
sweep.sweep(seed_decks(n, 0), DeckJob.exact(), out, engine="inline", progress=False)
"""


def _driver_dies(victim: str, how: str, out: Path, n: int) -> int:
    env = _env_with_src()
    args = [sys.executable, "-c", _DYING_DRIVER, victim, how, str(out), str(n)]
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0, r.stdout
    return r.returncode


def test_a_deck_that_kills_the_inline_driver_is_failed_not_rerun_forever(tmp_path):
    """With the inline engine a deck runs in the driver's process; the OOM killer ending it left the
    deck pending, so every resume ran it first and died again. Now it is marked running before it
    starts, goes back to pending once, and is failed the second time; the other decks go on."""
    out = tmp_path / "s"
    decks = seed_decks(3, 0)
    for _ in range(2):  # the driver dies in seed-1 twice; seed-0 is done by the first run
        assert _driver_dies("seed-1", "kill", out, 3) == 137
        row = Manifest.load(out / "manifest.parquet").rows["seed-1"]
        assert row["status"] == "running" and row["started"] is not None
    res = sweep.sweep(decks, DeckJob.exact(), out, engine="inline", progress=False)
    assert res.summary["done"] == 2 and res.summary["failed_decks"] == ["seed-1"]
    row = Manifest.load(out / "manifest.parquet").rows["seed-1"]
    assert row["interrupted"] == 2 and row["attempts"] == 2 and "ended while this deck ran" in row["error"]
    retried = sweep.sweep(decks, DeckJob.exact(), out, engine="inline", retry_failed=True, progress=False)
    assert retried.summary["done"] == 3 and retried.summary["ran_done"] == 1
    row = Manifest.load(out / "manifest.parquet").rows["seed-1"]
    assert (row["status"], row["interrupted"], row["error"]) == ("done", 0, None)


def test_a_driver_killed_once_reruns_its_deck(tmp_path):
    """One death (a session ending with SIGKILL, a kill by hand) is not held against the deck."""
    out = tmp_path / "s"
    assert _driver_dies("seed-0", "kill", out, 2) == 137
    res = sweep.sweep(seed_decks(2, 0), DeckJob.exact(), out, engine="inline", progress=False)
    assert res.summary["done"] == 2 and res.summary["ran_done"] == 2
    rows = Manifest.load(out / "manifest.parquet").rows
    assert [(r["status"], r["interrupted"]) for r in rows.values()] == [("done", 0), ("done", 0)]


def test_sigterm_ctrl_c_and_driver_errors_leave_the_running_deck_pending(tmp_path, monkeypatch):
    """Stops that are not the deck's doing do not count against it: SIGTERM (in a process of its
    own), Ctrl-C, and an error of the driver itself."""
    out = tmp_path / "term"
    _driver_dies("seed-0", "term", out, 1)
    row = Manifest.load(out / "manifest.parquet").rows["seed-0"]
    assert (row["status"], row["interrupted"], row["started"]) == ("pending", 0, None)

    def interrupt(deck, job, memory_limit, threads=1):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep, "run_one", interrupt)
    with pytest.raises(sweep.SweepInterrupted):
        sweep.sweep(seed_decks(1, 0), DeckJob.exact(), tmp_path / "s", engine="inline", progress=False)
    row = Manifest.load(tmp_path / "s" / "manifest.parquet").rows["seed-0"]
    assert (row["status"], row["interrupted"]) == ("pending", 0)

    def settle_fails(self, nd, res):
        raise RuntimeError("a bug of the driver")

    monkeypatch.setattr(sweep, "run_one", lambda deck, job, memory_limit, threads=1: {"ok": False, "error": "x"})
    monkeypatch.setattr(sweep._Run, "settle", settle_fails)
    with pytest.raises(RuntimeError, match="a bug of the driver"):
        sweep.sweep(seed_decks(1, 0), DeckJob.exact(), tmp_path / "s", engine="inline", progress=False)
    assert Manifest.load(tmp_path / "s" / "manifest.parquet").rows["seed-0"]["status"] == "pending"


def test_bad_deck_files_are_refused(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("TD 5S QC\n")
    r = runner.invoke(app, ["sweep", "--deck-file", str(bad), "--out", str(tmp_path / "s"), "--method", "exact"])
    assert r.exit_code == 2 and "error:" in r.output and f"{bad}:1" in r.output
    assert "Traceback" not in r.output
    unsafe = tmp_path / "unsafe.json"
    unsafe.write_text(json.dumps([{"id": "../escape", "deck": str(seed_decks(1, 0)[0].deck)}]))
    r = runner.invoke(app, ["sweep", "--deck-file", str(unsafe), "--out", str(tmp_path / "s"), "--method", "exact"])
    assert r.exit_code == 2 and "not a safe file name" in r.output
    assert not (tmp_path / "s").exists()
    r = runner.invoke(app, ["sweep", "--decks", "2", "--out", str(tmp_path / "s"), "--gpus-per-task", "1"])
    assert r.exit_code == 2 and "CUDA" in r.output


def test_other_job_in_the_same_folder_is_refused(inline_sweep):
    out, _ = inline_sweep
    with pytest.raises(PasurInputError, match=r"another job.*iterations: 20 there, 50 now"):
        run_sweep(small_decks(3), DeckJob(cfr=CFRParams(iterations=50), games=20), out)
    r = runner.invoke(app, ["sweep", "--decks", "3", "--seed", "0", "--method", "exact", "--out", str(out), "-q"])
    assert r.exit_code == 2 and "method: 'dcfr' there, 'exact' now" in r.output


def test_a_sweep_written_before_an_option_existed_resumes(inline_sweep, tmp_path):
    """A ``sweep.json`` without ``cfr.tremble`` (written before the option) is the same job as one
    with the default: rerunning it skips the finished decks instead of refusing the folder."""
    out, records = inline_sweep
    copy = tmp_path / "old"
    shutil.copytree(out, copy)
    spec = json.loads((copy / "sweep.json").read_text())
    assert spec["job"]["cfr"].pop("tremble") == 0.0
    (copy / "sweep.json").write_text(json.dumps(spec))
    again = run_sweep(small_decks(3), JOB, copy, engine="inline", progress=False)
    assert [r["deck_id"] for r in again] == [r["deck_id"] for r in records]
    with pytest.raises(PasurInputError, match=r"another job.*tremble: 0.0 there, 0.001 now"):
        run_sweep(small_decks(3), DeckJob(cfr=replace(JOB.cfr, tremble=1e-3), games=JOB.games), copy)


def test_a_sweep_resumes_with_another_cfr_kernel(inline_sweep, tmp_path):
    """The kernel changes the speed, not the iterates: a sweep solved with one resumes with the
    other (its finished decks skipped), where another solver option is refused."""
    out, records = inline_sweep
    copy = tmp_path / "kernel"
    shutil.copytree(out, copy)
    for kernel in ("torch", "native"):
        again = run_sweep(small_decks(3), DeckJob(cfr=replace(JOB.cfr, kernel=kernel), games=JOB.games), copy)
        assert [r["deck_id"] for r in again] == [r["deck_id"] for r in records]


def test_a_sweep_written_before_the_exploitability_convention_reads_relabelled(inline_sweep, tmp_path):
    """A sweep of format 1 held NashConv under ``exploitability`` (records, manifest, records
    file, the job's target) and no ``nash_conv``: it reads as ``nash_conv`` with ``exploitability``
    halved (docs/conventions.md), its report says so, and it resumes."""
    out, records = inline_sweep
    assert all(r["exploitability"] == pytest.approx(r["nash_conv"] / 2) for r in records)
    copy = tmp_path / "old"
    shutil.copytree(out, copy)
    spec = json.loads((copy / "sweep.json").read_text())
    (copy / "sweep.json").write_text(json.dumps({**spec, "format": 1}))
    for r in records:
        path = copy / "decks" / r["deck_id"] / "record.json"
        rec = json.loads(path.read_text())
        rec["exploitability"] = rec.pop("nash_conv")
        path.write_text(json.dumps(rec))
    for name in ("manifest.parquet", "records.parquet"):
        t = pq.read_table(copy / name)
        t = t.set_column(t.column_names.index("exploitability"), "exploitability", t.column("nash_conv"))
        old_columns = ["nash_conv", *(["interrupted"] if name == "manifest.parquet" else [])]
        pq.write_table(t.drop(old_columns), copy / name)  # nor had its manifest ``interrupted``
    want = {r["deck_id"]: (r["nash_conv"], r["exploitability"]) for r in records}
    assert {r["deck_id"]: (r["nash_conv"], r["exploitability"]) for r in read_records(copy)} == want
    rows = Manifest.load(copy / "manifest.parquet").rows
    assert {k: (v["nash_conv"], v["exploitability"]) for k, v in rows.items()} == want
    s = json.loads(runner.invoke(app, ["report", str(copy), "--json"]).output)
    values = {v["column"]: v for v in s["values"]}
    assert values["exploitability"]["max"] == pytest.approx(max(e for _, e in want.values()))
    assert values["nash_conv"]["max"] == pytest.approx(max(n for n, _ in want.values()))
    per_deck = runner.invoke(app, ["report", str(copy), "--per-deck"])
    assert per_deck.exit_code == 0 and all(r["deck_id"] in per_deck.output for r in records)
    again = run_sweep(small_decks(3), JOB, copy, engine="inline", progress=False)
    assert {r["deck_id"]: (r["nash_conv"], r["exploitability"]) for r in again} == want
    assert json.loads((copy / "sweep.json").read_text())["format"] == sweep.FORMAT == 2
    # a format-1 target bounded NashConv: the same job as half of it now
    old_job = {**JOB.to_json(), "cfr": {**JOB.to_json()["cfr"], "iterations": None, "target_exploitability": 0.05}}
    assert sweep._with_defaults(old_job, 1)["cfr"]["target_exploitability"] == 0.025
    assert sweep._with_defaults(old_job, 2)["cfr"]["target_exploitability"] == 0.05


def test_report_prints_tables_and_writes_csv(inline_sweep, tmp_path):
    out, records = inline_sweep
    csv = tmp_path / "decks.csv"
    r = runner.invoke(app, ["report", str(out), "--csv", str(csv), "--per-deck"])
    assert r.exit_code == 0, r.output
    for title in ("Decks", "Values", "Tree sizes", "Timings", "exploitability", "seed-20"):
        assert title in r.output
    lines = csv.read_text().splitlines()
    assert len(lines) == 1 + len(records) and '"deck_id"' in lines[0] and '"exact_value"' in lines[0]
    s = json.loads(runner.invoke(app, ["report", str(out), "--json"]).output)
    values = {v["column"]: v for v in s["values"]}
    assert s["status"] == [{"status": "done", "decks": 3}]
    assert values["exact_value"]["mean"] == pytest.approx(sum(r["exact_value"] for r in records) / 3)
    r = runner.invoke(app, ["report", str(tmp_path / "nothing")])
    assert r.exit_code == 2 and "no sweep folder" in r.output
