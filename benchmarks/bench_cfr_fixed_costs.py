"""Fixed costs out of the Pasur round-CFR iteration (issue 43, items 1 and 2): the previous code
path and the new ones, in one process, alternating, on one device.

Paths (:class:`pasur.solve.cfr.RoundCFR`'s options):

* ``layers``: ``fused=False``: the update layer by layer, the code before this change;
* ``fused``: each player's layers updated together (:mod:`pasur.solve.layer_groups`), eager;
* ``graphs``: fused, and on a CUDA device each iteration replayed as a captured CUDA graph
  (:mod:`pasur.solve.iteration_graph`); only with ``--device cuda``;
* ``native``: the whole iteration in one call of the compiled CPU kernel (:mod:`pasur.solve.native`,
  ``CFRParams(kernel="native")``); only on the CPU. (``layers``, ``fused`` and ``graphs`` run with
  ``kernel="torch"``.) Its operations are not torch's: its executed bytes are not counted (0);
* ``native@REV`` (``--before REV``): the kernel's C source as it was at commit ``REV``, compiled
  beside today's and run through today's binding (so ``REV`` must have the same ``pasur_layer``),
  timed like the others; its state after the timed iterations (regrets, average, strategy,
  reaches) is compared with ``native``'s, bit for bit (``same_state``).

Per deck (``--decks``) and tree (``--trees``):

1. **Time per whole-game DCFR iteration**: every round's solvers of all paths side by side; after
   ``--warmup`` iterations each (a graph is captured at the second), ``--repeats`` rounds of one
   timed iteration per path in turn (``torch.cuda.synchronize()`` before and after each); per
   round the fastest, summed over the rounds (as ``bench_cfr.py``), and the medians' sum. A sample
   is ``--block`` consecutive iterations of one path (its time over ``--block``), as a solve runs
   them: with ``--block 1`` (the runs before 2026-11-27 evening) each iteration follows the other
   paths' and finds their data, not its own, in the caches.
2. **Traffic** (the roofline): bytes one iteration moves, counted from its operations
   (``cfr_traffic.executed_bytes``) and the fused kernel's lower bound (``compulsory_bytes``),
   per node; with the device's bandwidth (``bench_bandwidth.bandwidth``, measured in the same
   run), the time those bytes need at that bandwidth over the measured time: the achieved share.
3. **Iterates**: ``solve_cfr`` with ``--solve-iterations`` DCFR iterations a round on each path:
   the largest difference of any average-strategy probability from the ``layers`` path's, the
   root value and the exploitability (NashConv / 2) of each (bit for bit on the CPU; on a GPU,
   scatter-adds sum in no fixed order).

Writes ``DIR/fixed_costs.json`` and ``DIR/fixed_costs.md``; prints the tables as it goes.

    python benchmarks/bench_cfr_fixed_costs.py --device cuda --out DIR
    python benchmarks/bench_cfr_fixed_costs.py --device cpu --out DIR --decks ref1,ref2 --trees compact
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bandwidth import bandwidth
from cfr_traffic import compulsory_bytes, executed_bytes

from pasur.game.cards import read_deck_file
from pasur.game.state import GameState
from pasur.solve import native
from pasur.solve.cfr import CFRParams, RoundCFR
from pasur.solve.native import toolchain
from pasur.solve.rounds import solve_cfr
from pasur.solve.tree import build_tree

REPO = Path(__file__).resolve().parent.parent
DECKS = REPO.parent / "shared" / "decks" / "reference-decks.json"
if not DECKS.exists():
    DECKS = REPO / "tests" / "data" / "reference-decks.json"
PATHS = {"layers": {"fused": False, "graphs": False}, "fused": {"fused": True, "graphs": False}}
GRAPHS = {"graphs": {"fused": True, "graphs": True}}
NATIVE = {"native": {"kernel": "native"}}


def path_params(params: CFRParams, opts: dict) -> tuple[CFRParams, dict]:
    """A path's parameters (its kernel: torch unless it names one) and its solver options."""
    opts = dict(opts)
    opts.pop("entry", None)
    return dataclasses.replace(params, kernel=opts.pop("kernel", "torch")), opts


