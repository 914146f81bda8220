"""Issue 47's check of the README's own commands with their default options: for each deck of a
plan, ``pasur solve`` (DCFR to the default target) then ``pasur fit`` (every option at its default)
then self-play, table and model each against random in both seats, on the compact tree or the
paper tree. One JSON line per deck and tree, appended to ``--out/records.jsonl`` (a rerun skips
what is there), and ``--out/summary.md`` over them.

    python benchmarks/models_default.py sizes --deck-file decks_10000.pt --first 110 --count 10 \\
        --max-paper-nodes 20000000 --out results/models-default
    python benchmarks/models_default.py run --deck-file decks_10000.pt --tree compact --work runs/md \\
        --out results/models-default
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

GAMES = 3000
SAMPLE_SEED = 1
TOLERANCE = 1.0
PASUR = [sys.executable, "-c", "from pasur.cli import main; main()"]


def _pasur(*args: str) -> str:
    return subprocess.run([*PASUR, *args], check=True, capture_output=True, text=True).stdout


def sizes(args) -> None:
    """The plan's decks: the first ``count`` from ``first`` on whose paper tree has at most
    ``max_paper_nodes`` nodes (tree sizes only: nothing solved), written to ``decks.json``."""
    chosen, seen = [], []
    deck = args.first
    while len(chosen) < args.count:
        did = f"{Path(args.deck_file).stem}-{deck}"
        stats = json.loads(_pasur("tree-stats", "--deck-file", args.deck_file, "--deck-id", did, "--json", "-q"))
        nodes = {s["tree"]: s["nodes"] for s in stats}
        seen.append({"deck_id": did, **nodes})
        print(json.dumps(seen[-1]), flush=True)
        if nodes["paper"] <= args.max_paper_nodes:
            chosen.append(did)
        deck += 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rule = {"first": args.first, "count": args.count, "max_paper_nodes": args.max_paper_nodes}
    (out / "decks.json").write_text(json.dumps({"rule": rule, "decks": chosen, "sizes": seen}, indent=1) + "\n")


def _mean(deck_file: str, did: str, alex: str, bob: str) -> float:
    got = _pasur(
        "selfplay",
        "--deck-file",
        deck_file,
        "--deck-id",
        did,
        "--alex",
        alex,
        "--bob",
        bob,
        "--games",
        str(GAMES),
        "--sample-seed",
        str(SAMPLE_SEED),
        "--json",
    )
    return json.loads(got)["mean"]


def one_deck(deck_file: str, did: str, tree: str, work: Path) -> dict:
    """The README's three steps on one deck, every option at its default but the tree."""
    folder = work / tree / did
    t0 = time.time()
    solve = json.loads(
        _pasur(
            "solve",
            "--deck-file",
            deck_file,
            "--deck-id",
            did,
            "--tree",
            tree,
            "--method",
            "dcfr",
            "--out",
            str(folder),
            "--overwrite",
            "--json",
        )
    )
    t1 = time.time()
    fit = json.loads(
        _pasur("fit", str(folder / "strategy.parquet"), "--out", str(folder / "model.ubj"), "--overwrite", "--json")
    )
    t2 = time.time()
    table, model = f"table:{folder}", f"model:{folder / 'model.ubj'}"
    rec = {
        "deck_id": did,
        "tree": tree,
        "nodes": solve["tree_nodes"],
        "exploitability": solve["exploitability"],
        "table_vs_random": _mean(deck_file, did, table, "random"),
        "model_vs_random": _mean(deck_file, did, model, "random"),
        "random_vs_table": _mean(deck_file, did, "random", table),
        "random_vs_model": _mean(deck_file, did, "random", model),
    }
    rec["gap_as_alex"] = rec["table_vs_random"] - rec["model_vs_random"]
    rec["gap_as_bob"] = rec["random_vs_model"] - rec["random_vs_table"]
    v = fit["validation"]
    rec.update(
        held_out_rmse=v.get("rmse"),
        play_weighted_rmse=v.get("play_weighted_rmse"),
        agreement=v.get("agreement"),
        fit_play_check=fit.get("play_check"),
        solve_seconds=round(t1 - t0, 1),
        fit_seconds=round(t2 - t1, 1),
        play_seconds=round(time.time() - t2, 1),
    )
    return rec


def run(args) -> None:
    out = Path(args.out)
    plan = json.loads((out / "decks.json").read_text())
    records = out / "records.jsonl"
    done = set()
    if records.exists():
        done = {(r["deck_id"], r["tree"]) for r in map(json.loads, records.read_text().splitlines())}
    for did in plan["decks"]:
        if (did, args.tree) in done:
            continue
        rec = one_deck(args.deck_file, did, args.tree, Path(args.work))
        with records.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(json.dumps({k: rec[k] for k in ("deck_id", "tree", "gap_as_alex", "gap_as_bob")}), flush=True)
    summarize(out)


def summarize(out: Path) -> None:
    """``summary.md``: per deck and tree, the four means and the two gaps; the claim per tree."""
    recs = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    lines = [
        "| tree | deck | nodes | table vs random | model vs random | random vs table | random vs model "
        "| gap as Alex | gap as Bob |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in recs:
        lines.append(
            f"| {r['tree']} | {r['deck_id']} | {r['nodes']:,} | {r['table_vs_random']:+.2f} | "
            f"{r['model_vs_random']:+.2f} | {r['random_vs_table']:+.2f} | {r['random_vs_model']:+.2f} | "
            f"{r['gap_as_alex']:+.2f} | {r['gap_as_bob']:+.2f} |"
        )
    lines.append("")
    for tree in sorted({r["tree"] for r in recs}):
        mine = [r for r in recs if r["tree"] == tree]
        held = sum(r["gap_as_alex"] <= TOLERANCE and r["gap_as_bob"] <= TOLERANCE for r in mine)
        worst = max(max(r["gap_as_alex"], r["gap_as_bob"]) for r in mine)
        lines.append(
            f"- {tree}: the model within {TOLERANCE:g} point of its table in both seats on {held} of "
            f"{len(mine)} decks (largest gap {worst:+.2f})"
        )
    (out / "summary.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sizes")
    s.add_argument("--deck-file", required=True)
    s.add_argument("--first", type=int, required=True)
    s.add_argument("--count", type=int, default=10)
    s.add_argument("--max-paper-nodes", type=int, required=True)
    s.add_argument("--out", required=True)
    r = sub.add_parser("run")
    r.add_argument("--deck-file", required=True)
    r.add_argument("--tree", choices=("compact", "paper"), required=True)
    r.add_argument("--work", required=True)
    r.add_argument("--out", required=True)
    args = p.parse_args()
    sizes(args) if args.cmd == "sizes" else run(args)


if __name__ == "__main__":
    main()
