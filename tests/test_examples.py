"""The example scripts under examples/ run as a user runs them (a fresh interpreter each, their
outputs into a temporary folder), and what they print holds: the numbers agree with each other
and with the files they wrote."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def number(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    assert found, f"{pattern!r} not in:\n{text}"
    return float(found.group(1))


def test_solve_deck_solves_writes_and_reads_its_table(tmp_path):
    text = run_example("solve_deck.py", "--seed", "7", "--out", str(tmp_path))
    exact = number(r"exact value ([+-]\d+)", text)
    value = number(r"dcfr: value ([+-][\d.]+)", text)
    expl = number(r"exploitability ([\d.]+) \(target 0.05\)", text)
    assert 0 <= expl <= 0.05
    assert abs(value - exact) <= 2 * expl  # a strategy's value is within NashConv of the game's
    rows, edges = re.search(r"table: ([\d,]+) rows \(([\d,]+) edges\), read back identical", text).groups()
    assert rows == edges and pq.read_metadata(tmp_path / "strategy.parquet").num_rows == int(rows.replace(",", ""))
    assert number(r"exploitability of the table read back: ([\d.]+)", text) == expl
    hand = re.search(r"Alex holds (.+), the pool", text).group(1).split()
    plays = re.findall(r"  play (\S+) taking .+: ([\d.]+)", text)
    assert plays and {card for card, _ in plays} <= set(hand)
    assert abs(sum(float(p) for _, p in plays) - 1) < 0.01 and number(r"total ([\d.]+)", text) == 1.0


def test_poker_openspiel_agrees_with_openspiel_through_every_form(tmp_path):
    text = run_example("poker_openspiel.py", "--game", "leduc", "--target", "0.01", "--out", str(tmp_path))
    iterations = number(r"dcfr, (\d+) iterations", text)
    ours = number(r"our exploitability: ([\d.]+)", text)
    theirs = number(r"openspiel's exploitability of the same policy: ([\d.]+)", text)
    from_file = number(r"information sets\): exploitability ([\d.]+)", text)
    back = number(r"TabularPolicy and back: exploitability ([\d.]+)", text)
    assert ours <= 0.01 and iterations % 50 == 0
    assert max(abs(x - ours) for x in (theirs, from_file, back)) < 1e-9
    assert number(r"\(leduc_poker, (\d+) information sets\)", text) == 936
    saved = json.loads((tmp_path / "policy.openspiel.json").read_text())
    assert saved["game"] == "leduc_poker" and len(saved["policy"]) == 936


def test_arena_measures_two_agents_on_duplicate_deals(tmp_path):
    out = tmp_path / "arena"
    text = run_example("arena.py", "--agents", "heuristic", "greedy", "--deals", "20", "--out", str(out))
    assert "heuristic against greedy: 20 deals, 40 games" in text
    margin = number(r"margin ([+-][\d.]+) points per game", text)
    low, high = (float(x) for x in re.search(r"interval \[([+-][\d.]+), ([+-][\d.]+)\]", text).groups())
    assert low <= margin <= high
    rates = [number(rf"{k} ([\d.]+)", text) for k in ("win", "tie", "loss")]
    assert abs(sum(rates) - 1) < 0.002
    (pair,) = json.loads((out / "results.json").read_text())["pairs"]
    assert round(pair["margin"], 3) == margin and pair["games"] == 40
    deals = (out / "deals.csv").read_text().splitlines()
    assert len(deals) == 1 + 20
    assert "outputs: arena.json, deals.csv, results.json, table.md" in text
