"""Strategy files, summaries and plots: round trips and refusals."""

from __future__ import annotations

import json

import pytest

from pasur.common.errors import PasurInputError
from pasur.poker.abstraction import abstraction
from pasur.poker.engine import Engine
from pasur.poker.measures import evaluate
from pasur.poker.openspiel import export_policy, import_policy
from pasur.poker.run import solve
from pasur.poker.solvers import CFRConfig
from pasur.poker.strategy_io import (
    game_of,
    is_openspiel_file,
    plot_trace,
    read_openspiel,
    read_strategy,
    write_openspiel,
    write_strategy,
    write_summary,
    write_trace,
)


@pytest.fixture(scope="module")
def leduc_run():
    e = Engine("leduc")
    return e, solve(e, CFRConfig(method="cfr+"), iterations=50, check_every=25)


def test_lossless_strategy_round_trip(tmp_path, leduc_run):
    e, r = leduc_run
    path = tmp_path / "s.parquet"
    rows = write_strategy(path, e, r.policy)
    assert rows == sum(
        int(e.tree.legal[d].sum()) * e.n_boards[k] * e.Hr[k] for k, d in enumerate(e.tree.round_decisions)
    )
    assert game_of(path) == e.game
    back = read_strategy(path, e)
    for x, y in zip(back.tables, r.policy.tables, strict=True):
        assert (x - y).abs().max() < 1e-15
    with pytest.raises(PasurInputError, match="another game"):
        read_strategy(path, Engine("leduc5"))


def test_abstraction_strategy_round_trip(tmp_path):
    e = Engine("numeral211-tiny")
    k = abstraction(e, "iso,ehs:4,ehs:5")
    r = solve(e, CFRConfig(method="cfr+"), iterations=3, check_every=3, keying=k)
    path = tmp_path / "a.parquet"
    write_strategy(path, e, r.policy)
    with pytest.raises(PasurInputError, match="keying"):
        read_strategy(path, e)
    back = read_strategy(path, e, keying=k)
    assert evaluate(e, back).nash_conv == pytest.approx(r.nash_conv, abs=1e-12)


@pytest.mark.parametrize("suffix", [".json", ".parquet"])
def test_openspiel_files_round_trip(tmp_path, leduc_run, suffix):
    e, r = leduc_run
    path = tmp_path / f"os{suffix}"
    write_openspiel(path, e, export_policy(e, r.policy))
    assert is_openspiel_file(path)
    game, table = read_openspiel(path)
    assert game == "leduc_poker"
    assert evaluate(e, import_policy(e, table)).exploitability == pytest.approx(r.exploitability, abs=1e-14)


def test_summary_trace_and_plot(tmp_path, leduc_run):
    _, r = leduc_run
    write_summary(tmp_path / "summary.json", r.summary())
    s = json.loads((tmp_path / "summary.json").read_text())
    assert {"game", "method", "iterations", "value", "exploitability", "nash_conv", "seconds"} <= set(s)
    write_trace(tmp_path / "trace.parquet", r.trace)
    plot_trace(tmp_path / "c.png", r.trace, "leduc")
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_not_a_strategy_is_refused(tmp_path):
    p = tmp_path / "x.parquet"
    p.write_text("not parquet")
    with pytest.raises(PasurInputError, match="cannot read"):
        game_of(p)
