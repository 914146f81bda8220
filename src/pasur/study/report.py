"""Summary tables over a sweep's outputs, queried with DuckDB from ``DIR/manifest.parquet``
(status, attempts, timings, errors) and ``DIR/records.parquet`` (every done deck's record);
the records are rebuilt from the decks' ``record.json`` when the Parquet file is missing or
behind (a driver killed before writing it)."""

from __future__ import annotations

from pathlib import Path

from pasur.common.errors import PasurInputError
from pasur.common.outputs import atomic_path, check_output_file
from pasur.study.manifest import SCHEMA
from pasur.study.sweep import MANIFEST_FILE, RECORDS_FILE, read_records, records_table

#: point values (Alex minus Bob), rates (shares of games) and model errors are reported apart
VALUE_COLUMNS = ("exact_value", "value", "nash_conv", "exploitability", "known_value")
RATE_COLUMNS = ("fair_value", "fair_value_ties_to_alex")
MODEL_COLUMNS = ("model_rmse",)
SIZE_COLUMNS = ("nodes", "tree_bytes")
TIME_COLUMNS = ("build_seconds", "exact_seconds", "cfr_seconds", "fit_seconds", "seconds")
#: manifest columns that the records hold too (the records' values are the full ones)
_SHARED = ("deck", "value", "exact_value", "nash_conv", "exploitability", "nodes", "fair_value")


def _sql_str(p: Path) -> str:
    """A path as an SQL string literal (views cannot take prepared parameters)."""
    return "'" + str(p).replace("'", "''") + "'"


def _arrow(relation):
    """A query's rows as an Arrow table (``to_arrow_table`` in DuckDB 2, ``arrow`` in 1.x)."""
    fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
    return fetch()


def connect(out: Path):
    """A DuckDB connection with the views ``manifest`` and ``records`` of the sweep in ``out``."""
    import duckdb
    import pyarrow.parquet as pq

    out = Path(out)
    if not out.is_dir():
        raise PasurInputError(f"no sweep folder {out}")
    if not (out / MANIFEST_FILE).is_file():
        raise PasurInputError(f"{out} holds no sweep ({MANIFEST_FILE} not found)")
    con = duckdb.connect()
    con.execute(f"CREATE VIEW manifest AS {_select_relabelled(out / MANIFEST_FILE)}")
    done = con.execute("SELECT count(*) FROM manifest WHERE status = 'done'").fetchone()[0]
    path = out / RECORDS_FILE
    if path.is_file() and pq.read_metadata(path).num_rows == done:
        con.execute(f"CREATE VIEW records AS {_select_relabelled(path)}")
    else:
        records = read_records(out)
        table = records_table(records) if records else None
        if table is None:
            con.execute("CREATE TABLE records (deck_id VARCHAR, deck VARCHAR)")
        else:
            con.register("records_arrow", table)
            con.execute("CREATE VIEW records AS SELECT * FROM records_arrow")
    return con


def _select_relabelled(path: Path) -> str:
    """``SELECT`` of a Parquet file of the sweep; one written before docs/conventions.md (an
    ``exploitability`` column that held NashConv, no ``nash_conv``) relabelled: ``nash_conv``
    and ``exploitability = nash_conv / 2``."""
    import pyarrow.parquet as pq

    names = pq.read_schema(path).names
    src = f"read_parquet({_sql_str(path)})"
    if "exploitability" in names and "nash_conv" not in names:
        return f"SELECT * REPLACE (exploitability / 2 AS exploitability), exploitability AS nash_conv FROM {src}"
    return f"SELECT * FROM {src}"


