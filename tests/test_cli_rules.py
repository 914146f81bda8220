"""The rules every command follows: one-line errors (the option parser's too), --version,
--threads anywhere, options that do not apply refused, and outputs that never destroy a
user's file (parents created, overwrite only of pasur's own files, unwritable places refused
before any work, the user's umask)."""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from pasur.cli import app
from pasur.cli.common import cpu_count

runner = CliRunner()
SEED = "36"  # one of the smallest trees among the first decks


def run(*args: str):
    return runner.invoke(app, list(args))


def assert_one_line_error(r, *needles: str, code: int = 2) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == code, (r.exit_code, r.output)
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


# -- one line for every user error ---------------------------------------------------------

PARSER_ERRORS = [
    (["solve", "--seed", "abc"], "'--seed'"),
    (["selfplay", "--seed", "1", "--games", "0"], "'--games'"),
    (["--threads", "0", "deal"], "'--threads'"),
    (["deal", "--threads", "0"], "'--threads'"),
    (["solve", "--sed", "1"], "no such option: --sed"),
    (["fit"], "missing argument 'tables'"),
    (["report"], "missing argument 'out'"),
    (["shuffle"], "no such command 'shuffle'"),
    (["solve", "--seed", "1", "--method", "dcfr", "--iterations", "999999999999"], "'--iterations'"),
    (["sweep", "--out", "x", "--decks", "99999999999"], "'--decks'"),
]


@pytest.mark.parametrize(("args", "needle"), PARSER_ERRORS, ids=[" ".join(a) for a, _ in PARSER_ERRORS])
def test_parser_errors_are_one_line(args, needle):
    assert_one_line_error(run(*args), needle)


