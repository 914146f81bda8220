"""Every number in the docs' tables comes from a committed results file, or says it does not
(issue 24, item 3). The syntax of the markers is in ``tests/docnumbers.py``.

The tests marked ``docs_recompute`` rerun the cheap experiments behind committed files (BUFP on
Kuhn and Leduc to 1,000 iterations, Figure 5 on numeral211-tiny, a 20-deal arena, Figure 16 on
ref0; about 1 minute of CPU in all) and compare them with those files: ``pytest -m
docs_recompute`` runs only them, ``-m "not docs_recompute"`` skips them.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pytest

from docnumbers import (
    DATE,
    DOCS,
    REPO,
    VIEWS,
    agrees,
    check_table,
    numbers,
    parse_marker,
    readme_of,
    tables,
    uncommitted_citations,
)

ALL = [(doc, t) for doc in DOCS for t in tables(doc)]
FILE_BACKED = [(doc, t) for doc, t in ALL if t.marker and parse_marker(t.marker).kind == "file"]


def _id(item) -> str:
    return item[1].where()


# ---------------------------------------------------------------- the checker itself


def test_numbers_and_precision():
    assert numbers("0.0514 (51.4 mb/g; lowest 0.037 at 3,162, then rising)") == ["0.0514", "51.4", "0.037", "3,162"]
    assert numbers("[+5.588, +6.704]") == ["+5.588", "+6.704"]
    assert numbers("\u22121.16 ± 0.82") == ["-1.16", "0.82"]
    assert numbers("ref0 pimc:20 numeral211-r5 t^-0.5 **1,048.9** 68.3%") == ["1,048.9", "68.3"]
    assert agrees("9.4e-4", 0.000937617) and not agrees("9.4e-4", 0.000946)
    assert agrees("857.3", 857.34) and not agrees("857.3", 1483.3)
    assert agrees("1,209", 1209.4) and not agrees("1,209", 1210)


def test_a_wrong_number_is_found():
    """The comparison can fail: a table whose number differs from its file's is reported."""
    f = REPO / "results" / "figure16-ref0" / "table15.csv"
    text = (
        "<!-- numbers: results/figure16-ref0/table15.csv -->\n"
        "| move | 2D | sigma |\n|---|---|---|\n| 9C laid | 100 | 0.91 |\n| 3D laid | 100 | 0.00 |\n"
    )
    (t,) = tables("x.md", text)
    problems = check_table(t, parse_marker(t.marker))
    assert f.exists() and len(problems) == 1 and "9C laid" in problems[0] and "sigma" in problems[0]


# ---------------------------------------------------------------- markers


@pytest.mark.parametrize("doc", DOCS)
def test_every_table_has_a_marker(doc):
    missing = [t.where() for t in tables(doc) if t.marker is None]
    assert not missing, f"tables without a <!-- numbers: ... --> marker on the line before: {missing}"


@pytest.mark.parametrize("item", ALL, ids=_id)
def test_marker_is_well_formed(item):
    _, t = item
    assert t.marker is not None, f"{t.where()}: no <!-- numbers: ... --> marker on the line before the table"
    m = parse_marker(t.marker)
    if m.kind == "none":
        return
    if m.kind == "measured":
        assert DATE.search(m.text), f"{t.where()}: a not-committed marker names its date: {m.text}"
        assert "not committed" in m.text, f"{t.where()}: {m.text}"
        assert re.match(r"measured on .*(machine|cores?|GPU)", m.text), f"{t.where()}: name the machine: {m.text}"
        return
    assert m.paths, t.where()
    assert m.view is None or m.view in VIEWS, f"{t.where()}: unknown view {m.view}"
    for p in m.paths:
        path = REPO / p
        assert p.startswith("results/") and path.is_file(), f"{t.where()}: {p} is not a file under results/"
        assert path.suffix in (".csv", ".json", ".md"), f"{t.where()}: {p}"
        assert path.stat().st_size < 1_000_000, f"{t.where()}: {p} is not small"
        readme = readme_of(path)
        assert readme.is_file(), f"{t.where()}: {readme.relative_to(REPO)} is missing"
        text = readme.read_text(encoding="utf-8")
        assert "machine" in text.lower() and DATE.search(text), f"{readme}: name the machine and the date"
        assert "```" in text and ("pasur " in text or "python " in text), f"{readme}: give the command"


