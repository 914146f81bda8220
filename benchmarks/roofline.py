"""Bytes a CFR iteration moves, counted from the solver's own tensors (their sizes and dtypes), and
the machine's bandwidth measured here, for the roofline of the poker core and the lossless solver
(issue 43, item 1). ``benchmarks/bench_bandwidth.py`` measures DRAM bandwidth on its own; this
module's :func:`measured_bandwidth` measures it again in the benchmark's own run, on its device,
and adds a cache-resident copy, the roof of a table as small as Leduc's.

Two counts per iteration:

* **executed**: every aten operation of one more iteration, counted as it runs (:class:`ByteCounter`),
  each tensor it reads and writes counted whole, once per operation, as if nothing stayed in cache;
* **compulsory**: what any implementation of the same iteration must touch: per pass, the regrets
  and the average's sums read and written, the current strategy read and written, and (dense CFR)
  the index tables and payoff matrices read once.
"""

from __future__ import annotations

import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


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


#: gathers: the source is read only where indexed (as many values as the result holds)
GATHERS = {"index_select", "gather", "take", "index"}
#: scatters into their first argument: it is read and written only where indexed
SCATTERS = {"index_add_", "index_add", "scatter_add_", "scatter_add", "index_put_", "scatter_", "scatter_reduce_"}


def _nbytes(x) -> int:
    return x.numel() * x.element_size() if isinstance(x, torch.Tensor) else 0


class ByteCounter(TorchDispatchMode):
    """Counts the bytes every aten operation run under it reads and writes: each tensor argument
    (the ``out=`` buffer excepted) as read and each result as written, counted whole, except a
    gather's source and a scatter's destination, of which only the indexed values (as many as the
    gather's result or the scatter's source holds) are read (and written); views move nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0
        self.ops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func.is_view:
            return out
        name = func.overloadpacket.__name__
        inputs = [x for x in tree_flatten((args, {k: v for k, v in kwargs.items() if k != "out"}))[0]]
        outputs = [x for x in tree_flatten(out)[0]]
        if name in GATHERS:  # the source read where indexed: as many values as the result
            inputs = inputs[1:]
            n = sum(map(_nbytes, inputs)) + 2 * sum(map(_nbytes, outputs))
        elif name in SCATTERS:  # the destination read and written where the source goes
            moved = max(map(_nbytes, inputs[1:]), default=0)
            n = sum(map(_nbytes, inputs[1:])) + 2 * moved
        else:
            n = sum(map(_nbytes, inputs)) + sum(map(_nbytes, outputs))
        self.bytes += n
        self.ops += 1
        return out


def executed(run) -> tuple[int, int]:
    """Bytes read and written, and aten operations, of ``run()`` (:class:`ByteCounter`)."""
    with ByteCounter() as counter:
        run()
    return counter.bytes, counter.ops


def dense_cfr_traffic(solver) -> dict:
    """Executed and compulsory bytes of one alternating iteration of a ``DenseCFR`` (two passes),
    and per slot (row, key, action) of its tables and per terminal history (the executed ones
    counted on one more iteration of ``solver``)."""
    s = solver
    e = s.regret.element_size()
    GA = s.regret.numel()
    executed_bytes, ops = executed(lambda: s.iterate(1))
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
        "operations": ops,
        "executed_bytes": executed_bytes,
        "compulsory_bytes": compulsory,
        "executed_bytes_per_slot": executed_bytes / GA,
        "compulsory_bytes_per_slot": compulsory / GA,
        "executed_bytes_per_history": executed_bytes / histories,
    }


def lossless_traffic(solver) -> dict:
    """Executed bytes of one more alternating iteration of the lossless solver (``EmbeddingCFR``
    with identity embeddings), and its compulsory ones: each player's regrets and average's sums
    read and written once, the current strategy written once and read by both passes (7 passes
    over a table's size)."""
    tables = [*solver.regret]
    values = sum(t.numel() for t in tables)
    e = tables[0].element_size()
    compulsory = 7 * values * e
    executed_bytes, ops = executed(lambda: solver.iterate(1))
    return {
        "solver": "lossless (EmbeddingCFR, identity Phi), DCFR, alternating",
        "dtype": str(tables[0].dtype),
        "slots": values,
        "operations": ops,
        "executed_bytes": executed_bytes,
        "compulsory_bytes": compulsory,
        "executed_bytes_per_slot": executed_bytes / values,
        "compulsory_bytes_per_slot": compulsory / values,
    }
