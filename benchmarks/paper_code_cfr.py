"""The paper's own CFR (sinabaghal/Pasur, ``SimulateGameRun9.py``) beside our DCFR, on one deck
and one device in one process (issue 43, item 5).

For each deck: the paper's code builds its tree (``simulategamerun``) and runs its CFR round by
round, 5 -> 0, N iterations a round through its own ``find_reach_probs`` and ``find_utl``
(DCFR-like discounts, regrets floored at 1e-12: its ``LOG_TOL = 12``), as its ``run_cfr`` does;
the value passed to the round before is the mean of the iterates' root values (its rule). It runs
once from scratch for each N of ``--iterations`` (the tree built once). Each final average
strategy (normalized per node as ``run_cfr`` does) is carried onto our ``paper`` tree
(:mod:`pasur.solve.paper_strategy`) and valued by our exact best responses (NashConv,
exploitability = NashConv / 2, docs/conventions.md). Then our DCFR on the same deck, tree mode and
device: seconds per iteration (the mean of ``--our-timed`` iterations a round, each round's solver
alone, as the paper's loops are timed) and, for each N, the whole solve to the paper strategy's
exploitability (``solve_cfr`` with that target, at least ``--min-target``: below about 1e-5 a
float32 NashConv is rounding). Each timing is bracketed by ``torch.cuda.synchronize()`` on a GPU.
Memory: the peak allocated GPU memory (``torch.cuda.max_memory_allocated``) and the peak resident
set (``VmHWM``, reset through ``/proc/self/clear_refs`` before each phase; ``ru_maxrss`` where
that is refused), per phase.

The paper's ``run_cfr`` itself cannot be called: it is defined under ``if __name__ ==
"__main__"`` and fails after its first round (``del gc_edg`` of a name it never binds; later
``d_fls['c_edg_...']``, a key its tree builder no longer writes). So this script calls the
functions it calls, in its order, with the same arguments; no file of the paper's is edited.
Import side effects are kept harmless: its folders ``../DATA/*`` are not created and its 5 s
sleep is skipped; ``tqdm``, ``dask``, ``pandas`` and ``matplotlib``, if missing, are stubbed (its
progress bars; its Parquet writer and plots, not called); with ``--device cpu`` its ``device`` is
the CPU even where CUDA is present, and its one hard-coded ``'cuda:0'`` is redirected to the CPU.

    python benchmarks/paper_code_cfr.py --paper-dir .paper --deck ref0,ref1,ref2 --device cuda \\
        --iterations 10,30,100 --out OUT_DIR

Writes ``OUT_DIR/results.json`` (every figure of every deck, the machine and the command),
``OUT_DIR/summary.md`` (the tables) and, with ``--save-strategy``, ``OUT_DIR/paper-strategy-<deck>.pt``
(the paper's average strategy after the largest N, per layer ``{round}_{turn}_{player}``, float32,
in its node order). ``--budget-s`` skips a deck when the time used plus the longest deck so far
would pass it.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
import types
from datetime import UTC, datetime
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
try:
    import pasur  # noqa: F401
except ImportError:  # (a machine without the editable install: the source tree)
    sys.path.insert(0, str(REPO / "src"))

from pasur.common.memory import release_freed  # noqa: E402
from pasur.game.cards import read_deck_file  # noqa: E402
from pasur.game.state import GameState  # noqa: E402
from pasur.solve.cfr import CFRParams, RoundCFR  # noqa: E402
from pasur.solve.exact import nash_conv, solve_exact, strategy_value  # noqa: E402
from pasur.solve.paper_strategy import PaperLayer, normalize_per_parent, strategy_from_paper  # noqa: E402
from pasur.solve.reference import banked_diff  # noqa: E402
from pasur.solve.rounds import solve_cfr  # noqa: E402
from pasur.solve.tree import build_tree  # noqa: E402

DECKS = REPO.parent / "shared" / "decks" / "reference-decks.json"
if not DECKS.exists():
    DECKS = REPO / "tests" / "data" / "reference-decks.json"
PAPER_MODULE = "SimulateGameRun9"


def _refuse(message: str) -> None:
    """Bad input: one line and exit status 2, before any work."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


# -- the paper's code ----------------------------------------------------------------------------
class _TorchOnCPU(types.ModuleType):
    """``torch`` as the paper's module sees it on a CPU run: ``torch.empty(..., device='cuda:0')``
    (its one hard-coded device) lands on the CPU; everything else is torch's."""

    def __init__(self) -> None:
        super().__init__("torch")

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def empty(*args, **kwargs):
        kwargs["device"] = "cpu"
        return torch.empty(*args, **kwargs)