@pytest.mark.parametrize("item", FILE_BACKED, ids=_id)
def test_file_backed_table_agrees_with_its_file(item):
    _, t = item
    problems = check_table(t, parse_marker(t.marker))
    assert not problems, "\n".join(problems)


def test_some_tables_are_file_backed():
    assert len(FILE_BACKED) >= 6


# ---------------------------------------------------------------- recomputed in CI

RESULTS = REPO / "results"


def pasur(*args: str) -> None:
    """The command, run in this process (the check is of its numbers, not of a process boundary:
    a fresh interpreter paid about 2 s of imports a command); torch's threads put back after."""
    import torch
    from typer.testing import CliRunner

    from pasur.cli import app

    threads = torch.get_num_threads()
    try:
        r = CliRunner().invoke(app, list(args))
    finally:
        torch.set_num_threads(threads)
    assert r.exit_code == 0, (r.output[-2000:], r.exception)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def same_numbers(a: str, b: str, rel: float) -> bool:
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a == b
    return x == y or math.isclose(x, y, rel_tol=rel, abs_tol=rel * 1e-3)


def compare_csv(new: Path, old: Path, *, skip: tuple[str, ...] = (), rel: float = 0.0) -> None:
    a, b = rows(new), rows(old)
    assert len(a) == len(b), f"{new.name}: {len(a)} rows, committed {len(b)}"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        # every committed column is reproduced; a measure added since (a new column) is allowed
        assert y.keys() <= x.keys(), f"{new.name}: columns {sorted(y.keys() - x.keys())} are gone"
        for k in y:
            if k not in skip:
                assert same_numbers(x[k], y[k], rel), f"{new.name} row {i} {k}: {x[k]} against committed {y[k]}"


# Tolerances. The runs are deterministic on one machine (each was run twice here and gave the
# same bytes, timings apart); another CPU may sum floating point in another order (SIMD width,
# torch's kernels), so float values get a relative tolerance: 1e-9 in float64 (BUFP: exact
# enumeration, no sampling), 1e-4 in float32 (Figure 5's networks and CFR, Figure 16's DCFR).
# Anything discrete (a k-means assignment, an agent's move, a game's points) compares exactly:
# a difference there is a real change, not rounding.
TIMING = ("solver_seconds",)


@pytest.mark.docs_recompute
@pytest.mark.parametrize("game", ["kuhn", "leduc"])
def test_bufp_1000_iterations_recomputed(tmp_path, game):
    out = tmp_path / game
    pasur("poker", "experiment", "bufp-convergence", "--game", game, "--iterations", "1000", "--out", str(out), "-q")
    pasur("poker", "experiment", "bufp-total", "--game", game, "--iterations", "1000", "--out", str(out), "-q")
    for name in ("exploitability.csv", "total-exploitability.csv"):
        compare_csv(out / name, RESULTS / "bufp-1000" / game / name, skip=TIMING, rel=1e-9)
    # the 10,000-iteration run behind docs/experiments.md passes through the same iterates
    long = [r for r in rows(RESULTS / "bufp-10000" / game / "exploitability.csv") if int(r["iteration"]) <= 1000]
    short = rows(out / "exploitability.csv")
    assert len(long) == len(short)
    for x, y in zip(short, long, strict=True):
        for k in ("method", "iteration", "exploitability", "total_exploitability", "total_exploitability_max"):
            assert same_numbers(x[k], y[k], 1e-9), (k, x, y)


