"""Bytes a Pasur round-CFR iteration moves, counted from the operations it runs (issue 43, item 1).

:func:`executed_bytes` runs one iteration of a :class:`pasur.solve.cfr.RoundCFR` under a
dispatch mode that sees every tensor operation with its actual tensors (sizes and dtypes) and
counts, per operation, each tensor it reads and each it writes once, as if nothing stayed in
cache between operations: a gather (``index_select``) reads its index, one source value per index
and writes its output; a scatter-add reads its index and source and reads and writes one
destination value per index; every other operation reads its inputs in full and writes its
outputs in full (``zero_``, ``fill_`` and ``out=`` tensors are written, not read).

:func:`compulsory_bytes` is what any implementation of the same alternating iteration must move,
from the solver's tensors: per pass (two an iteration) the values pass reads each edge's reward,
strategy and indices (parent, and child where the tree shares nodes) and writes each node's value;
the reach pass of one player reads each edge's strategy and indices and writes each node's reach;
and each edge is updated once an iteration: its regret and average read and written, its strategy
written, and its parent's value and both reaches read (a fused kernel's traffic: no intermediates).
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

GATHERS = {"index_select"}
SCATTERS = {"scatter_add_", "scatter_add", "index_add_", "index_add"}
WRITE_ONLY = {"zero_", "fill_", "copy_"}


def _tensor_bytes(t: torch.Tensor, count: int | None = None) -> int:
    return (t.numel() if count is None else count) * t.element_size()


def op_bytes(func, args, kwargs, out) -> int:
    """Bytes one operation reads and writes (the module docstring's model)."""
    base = func._schema.name.split("::")[-1]
    tensors = [(a, arg) for a, arg in zip(func._schema.arguments, args, strict=False) if isinstance(arg, torch.Tensor)]
    tensors += [(a, kwargs[a.name]) for a in func._schema.arguments if isinstance(kwargs.get(a.name), torch.Tensor)]
    written = [t for a, t in tensors if a.alias_info is not None and a.alias_info.is_write]
    read = [t for a, t in tensors if a.alias_info is None or not a.alias_info.is_write]
    if not written:  # a functional op: its results are written
        written = [o for o in (out if isinstance(out, tuple | list) else (out,)) if isinstance(o, torch.Tensor)]
    if base in GATHERS:
        source, index = read[0], read[1]
        return _tensor_bytes(index) + _tensor_bytes(source, index.numel()) + sum(map(_tensor_bytes, written))
    if base in SCATTERS:
        index, source = (read[0], read[1]) if read[0].dtype in (torch.int32, torch.int64) else (read[1], read[0])
        dest = written[0] if written else out
        return _tensor_bytes(index) + _tensor_bytes(source) + 2 * _tensor_bytes(dest, index.numel())
    mutated_inputs = [t for a, t in tensors if a.alias_info is not None and a.alias_info.is_write and not a.kwarg_only]
    reads = sum(map(_tensor_bytes, read)) + (0 if base in WRITE_ONLY else sum(map(_tensor_bytes, mutated_inputs)))
    return reads + sum(map(_tensor_bytes, written))


class _Counter(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0
        self.ops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.bytes += op_bytes(func, args, kwargs, out)
        self.ops += 1
        return out


def executed_bytes(solver) -> tuple[int, int]:
    """Bytes moved and operations run by one iteration of ``solver`` (run eagerly: the operations a
    captured graph replays are the same)."""
    graph = solver._graph
    enabled, graph.enabled = graph.enabled, False
    captured, graph.graph = graph.graph, None
    try:
        with _Counter() as counter:
            solver.iterate()
    finally:
        graph.enabled, graph.graph = enabled, captured
    return counter.bytes, counter.ops


def compulsory_bytes(solver) -> int:
    """The module docstring's lower bound for one alternating iteration of ``solver``."""
    total = 0
    passes = 2 if solver.params.updates == "alternating" else 1
    for i, L in enumerate(solver.layers):
        e = int(L.parent.shape[0])
        f = solver.sigma[i].element_size()
        idx = 4 + (0 if L.tree_like else 4)  # int32 parent, int32 child where nodes are shared
        values = e * (2 * f + idx) + L.n_parent * f  # reward, strategy, indices; node values
        reach = e * (f + idx) + L.n_parent * f  # strategy, indices; one player's reach
        update = e * (6 * f + 4) + 3 * e * f  # regret, average r/w, strategy w, q; parent index; v, 2 reaches
        total += passes * (values + reach) + update
    return total