def _stub_missing(names: list[str]) -> list[str]:
    """Empty modules in ``sys.modules`` for those of ``names`` that cannot be imported; their names."""
    stubbed = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)
            stubbed.append(name)
    tqdm = sys.modules["tqdm"]
    if not hasattr(tqdm, "trange"):
        tqdm.trange = lambda n, **_: range(n)
    return stubbed


def load_paper(paper_dir: Path, device: torch.device):
    """Import the paper's CFR module from ``paper_dir`` with its side effects kept harmless (see
    the module docstring); its ``device`` is ``device``."""
    if not (paper_dir / f"{PAPER_MODULE}.py").is_file():
        _refuse(f"{paper_dir} has no {PAPER_MODULE}.py (export sinabaghal/Pasur there)")
    stubbed = _stub_missing(["tqdm", "dask", "dask.dataframe", "pandas", "matplotlib", "matplotlib.pyplot"])
    if hasattr(sys.modules["matplotlib"], "use"):
        sys.modules["matplotlib"].use("Agg")
    sys.path.insert(0, str(paper_dir))
    saved = (time.sleep, os.makedirs, torch.cuda.is_available, os.getcwd())
    time.sleep, os.makedirs = (lambda *_: None), (lambda *_, **__: None)
    if device.type == "cpu":
        torch.cuda.is_available = lambda: False  # (Imports.py picks its device from this)
    try:
        os.chdir(paper_dir)  # (Imports.py loads helper_pts/*.pt relative to the working folder)
        paper = importlib.import_module(PAPER_MODULE)
    finally:
        time.sleep, os.makedirs, torch.cuda.is_available = saved[:3]
        os.chdir(saved[3])
        for name in stubbed:  # (the paper's module keeps its references; others see what is installed)
            del sys.modules[name]
    if str(paper.device) != str(device) and not (device.type == "cuda" and paper.device.type == "cuda"):
        _refuse(f"the paper's code chose device {paper.device}, not {device}")
    if device.type == "cpu":
        paper.torch = _TorchOnCPU()
    return paper


def paper_cfr(paper, d_fls: dict, iterations: int, device: torch.device, tol: float) -> dict:
    """The paper's CFR, round by round, as its ``run_cfr`` runs it: per round the seconds of its
    ``iterations`` iterations, the normalized average strategy per layer, and its root value."""
    futl = paper.find_futl(d_fls).to(torch.float32)
    seconds, cpu, strategy = {}, {}, {}
    for h in reversed(range(6)):
        keys = [k for k in paper.i_htps if int(k.split("_")[0]) == h]
        n_roots = d_fls[f"t_fgm_{h - 1}"] if h > 0 else 1
        value_sum = torch.zeros(n_roots, device=device)
        t_val = futl[d_fls[f"t_lnk_{h}"].to(device)] + d_fls[f"t_rus_{h}"].to(dtype=torch.float32, device=device)
        # (separate copies: on the CPU ``.to`` would alias the two, unlike on the GPU)
        a_sgm = {k: d_fls[f"t_sgm_{k}"].to(device=device, dtype=torch.float32).clone() for k in keys}
        g_sgm = {k: d_fls[f"t_sgm_{k}"].to(device=device, dtype=torch.float32).clone() for k in keys}
        c_a = {k: d_fls[f"c_edg_a_{k}"].to(device) for k in keys}
        c_b = {k: d_fls[f"c_edg_b_{k}"].to(device) for k in keys}
        edg = {k: d_fls[f"t_edg_{k}"].to(device) for k in keys}
        reg = {k: torch.zeros(edg[k].shape[0], dtype=torch.float32, device=device) for k in keys}
        _sync(device)
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(iterations):
            rp0 = paper.find_reach_probs(d_fls, edg, g_sgm, 0, h)
            rp1 = paper.find_reach_probs(d_fls, edg, g_sgm, 1, h)
            t_utl, a_sgm, g_sgm, reg = paper.find_utl(
                h, t_val, i > 0, d_fls, c_a, c_b, edg, g_sgm, a_sgm, reg, rp0, rp1, "cfr", tol, i
            )
            value_sum += t_utl
        _sync(device)
        seconds[h], cpu[h] = time.perf_counter() - t0, time.process_time() - c0
        print(f"  paper round {h}: {iterations} iterations, {seconds[h]:.2f} s", flush=True)
        for k in keys:
            strategy[k] = normalize_per_parent(a_sgm[k], edg[k], d_fls[f"i_sid_{k}"], tol).cpu()
        futl = value_sum / iterations
        del a_sgm, g_sgm, c_a, c_b, edg, reg, t_val, rp0, rp1
    return {"seconds": seconds, "cpu_s": cpu, "strategy": strategy, "root_value": float(futl[0])}


