"""A memory guard for tree building: refuse a layer that would not fit, before allocating it.

The size of the next layer is known exactly before it is built (the branch factors sum to
it), so the guard compares the bytes the tree already holds plus the projected layer and its
transients against a limit: by default what the device has free when building starts.
"""

from __future__ import annotations

import torch

from pasur.errors import PasurInputError


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


class MemoryGuard:
    """Tracks the bytes a tree holds and refuses layers that would pass ``limit``."""

    #: per new GT edge kept: parent int32, card int8, captured int64, reward int8
    GT_EDGE_BYTES = 14
    #: per new FGT node kept (paper mode): t_fgm 2 x int32, t_edg int32
    FGT_BYTES = 12
    #: transient per new GT node while a layer is built: 6 int64 state columns, indices, keys
    GT_TRANSIENT_BYTES = 96

    def __init__(self, limit: int | None, device: torch.device) -> None:
        self.limit = limit if limit is not None else available_bytes(device)
        self.held = 0

    def check(self, r: int, t: int, n_gt: int, n_fgm: int, mode: str, m: int, history: bool) -> None:
        per_gt = self.GT_EDGE_BYTES + (m if history else 0)
        kept = n_gt * per_gt + (n_fgm * self.FGT_BYTES if mode == "paper" else 0)
        transient = n_gt * (self.GT_TRANSIENT_BYTES + (4 * m if history else 0))
        if self.held + kept + transient > self.limit:
            raise TreeTooLargeError(
                f"round {r}, turn {t}: {n_gt:,} game-tree nodes ({n_fgm:,} full-game-tree nodes) would need "
                f"about {gib(kept + transient)} on top of the {gib(self.held)} held, over the limit of "
                f"{gib(self.limit)}; use --tree compact, a larger --memory-limit, or a bigger device"
            )
        self.held += kept