@pytest.mark.docs_recompute
def test_figure5_tiny_recomputed(tmp_path):
    out = tmp_path / "f5"
    pasur("poker", "experiment", "figure5", "--game", "numeral211-tiny", "--iterations", "64", "--out", str(out), "-q")
    old = RESULTS / "figure5-tiny"
    compare_csv(out / "figure5.csv", old / "figure5.csv", skip=TIMING, rel=1e-4)
    new_j, old_j = (json.loads((d / "figure5.json").read_text()) for d in (out, old))
    assert new_j["best"] == old_j["best"] and new_j["stored_values"] == old_j["stored_values"]
    for m, v in old_j["final_mbg"].items():
        assert math.isclose(new_j["final_mbg"][m], v, rel_tol=1e-4), (m, new_j["final_mbg"][m], v)


@pytest.mark.docs_recompute
def test_arena_20_deals_recomputed(tmp_path):
    out = tmp_path / "arena"
    pasur("arena", "--agents", "pimc:20,heuristic,greedy", "--deals", "20", "--seed", "10000", "--engine", "inline",
          "--out", str(out), "-q")  # fmt: skip
    old = RESULTS / "arena-20"
    compare_csv(out / "deals.csv", old / "deals.csv")
    strip = lambda d: [{k: v for k, v in p.items() if k != "timing"} for p in d["pairs"]]  # noqa: E731
    new_j, old_j = (json.loads((d / "results.json").read_text()) for d in (out, old))
    assert new_j["spec"] == old_j["spec"]
    assert strip(new_j) == strip(old_j)


@pytest.mark.docs_recompute
def test_figure16_ref0_recomputed(tmp_path):
    decks = REPO.parent / "shared" / "decks" / "reference-decks.json"
    if not decks.exists():
        decks = REPO / "tests" / "data" / "reference-decks.json"
    out = tmp_path / "f16"
    pasur("experiment", "figure16", "--deck-file", str(decks), "--deck-id", "ref0", "--target-exploitability", "0.005",
          "--engine", "inline", "--out", str(out))  # fmt: skip
    old = RESULTS / "figure16-ref0"
    compare_csv(out / "table15.csv", old / "table15.csv", rel=1e-4)
    new_j, old_j = (json.loads((d / "summary.json").read_text()) for d in (out, old))
    for k, v in old_j.items():
        assert same_numbers(str(new_j[k]), str(v), 1e-4), (k, new_j[k], v)


@pytest.mark.parametrize("doc", DOCS)
def test_every_listed_doc_has_tables_to_check(doc):
    """A doc listed in ``docnumbers.DOCS`` without a table (renamed, or its tables moved away)
    would pass every check above without checking anything."""
    assert tables(doc), f"{doc}: no Markdown table to check"


# ---------------------------------------------------------------- numbers cited in the text

TEXT_DOCS = [*sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")), "README.md"]


def test_a_number_its_folder_does_not_hold_is_found():
    """The check can fail: a sentence citing a results folder for a number that the folder's
    README says is not committed is reported; the same number said to be not committed, and a
    number the folder's files hold, pass."""
    readme = REPO / "results" / "predictive-cfr" / "hs-schedules" / "README.md"
    assert "8.9e-4" in readme.read_text(encoding="utf-8")  # "... about 8.9e-4 ... not committed"
    cited = "Read literally, eq. (2)-(3) give about 8.9e-4\n(`results/predictive-cfr/hs-schedules/`).\n"
    (problem,) = uncommitted_citations("x.md", cited)
    assert problem.startswith("x.md:2: [0.00089]") and "hs-schedules/README.md says not committed" in problem
    honest = "Read literally they give about 8.9e-4 (not committed; `results/predictive-cfr/hs-schedules/`)."
    held = "HS-DCFR(30) reaches 1.34e-4 at 1,000 iterations (`results/predictive-cfr/hs-schedules/summary.md`)."
    assert uncommitted_citations("x.md", honest) == [] and uncommitted_citations("x.md", held) == []


@pytest.mark.parametrize("doc", TEXT_DOCS)
def test_no_number_is_cited_from_a_folder_that_does_not_hold_it(doc):
    problems = uncommitted_citations(doc)
    assert not problems, "\n".join(problems)