def last_layer_fgm(d_fls: dict, t_fgms: dict, h: int) -> torch.Tensor:
    """The FGT nodes (GT node, score id) of round ``h``'s last layer, from the layer before and
    the edges. The copy ``simulategamerun`` keeps of them is relabelled in place for the next
    round when the tree is on the CPU (``.to('cpu')`` of a CPU tensor is the tensor itself)."""
    key = f"{h}_3_1"
    c_scr = d_fls[f"c_edg_b_{key}"].long().repeat_interleave(d_fls[f"c_edg_a_{key}"].long())
    gt = torch.arange(c_scr.shape[0]).repeat_interleave(c_scr)
    score = t_fgms[f"{h}_3_0"][:, 1].cpu()[d_fls[f"t_edg_{key}"].long().cpu()]
    return torch.stack([gt, score.long()], 1)


def paper_layers(built: tuple, strategy: dict) -> dict[tuple[int, int], PaperLayer]:
    """The paper's tree and strategy as :class:`PaperLayer` s keyed (round, turn after the move)."""
    d_fls, t_cmps, t_fgms, t_scrs, t_m52s = built
    layers = {}
    for key, prob in strategy.items():
        h, trn, ply = (int(x) for x in key.split("_"))
        cards = t_m52s[h][:52].nonzero().flatten().tolist()
        fgm = last_layer_fgm(d_fls, t_fgms, h) if (trn, ply) == (3, 1) else t_fgms[key]
        layers[(h, 2 * trn + ply + 1)] = PaperLayer(cards, t_cmps[key], fgm, t_scrs[h], prob)
    return layers


def build_paper(paper, cards: tuple[int, ...], device: torch.device) -> tuple[dict, tuple]:
    """The paper's tree of the deck (``simulategamerun``): its figures and the tree."""
    mem = Peak(device)
    t0, c0 = time.perf_counter(), time.process_time()
    built = paper.simulategamerun(torch.tensor(cards, dtype=torch.int64, device=device))
    _sync(device)
    build_s, build_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    nodes = sum(int(built[0][f"t_edg_{k}"].shape[0]) for k in paper.i_htps)
    print(f"  paper tree: {nodes:,} FGT nodes, {build_s:.1f} s", flush=True)
    return {"tree_nodes": nodes, "build_s": build_s, "build_cpu_s": build_cpu_s, "build_memory": mem.read()}, built


def paper_checkpoint(paper, built: tuple, iterations: int, args, device: torch.device) -> tuple[dict, dict]:
    """The paper's CFR with ``iterations`` a round from scratch: its figures and its strategy."""
    mem = Peak(device)
    solved = paper_cfr(paper, built[0], iterations, device, 10.0**-args.log_tol)
    figures = {
        "iterations_per_round": iterations,
        "cfr_s": sum(solved["seconds"].values()),
        "cfr_cpu_s": sum(solved["cpu_s"].values()),
        "round_s": solved["seconds"],
        "s_per_iteration": sum(solved["seconds"].values()) / iterations,
        "own_root_value": solved["root_value"],
        "memory": mem.read(),
    }
    return figures, solved["strategy"]


# -- ours ----------------------------------------------------------------------------------------
def build_ours(deck, device: torch.device) -> tuple[dict, object]:
    """Our paper tree of the deck, with the card codes the mapping needs, and its exact value."""
    mem = Peak(device)
    t0 = time.perf_counter()
    tree = build_tree(GameState.initial(deck), "paper", device, infosets=True)
    _sync(device)
    build_s = time.perf_counter() - t0
    figures = {"tree_nodes": tree.n_nodes, "build_s": build_s, "build_memory": mem.read()}
    figures["exact_value"] = solve_exact(tree, keep_values=False).game_value()
    return figures, tree


def value_mapped(tree, layers) -> dict:
    """The paper's strategy carried onto our tree and valued by exact best responses."""
    mapped = strategy_from_paper(tree, layers)
    nc = nash_conv(tree, mapped.strategy)
    return {
        "edges_mapped": mapped.matched,
        "edges": mapped.edges,
        "sum_error": mapped.sum_error,
        "nash_conv": nc,
        "exploitability": nc / 2,
        "value": banked_diff(tree.start) + strategy_value(tree, mapped.strategy),
    }


