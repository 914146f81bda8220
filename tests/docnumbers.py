"""Read the docs' Markdown tables and the ``<!-- numbers: ... -->`` markers that say where their
numbers come from (issue 24, item 3); used by ``tests/test_docs_numbers.py``.

A marker is an HTML comment on the line right before a table's header row:

* ``<!-- numbers: results/DIR/FILE[, results/DIR/FILE2 ...] [view=NAME] -->``: every number of
  the table comes from the named file(s), committed under ``results/``. Without ``view`` the
  file is read as a table: a Markdown file's table with the same header, or a CSV file's columns
  named as the doc's header; rows are matched by the first column. With ``view=NAME`` the
  function ``VIEWS[NAME]`` builds the doc's table from the files (e.g. picks iterations out of
  a convergence trace). Each number of each cell (but the first column, the row's key) must
  equal the file's number at the doc's precision.
* ``<!-- numbers: measured on MACHINE, YYYY-MM-DD, not committed -->``: the data are not in
  the repository; the marker names the machine and the date as the surrounding text does.
* ``<!-- numbers: none (WHY) -->``: the table holds no measured numbers (definitions, names,
  counts fixed by the code and checked by tests).
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = [
    "docs/experiments.md",
    "docs/hidden.md",
    "docs/bufp.md",
    "docs/embedding-cfr.md",
    "docs/benchmarks.md",
    "docs/ratings.md",
    "docs/rl.md",
    "docs/variants.md",
]
MARKER = re.compile(r"^\s*<!--\s*numbers:\s*(.*?)\s*-->\s*$")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
# A number as the docs write it: sign, thousands commas, decimals, exponent; not inside a word
# (ref0, pimc:20, numeral211-r5) or glued to letters.
NUMBER = re.compile(r"(?<![\w.:^/-])[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w:])")


@dataclass
class Table:
    doc: str
    line: int  # 1-based line of the header row
    marker: str | None
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def split_row(line: str) -> list[str]:
    s = line.strip()
    s = s.removeprefix("|").removesuffix("|")
    return [c.strip() for c in s.split("|")]


def is_separator(cells: list[str]) -> bool:
    return all(re.fullmatch(r":?-{3,}:?", c) for c in cells)


def tables(doc: str, text: str | None = None) -> list[Table]:
    """Every Markdown table of ``doc`` (outside code fences), with the marker on the line before."""
    if text is None:
        text = (REPO / doc).read_text(encoding="utf-8")
    lines = text.splitlines()
    out: list[Table] = []
    fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fence = not fence
            i += 1
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not fence and line.lstrip().startswith("|") and is_separator(split_row(nxt)):
            m = MARKER.match(lines[i - 1]) if i > 0 else None
            t = Table(doc, i + 1, m.group(1) if m else None, split_row(line))
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                t.rows.append(split_row(lines[j]))
                j += 1
            out.append(t)
            i = j
            continue
        i += 1
    return out


def plain(cell: str) -> str:
    """A cell as a key: no emphasis, no code quotes, one space."""
    return " ".join(cell.replace("**", "").replace("`", "").replace("\u2212", "-").split())


def numbers(cell: str) -> list[str]:
    return NUMBER.findall(plain(cell))


def value(text: str) -> float:
    return float(text.replace(",", ""))


def tolerance(text: str) -> float:
    """Half a unit of the last digit the doc writes."""
    t = text.lstrip("+-").replace(",", "")
    mant, _, exp = t.lower().partition("e")
    decimals = len(mant.partition(".")[2])
    return 0.5 * 10.0 ** (-decimals + (int(exp) if exp else 0))


def agrees(doc_number: str, file_value: float) -> bool:
    d = value(doc_number)
    return math.isfinite(file_value) and abs(file_value - d) <= tolerance(doc_number) * (1 + 1e-9) + 1e-12


# ---------------------------------------------------------------- markers


@dataclass
class Marker:
    kind: str  # "file", "measured" or "none"
    paths: list[str] = field(default_factory=list)
    view: str | None = None
    text: str = ""


def parse_marker(text: str) -> Marker:
    if text == "none" or text.startswith("none "):
        return Marker("none", text=text)
    if text.startswith("measured on "):
        return Marker("measured", text=text)
    view = None
    m = re.search(r"\s+view=([\w-]+)\s*$", text)
    if m:
        view = m.group(1)
        text = text[: m.start()]
    paths = [p.strip() for p in text.split(",") if p.strip()]
    return Marker("file", paths=paths, view=view, text=text)


def readme_of(path: Path) -> Path:
    """The README.md of the results folder that holds ``path`` (results/NAME/README.md)."""
    rel = path.resolve().relative_to((REPO / "results").resolve())
    return REPO / "results" / rel.parts[0] / "README.md"


# ---------------------------------------------------------------- what a file says

Rows = dict[str, dict[str, object]]  # row key -> column header -> value (a number, a list, or text)


def md_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    return [(t.header, t.rows) for t in tables("", text)]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _keyed(cells: list[list[str]], payload: list | None = None) -> list[tuple[str, object]]:
    """Each row's key: its first cell, or its first k cells joined by " | " when fewer do not
    tell the rows apart (an arena's table has one row per pair, A and B)."""
    payload = cells if payload is None else payload
    for k in range(1, max((len(c) for c in cells), default=1) + 1):
        keys = [" | ".join(c[:k]) for c in cells]
        if len(set(keys)) == len(keys):
            return list(zip(keys, payload, strict=True))
    raise AssertionError("rows that no columns tell apart")


def row_key(rows: Rows, cells: list[str]) -> str | None:
    for k in range(1, len(cells) + 1):
        key = " | ".join(plain(c) for c in cells[:k])
        if key in rows:
            return key
    return None


def default_view(paths: list[Path], table: Table) -> Rows:
    head = [plain(h) for h in table.header]
    rows: Rows = {}
    for p in paths:
        if p.suffix == ".md":
            found = [(h, r) for h, r in md_tables(p.read_text(encoding="utf-8")) if [plain(c) for c in h] == head]
            if not found:
                raise AssertionError(f"{p}: no table with the header {table.header}")
            for h, rs in found:
                for r in _keyed([[plain(c) for c in r] for r in rs]):
                    rows[r[0]] = {plain(c): v for c, v in zip(h, r[1], strict=False)}
        elif p.suffix == ".csv":
            cs = read_csv(p)
            cols = [h for h in head if cs and h in cs[0]]
            for key, r in _keyed([[plain(r[h]) for h in cols] for r in cs], cs):
                rows[key] = {plain(k): v for k, v in r.items()}
        else:
            raise AssertionError(f"{p}: give a view= for a {p.suffix} file")
    return rows


def bufp_trace(path: Path) -> dict[str, dict[int, dict[str, float]]]:
    """method -> iteration -> column -> value, from a BUFP exploitability CSV."""
    out: dict[str, dict[int, dict[str, float]]] = {}
    for r in read_csv(path):
        out.setdefault(r["method"], {})[int(r["iteration"])] = {
            k: float(v) for k, v in r.items() if k not in ("method", "iteration")
        }
    return out


BUFP_COLUMNS = {"CFR": "cfr", "BUFP(X) = XFP": "bufp-x", "BUFP(EF)": "bufp-ef"}


def _bufp_game(paths: list[Path], name: str) -> dict[str, dict[int, dict[str, float]]]:
    (p,) = [p for p in paths if p.parent.name.endswith(name)]
    return bufp_trace(p)


def _row_key(game: str, it: int) -> str:
    return f"{game}, {it:,} it."


def view_bufp_figure1(paths: list[Path], table: Table) -> Rows:
    """Figure 1: exploitability (chips) at 1,000 and 10,000 iterations; the last Leduc row adds
    mb/g (1 chip = 1,000 mb/g) and, for BUFP(EF), its lowest value and where."""
    rows: Rows = {}
    for game, name in (("Kuhn", "kuhn"), ("Leduc", "leduc")):
        trace = _bufp_game(paths, name)
        for it in (1000, 10000):
            row: dict[str, object] = {}
            for col, method in BUFP_COLUMNS.items():
                e = trace[method][it]["exploitability"]
                xfp = trace["xfp"][it]["exploitability"] if method == "bufp-x" else e
                assert abs(e - xfp) < 1e-12, f"BUFP(X) and XFP differ at {it}"
                vals = [e]
                if game == "Leduc" and it == 10000:
                    vals.append(1000 * e)
                    if method == "bufp-ef":
                        low_it = min(trace[method], key=lambda i: trace[method][i]["exploitability"])
                        vals += [trace[method][low_it]["exploitability"], low_it]
                row[col] = vals
            rows[_row_key(game, it)] = row
    return rows


def view_bufp_figure2(paths: list[Path], table: Table) -> Rows:
    """Figure 2: total exploitability, sum / max over information sets (chips); the last Leduc row
    adds, for BUFP(EF), the range of the max from 100 iterations on."""
    rows: Rows = {}
    for game, name, its in (("Kuhn", "kuhn", (10000,)), ("Leduc", "leduc", (100, 1000, 10000))):
        trace = _bufp_game(paths, name)
        for it in its:
            row: dict[str, object] = {}
            for col, method in BUFP_COLUMNS.items():
                r = trace[method][it]
                vals = [r["total_exploitability"], r["total_exploitability_max"]]
                if game == "Leduc" and it == 10000 and method == "bufp-ef":
                    later = [v["total_exploitability_max"] for i, v in trace[method].items() if i >= 100]
                    vals += [min(later), max(later), 100]
                row[col] = vals
            rows[_row_key(game, it)] = row
    return rows


def view_boundary_rmse(paths: list[Path], table: Table) -> Rows:
    """The boundary value's held-out RMSE per round, from its card (JSON)."""
    (p,) = paths
    fit = json.loads(p.read_text(encoding="utf-8"))["fit"]["rounds"]
    return {
        "RMSE (points)": {str(r): fit[str(r)]["val_rmse"] for r in range(5)},
        "RMSE of the mean": {str(r): fit[str(r)]["val_rmse_of_mean"] for r in range(5)},
    }


def view_es_vs_dcfr(paths: list[Path], table: Table) -> Rows:
    """ES-MCCFR against DCFR: per deck, tree and method, the iterations run and the first
    (seconds, iteration) at or below each NashConv level; the round's edges from a JSON."""
    (trace,) = [p for p in paths if p.suffix == ".csv"]
    (edges,) = [p for p in paths if p.suffix == ".json"]
    n_edges = json.loads(edges.read_text(encoding="utf-8"))
    runs: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for r in read_csv(trace):
        runs.setdefault((r["deck"], r["tree"], r["method"]), []).append(r)
    rows: Rows = {}
    for (deck, tree, method), rs in runs.items():
        row: dict[str, object] = {"iterations in 20 s": int(rs[-1]["iteration"])}
        for level in ("1", "0.3", "0.1", "0.03", "0.01"):
            hit = [r for r in rs if float(r["mean"]) <= float(level)]
            row[f"to {level}"] = [float(hit[0]["seconds"]), int(hit[0]["iteration"])] if hit else []
        rows[f"{deck} | {tree} | {n_edges[f'{deck} {tree}']:,} | {method}"] = row
    return rows


def view_figure15(paths: list[Path], table: Table) -> Rows:
    """Figure 15: per round, the geometric mean over decks of NashConv and of the MSE to the final
    strategy at some iterations (``figure15.csv`` holds log10 means)."""
    (p,) = paths
    g = {(r["round"], r["measure"], int(r["iteration"])): 10 ** float(r["mean_log10"]) for r in read_csv(p)}
    cols = {"NashConv": "nash_conv", "MSE to final": "mse_to_final"}
    rows: Rows = {}
    for rd in sorted({k[0] for k in g}):
        rows[rd] = {
            f"{name} at {it}": g[(rd, measure, it)]
            for name, measure in cols.items()
            for it in (10, 50, 100)
            if (rd, measure, it) in g
        }
    return rows


#: the BUFP paper's evidence per claim of docs/bufp.md's "Verdicts": the numbers that column
#: writes, in order (sections, figures and tables named, and the paper's values, mb/h = mb/g)
BUFP_EVIDENCE = {
    "C1.": [5.1, 1],
    "C2.": [5.1, 1],
    "C3.": [5.1, 1],
    "C4.": [5.2, 2],
    "C5.": [4.1, 5.2],
    "C6.": [5.2, 100000, 5.15, 5.33, 3.16],  # CFR, BUFP(EF), BUFP(X) after 100,000 iterations
    "C7.": [1, 2, 53.57, 25.25, 52.87],  # player 1's drop with CFR, with BUFP(EF); % recovered
    "C8.": [1, 2, 33.94, 48.94, 44.20],  # player 2's gain with CFR, with BUFP(EF); % more
    "C9.": [5.2, 48.53, 52.57, 48.09],  # the mean; CFR's drop recomputed from its tables; the mean then
    "C10.": [6],
}
#: the paper's three strategies, the opponents every Table average is taken over
BUFP_THREE = ("cfr", "bufp-ef", "bufp-x")


def _crossplay_claim(cells: dict, table: str, method: str) -> dict[str, float]:
    """The paper's comparison of ``method`` with CFR from Table 1 to ``table`` (``"2"`` forced
    check, ``"2b"`` forced bet), every average taken over the paper's three opponents (so that
    adding a method does not move the others' averages): player 1's drop, player 2's gain, %."""

    def row(t: str, a: str) -> float:
        return sum(cells[(t, a, b)] for b in BUFP_THREE) / len(BUFP_THREE)

    def col(t: str, b: str) -> float:
        return sum(cells[(t, a, b)] for a in BUFP_THREE) / len(BUFP_THREE)

    drop = {m: row("1", m) - row(table, m) for m in ("cfr", method)}
    gain = {m: col("1", m) - col(table, m) for m in ("cfr", method)}
    rec = 100 * (drop["cfr"] - drop[method]) / drop["cfr"]
    more = 100 * (gain[method] - gain["cfr"]) / gain["cfr"]
    return {"drop_cfr": drop["cfr"], "drop": drop[method], "recovered": rec,
            "gain_cfr": gain["cfr"], "gain": gain[method], "more": more, "mean": (rec + more) / 2}  # fmt: skip


def view_bufp_verdicts(paths: list[Path], table: Table) -> Rows:
    """docs/bufp.md, "Verdicts": each claim of the BUFP paper in exploitability (ours) and in the
    authors' loss (local regret), from the traces of Figures 1 and 2 with the authors' method
    (Kuhn, Leduc: ``authors.csv``), their chance-sampled CFR (a README table), and leduc5 at
    100,000 iterations with the authors' method (its trace, Tables 1 and 2's cells, the summary).
    Rows are keyed by the claim's number ("C1."); each cell lists its numbers in the doc's order."""
    k = _bufp_game([p for p in paths if p.name == "authors.csv"], "kuhn")
    lc = _bufp_game([p for p in paths if p.name == "authors.csv"], "leduc")
    (l5,) = [bufp_trace(p) for p in paths if p.name == "exploitability.csv"]
    (readme,) = [p for p in paths if p.name == "README.md"]
    sampled = {plain(r[0]): [value(x) for x in numbers(" ".join(r[1:]))] for h, rs in md_tables(readme.read_text())
               for r in rs if plain(h[0]) == "iteration"}  # fmt: skip
    (cs,) = [p for p in paths if p.name == "crossplay.csv"]
    cells = {(r["table"], r["p1"], r["p2"]): float(r["mbg"]) for r in read_csv(cs)}
    (sj,) = [p for p in paths if p.suffix == ".json"]
    summary = json.loads(sj.read_text(encoding="utf-8"))
    A, X, EF, C = "bufp-authors", "bufp-x", "bufp-ef", "cfr"
    E, L, T, MX = "exploitability", "local_regret", "total_exploitability", "total_exploitability_max"
    N5 = summary["iterations"]

    def lowest(trace, m, key):
        it = min(trace[m], key=lambda i: trace[m][i][key])
        return [trace[m][it][key], it]

    def last_rise(trace, m, key):
        its = sorted(trace[m])
        return max(b for a, b in itertools.pairwise(its) if trace[m][b][key] > trace[m][a][key])

    def below_from(trace, m, other, key):
        """The first iteration from which ``m`` stays below ``other``."""
        its = sorted(trace[m])
        above = [i for i in its if trace[m][i][key] >= trace[other][i][key]]
        return its[its.index(above[-1]) + 1] if above else its[0]

    def fall(trace, m, key):
        return 100 * (1 - trace[m][10000][key] / trace[m][1000][key])

    def slope(trace, m, key):
        return math.log10(trace[m][1000][key] / trace[m][10000][key])

    def at(trace, it, key, *ms):
        return [trace[m][it][key] for m in ms]

    later = [v[MX] for i, v in lc[EF].items() if i >= 100]
    f = {t: {m: _crossplay_claim(cells, t, m) for m in (EF, A)} for t in ("2", "2b")}
    ours, theirs = "our measure (exploitability)", "the authors' measure (their loss = local regret)"
    rows: Rows = {
        "C1.": {
            ours: [10000, *at(k, 10000, E, C, X, A), *at(lc, 10000, E, C, X, A), 1000, sampled["1,000"][0],
                   k[A][1000][E]],
            theirs: [10000, *at(k, 10000, L, C, X, A), *at(lc, 10000, L, C, X, A), below_from(lc, A, C, L), 1000,
                     sampled["1,000"][1], k[A][1000][L]],
        },
        "C2.": {
            ours: [below_from(lc, X, EF, E), *at(lc, 10000, E, X, EF), 10000, 10000, *at(k, 10000, E, X, EF)],
            theirs: [*at(lc, 10000, L, X, EF), 10000, 10000, *at(k, 10000, L, X, EF)],
        },
        "C3.": {
            ours: [*lowest(lc, EF, E), lc[EF][10000][E], 10000, last_rise(k, EF, E)],
            theirs: [*lowest(lc, EF, L), lc[EF][10000][L], 10000, last_rise(k, EF, L)],
        },
        "C4.": {
            ours: [lc[EF][1][T], lc[C][1][T], 10000, *at(lc, 10000, T, EF, C, X, A), 1000, 10000,
                   *(fall(lc, m, T) for m in (EF, C, X, A)), 10000, *at(k, 10000, T, C, EF)],
            theirs: [10000, *at(lc, 10000, L, EF, C, X, A), 1000, 10000, *(fall(lc, m, L) for m in (EF, C, X, A))],
        },
        "C5.": {
            ours: [10000, *at(lc, 10000, MX, C, X, EF), min(later), max(later), 100, lc[A][10000][MX], N5,
                   *at(l5, N5, MX, C, X, EF, A)],
            theirs: [10000, lc[C][10000][L], lc[C][1000][L], 1000, lc[EF][10000][L], *lowest(lc, EF, L), N5,
                     *at(l5, N5, L, C, EF, A)],
        },
        "C6.": {
            ours: [N5, *(summary["exploitability_mbg"][m] for m in (C, EF, X, A))],
            theirs: [*(summary["local_regret"][m] for m in (C, EF, X, A))],
        },
        "C7.": {
            ours: [N5, f["2"][EF]["drop_cfr"], f["2"][EF]["drop"], f["2b"][EF]["drop_cfr"], f["2b"][EF]["drop"],
                   f["2b"][EF]["recovered"]],
            theirs: [f["2"][A]["drop"], f["2b"][A]["drop"], f["2b"][A]["recovered"]],
        },
        "C8.": {
            ours: [N5, f["2"][EF]["gain_cfr"], f["2"][EF]["gain"], f["2b"][EF]["gain_cfr"], f["2b"][EF]["gain"],
                   f["2b"][EF]["more"]],
            theirs: [f["2"][A]["gain"], f["2b"][A]["gain"], f["2b"][A]["more"]],
        },
        "C9.": {ours: [N5, f["2b"][EF]["mean"]], theirs: [f["2b"][A]["mean"]]},
        "C10.": {
            ours: [1000, 10000, slope(lc, C, E), slope(lc, X, E), 10000, lc[X][10000][E] / lc[C][10000][E],
                   k[X][10000][E] / k[C][10000][E]],
            theirs: [10000, *at(lc, 10000, L, X, C), slope(lc, X, L), slope(lc, C, L), N5, *at(l5, N5, L, X, C),
                     k[X][10000][L] / k[C][10000][L]],
        },
    }  # fmt: skip
    for key, r in rows.items():
        r |= {"the paper's evidence": BUFP_EVIDENCE[key], "claim": [], "verdict": []}
    return rows


def view_bufp_crossplay(paths: list[Path], table: Table) -> Rows:
    """Tables 1, 2 and 2b with more strategies than the paper's (``crossplay.csv``, ``summary.json``
    of ``bufp-crossplay --methods``): each strategy's measures and its row (player 1) and column
    (player 2) averages over the paper's three opponents, so that the paper's three keep the
    averages they have without the added strategy."""
    (cs,) = [p for p in paths if p.suffix == ".csv"]
    (sj,) = [p for p in paths if p.suffix == ".json"]
    cells = {(r["table"], r["p1"], r["p2"]): float(r["mbg"]) for r in read_csv(cs)}
    summary = json.loads(sj.read_text(encoding="utf-8"))
    labels = {"cfr": "CFR", "bufp-ef": "BUFP(EF)", "bufp-x": "BUFP(X)", "bufp-authors": "BUFP (authors' code)"}
    methods = [m for m in summary["exploitability_mbg"] if m in labels]

    def avg(t: str, m: str, as_p1: bool) -> float:
        pairs = [(m, o) if as_p1 else (o, m) for o in BUFP_THREE]
        return sum(cells[(t, a, b)] for a, b in pairs) / len(pairs)

    rows: Rows = {
        "exploitability, mb/g": {labels[m]: summary["exploitability_mbg"][m] for m in methods},
        "total exploitability, chips, sum": {labels[m]: summary["total_exploitability"][m] for m in methods},
        "local regret (the authors' loss), chips": {labels[m]: summary["local_regret"][m] for m in methods},
    }
    for t, name in (("1", "Table 1"), ("2", "Table 2, forced check"), ("2b", "Table 2b, forced bet (ours)")):
        rows[f"{name}: row average, P1"] = {labels[m]: avg(t, m, True) for m in methods}
        rows[f"{name}: column average, P2"] = {labels[m]: avg(t, m, False) for m in methods}
    return rows


def view_hidden_solves(paths: list[Path], table: Table) -> Rows:
    """The exact hidden-hand solves of the small variants, one ``summary.json`` a row."""
    rows: Rows = {}
    for p in paths:
        s = json.loads(p.read_text(encoding="utf-8"))
        rows[s["variant"]] = {
            "command": [s["target_exploitability"]],
            "iterations": s["iterations"],
            "exploitability": s["exploitability"],
            "game value (Alex)": s["value"],
            "solve time": s["seconds"],
        }
    return rows


def view_cfr_fixed_costs(paths: list[Path], table: Table) -> Rows:
    """The round CFR's paths (``benchmarks/bench_cfr_fixed_costs.py``'s ``fixed_costs.json``): on the
    CPU (keys "deck | tree") the fused path's CPU time, bytes and share of the ``add`` bandwidth;
    on a GPU (keys "deck tree") the three paths' times and the graph path's bytes and share."""
    data = json.loads(paths[0].read_text(encoding="utf-8"))
    bandwidth = data["bandwidth"]["add_GBps"] * 1e9
    gpu = table.header[0] == "deck and tree"
    rows: Rows = {}
    for run in data["runs"]:
        timing, nodes = run["timing"], run["nodes"]
        path = timing["graphs" if gpu else "fused"]
        seconds = path["min_s" if gpu else "cpu_min_s"]
        share = 100 * path["executed_bytes"] / bandwidth / seconds
        if gpu:
            rows[f"{run['deck']} {run['tree']}"] = {
                "per-layer s": timing["layers"]["min_s"],
                "fused s": timing["fused"]["min_s"],
                "graphs s": seconds,
                "graphs ns per node": 1e9 * seconds / nodes,
                "executed B/node": path["executed_bytes"] / nodes,
                "share (executed)": share,
                "exploitability per-layer / graphs (30 iterations a round)": [
                    run["solves"]["layers"]["exploitability"],
                    run["solves"]["graphs"]["exploitability"],
                ],
            }
            continue
        rows[f"{run['deck']} | {run['tree']}"] = {
            "nodes": nodes,
            "edges": run["edges"],
            "CPU ns per node": 1e9 * seconds / nodes,
            "executed B/node": path["executed_bytes"] / nodes,
            "compulsory B/node": path["compulsory_bytes"] / nodes,
            "share (executed)": share,
            "share (compulsory)": 100 * path["compulsory_bytes"] / bandwidth / seconds,
            "vs per-layer path": timing["layers"]["cpu_min_s"] / seconds,
        }
    return rows


def view_leduc_speed(paths: list[Path], table: Table) -> Rows:
    """Leduc CFR+ against OpenSpiel's C++ CFR+ (``benchmarks/bench_leduc_vs_openspiel.py``):
    CPU ms per iteration and the per-round ratios as min, median, max."""
    leduc = json.loads(paths[0].read_text(encoding="utf-8"))["leduc_cfr+"]

    def spread(name: str) -> dict[str, float]:
        return {k: leduc[name][k] for k in ("min", "median", "max")}

    return {
        "ours, dense CFR": spread("ours_cpu_ms"),
        "ours, the code of 2026-11-22": spread("old_cpu_ms"),
        "OpenSpiel C++ CFRPlusSolver": spread("openspiel_cpu_ms"),
        "OpenSpiel over ours, per round": spread("ratio_cpu"),
        "the 2026-11-22 code over ours, per round": spread("ours_speedup_over_old_cpu"),
    }


def _roofline_row(roofline: dict) -> dict[str, object]:
    return {
        "s / iteration": roofline["seconds_per_iteration"],
        "aten ops": roofline["operations"],
        "bytes / iteration, executed (compulsory)": [
            roofline["executed_bytes"] / 1e6,
            roofline["compulsory_bytes"] / 1e6,
        ],
        "bytes / slot, executed (compulsory)": [
            roofline["executed_bytes_per_slot"],
            roofline["compulsory_bytes_per_slot"],
        ],
        "GB/s, executed (compulsory)": [roofline["executed_GBps"], roofline["compulsory_GBps"]],
        "share of memory rate": [roofline["executed_share_of_add"], roofline["compulsory_share_of_add"]],
        "share of cache rate": [roofline["executed_share_of_cache_copy"], roofline["compulsory_share_of_cache_copy"]],
    }


def view_poker_roofline(paths: list[Path], table: Table) -> Rows:
    """The dense CFR's and the lossless solver's rooflines from the same file (bytes of Leduc in
    millions, of Numeral211 in thousands of millions, as the doc writes M and G)."""
    data = json.loads(paths[0].read_text(encoding="utf-8"))
    device = f"{data['device']}, {data['threads']} thread"
    dense = {"device": device, **_roofline_row(data["leduc_cfr+"]["roofline"])}
    lossless = {"device": device, **_roofline_row(data["lossless"]["roofline"])}
    lossless["bytes / iteration, executed (compulsory)"] = [
        b / 1e3 for b in lossless["bytes / iteration, executed (compulsory)"]
    ]
    return {
        "dense CFR+, Leduc, float64 (2,808 slots)": dense,
        "lossless DCFR, Numeral211, float32 (151,321,800 slots)": lossless,
    }


def view_lbr_full(paths: list[Path], table: Table) -> Rows:
    """The LBR bound on the full game, one merged JSON a run (``results/lbr/merge.py``), keyed by
    the agent and where the posterior came from (the agent itself, or a model and its eps)."""
    rows: Rows = {}
    for p in paths:
        s = json.loads(p.read_text(encoding="utf-8"))
        post = s["posterior"]
        model = s.get("model", s["agent"])
        own = model == s["agent"] and s.get("model_probs", "choice") != "network"
        source = "the agent" if own else f"model {model} (eps {s['model_eps']:g})"
        rows[f"{s['agent']} | {source}"] = {
            "deals (games)": [s["deals"], s["games"]],
            "LBR gain per game": s["gain"],
            "95 % interval": s["ci95"],
            "decisions with an exact / sampled posterior (fallbacks)": [
                post["exact"],
                post["sampled"],
                post["fallback"],
            ],
        }
    return rows


VIEWS: dict[str, Callable[[list[Path], Table], Rows]] = {
    "leduc-speed": view_leduc_speed,
    "poker-roofline": view_poker_roofline,
    "lbr-full": view_lbr_full,
    "cfr-fixed-costs": view_cfr_fixed_costs,
    "hidden-solves": view_hidden_solves,
    "bufp-crossplay": view_bufp_crossplay,
    "bufp-figure1": view_bufp_figure1,
    "bufp-figure2": view_bufp_figure2,
    "bufp-verdicts": view_bufp_verdicts,
    "boundary-rmse": view_boundary_rmse,
    "es-vs-dcfr": view_es_vs_dcfr,
    "figure15": view_figure15,
}


def as_numbers(v: object) -> list[float]:
    if isinstance(v, int | float):
        return [float(v)]
    if isinstance(v, list | tuple):
        return [x for e in v for x in as_numbers(e)]
    return [value(n) for n in numbers(str(v))]


def check_table(table: Table, marker: Marker) -> list[str]:
    """Differences between a file-backed table and its files (an empty list when they agree)."""
    paths = [REPO / p for p in marker.paths]
    rows = VIEWS[marker.view](paths, table) if marker.view else default_view(paths, table)
    head = [plain(h) for h in table.header]
    problems: list[str] = []
    for r in table.rows:
        key = row_key(rows, r)
        if key is None:
            problems.append(f"{table.where()}: row {plain(r[0])!r} is not in {marker.paths}")
            continue
        k = key.count(" | ") + 1  # the columns of the key are matched as text
        for h, cell in zip(head[k:], r[k:], strict=False):
            want = numbers(cell)
            if h not in rows[key] and not want and not cell.strip("-· "):
                continue  # an empty cell the file has no column for
            if h not in rows[key]:
                problems.append(f"{table.where()}: row {key!r}, column {h!r} is not in the file")
                continue
            got = as_numbers(rows[key][h])
            if len(got) != len(want) or not all(agrees(w, g) for w, g in zip(want, got, strict=True)):
                problems.append(f"{table.where()}: row {key!r}, column {h!r}: doc {want}, file {got}")
    return problems


# ---------------------------------------------------------------- citations in the text

#: ``results/...`` as the docs' text cites a results folder or file
CITATION = re.compile(r"results/[\w.+-]+(?:/[\w.+-]+)*/?")
#: where a sentence (or a paragraph) starts: after ``.``/``!``/``?`` (and a closing parenthesis)
#: before a capital, a quote or a bracket, or after a blank line
SENTENCE_START = re.compile(r"[.!?]\)?\s+(?=[A-Z*`(\[])|\n\s*\n")
NOT_COMMITTED = re.compile(r"not\s+committed")


def measured_numbers(text: str) -> set[float]:
    """The numbers of ``text`` with decimals or an exponent (8.9e-4, 1.34): measurements, not
    the counts and labels (1,000 iterations, HS(30), eq. (2)) that any two sentences share."""
    return {value(n) for n in numbers(text) if re.search(r"[.eE]", n.replace(",", ""))}


def sentence_before(text: str, end: int) -> str:
    """The text from the start of the sentence that holds position ``end`` up to it."""
    starts = [m.end() for m in SENTENCE_START.finditer(text, 0, end)]
    return text[starts[-1] if starts else 0 : end]


def not_committed_numbers(readme: str) -> set[float]:
    """The measured numbers a README says it does not hold: those of each clause that leads up to
    a "not committed" (from its sentence's start to the phrase)."""
    out: set[float] = set()
    for m in NOT_COMMITTED.finditer(readme):
        out |= measured_numbers(sentence_before(readme, m.start()))
    return out


def readmes_over(cited: str) -> list[Path]:
    """The README.md files of a cited results path's folder and of each folder above it, up to
    results/NAME."""
    top = (REPO / "results").resolve()
    path = (REPO / cited).resolve()
    folder = path if path.is_dir() else path.parent
    found = []
    while folder != top and top in folder.parents:
        if (folder / "README.md").is_file():
            found.append(folder / "README.md")
        folder = folder.parent
    return found


def uncommitted_citations(doc: str, text: str | None = None) -> list[str]:
    """Numbers that ``doc`` cites from a results folder whose README says they are not committed
    there: a sentence that gives a measured number and ends in a ``results/...`` citation, where
    a README over the cited path gives that number in a clause that says "not committed". A
    sentence that itself says "not committed" is honest and passes."""
    if text is None:
        text = (REPO / doc).read_text(encoding="utf-8")
    problems = []
    for m in CITATION.finditer(text):
        sentence = sentence_before(text, m.start())
        claimed = measured_numbers(sentence)
        if not claimed or NOT_COMMITTED.search(sentence):
            continue
        for readme in readmes_over(m.group(0).rstrip(".")):
            absent = sorted(claimed & not_committed_numbers(readme.read_text(encoding="utf-8")))
            if absent:
                line = text.count("\n", 0, m.start()) + 1
                where = readme.relative_to(REPO)
                problems.append(f"{doc}:{line}: {absent} cited from {m.group(0)}, but {where} says not committed")
    return problems