def git_show(rev: str, path: str) -> bytes:
    done = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, cwd=REPO)
    if done.returncode != 0:
        sys.exit(f"error: --before {rev}: no {path} at that commit ({done.stderr.decode().strip()[:200]})")
    return done.stdout


def kernel_at(rev: str) -> dict:
    """The path of the native kernel as it was at commit ``rev``: its C source compiled with that
    commit's flags (today's compiler) into the kernel cache; its float32 entry point."""
    source = Path(tempfile.mkdtemp(prefix="pasur-kernel-")) / "round_cfr.c"
    source.write_bytes(git_show(rev, "src/pasur/solve/native/round_cfr.c"))
    tree = ast.parse(git_show(rev, "src/pasur/solve/native/toolchain.py"))
    assigns = [n for n in tree.body if isinstance(n, ast.Assign)]
    flags = next(ast.literal_eval(n.value) for n in assigns if getattr(n.targets[0], "id", None) == "FLAGS")
    entry = toolchain.load(toolchain.build(source, tuple(flags))[0]).pasur_round_cfr_iterate_f32
    entry.argtypes, entry.restype = native._ARGUMENTS, native.ctypes.c_int64
    return {"kernel": "native", "entry": entry}


def state(solver: RoundCFR) -> list[torch.Tensor]:
    """What an iteration leaves (regrets, average, strategy, reaches), per layer."""
    out = []
    for i in range(len(solver.layers)):
        out += [solver.regret[i], solver.avg[i], solver.sigma[i], *solver.reach[i]]
    return out


def commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO)
    except OSError:
        return "unknown (no git)"
    return done.stdout.strip() or "unknown (not a checkout)"


def cpu_name() -> str:
    info = Path("/proc/cpuinfo")
    for line in info.read_text().splitlines() if info.exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def time_iterations(tree, paths: dict, dev: torch.device, warmup: int, repeats: int, block: int = 1) -> dict:
    """Per path: seconds per whole-game iteration (sum over rounds of the fastest, and of the
    medians; a sample: ``block`` consecutive iterations), bytes per iteration (executed,
    compulsory), operations, whether graphs ran, for an earlier kernel whether its state is
    ``native``'s, and per round its edges and CPU seconds (the fastest): the cost per edge of a
    round that fits in the L2 cache against one that does not."""
    zero = {"min_s": 0.0, "median_s": 0.0, "cpu_min_s": 0.0, "executed_bytes": 0, "ops": 0, "compulsory_bytes": 0}
    out = {name: dict(zero, captured_rounds=0, rounds=[]) for name in paths}
    params = CFRParams(method="dcfr")
    for rt in tree.rounds:
        terminal = rt.terminal_value if rt.terminal_value is not None else torch.zeros(rt.n_nodes(8))
        solvers = {}
        for name, opts in paths.items():
            kernel_params, solver_opts = path_params(params, opts)
            solvers[name] = RoundCFR(rt, terminal, kernel_params, dev, **solver_opts)
            if "entry" in opts:  # (an earlier kernel through today's binding)
                solvers[name]._native.fn = opts["entry"]
        for solver in solvers.values():
            for _ in range(warmup):
                solver.iterate()
        times = {name: [] for name in paths}
        cpu_times = {name: [] for name in paths}
        for _ in range(repeats):
            for name, solver in solvers.items():
                sync(dev)
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(block):
                    solver.iterate()
                sync(dev)
                times[name].append((time.perf_counter() - t0) / block)
                cpu_times[name].append((time.process_time() - c0) / block)
        for name, solver in solvers.items():
            row = out[name]
            row["min_s"] += min(times[name])
            row["median_s"] += statistics.median(times[name])
            row["cpu_min_s"] += min(cpu_times[name])
            row["rounds"].append({"edges": solver.n_edges, "cpu_min_s": min(cpu_times[name])})
            b, ops = executed_bytes(solver)
            row["executed_bytes"] += b
            row["ops"] += ops
            row["compulsory_bytes"] += compulsory_bytes(solver)
            row["captured_rounds"] += int(solver._graph.captured)
            if "entry" in paths[name]:
                same = all(torch.equal(a, b) for a, b in zip(state(solver), state(solvers["native"]), strict=True))
                row["same_state"] = row.get("same_state", True) and same
        del solvers
    return out