def our_iteration_seconds(tree, timed: int, updates: str, device: torch.device) -> tuple[dict[int, float], float]:
    """Seconds per DCFR iteration of each round's solver alone (mean of ``timed`` after one), and
    this process's CPU seconds per whole-game iteration."""
    out, cpu = {}, 0.0
    for rt in tree.rounds:
        terminal = rt.terminal_value if rt.terminal_value is not None else torch.zeros(rt.n_nodes(rt.end_turn))
        solver = RoundCFR(rt, terminal, CFRParams(method="dcfr", updates=updates), device)
        solver.iterate()
        _sync(device)
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(timed):
            solver.iterate()
        _sync(device)
        out[rt.round] = (time.perf_counter() - t0) / timed
        cpu += (time.process_time() - c0) / timed
        del solver
    return out, cpu


def our_solve(tree, target: float, updates: str, args, device: torch.device) -> dict:
    """Our DCFR (``updates``: alternating or simultaneous) on ``tree`` to a whole-game
    exploitability ``target``."""
    gc.collect()
    mem = Peak(device)
    params = CFRParams(
        method="dcfr",
        iterations=None,
        target_exploitability=target,
        check_every=args.check_every,
        max_iterations=args.max_iterations,
        updates=updates,
    )
    t0, c0 = time.perf_counter(), time.process_time()
    res = solve_cfr(tree, params, device)
    _sync(device)
    solve_s, solve_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"  ours ({updates}) to {target:.2e}: {res.iterations} iterations a round, {res.exploitability:.2e}", flush=True
    )
    return {
        "target_exploitability": target,
        "solve_s": solve_s,
        "solve_cpu_s": solve_cpu_s,
        "iterations_per_round": res.iterations,
        "exploitability": res.exploitability,
        "value": res.game_value(),
        "target_met": res.target_met,
        "memory": mem.read(),
    }


# -- measures ------------------------------------------------------------------------------------
def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _status_kib(field: str) -> int | None:
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


class Peak:
    """Peak memory of a phase: GPU allocated (reset here) and the resident set (VmHWM, reset
    through ``/proc/self/clear_refs``; where refused, the process's ``ru_maxrss``)."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        gc.collect()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device)
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self.rss_reset = True
        except OSError:
            self.rss_reset = False
        self.rss_start_kib = _status_kib("VmRSS")
        self.gpu_start = torch.cuda.memory_allocated(device) if device.type == "cuda" else 0

    def read(self) -> dict:
        out = {"rss_start_mib": (self.rss_start_kib or 0) / 1024}
        if self.rss_reset and _status_kib("VmHWM") is not None:
            out["rss_peak_mib"], out["rss_peak_from"] = _status_kib("VmHWM") / 1024, "VmHWM"
        else:
            out["rss_peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            out["rss_peak_from"] = "ru_maxrss (whole process)"
        if self.device.type == "cuda":
            _sync(self.device)
            out["gpu_peak_mib"] = torch.cuda.max_memory_allocated(self.device) / 2**20
            out["gpu_start_mib"] = self.gpu_start / 2**20
        return out


# -- the run -------------------------------------------------------------------------------------
def one_deck(paper, nd, args, device: torch.device) -> dict:
    """Both solvers on one deck: the paper's CFR with each of ``args.iterations`` a round (from
    scratch each time); then our tree, on which each of its strategies is valued; then our DCFR,
    timed per iteration and solved to each of the paper's exploitabilities (at least
    ``--min-target``). The paper's phases run before our tree exists, ours after the paper's
    tensors are freed, so each phase's memory is its own."""
    paper_fig, built = build_paper(paper, nd.deck.cards, device)
    paper_fig["checkpoints"], strategies = [], []
    for n in args.iterations:
        figures, strategy = paper_checkpoint(paper, built, n, args, device)
        paper_fig["checkpoints"].append(figures)
        strategies.append(strategy)
    if args.save_strategy:
        torch.save(strategies[-1], args.out / f"paper-strategy-{nd.id}.pt")
    layers = [paper_layers(built, s) for s in strategies]
    del built, strategies
    release_freed()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    ours_fig, tree = build_ours(nd.deck, device)
    for figures, lay in zip(paper_fig["checkpoints"], layers, strict=True):
        figures.update(value_mapped(tree, lay))
        n, e = figures["iterations_per_round"], figures["exploitability"]
        print(f"  paper, {n} iterations a round: exploitability {e:.2e}", flush=True)
    del layers, lay
    for rt in tree.rounds:  # (the card codes served the mapping only)
        for layer in rt.gt.values():
            layer.cmp = None
    release_freed()
    targets = [max(c["exploitability"], args.min_target) for c in paper_fig["checkpoints"]]
    ours_fig["runs"] = [our_run(tree, targets, u, args, device) for u in args.updates]
    exact = ours_fig.pop("exact_value")
    return {
        "deck": nd.id,
        "device": str(device),
        "exact_value": exact,
        "ours_updates": list(args.updates),
        "paper": paper_fig,
        "ours": ours_fig,
    }


