"""glibc's allocator, told what a long-running process needs (no torch here: a server calls
these before it loads anything large). Both are no-ops off glibc."""

from __future__ import annotations

import contextlib
import ctypes

#: glibc's mallopt parameter of the mmap threshold, and the value it has by default before it moves
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Keep glibc's mmap threshold at ``threshold`` bytes for good (``mallopt``; True if set).

    By default glibc raises the threshold each time a large mapped block is freed, after which
    blocks of that size come from the heaps of the thread that asks; a server whose worker threads
    come and go then spreads its large, short-lived blocks (WebSocket compressors, request
    buffers) over many thread arenas, whose resident memory crept up by about 2 MiB a quarter
    hour in the soak, with or without :func:`return_free_heap` (results/web-soak/). With the
    threshold fixed, each such block is mapped on its own and unmapped when freed. Set it first
    thing, before the large blocks of imports and warm-ups are freed: set from the start (the same
    setting through ``GLIBC_TUNABLES``), the soak's resident memory was 268.7 MiB at minute 60,
    270.2 at minute 15, growing by 0.58 MiB a quarter hour fitted over the samples against 2.24
    with nothing given back; set only once the app starts, 2.05 (results/web-soak/compare.md).
    A no-op off glibc."""
    with contextlib.suppress(OSError, AttributeError):
        return bool(ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, threshold))
    return False


def return_free_heap() -> None:
    """Have glibc give the free pages of every malloc arena back to the system (``malloc_trim``).
    A server calls it now and then: threads that come and go (a thread pool's idle workers exit)
    leave their arenas' freed pages resident, and the resident set crept up by about 1.7 MiB a
    quarter hour with Python's live objects flat (results/web-soak/warm/). Cheap (the pages are
    only advised away, nothing is moved); a no-op off glibc."""
    with contextlib.suppress(OSError, AttributeError):  # (not glibc: nothing to trim)
        ctypes.CDLL("libc.so.6").malloc_trim(0)