def test_installed_command_prints_one_line_too():
    """The real entry point, not only the test runner: no box, no traceback, exit 2."""
    exe = Path(sys.executable).parent / "pasur"
    r = subprocess.run([str(exe), "solve", "--seed", "abc"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("error: ") and not r.stdout


def test_version():
    r = run("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"pasur {importlib.metadata.version('pasur')}"


@contextlib.contextmanager
def _threads_restored():
    before = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads(before)


def test_threads_after_the_command_and_capped():
    """``--threads`` is set before a torch command's work (here one refused at once, after it); the
    torch-free commands (``deal``) leave torch alone."""
    refused = ["solve", "--seed", "1", "--method", "exact", "--iterations", "5"]
    with _threads_restored():
        assert run(*refused, "--threads", "4096").exit_code == 2
        assert torch.get_num_threads() == cpu_count()
        assert run("--threads", "1", *refused).exit_code == 2
        assert torch.get_num_threads() == 1
        assert run("--threads", "4096", *refused, "--threads", "1").exit_code == 2
        assert torch.get_num_threads() == 1  # the command's own option wins
        assert run("deal", "--seed", "1", "--threads", "4096").exit_code == 0
        assert torch.get_num_threads() == 1  # deal starts without torch and leaves it as it was


NOT_APPLICABLE = [
    (["solve", "--seed", SEED, "--method", "exact", "--iterations", "100"], "--iterations applies only to the CFR"),
    (["solve", "--seed", SEED, "--method", "reference", "--tree", "paper"], "--tree applies only to the tensor"),
    (["solve", "--seed", SEED, "--method", "reference", "--device", "cpu"], "--device applies only"),
    (["solve", "--seed", SEED, "--out", "x"], "--out applies only to the CFR methods"),
    (["solve", "--seed", SEED, "--method", "cfr+", "--gamma", "1"], "--gamma applies only to --method dcfr"),
    (["solve", "--seed", SEED, "--method", "dcfr", "--sample-seed", "3"], "--sample-seed applies only"),
    (["solve", "--seed", SEED, "--method", "dcfr", "--iterations", "5", "--max-iterations", "9"], "with --iterations"),
    (["solve", "--seed", SEED, "--method", "dcfr", "--iterations", "5", "--check-every", "2"], "--check-every"),
    (["experiment", "figure12", "--out", "x", "--decks", "1", "--games", "5"], "--games applies only"),
    (["experiment", "figure15", "--out", "x", "--decks", "1", "--paper-memory-limit", "2"], "applies only to figure12"),
    (["sweep", "--out", "x", "--decks", "1", "--method", "exact", "--iterations", "5"], "--iterations applies only"),
    (["report", "x", "--overwrite"], "--overwrite applies only with --csv"),
    (["selfplay", "--seed", SEED, "--table", "t.parquet"], "--table names the file of a bare 'table' agent"),
    (["solve", "--deck", "x", "--decks", "2"], "--decks N counts seeded decks or a file's first decks"),
]


@pytest.mark.parametrize(("args", "needle"), NOT_APPLICABLE, ids=[n for _, n in NOT_APPLICABLE])
def test_options_that_do_not_apply_are_refused(args, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_one_line_error(run(*args), needle)
    assert not any(tmp_path.iterdir()), "a refused command wrote something"


def test_seed_is_the_deck_everywhere_and_one_deck_path():
    """--seed picks the same deck in every command; --decks N --seed S counts from S."""
    shown = run("show", "--seed", "7", "--ascii").stdout.splitlines()[0]
    dealt = run("deal", "--seed", "7").stdout.strip()
    assert shown == f"deck seed-7: {dealt}"
    many = json.loads(run("solve", "--decks", "2", "--seed", "36", "--json", "-q").stdout)
    assert [d["id"] for d in many] == ["seed-36", "seed-37"]
    assert [d["deck"] for d in many] == run("deal", "--seed", "36", "--decks", "2").stdout.split("\n")[:2]


# -- outputs -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> Path:
    """One small CFR solve's output folder (a strategy table for fit and selfplay)."""
    out = tmp_path_factory.mktemp("solved") / "a" / "b"  # parents made by the command
    r = run("solve", "--seed", SEED, "--method", "dcfr", "--iterations", "3", "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("swept") / "new" / "sweep"
    r = run("sweep", "--decks", "2", "--seed", SEED, "--method", "exact", "--engine", "inline", "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    return out


def test_out_creates_missing_parents(solved, swept):
    assert {"strategy.parquet", "summary.json", "traces.parquet", "convergence.png"} <= {
        p.name for p in solved.iterdir()
    }
    assert (swept / "manifest.parquet").is_file()


def test_overwrite_keeps_a_foreign_file_and_refuses(solved, tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    for extra in ([], ["--overwrite"]):
        r = run("solve", "--seed", SEED, "--method", "dcfr", "--iterations", "2", "--out", str(precious), "-q", *extra)
        assert_one_line_error(r, "thesis.tex")
        assert (precious / "thesis.tex").read_text() == "years of work"
        assert sorted(p.name for p in precious.iterdir()) == ["thesis.tex"]
    # the current folder holding the user's files: refused, and no stray folder left beside it
    os.chdir(precious)
    try:
        r = run("solve", "--seed", SEED, "--method", "dcfr", "--iterations", "2", "--out", ".", "--overwrite", "-q")
    finally:
        os.chdir(tmp_path)
    assert_one_line_error(r, "thesis.tex")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious"]


def test_overwrite_replaces_only_what_pasur_wrote(tmp_path):
    out = tmp_path / "run"
    args = ["solve", "--seed", SEED, "--method", "dcfr", "--iterations", "2", "--out", str(out), "-q"]
    assert run(*args).exit_code == 0
    first = json.loads((out / "summary.json").read_text())
    assert_one_line_error(run(*args), "exists already")  # no --overwrite: refused
    # an earlier run's extra file of pasur's own is removed; the folder ends as a fresh run's
    owned = json.loads((out / ".pasur-outputs.json").read_text())["files"]
    assert sorted(owned) == sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    args[args.index("2")] = "3"
    assert run(*args, "--overwrite").exit_code == 0
    second = json.loads((out / "summary.json").read_text())
    assert (first["rounds"][0]["iterations"], second["rounds"][0]["iterations"]) == (2, 3)


def test_report_csv_follows_the_overwrite_rule(swept, tmp_path):
    csv = tmp_path / "deep" / "er" / "decks.csv"
    assert run("report", str(swept), "--csv", str(csv)).exit_code == 0
    assert csv.read_text().count("\n") == 3  # header and two decks
    csv.write_text("mine")
    assert_one_line_error(run("report", str(swept), "--csv", str(csv)), "exists already")
    assert csv.read_text() == "mine"
    assert run("report", str(swept), "--csv", str(csv), "--overwrite").exit_code == 0
    assert csv.read_text().count("\n") == 3


@pytest.fixture
def readonly(tmp_path):
    """A folder nobody can write into, root included (chattr +i where we are root)."""
    folder = tmp_path / "readonly"
    folder.mkdir()
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
            pytest.fail("as root, a read-only folder needs chattr +i (e2fsprogs)")
    else:
        folder.chmod(0o555)
    assert not os.access(folder, os.W_OK)
    yield folder
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    folder.chmod(0o755)


def _unwritable_cases(solved: Path, swept: Path, place: Path) -> dict[str, list[str]]:
    table = str(solved / "strategy.parquet")
    return {
        "solve": ["solve", "--seed", SEED, "--method", "dcfr", "--iterations", "2", "--out", str(place / "o"), "-q"],
        "fit": ["fit", table, "--out", str(place / "m.ubj"), "--rounds", "2"],
        "sweep": [
            "sweep",
            "--decks",
            "1",
            "--seed",
            SEED,
            "--method",
            "exact",
            "--engine",
            "inline",
            "--out",
            str(place / "s"),
            "-q",
        ],
        "experiment": [
            "experiment",
            "figure15",
            "--decks",
            "1",
            "--seed",
            SEED,
            "--iterations",
            "2",
            "--engine",
            "inline",
            "--out",
            str(place / "e"),
            "-q",
        ],
        "report": ["report", str(swept), "--csv", str(place / "r.csv")],
    }


@pytest.mark.parametrize("command", ["solve", "fit", "sweep", "experiment", "report"])
def test_unwritable_outputs_are_one_line(command, solved, swept, readonly, tmp_path):
    args = _unwritable_cases(solved, swept, readonly)[command]
    assert_one_line_error(run(*args), str(readonly))
    assert list(readonly.iterdir()) == []
    # a file where a folder must be (the parent of the output is a file)
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    args = _unwritable_cases(solved, swept, blocker)[command]
    assert_one_line_error(run(*args), "blocker")
    assert blocker.read_text() == "x"


@pytest.mark.parametrize(
    ("args", "needle"), [(["fit", "t.parquet", "--out"], "is a folder"), (["report", "s", "--csv"], "is a folder")]
)
def test_a_folder_where_a_file_is_expected(args, needle, tmp_path, solved, swept):
    folder = tmp_path / "d.ubj"
    folder.mkdir()
    args = [str(solved / "strategy.parquet") if a == "t.parquet" else str(swept) if a == "s" else a for a in args]
    assert_one_line_error(run(*args, str(folder)), needle)


def test_files_get_the_users_umask(tmp_path, solved, swept):
    old = os.umask(0o022)
    try:
        for command, args in _unwritable_cases(solved, swept, tmp_path).items():
            r = run(*args)
            assert r.exit_code == 0, (command, r.output)
    finally:
        os.umask(old)
    written = [p for p in tmp_path.rglob("*") if p.name != ".lock"]
    assert {"o", "m.ubj", "m.card.json", "s", "e", "r.csv"} <= {p.name for p in written}
    for f in written:
        want = 0o755 if f.is_dir() else 0o644
        assert stat.S_IMODE(f.stat().st_mode) == want, f


def test_one_writer_per_output_folder(tmp_path):
    """A second sweep or arena on a folder being written is refused at once; the lock is freed after."""
    from pasur.common.errors import PasurInputError
    from pasur.common.outputs import folder_lock

    with (
        folder_lock(tmp_path, "sweep"),
        pytest.raises(PasurInputError, match=f"another arena is writing to {tmp_path}"),
        folder_lock(tmp_path, "arena"),
    ):
        pass
    with folder_lock(tmp_path, "arena"):  # free again
        pass


@pytest.mark.parametrize(
    "args",
    [
        ["poker", "solve", "--game", "kuhn", "--iterations", "2", "--out", "/proc/pasur-out"],
        ["solve", "--seed", SEED, "--method", "dcfr", "--iterations", "2", "--out", "/proc/pasur-out"],
        ["fit", "t.parquet", "--out", "/proc/pasur-model.ubj"],
    ],
    ids=["poker-solve", "solve", "fit"],
)
def test_a_place_the_os_refuses_is_refused_before_the_work(args, tmp_path, monkeypatch):
    """Permissions alone pass /proc for root; the command must still refuse it in one line before
    it solves or fits (naming the place, not a temporary file it would have written)."""
    monkeypatch.chdir(tmp_path)
    line = assert_one_line_error(run(*args), "/proc")
    assert "cannot write into /proc" in line and ".tmp" not in line and "pasur-probe" not in line
