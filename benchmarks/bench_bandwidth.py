"""Single-thread memory bandwidth of the element-wise kernels CFR is made of, to say what bounds
its nanoseconds per node: ``copy_``, ``add`` and ``index_select`` over 50 M float32 values, best of
5 (GB/s counts bytes read plus written).

    python benchmarks/bench_bandwidth.py
"""

from __future__ import annotations

import time

import torch


def main() -> None:
    torch.set_num_threads(1)
    n = 50_000_000
    a, b, c = torch.ones(n), torch.empty(n), torch.ones(n)
    idx = torch.arange(n, dtype=torch.int32)
    kernels = {
        "copy": (lambda: b.copy_(a), 8),
        "add": (lambda: torch.add(a, c, out=b), 12),
        "index_select": (lambda: torch.index_select(a, 0, idx, out=b), 12),
    }
    for name, (run, bytes_per_element) in kernels.items():
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        best = min(times)
        print(f"{name}: {bytes_per_element * n / best / 1e9:.1f} GB/s ({best * 1e9 / n:.2f} ns per element)")


if __name__ == "__main__":
    main()
