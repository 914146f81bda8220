"""The experiment registry both experiment families share (``pasur.common.registry``): an
experiment declares the options it takes, and one it does not take is refused in one line, naming
the experiments that take it, before any folder is made, by ``pasur experiment`` (the Pasur
paper's) and ``pasur poker experiment`` (the poker papers') alike."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pasur.cli import app
from pasur.common.errors import PasurInputError
from pasur.common.registry import Registry
from test_cli_rules import assert_one_line_error

runner = CliRunner()
PLAYING = "figure14, table16"  # the experiments that play games
CFR = "figure14, figure15, figure16, table16"  # the experiments that solve by CFR


def _demo() -> Registry:
    reg = Registry("demo")

    def positive(v):
        if v <= 0:
            raise PasurInputError(f"--size must be positive, got {v}")

    reg.experiment(
        "grid", "A grid.", tables=("grid.md",), options={"size": positive, "fast_mode": None, "quality": None}
    )(dict)
    reg.experiment("line", "A line.", options={"size": positive})(dict)
    reg.experiment("dot", "A dot.")(dict)
    return reg


def test_a_registry_refuses_what_an_experiment_does_not_take():
    reg = _demo()
    assert reg.names() == ["dot", "grid", "line"]
    assert reg.get("grid").outputs == ("grid.md",)  # the tables, when no outputs are declared
    with pytest.raises(PasurInputError, match=r"^--size applies only to grid, line, not to dot$"):
        reg.get("dot").check_options({"size": 3})
    # options the same experiments take are refused together, spelled as on the command line
    with pytest.raises(PasurInputError, match=r"^--fast-mode applies only to grid, not to line$"):
        reg.get("line").check_options({"size": 3, "fast_mode": True})
    with pytest.raises(PasurInputError, match=r"^--fast-mode, --quality apply only to grid, not to dot$"):
        reg.get("dot").check_options({"fast_mode": True, "size": 3, "quality": 1})
    with pytest.raises(PasurInputError, match=r"^--colour applies only to no experiment, not to grid$"):
        reg.get("grid").check_options({"colour": "red"})
    # a taken option's value is checked; one without a check passes as given
    with pytest.raises(PasurInputError, match="--size must be positive, got 0"):
        reg.get("grid").check_options({"size": 0})
    reg.get("grid").check_options({"size": 2, "fast_mode": True})
    with pytest.raises(PasurInputError, match=r"unknown experiment 'cube' \(choose from dot, grid, line\)"):
        reg.get("cube")
    with pytest.raises(PasurInputError, match=r"\(choose from none yet\)"):
        Registry("empty").get("dot")


REFUSED = [
    (["experiment", "figure16", "--seed", "36", "--games", "5"], f"--games applies only to {PLAYING}, not to figure16"),
    (
        ["experiment", "figure15", "--decks", "1", "--fit", "--model-params", "{}"],
        f"--fit, --model-params apply only to {PLAYING}, not to figure15",
    ),
    (
        ["experiment", "figure12", "--decks", "1", "--method", "dcfr", "--alpha", "2"],
        f"--alpha, --method apply only to {CFR}, not to figure12",
    ),
    (["experiment", "figure12", "--decks", "1", "--tree", "paper"], f"--tree applies only to {CFR}, not to figure12"),
    (
        ["experiment", "table16", "--decks", "1", "--paper-memory-limit", "2"],
        "--paper-memory-limit applies only to figure12, not to table16",
    ),
    (
        ["experiment", "figure12", "--decks", "1", "--paper-memory-limit", "0"],
        "--paper-memory-limit must be a positive number of GiB",
    ),
    (["experiment", "figure16", "--decks", "2"], "figure16 takes one deck"),
    (["experiment", "figure15", "--decks", "1", "--method", "exact"], "figure15 needs a CFR method"),
    (["experiment", "figure20", "--decks", "1"], "unknown experiment 'figure20' (choose from figure12, figure14"),
    (
        ["poker", "experiment", "bufp-total", "--game", "kuhn", "--configs", "2"],
        "--configs applies only to figure5, not to bufp-total",
    ),
]


@pytest.mark.parametrize(("args", "needle"), REFUSED, ids=[n for _, n in REFUSED])
def test_an_option_an_experiment_does_not_take_is_refused_before_any_folder(args, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_one_line_error(runner.invoke(app, [*args, "--out", "out"]), needle)
    assert not any(tmp_path.iterdir()), "a refused experiment wrote something"


def test_the_experiments_are_listed():
    r = runner.invoke(app, ["experiment", "--list"])
    assert r.exit_code == 0, r.output
    assert [line.split()[0] for line in r.stdout.splitlines()] == [
        "figure12",
        "figure14",
        "figure15",
        "figure16",
        "table16",
    ]
    assert all(len(line.split()) > 3 for line in r.stdout.splitlines())  # each with its help


def test_figure12_gets_its_memory_limit_from_the_command_line(tmp_path):
    """A paper tree over --paper-memory-limit is not built (the compact one is)."""
    args = ["experiment", "figure12", "--seed", "36", "--decks", "1", "--engine", "inline", "-q"]
    r = runner.invoke(app, [*args, "--paper-memory-limit", "0.001", "--out", str(tmp_path / "f12"), "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["paper_not_built"] == 1 and summary["compact"]["decks"] == 1
    assert summary["compact"]["max"] == 86411  # seed 36's compact tree (test_experiments)


def test_figure16_prints_its_table(tmp_path):
    out = tmp_path / "f16"
    r = runner.invoke(app, ["experiment", "figure16", "--seed", "36", "--iterations", "2", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"figure16: 1 decks; outputs in {out}")
    assert (out / "table15.md").read_text(encoding="utf-8") in r.stdout
    assert "| move |" in r.stdout
