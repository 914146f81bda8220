"""The GPU against the CPU of the same machine, from the logs of ``benchmarks/device_check.sh``
(and ``bench_tail_deck_cfr.py``): one Markdown file of ratio tables, each row keyed uniquely, for
docs/benchmarks.md to quote.

    python benchmarks/gpu_summary.py RESULTS_DIR      (writes RESULTS_DIR/summary.md)
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path


def tables(path: Path) -> list[list[dict[str, str]]]:
    """Every Markdown table of a log, as rows of {header: cell}."""
    out, head, rows = [], None, []
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if head is None:
                head = cells
            elif not set(line) <= set("|- "):
                rows.append(dict(zip(head, cells, strict=True)))
        elif head is not None:
            out.append(rows)
            head, rows = None, []
    return out


def num(s: str) -> float:
    return float(s.replace(",", "").split()[0])


def ratio(cpu: float, gpu: float) -> str:
    return f"{cpu / gpu:,.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", type=Path)
    d = ap.parse_args().results
    lines = [f"# GPU against the CPU of the same machine ({(d / 'machine.txt').read_text().splitlines()[1]})", ""]

    (cpu_it, cpu_goal), (gpu_it, gpu_goal) = tables(d / "cfr-cpu.log"), tables(d / "cfr-cuda.log")
    lines += ["DCFR, seconds per iteration of the whole tree (CPU: one thread):", ""]
    lines += ["| deck and tree | nodes | CPU s | GPU s | GPU speed-up |", "|---|---|---|---|---|"]
    for c, g in zip(cpu_it, gpu_it, strict=True):
        c_s, g_s = num(c["DCFR s per iteration"]), num(g["DCFR s per iteration"])
        lines.append(f"| {c['deck']} {c['tree']} | {c['nodes']} | {c_s:.4f} | {g_s:.4f} | {ratio(c_s, g_s)} |")
    lines += ["", "Time to whole-game exploitability 0.005 points on ref0 (build included):", ""]
    lines += ["| tree | CPU s | GPU s | GPU speed-up |", "|---|---|---|---|"]
    for c, g in zip(cpu_goal, gpu_goal, strict=True):
        c_s, g_s = num(c["total s"]), num(g["total s"])
        lines.append(f"| {c['tree']} | {c_s:.1f} | {g_s:.1f} | {ratio(c_s, g_s)} |")

    (cpu_tree,), (gpu_tree,) = tables(d / "tree-cpu.log"), tables(d / "tree-cuda.log")
    lines += ["", "Tree build (the GPU's includes its first kernels' start) and exact solve:", ""]
    lines += [
        "| deck and tree | nodes | CPU build s | GPU build s | CPU solve s | GPU solve s | solve speed-up |",
        "|---|---|---|---|---|---|---|",
    ]
    for c, g in zip(cpu_tree, gpu_tree, strict=True):
        cs, gs = num(c["solve s"]), num(g["solve s"])
        lines.append(
            f"| {c['deck']} {c['mode']} | {c['nodes']} | {num(c['build s']):.2f} | {num(g['build s']):.2f} "
            f"| {cs:.3f} | {gs:.3f} | {ratio(cs, gs)} |"
        )

    (cpu_play,), (gpu_play,) = tables(d / "selfplay-cpu.log"), tables(d / "selfplay-cuda.log")
    lines += ["", "Batched self-play, games per second (median):", ""]
    lines += ["| matchup and games | CPU games/s | GPU games/s | GPU speed-up |", "|---|---|---|---|"]
    for c, g in zip(cpu_play, gpu_play, strict=True):
        cg, gg = num(c["games per second (median)"]), num(g["games per second (median)"])
        key = f"{c['Alex']}-{c['Bob']} x{c['games per batch']}"
        lines.append(f"| {key} | {cg:,.0f} | {gg:,.0f} | {gg / cg:,.2f} |")

    tail = (d / "tail-decks-cfr.log").read_text(encoding="utf-8")
    built = re.findall(r"(\S+): ([\d,]+) nodes, built in ([\d.]+) s, tree ([\d.]+) GiB", tail)
    pattern = r"DCFR (\d+) per round, tremble 1e-3: ([\d.]+) s .*?NashConv (\S+), (?:GPU )?peak ([\d.]+) GiB"
    solved = re.findall(pattern, tail)
    its = {x[0] for x in solved}
    its = its.pop() if len(its) == 1 else "/".join(sorted(its))
    solved = [x[1:] for x in solved]
    lines += ["", f"Tail decks of the paper's file on the GPU (paper tree; DCFR {its} per round, tremble 1e-3):", ""]
    lines += ["| deck | nodes | build s | tree GiB | DCFR s | NashConv | GPU peak GiB |", "|---" * 7 + "|"]
    for (deck, nodes, build, gib), (secs, nash_conv, peak) in zip(built, solved, strict=True):
        lines.append(f"| {deck} | {nodes} | {build} | {gib} | {secs} | {nash_conv} | {peak} |")
    (d / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
