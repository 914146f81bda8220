"""Issue 47's check of the README's own commands with their default options: for each deck of a
plan, ``pasur solve`` (DCFR to the default target) then ``pasur fit`` (every option at its default)
then self-play, table and model each against random in both seats, on the compact tree or the
paper tree. One JSON line per deck and tree, appended to ``--out/records.jsonl`` (a rerun skips
what is there), and ``--out/summary.md`` over them.

    python benchmarks/models_default.py sizes --deck-file decks_10000.pt --first 110 --count 10 \\
        --max-paper-nodes 20000000 --out results/models-default
    python benchmarks/models_default.py run --deck-file decks_10000.pt --tree compact --work runs/md \\
        --out results/models-default
    python benchmarks/models_default.py cross --deck-file decks_10000.pt --first 130 --count 20 \\
        --work runs/md --out results/models-default

``cross`` is the paper's second next step measured in play: one model fitted on the compact
tables of ``count`` decks from ``first`` on (``pasur fit A B ... --validate-on`` the plan's
decks), played on the plan's decks, which it never saw, against random and against each deck's
own table, both seats, beside the per-deck models of ``run`` (``cross.json``, ``cross.md``).
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
    """``summary.md``: per tree, a table of the decks (the four means and the two gaps) and the claim."""
    recs = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    plan = json.loads((out / "decks.json").read_text())["decks"]
    recs.sort(key=lambda r: plan.index(r["deck_id"]))  # the plan's order, whichever worker ran a deck
    lines = []
    for tree in ("compact", "paper"):
        mine = [r for r in recs if r["tree"] == tree]
        if not mine:
            continue
        lines += [
            f"| deck ({tree} tree) | nodes | table vs random | model vs random | random vs table | random vs model "
            "| gap as Alex | gap as Bob |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in mine:
            lines.append(
                f"| {r['deck_id']} | {r['nodes']:,} | {r['table_vs_random']:+.2f} | {r['model_vs_random']:+.2f} | "
                f"{r['random_vs_table']:+.2f} | {r['random_vs_model']:+.2f} | {r['gap_as_alex']:+.2f} | "
                f"{r['gap_as_bob']:+.2f} |"
            )
        held = sum(r["gap_as_alex"] <= TOLERANCE and r["gap_as_bob"] <= TOLERANCE for r in mine)
        worst = max(max(r["gap_as_alex"], r["gap_as_bob"]) for r in mine)
        lines += [
            "",
            f"- {tree} tree: the model within {TOLERANCE:g} point of its table in both seats on {held} of "
            f"{len(mine)} decks done (largest gap {worst:+.2f}).",
            "",
        ]
    (out / "summary.md").write_text("\n".join(lines))


def _write_cross_md(out: Path, rows: list[dict]) -> None:
    """``cross.md``: the cross-deck model beside each deck's table and per-deck model."""
    lines = [
        "| deck | random vs random | cross vs random (table) | random vs cross (table) | cross vs table "
        "| table vs cross | cross gap Alex / Bob | per-deck gap Alex / Bob |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        rr = f"{r['random_vs_random']:+.2f}" if "random_vs_random" in r else "not measured"
        lines.append(
            f"| {r['deck_id']} | {rr} | {r['cross_vs_random']:+.2f} ({r['table_vs_random']:+.2f}) | "
            f"{r['random_vs_cross']:+.2f} ({r['random_vs_table']:+.2f}) | {r['cross_vs_table']:+.2f} | "
            f"{r['table_vs_cross']:+.2f} | {r['cross_gap_as_alex']:+.2f} / {r['cross_gap_as_bob']:+.2f} | "
            f"{r['per_deck_model_gap_as_alex']:+.2f} / {r['per_deck_model_gap_as_bob']:+.2f} |"
        )
    mean = lambda k: sum(r[k] for r in rows) / len(rows)  # noqa: E731
    lines += [
        "",
        f"- mean gap to the deck's table against random: cross-deck model {mean('cross_gap_as_alex'):+.2f} as Alex, "
        f"{mean('cross_gap_as_bob'):+.2f} as Bob; per-deck models {mean('per_deck_model_gap_as_alex'):+.2f} and "
        f"{mean('per_deck_model_gap_as_bob'):+.2f}",
        f"- mean head to head, points a game for the cross-deck model: {mean('cross_vs_table'):+.2f} as Alex, "
        f"{-mean('table_vs_cross'):+.2f} as Bob (the table is the deck's near-equilibrium)",
    ]
    if all("random_vs_random" in r for r in rows):
        lines.append(
            f"- mean, Alex's points: random vs random {mean('random_vs_random'):+.2f}, cross vs random "
            f"{mean('cross_vs_random'):+.2f}, random vs cross {mean('random_vs_cross'):+.2f}"
        )
    (out / "cross.md").write_text("\n".join(lines) + "\n")


def baseline(args) -> None:
    """Random against random on each deck of ``cross.json`` (3,000 games, sample seed 1): how far the
    cross-deck model is from playing at random."""
    out = Path(args.out)
    data = json.loads((out / "cross.json").read_text())
    for r in data["decks"]:
        r["random_vs_random"] = _mean(args.deck_file, r["deck_id"], "random", "random")
    (out / "cross.json").write_text(json.dumps(data, indent=1) + "\n")
    _write_cross_md(out, data["decks"])


def cross(args) -> None:
    """One model across decks, judged in play on the plan's decks (their compact tables from ``run``)."""
    out, work = Path(args.out), Path(args.work)
    plan = json.loads((out / "decks.json").read_text())
    stem = Path(args.deck_file).stem
    train = []
    for deck in range(args.first, args.first + args.count):
        did = f"{stem}-{deck}"
        if did in plan["decks"]:
            raise SystemExit(f"error: training deck {did} is a plan deck")
        folder = work / "cross-train" / did
        if not (folder / "strategy.parquet").exists():
            _pasur(
                "solve",
                "--deck-file",
                args.deck_file,
                "--deck-id",
                did,
                "--method",
                "dcfr",
                "--out",
                str(folder),
                "--overwrite",
            )
        train.append(str(folder / "strategy.parquet"))
    unseen = [str(work / "compact" / did / "strategy.parquet") for did in plan["decks"]]
    model = work / "cross-model.ubj"
    t0 = time.time()
    args_v = [x for u in unseen for x in ("--validate-on", u)]
    fit = json.loads(
        _pasur("fit", *train, *args_v, "--out", str(model), "--overwrite", "--check-games", str(GAMES), "--json")
    )
    fit_seconds = round(time.time() - t0, 1)
    per_deck = {
        r["deck_id"]: r
        for r in map(json.loads, (out / "records.jsonl").read_text().splitlines())
        if r["tree"] == "compact"
    }
    rows = []
    for did, check in zip(plan["decks"], fit["play_check"], strict=True):
        table = f"table:{work / 'compact' / did}"
        alex, bob = check["seats"]["alex"], check["seats"]["bob"]
        own = per_deck[did]
        rows.append(
            {
                "deck_id": did,
                "table_vs_random": alex["table"],
                "cross_vs_random": alex["model"],
                "random_vs_table": -bob["table"],
                "random_vs_cross": -bob["model"],
                "cross_vs_table": _mean(args.deck_file, did, f"model:{model}", table),
                "table_vs_cross": _mean(args.deck_file, did, table, f"model:{model}"),
                "per_deck_model_gap_as_alex": own["gap_as_alex"],
                "per_deck_model_gap_as_bob": own["gap_as_bob"],
                "cross_gap_as_alex": alex["gap"],
                "cross_gap_as_bob": bob["gap"],
                "play_agreement": check["play_agreement"],
            }
        )
    meta = {
        "training_decks": [Path(t).parent.name for t in train],
        "rows_used": fit["training"]["rows_used"],
        "rows_available": fit["training"]["rows_available"],
        "fit_seconds": fit_seconds,
        "validation": {k: v for k, v in fit["validation"].items() if k != "per_deck"},
        "games": GAMES,
    }
    (out / "cross.json").write_text(json.dumps({"model": meta, "decks": rows}, indent=1) + "\n")
    _write_cross_md(out, rows)


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
    c = sub.add_parser("cross")
    c.add_argument("--deck-file", required=True)
    c.add_argument("--first", type=int, required=True)
    c.add_argument("--count", type=int, required=True)
    c.add_argument("--work", required=True)
    c.add_argument("--out", required=True)
    b = sub.add_parser("baseline")
    b.add_argument("--deck-file", required=True)
    b.add_argument("--out", required=True)
    m = sub.add_parser("summary")
    m.add_argument("--out", required=True)
    args = p.parse_args()
    if args.cmd == "summary":
        summarize(Path(args.out))
        return
    {"sizes": sizes, "run": run, "cross": cross, "baseline": baseline}[args.cmd](args)


if __name__ == "__main__":
    main()