def compare_solves(tree, paths: dict, dev: torch.device, iterations: int) -> dict:
    """Per path: a fixed-iteration DCFR solve's seconds, root value, exploitability, and the largest
    difference of its average strategy from the first path's."""
    params = CFRParams(method="dcfr", iterations=iterations)
    out, first = {}, None
    for name, opts in paths.items():
        if "entry" in opts:  # (an earlier kernel: its iterates are compared in the timing)
            continue
        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats(dev)
        sync(dev)
        t0 = time.perf_counter()
        kernel_params, solver_opts = path_params(params, opts)
        res = solve_cfr(tree, kernel_params, dev, **solver_opts)
        sync(dev)
        row = {"solve_s": time.perf_counter() - t0, "root_value": res.root_value, "exploitability": res.exploitability}
        if dev.type == "cuda":
            row["peak_GiB"] = torch.cuda.max_memory_allocated(dev) / 2**30
        if first is None:
            first = res.strategy
            row["max_abs_diff"] = 0.0
        else:
            diffs = [float((res.strategy[k] - first[k]).abs().max()) for k in first if first[k].numel()]
            row["max_abs_diff"] = max(diffs, default=0.0)
            row["bit_for_bit"] = all(torch.equal(res.strategy[k], first[k]) for k in first)
        out[name] = row
        del res
    return out