def our_run(tree, targets: list[float], updates: str, args, device: torch.device) -> dict:
    """Our DCFR with one update scheme: seconds per iteration, then a solve to each target (one
    per distinct target: several may be ``--min-target``)."""
    per_round, cpu = our_iteration_seconds(tree, args.our_timed, updates, device)
    solved: dict[float, dict] = {}
    for t in targets:
        if t not in solved:
            solved[t] = our_solve(tree, t, updates, args, device)
    return {
        "updates": updates,
        "round_s_per_iteration": per_round,
        "s_per_iteration": sum(per_round.values()),
        "cpu_s_per_iteration": cpu,
        "solves": [solved[t] for t in targets],
    }


def deck_row(r: dict, mem: str) -> str:
    """Per deck: nodes, seconds per iteration, build seconds, peak memory, the mapping."""
    p, o = r["paper"], r["ours"]
    cps = p["checkpoints"]
    its = sum(x["iterations_per_round"] for x in cps)
    p_iter, p_cpu = sum(x["cfr_s"] for x in cps) / its, sum(x["cfr_cpu_s"] for x in cps) / its
    p_mem = max(x["memory"][mem] for x in cps)
    o_mem = max(x["memory"][mem] for run in o["runs"] for x in run["solves"])
    o_iter = " / ".join(f"{run['s_per_iteration']:.4f}" for run in o["runs"])
    o_cpu = " / ".join(f"{run['cpu_s_per_iteration']:.4f}" for run in o["runs"])
    return (
        f"| {r['deck']} | {p['tree_nodes']:,} / {o['tree_nodes']:,} | {p_iter:.4f} / {o_iter} "
        f"| {p_cpu:.4f} / {o_cpu} | {p['build_s']:.1f} / {o['build_s']:.1f} "
        f"| {p['build_memory'][mem]:,.0f}, {p_mem:,.0f} / {o['build_memory'][mem]:,.0f}, {o_mem:,.0f} "
        f"| {cps[-1]['edges_mapped']:,} of {cps[-1]['edges']:,} |"
    )


def target_rows(r: dict) -> list[str]:
    """Per checkpoint: the paper's iterations, exploitability and seconds; ours solved to it."""
    rows = []
    for run in r["ours"]["runs"]:
        for c, o in zip(r["paper"]["checkpoints"], run["solves"], strict=True):
            its = "/".join(str(o["iterations_per_round"][k]) for k in sorted(o["iterations_per_round"]))
            rows.append(
                f"| {r['deck']} | {c['iterations_per_round']} | {c['exploitability']:.2e} | {c['cfr_s']:.1f} "
                f"| {run['updates']} | {o['target_exploitability']:.2e} | {its} | {o['exploitability']:.2e} "
                f"| {o['solve_s']:.1f} | {c['cfr_s'] / max(o['solve_s'], 1e-9):.1f} |"
            )
    return rows


def write_summary(out: Path, rows: list[dict], device: torch.device, header: str) -> None:
    mem = "gpu_peak_mib" if device.type == "cuda" else "rss_peak_mib"
    what = "peak GPU MiB allocated" if device.type == "cuda" else "peak resident MiB"
    lines = [
        *(f"    {ln}" for ln in header.splitlines()),
        "",
        f"On {device}. Each cell: the paper's code / our DCFR ({', '.join(rows[0]['ours_updates'])} updates). "
        "Seconds per whole-game iteration (one iteration of every round); CPU s: this process's; memory: build, "
        "solve (the largest of the runs).",
        "",
        f"| deck | FGT nodes | s per iteration | CPU s per iteration | build s | {what} | our edges mapped |",
        "|---|---|---|---|---|---|---|",
        *(deck_row(r, mem) for r in rows),
        "",
        "Exploitability (NashConv / 2, points, exact, in our rules) of the paper's strategy after N iterations a "
        "round, and our DCFR solved to it (at least --min-target); seconds without the builds; our iterations per "
        "round, rounds 0..5.",
        "",
        "| deck | paper N | paper exploitability | paper CFR s | our updates | our target | our iterations "
        "| our exploitability | our solve s | paper s / ours |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *(x for r in rows for x in target_rows(r)),
    ]
    (out / "summary.md").write_text("\n".join(lines) + "\n")


