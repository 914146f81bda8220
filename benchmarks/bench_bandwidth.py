"""Memory bandwidth of the element-wise kernels CFR is made of, to say what bounds its nanoseconds
per node: ``copy_``, ``add``, ``index_select`` (int32 indices, in order) and ``scatter_add_``
(int64 indices, in order) over 50 M float32 values, best of 5 (GB/s counts bytes read plus
written: 8, 12, 12 and 20 bytes a value). On the CPU with one thread by default, timed in this
process's CPU time (a machine shared with other jobs takes the core away at times; the wall
clock would count that); ``--device cuda`` times the same kernels on a GPU in wall time,
synchronized around each.

    python benchmarks/bench_bandwidth.py [--device cuda] [--threads 1] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch


def _best(run, device: torch.device, repeats: int = 5) -> float:
    clock = time.perf_counter if device.type == "cuda" else time.process_time
    best = float("inf")
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = clock()
        run()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, clock() - t0)
    return best


def bandwidth(device: str | torch.device = "cpu", n: int = 50_000_000) -> dict[str, float]:
    """GB/s of each kernel over ``n`` float32 values on ``device`` (bytes read plus written)."""
    dev = torch.device(device)
    a, b, c = (torch.ones(n, device=dev) for _ in range(3))
    idx32 = torch.arange(n, dtype=torch.int32, device=dev)
    idx64 = torch.arange(n, dtype=torch.int64, device=dev)
    kernels = {
        "copy": (lambda: b.copy_(a), 8),
        "add": (lambda: torch.add(a, c, out=b), 12),
        "index_select": (lambda: torch.index_select(a, 0, idx32, out=b), 12),
        "scatter_add": (lambda: b.scatter_add_(0, idx64, a), 20),
    }
    out = {}
    for name, (run, bytes_per_value) in kernels.items():
        run()  # (first touch)
        out[f"{name}_GBps"] = bytes_per_value * n / _best(run, dev) / 1e9
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--values", type=int, default=50_000_000)
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    figures = bandwidth(args.device, args.values)
    for name, gbps in figures.items():
        print(f"{name.removesuffix('_GBps')}: {gbps:.1f} GB/s")
    if args.json is not None:
        meta = {"device": args.device, "threads": args.threads, "values": args.values, "torch": torch.__version__}
        args.json.write_text(json.dumps({**meta, **figures}, indent=2) + "\n")


if __name__ == "__main__":
    main()
