"""Bytes a CFR iteration moves, counted from the solver's own tensors (their sizes and dtypes), and
the machine's bandwidth measured here, for the roofline of the poker core and the lossless solver
(issue 43, item 1). ``benchmarks/bench_bandwidth.py`` measures DRAM bandwidth on its own; this
module's :func:`measured_bandwidth` measures it again in the benchmark's own run, on its device,
and adds a cache-resident copy, the roof of a table as small as Leduc's.

Two counts per iteration:

* **executed**: every operation of the dense pass as written (``pasur.poker.dense_cfr``), each
  tensor it reads and writes counted once per operation, as if nothing stayed in cache;
* **compulsory**: what any implementation of the same iteration must touch: per pass, the regrets
  and the average's sums read and written, the current strategy read and written, and (dense CFR)
  the index tables and payoff matrices read once.
"""

from __future__ import annotations

import time

import torch


def _best_seconds(run, device: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        run()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def _stream(device: str, n: int) -> dict:
    a, b, c = torch.ones(n, device=device), torch.empty(n, device=device), torch.ones(n, device=device)
    return {
        "n_values": n,
        "copy_GBps": 8 * n / _best_seconds(lambda: b.copy_(a), device, 5) / 1e9,
        "add_GBps": 12 * n / _best_seconds(lambda: torch.add(a, c, out=b), device, 5) / 1e9,
    }


def measured_bandwidth(device: str = "cpu", n: int = 50_000_000, small: int = 32_768) -> dict:
    """GB/s (bytes read plus written) of ``copy_`` and ``add`` over ``n`` float32 values (memory)
    and of ``copy_`` over ``small`` float64 values repeated (a cache-resident table), best of 5."""
    out = _stream(device, n)
    x, y = torch.ones(small, dtype=torch.float64, device=device), torch.empty(small, dtype=torch.float64, device=device)
    reps = 200

    def copies() -> None:
        for _ in range(reps):
            y.copy_(x)

    out["cache_copy_GBps"] = 16 * small * reps / _best_seconds(copies, device, 5) / 1e9
    out["cache_copy_bytes"] = 16 * small
    return out


def _pass_bytes(s, p: int) -> int:
    """Bytes the operations of one dense pass for player ``p`` read and write."""
    e, idx = s.regret.element_size(), s.gather_idx[p].element_size()
    G, A = s.regret.shape
    GA = G * A
    ZBH, D = s.Z * s.BF * s.H, s.depth
    n_g, k, nr = s.gather_idx[p].numel(), s.keep_idx[p].numel(), s.n_reach[p]
    n_prods, n_sum = nr + ZBH, 2 * k + nr
    traverse = (
        s._buf.numel() * e  # zero_
        + n_g * (idx + 2 * e)  # index_select of the path entries
        + n_prods * (D + 1) * e  # prod
        + (s.mats[p].numel() + 2 * ZBH) * e  # bmm
        + 2 * ZBH * D * e  # cumprod
        + (2 * ZBH * D + ZBH) * e  # mul_ by u
        + k * (idx + 2 * e)  # index_select of the real edges
        + 2 * k * e  # abs
        + n_sum * (idx + 3 * e)  # index_add_ (read source, read and write destination)
    )
    # mul, mm, sub, add, mul_, abs, le (bool out), masked_fill_ (bool in)
    instantaneous = (5 * GA + (2 * GA + 2 * G) + 2 * (2 * GA + G) + 3 * 2 * GA + 2 * GA) * e + 2 * GA
    updates = (4 * GA + (3 * GA + G) + 2 * GA) * e  # regrets' addcmul_, average's addcmul_, CFR+'s floor
    # clamp_min, mul_ legal, mm, le (bool out), copy_ (bool in), addcmul_ uniform, add_, div_
    matching = (2 * GA + 3 * GA + (GA + G) + G + G + (3 * GA + G) + 3 * G + (2 * GA + G)) * e + 2 * G
    return traverse + instantaneous + updates + matching


def dense_cfr_traffic(solver) -> dict:
    """Executed and compulsory bytes of one alternating iteration of a ``DenseCFR`` (two passes),
    and per slot (row, key, action) of its tables and per terminal history."""
    s = solver
    e = s.regret.element_size()
    GA = s.regret.numel()
    executed = sum(_pass_bytes(s, p) for p in (0, 1))
    fixed = sum(
        sum(x.numel() * x.element_size() for x in (s.gather_idx[p], s.keep_idx[p], s.add_idx[p]))
        + s.mats[p].numel() * e
        for p in (0, 1)
    )
    compulsory = 2 * (6 * GA * e) + fixed
    histories = s.Z * s.BF * s.H
    return {
        "solver": "dense CFR (pasur.poker.dense_cfr), CFR+, alternating",
        "dtype": str(s.regret.dtype),
        "slots": GA,
        "terminal_histories": histories,
        "executed_bytes": executed,
        "compulsory_bytes": compulsory,
        "executed_bytes_per_slot": executed / GA,
        "compulsory_bytes_per_slot": compulsory / GA,
        "executed_bytes_per_history": executed / histories,
    }


def lossless_traffic(solver) -> dict:
    """Compulsory bytes of one alternating iteration of the lossless solver (``EmbeddingCFR`` with
    identity embeddings): each player's regrets and average's sums read and written once, the
    current strategy written once and read by both passes (7 passes over a table's size). The
    traversal's own intermediates are not counted: a lower bound on the traffic."""
    tables = [*solver.regret]
    values = sum(t.numel() for t in tables)
    e = tables[0].element_size()
    compulsory = 7 * values * e
    return {
        "solver": "lossless (EmbeddingCFR, identity Phi), DCFR, alternating",
        "dtype": str(tables[0].dtype),
        "slots": values,
        "executed_bytes": None,
        "compulsory_bytes": compulsory,
        "compulsory_bytes_per_slot": compulsory / values,
    }
