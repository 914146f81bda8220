"""A memory guard for tree building: refuse a layer that would not fit, before allocating it.

The size of the next layer is known exactly before it is built (the branch factors sum to
it), so the guard compares what the build already uses (the process's resident memory on the
CPU, allocated memory on CUDA, above what it was when the build began) plus the projected
layer and its transients against a limit: by default what the device had free at the start.
Measuring the real use, not a sum of tensor sizes, keeps allocator slack and freed-but-kept
transients in the account.
"""

from __future__ import annotations

import torch

from pasur.common.errors import PasurInputError
from pasur.common.malloc import return_free_heap


class TreeTooLargeError(PasurInputError):
    """The tree would exceed the memory limit; the message says where and how much."""


def available_bytes(device: torch.device) -> int:
    """Free memory of ``device``: ``MemAvailable`` for the CPU, ``mem_get_info`` for CUDA."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import os

    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB"


def used_bytes(device: torch.device) -> int:
    """Memory in use now: resident set size of this process (CPU) or allocated bytes (CUDA)."""
    if device.type == "cuda":
        return int(torch.cuda.memory_allocated(device))
    try:
        with open("/proc/self/statm") as f:
            import os

            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def release_freed() -> None:
    """Free what only reference cycles still hold, and have glibc give the freed heap back to the
    system (``malloc_trim``). A sweep that runs decks one after another in one process calls it
    between decks: on one ref0 deck of the Figure 14 sweep's job the cycles held 0.3 GiB and the
    heap 1.5 GiB more (benchmarks/bench_deck_retention.py), and after the paper's deck 37 (248 M
    nodes) the process still held 17.3 GiB when the next deck began."""
    import gc

    gc.collect()
    return_free_heap()


def peak_bytes(device: torch.device) -> int:
    """The most memory this process has held so far: its peak resident set (CPU; ``ru_maxrss``,
    kibibytes on Linux, bytes on macOS) or the peak allocated on ``device`` (CUDA)."""
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class MemoryGuard:
    """Refuses layers that would take the build past ``limit`` bytes (see the module docstring)."""

    #: per new GT edge kept: parent and child int32, card int8, captured int64, reward int8
    GT_EDGE_BYTES = 18
    #: per new FGT node kept (paper mode): t_fgm 2 x int32, t_edg int32
    FGT_BYTES = 12
    #: transient per new GT node while a layer is built: parent and child state (6 int64 columns
    #: each), action indices, keys, masks. The largest compact layers of the paper's deck 49 peak
    #: at about 190 bytes a node, kept bytes included (benchmarks/bench_build_memory.py)
    GT_TRANSIENT_BYTES = 260
    #: transient per new FGT node: RepeatBlocks' int64 intermediates, gathers. With the GT
    #: nodes' share above, deck 49's paper layers (up to 90 M FGT nodes) peak at 1.3 to 1.6
    #: times less than the estimate with 24 (results/tail-memory/guard.md); 72, the figure
    #: before, refused that deck with its largest layer estimated at three times its real 4 GiB
    FGT_TRANSIENT_BYTES = 24
    #: transient per terminal FGT node at the end of a round (new scores, pairs, linkage): deck
    #: 49's end of round 5 (90 M nodes) peaks below 46 bytes a node, with the layer before it
    END_ROUND_BYTES = 48
    #: share of the free memory used when no limit is given (headroom for the solver after the build)
    DEFAULT_SHARE = 0.8
    #: node indices are int32
    MAX_LAYER = 2**31 - 1

    def __init__(self, limit: int | None, device: torch.device) -> None:
        self.device = device
        self.limit = limit if limit is not None else int(self.DEFAULT_SHARE * available_bytes(device))
        self.base = used_bytes(device)

    @property
    def held(self) -> int:
        return max(0, used_bytes(self.device) - self.base)

    def estimate(self, t: int, n_gt: int, n_fgm: int, mode: str, m: int, history: bool) -> int:
        """Bytes the layer of turn ``t`` will take while it is built: what it keeps and its
        transients (at turn 8, or those of the round's end that follows, if more)."""
        per_gt = self.GT_EDGE_BYTES + (m if history else 0)
        paper = mode == "paper"
        kept = n_gt * per_gt + (n_fgm * self.FGT_BYTES if paper else 0)
        transient = n_gt * (self.GT_TRANSIENT_BYTES + (4 * m if history else 0))
        transient += n_fgm * self.FGT_TRANSIENT_BYTES if paper else 0
        if t == 8:  # the end of the round follows at once
            transient = max(transient, n_fgm * self.END_ROUND_BYTES)
        return kept + transient

    def check(self, r: int, t: int, n_gt: int, n_fgm: int, mode: str, m: int, history: bool) -> None:
        if max(n_gt, n_fgm) > self.MAX_LAYER:
            raise TreeTooLargeError(
                f"round {r}, turn {t}: {max(n_gt, n_fgm):,} nodes in one layer, more than int32 indices hold; "
                "use --tree compact"
            )
        need = self.estimate(t, n_gt, n_fgm, mode, m, history)
        held = self.held
        if held + need > self.limit:
            raise TreeTooLargeError(
                f"round {r}, turn {t}: {n_gt:,} game-tree nodes ({n_fgm:,} full-game-tree nodes) would need "
                f"about {gib(need)} on top of the {gib(held)} in use, over the limit of "
                f"{gib(self.limit)}; use --tree compact, a larger --memory-limit, or a bigger device"
            )