def markdown(record: dict) -> str:
    bw = record["bandwidth"]["add_GBps"]
    # (on the CPU the iteration's CPU time, as the bandwidth's: a shared machine takes the core away at times)
    clock = "cpu_min_s" if record["device"] == "cpu" else "min_s"
    lines = [
        f"# Fixed costs of the Pasur round-CFR iteration: {record['device_name']}",
        "",
        f"`{record['command']}`, commit {record['commit']}, torch {record['torch']}, {record['threads']} thread(s); "
        f"bandwidth (add, {record['bandwidth_values']:,} float32): {bw:.1f} GB/s. Share of bound: the time "
        f"the bytes need at that bandwidth over the iteration's {'CPU' if clock == 'cpu_min_s' else 'wall'} time. "
        f"A sample: {record.get('block', 1)} consecutive iteration(s) of one path.",
        "",
        "Load average (1, 5, 15 min) before and after each deck and tree: "
        + "; ".join(
            f"{r['deck']} {r['tree']} {'/'.join(f'{x:.1f}' for x in r.get('load_before', ()))} to "
            f"{'/'.join(f'{x:.1f}' for x in r.get('load_after', ()))}"
            for r in record["runs"]
        )
        + ".",
        "",
        "| deck | tree | nodes | edges | path | s per iteration (min) | (median) | CPU s (min) "
        f"| ns per node ({'CPU' if clock == 'cpu_min_s' else 'wall'}) | speed-up | ops | executed B/node "
        "| compulsory B/node | share of bound (executed) | (compulsory) | captured rounds | state as native's |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in record["runs"]:
        base = r["timing"]["layers"][clock]
        for name, t in r["timing"].items():
            n = r["nodes"]
            ex, co = t["executed_bytes"] / n, t["compulsory_bytes"] / n
            share_ex = t["executed_bytes"] / (bw * 1e9) / t[clock]
            share_co = t["compulsory_bytes"] / (bw * 1e9) / t[clock]
            lines.append(
                f"| {r['deck']} | {r['tree']} | {n:,} | {r['edges']:,} | {name} | {t['min_s']:.5f} "
                f"| {t['median_s']:.5f} "
                f"| {t['cpu_min_s']:.5f} | {t[clock] / n * 1e9:.2f} | {base / t[clock]:.2f} | {t['ops']:,} "
                f"| {ex:.0f} | {co:.0f} | {share_ex:.1%} | {share_co:.1%} | {t['captured_rounds']} "
                f"| {t.get('same_state', '')} |"
            )
    lines += [
        "",
        f"Fixed-iteration DCFR solves ({record['solve_iterations']} iterations a round), each path against `layers`:",
        "",
        "| deck | tree | path | solve s | root value | exploitability | max abs diff | bit for bit | peak GiB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in record["runs"]:
        for name, s in r["solves"].items():
            lines.append(
                f"| {r['deck']} | {r['tree']} | {name} | {s['solve_s']:.3f} | {s['root_value']:+.6f} "
                f"| {s['exploitability']:.6f} | {s['max_abs_diff']:.2e} | {s.get('bit_for_bit', '')} "
                f"| {s.get('peak_GiB', float('nan')):.2f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--decks", default="ref0,ref1,ref2")
    ap.add_argument("--trees", default="compact,paper")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--block", type=int, default=8, help="consecutive iterations of a path per timed sample")
    ap.add_argument("--before", metavar="REV", help="also time the native kernel's source at commit REV (CPU)")
    ap.add_argument("--solve-iterations", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bandwidth-values", type=int, default=50_000_000)
    args = ap.parse_args()
    if args.device not in ("cpu", "cuda") or (args.device == "cuda" and not torch.cuda.is_available()):
        sys.exit(f"error: --device must be cpu or cuda (a GPU present), got {args.device!r}")
    if args.block < 1 or args.repeats < 1 or (args.before and args.device != "cpu"):
        sys.exit("error: --block and --repeats must be at least 1, and --before runs on the CPU only")
    decks = {d.id: d for d in read_deck_file(DECKS)}
    unknown = [d for d in args.decks.split(",") if d not in decks]
    if unknown or any(t not in ("compact", "paper") for t in args.trees.split(",")):
        sys.exit(f"error: unknown deck or tree in --decks {args.decks!r} --trees {args.trees!r}")
    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    args.out.mkdir(parents=True, exist_ok=True)
    paths = {**PATHS, **(GRAPHS if dev.type == "cuda" else NATIVE)}
    if args.before:
        paths[f"native@{args.before}"] = kernel_at(args.before)
    t_start = time.perf_counter()
    record = {
        "command": " ".join(sys.argv),
        "commit": commit(),
        "device": dev.type,
        "device_name": torch.cuda.get_device_name(dev) if dev.type == "cuda" else cpu_name(),
        "torch": torch.__version__,
        "threads": args.threads,
        "block": args.block,
        "solve_iterations": args.solve_iterations,
        "bandwidth_values": args.bandwidth_values,
        "bandwidth": bandwidth(dev, args.bandwidth_values),
        "runs": [],
    }
    print(f"bandwidth {record['bandwidth']} ({time.perf_counter() - t_start:.1f} s)", flush=True)
    for deck in args.decks.split(","):
        for mode in args.trees.split(","):
            tree = build_tree(GameState.initial(decks[deck].deck), mode, dev, infosets=False)
            edges = sum(rt.n_edges_at(t) for rt in tree.rounds for t in rt.play_turns)
            run = {"deck": deck, "tree": mode, "nodes": tree.n_nodes, "edges": edges, "load_before": os.getloadavg()}
            run["timing"] = time_iterations(tree, paths, dev, args.warmup, args.repeats, args.block)
            run["solves"] = compare_solves(tree, paths, dev, args.solve_iterations)
            run["load_after"] = os.getloadavg()
            record["runs"].append(run)
            del tree
            summary = {k: round(v["min_s"], 5) for k, v in run["timing"].items()}
            print(f"{deck} {mode}: {summary} ({time.perf_counter() - t_start:.1f} s)", flush=True)
            (args.out / "fixed_costs.json").write_text(json.dumps(record, indent=2) + "\n")
            (args.out / "fixed_costs.md").write_text(markdown(record))
    record["wall_s"] = time.perf_counter() - t_start
    (args.out / "fixed_costs.json").write_text(json.dumps(record, indent=2) + "\n")
    (args.out / "fixed_costs.md").write_text(markdown(record))
    print(markdown(record))
    print(f"wall {record['wall_s']:.1f} s")


if __name__ == "__main__":
    main()
