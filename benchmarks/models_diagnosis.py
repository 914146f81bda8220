"""Issue 47's diagnosis: why a model of a compact-tree table loses its table's strength, measured.

Each configuration solves a deck (DCFR to exploitability 0.025, with or without a tremble of 1e-3),
fits a model (held-out decision points or none, uniform or play-weighted rows, the paper's
authors' capacity or the registered run's) with the code of one of two versions, and plays table
and model against random in both seats (3,000 games a matchup, sample seed 1). One JSON line per
(deck, configuration) on stdout. ``--old-src`` and ``--new-src`` are the ``src`` folders of two
checkouts (``git worktree add``): the version before issue 47 (compact rows of one history's card
codes) and the one with state features, both before its defaults changed (eta 0.1, 700 rounds,
uniform rows, a tenth held out, unless a configuration says otherwise).

    python benchmarks/models_diagnosis.py --decks 100,101 --deck-file decks_10000.pt \\
        --old-src /tmp/old/src --new-src /tmp/new/src --work runs/diagnosis > records.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

#: (name, code version, solve options, fit options)
CONFIGS = [
    ("old-default", "old", "", ""),
    ("old-tremble-play", "old", "--tremble 0.001", "--row-weights play"),
    ("old-val0-play", "old", "", "--validation-fraction 0 --row-weights play"),
    ("old-val0-tremble-play", "old", "--tremble 0.001", "--validation-fraction 0 --row-weights play"),
    ("new-default", "new", "", ""),
    ("new-val0", "new", "", "--validation-fraction 0"),
    ("new-val0-play", "new", "", "--validation-fraction 0 --row-weights play"),
    ("new-val0-tremble", "new", "--tremble 0.001", "--validation-fraction 0"),
    ("new-val0-tremble-play", "new", "--tremble 0.001", "--validation-fraction 0 --row-weights play"),
    (
        "new-val0-tremble-play-reg",
        "new",
        "--tremble 0.001",
        "--validation-fraction 0 --row-weights play --learning-rate 0.3 --rounds 200",
    ),
]
GAMES = "3000"


def _pasur(src: str, args: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": src}
    cmd = [sys.executable, "-c", "from pasur.cli import main; main()", *args]
    return subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout


def one(src: str, deck: list[str], tag: str, sopts: str, fopts: str, work: Path) -> dict:
    """Solve (once per version and tremble), fit, and the four matchups against random."""
    sdir = work / f"{Path(src).parent.name}-solve{'-tremble' if sopts else ''}"
    if not (sdir / "strategy.parquet").exists():
        got = _pasur(src, ["solve", *deck, "--method", "dcfr", *sopts.split(), "--out", str(sdir), "--json"])
        (work / f"{sdir.name}.json").write_text(got)
    solve = json.loads((work / f"{sdir.name}.json").read_text())
    model = work / f"{tag}.ubj"
    t0 = time.time()
    fit = json.loads(
        _pasur(
            src, ["fit", str(sdir / "strategy.parquet"), "--out", str(model), "--overwrite", "--json", *fopts.split()]
        )
    )
    fit_seconds = round(time.time() - t0, 1)
    res = {}
    for name, a, b in [
        ("table_vs_random", f"table:{sdir}", "random"),
        ("model_vs_random", f"model:{model}", "random"),
        ("random_vs_table", "random", f"table:{sdir}"),
        ("random_vs_model", "random", f"model:{model}"),
    ]:
        r = json.loads(
            _pasur(src, ["selfplay", *deck, "--alex", a, "--bob", b, "--games", GAMES, "--sample-seed", "1", "--json"])
        )
        res[name] = round(r["mean"], 3)
    v = fit["validation"]
    return {
        **res,
        "gap_alex": round(res["table_vs_random"] - res["model_vs_random"], 3),
        "gap_bob": round(res["random_vs_model"] - res["random_vs_table"], 3),
        "solve_seconds": solve["seconds"],
        "exploitability": solve["exploitability"],
        "fit_seconds": fit_seconds,
        "rows": fit["training"]["rows_used"],
        "held_rmse": v.get("rmse"),
        "agreement": v.get("agreement"),
        "train_rmse": v["train_rmse"],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--decks", required=True, help="deck numbers of the deck file, comma-separated")
    p.add_argument("--deck-file", required=True)
    p.add_argument("--old-src", required=True)
    p.add_argument("--new-src", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--only", default="", help="configuration names, comma-separated (default: all)")
    args = p.parse_args()
    for d in map(int, args.decks.split(",")):
        deck = ["--deck-file", args.deck_file, "--deck-id", f"{Path(args.deck_file).stem}-{d}"]
        work = Path(args.work) / str(d)
        work.mkdir(parents=True, exist_ok=True)
        for tag, code, sopts, fopts in CONFIGS:
            if args.only and tag not in args.only.split(","):
                continue
            src = args.old_src if code == "old" else args.new_src
            rec = one(src, deck, tag, sopts, fopts, work)
            print(json.dumps({"deck": d, "config": tag, "code": code, "solve": sopts, "fit": fopts, **rec}), flush=True)


if __name__ == "__main__":
    main()