def machine(device: torch.device) -> str:
    info = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((ln.split(":", 1)[1].strip() for ln in info if ln.startswith("model name")), "?")
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else "none"
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO).stdout.strip()
        dirty = subprocess.run(["git", "status", "--short", "--", "src", "benchmarks"], capture_output=True, cwd=REPO)
        commit += " (with local changes)" if dirty.stdout.strip() else ""
    except OSError:
        commit = ""
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC}\ncommit {commit or 'unknown'}\n"
        f"cpu {cpu}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}\ngpu {gpu}\n"
        f"python {platform.python_version()} torch {torch.__version__}\n"
    )


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper-dir", type=Path, required=True, help="an export of sinabaghal/Pasur")
    ap.add_argument("--deck", default="ref2", help="deck ids of --deck-file, comma-separated, run in that order")
    ap.add_argument("--deck-file", type=Path, default=DECKS)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument(
        "--iterations",
        default="1000",
        help="the paper's CFR iterations per round; several (comma-separated): one run each",
    )
    ap.add_argument("--log-tol", type=int, default=12, help="the paper's LOG_TOL (its regret floor 10^-LOG_TOL)")
    ap.add_argument("--our-timed", type=int, default=20, help="our DCFR iterations timed per round")
    ap.add_argument("--check-every", type=int, default=10)
    ap.add_argument("--max-iterations", type=int, default=5000, help="cap per round on our solve to the target")
    ap.add_argument("--min-target", type=float, default=1e-4, help="our target is at least this")
    ap.add_argument(
        "--updates",
        default="alternating",
        help="our DCFR's update schemes, comma-separated (alternating, simultaneous)",
    )
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--save-strategy", action="store_true", help="write OUT/paper-strategy-<deck>.pt")
    ap.add_argument("--budget-s", type=float, default=0.0, help="skip a deck that may not finish within it (0: none)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    try:
        args.iterations = sorted({int(x) for x in args.iterations.split(",") if x.strip()})
    except ValueError:
        ap.error(f"--iterations takes whole numbers, comma-separated, got {args.iterations!r}")
    args.updates = [u.strip() for u in args.updates.split(",") if u.strip()]
    if not args.updates or any(u not in ("alternating", "simultaneous") for u in args.updates):
        ap.error("--updates takes alternating and/or simultaneous, comma-separated")
    if (
        not args.iterations
        or args.iterations[0] < 1
        or args.our_timed < 1
        or args.check_every < 1
        or args.max_iterations < 1
    ):
        ap.error("--iterations, --our-timed, --check-every and --max-iterations must be at least 1")
    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda: no CUDA device here")
    return args


def main(argv=None) -> None:
    args = parse(argv)
    decks = {nd.id: nd for nd in read_deck_file(args.deck_file)}
    wanted = [d.strip() for d in args.deck.split(",") if d.strip()]
    unknown = [d for d in wanted if d not in decks]
    if unknown or not wanted:
        _refuse(f"unknown deck id(s) {', '.join(unknown) or '(none given)'} in {args.deck_file}")
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    paper = load_paper(args.paper_dir.resolve(), device)
    args.out.mkdir(parents=True, exist_ok=True)
    header = machine(device) + f"command: {' '.join(sys.argv)}\n"
    print(header, flush=True)
    rows, started, longest = [], time.perf_counter(), 0.0
    for d in wanted:
        t0 = time.perf_counter()
        if args.budget_s and t0 - started + longest > args.budget_s:
            print(f"{d}: skipped, {t0 - started:.0f} s used and the longest deck took {longest:.0f} s", flush=True)
            continue
        print(f"{d}:", flush=True)
        row = one_deck(paper, decks[d], args, device)
        row["wall_s"] = time.perf_counter() - t0
        longest = max(longest, row["wall_s"])
        rows.append(row)
        (args.out / "results.json").write_text(json.dumps({"machine": header, "decks": rows}, indent=1) + "\n")
        write_summary(args.out, rows, device, header)
        print(f"{d}: done in {row['wall_s']:.0f} s", flush=True)
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
