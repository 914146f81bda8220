"""One CFR iteration of a round captured as a CUDA graph and replayed, so that a GPU iteration
costs one launch instead of a few hundred.

A round's iteration on the compact tree is a few hundred small kernels; launched one by one from
Python, their fixed costs (about 11 ms a whole-game iteration on an H100, whatever the tree) bound
it. The iteration's operations write into the solver's preallocated tensors only and read their
iteration-dependent numbers from a coefficient tensor, so the same sequence serves every
iteration: it is run once on a side stream (a real iteration: the warm-up CUDA graphs ask for),
captured once, then replayed. Only on a CUDA device; anywhere else, or when capture fails,
:meth:`IterationGraph.run` runs the body eagerly, the same operations.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch

#: pinned host rows for the coefficients of iterations in flight: a row is written again only
#: after the copy that read it has run
RING = 64


class IterationGraph:
    """Runs an iteration's ``body()`` (returning the solver's host-side state after it, which must
    be the state it started from for a capture to be valid) eagerly or as a replayed graph. It keeps
    no reference to the body's solver (no cycle: a dropped solver frees its memory at once)."""

    def __init__(self, device: torch.device, enabled: bool = True) -> None:
        self.device = device
        self.enabled = enabled and device.type == "cuda" and torch.cuda.is_available()
        self.graph: torch.cuda.CUDAGraph | None = None
        self.state_after = None
        self.failed: str | None = None
        self._ring = self._events = None

    @property
    def captured(self) -> bool:
        return self.graph is not None

    def set_coefficients(self, coef: torch.Tensor, values: list[float], slot: int) -> None:
        """``coef`` (on the device) := ``values``, without waiting for the device on CUDA (a ring
        of pinned rows, each reused once its copy has run)."""
        if coef.device.type != "cuda":
            coef.copy_(torch.tensor(values, dtype=coef.dtype))
            return
        if self._ring is None:
            self._ring = torch.empty(RING, coef.shape[0], dtype=coef.dtype).pin_memory()
            self._events = [None] * RING
        k = slot % RING
        if self._events[k] is not None:
            self._events[k].synchronize()
        self._ring[k].copy_(torch.tensor(values, dtype=coef.dtype))
        coef.copy_(self._ring[k], non_blocking=True)
        self._events[k] = torch.cuda.Event()
        self._events[k].record()

    def run(self, body: Callable[[], object], state_before) -> object:
        """One iteration: replayed when captured, else eager; on CUDA, an eager iteration whose
        host-side state comes back unchanged runs as the warm-up and is then captured."""
        if self.graph is not None:
            self.graph.replay()
            return self.state_after
        if not self.enabled or self.failed is not None:
            return body()
        side = torch.cuda.Stream(device=self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            state_after = body()
        torch.cuda.current_stream(self.device).wait_stream(side)
        if state_after == state_before:
            self._capture(body, state_after)
        return state_after

    def _capture(self, body: Callable[[], object], state) -> None:
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                after = body()
        except RuntimeError as exc:  # an operation that cannot be captured: stay eager
            self.failed = str(exc)
            warnings.warn(f"CFR iteration not captured as a CUDA graph, running eagerly: {exc}", stacklevel=3)
            return
        if after != state:
            self.failed = "the iteration's host-side state changed during capture"
            return
        self.graph, self.state_after = graph, after

    def reset(self) -> None:
        """Drop the graph (the solver's tensors were replaced: focus, unfocus)."""
        self.graph, self.state_after = None, None
