"""One deck-values file from several runs over the same deck list (two machines that met in the
middle): every deck once, and every deck solved by more than one run checked to have the same
value and nodes in each (a cross-check of the devices). The first file's row is kept.

    python -m pasur.study.deck_values_merge OUT.parquet IN.parquet [IN.parquet ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

from pasur.common.errors import PasurInputError
from pasur.study.deck_values import COLUMNS, write_rows


def merge(paths: list[Path]) -> tuple[list[dict], int]:
    """The rows of ``paths``, one per deck id, and how many decks more than one file holds.
    Refused: a deck whose files disagree on its value, nodes or deck hash."""
    import pyarrow.parquet as pq

    kept: dict[str, dict] = {}
    overlap = 0
    for path in paths:
        for row in pq.read_table(path, columns=list(COLUMNS)).to_pylist():
            old = kept.get(row["deck_id"])
            if old is None:
                kept[row["deck_id"]] = row
                continue
            overlap += 1
            for col in ("value", "nodes", "deck_hash", "index"):
                if old[col] != row[col]:
                    raise PasurInputError(f"deck {row['deck_id']}: {col} {old[col]} in one file, {row[col]} in {path}")
    return list(kept.values()), overlap


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("error: usage: python -m pasur.study.deck_values_merge OUT.parquet IN.parquet ...", file=sys.stderr)
        return 2
    try:
        rows, overlap = merge([Path(a) for a in argv[1:]])
        write_rows(Path(argv[0]), rows)
    except (OSError, PasurInputError, ValueError, KeyError) as e:  # pyarrow: ArrowInvalid is a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{len(rows)} decks, {overlap} solved in more than one file and equal there")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