def _columns(con, view: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE {view}").fetchall()]


def deck_query(con) -> str:
    """One row per deck: the manifest's status and timings joined with the deck's record."""
    rec = [c for c in _columns(con, "records") if c != "deck_id"]
    have = set(_columns(con, "manifest"))  # a manifest of an older version lacks newer columns
    man = [c for c in SCHEMA.names if (c not in _SHARED or c == "deck") and c in have]
    if "seconds" in rec:
        man = [f'm."{c}" AS task_seconds' if c == "seconds" else f'm."{c}"' for c in man]
    else:
        man = [f'm."{c}"' for c in man]
    kept = [c for c in rec if c != "deck"]
    shared = [f'm."{c}"' for c in _SHARED if c != "deck" and c not in kept]
    cols = ", ".join([*man, *shared, *(f'r."{c}"' for c in kept)])
    return f"SELECT {cols} FROM manifest m LEFT JOIN records r USING (deck_id)"


def summary(out: Path) -> dict:
    """The report's tables as lists of rows (dicts): status counts, values, tree sizes, timings."""
    con = connect(out)
    rec = set(_columns(con, "records"))
    status = [
        {"status": s, "decks": n}
        for s, n in con.execute("SELECT status, count(*) FROM manifest GROUP BY status ORDER BY status").fetchall()
    ]
    matchups = sorted(c for c in rec if c.endswith(("_mean", "_win", "_tie", "_loss")) and c != "fair_value")
    values = _stats(con, rec, [*VALUE_COLUMNS, *(c for c in matchups if c.endswith("_mean"))])
    rates = _stats(con, rec, [*RATE_COLUMNS, *(c for c in matchups if not c.endswith("_mean"))])
    models = _stats(con, rec, list(MODEL_COLUMNS))
    sizes = _stats(con, rec, list(SIZE_COLUMNS), QUANTILES)
    timings = []
    for c in TIME_COLUMNS:
        if c in rec:
            n, total, mean = con.execute(f'SELECT count("{c}"), sum("{c}"), avg("{c}") FROM records').fetchone()
            if n:
                timings.append(
                    {
                        "phase": c.removesuffix("_seconds") if c != "seconds" else "deck",
                        "n": n,
                        "total_seconds": total,
                        "mean_seconds": mean,
                    }
                )
    n, total, mean, span = con.execute(
        "SELECT count(seconds), sum(seconds), avg(seconds), epoch(max(finished)) - epoch(min(started)) FROM manifest"
    ).fetchone()
    if n:
        timings.append({"phase": "task (worker)", "n": n, "total_seconds": total, "mean_seconds": mean})
    finished = sum(r["decks"] for r in status if r["status"] in ("done", "failed"))
    return {
        "out": str(out),
        "status": status,
        "values": values,
        "rates": rates,
        "models": models,
        "tree_sizes": sizes,
        "timings": timings,
        "span_seconds": span,
        "decks_per_hour": round(finished / span * 3600, 1) if span else None,
    }


#: the summary of a column of the records: count, mean, sd, min, median and max (SQL of column ``c``)
MOMENTS = {"n": "count({c})", "mean": "avg({c})", "std": "stddev_samp({c})", "min": "min({c})",
           "median": "median({c})", "max": "max({c})"}  # fmt: skip
#: the summary of a size: count, median, 90th and 99th percentiles and max
QUANTILES = {"n": "count({c})", "median": "median({c})", "p90": "quantile_cont({c}, 0.9)",
             "p99": "quantile_cont({c}, 0.99)", "max": "max({c})"}  # fmt: skip


def _stats(con, present: set[str], columns: list[str], aggregates: dict[str, str] = MOMENTS) -> list[dict]:
    """The ``aggregates`` (by default :data:`MOMENTS`) of each column present with a value."""
    out = []
    for c in columns:
        if c not in present:
            continue
        select = ", ".join(sql.format(c=f'"{c}"') for sql in aggregates.values())
        row = con.execute(f"SELECT {select} FROM records").fetchone()
        if row[0]:
            out.append(dict(zip(("column", *aggregates), (c, *row), strict=True)))
    return out


def deck_rows(out: Path) -> list[dict]:
    """The per-deck table (what ``--csv`` writes)."""
    con = connect(out)
    return _arrow(con.sql(deck_query(con))).to_pylist()


def write_csv(out: Path, path: Path, *, overwrite: bool = False) -> int:
    """Write the per-deck table as CSV, atomically; returns the number of rows."""
    import pyarrow.csv as pcsv

    check_output_file(path, overwrite=overwrite, option="--csv")
    con = connect(out)
    table = _arrow(con.sql(deck_query(con)))
    with atomic_path(path) as tmp:
        pcsv.write_csv(table, tmp)
    return table.num_rows
