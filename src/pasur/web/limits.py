"""A bounded limit on failed guesses (issue 44): a join code is one of about 8.9e8, so a client
that may try codes without end finds a waiting table in time. Each client address gets a token
bucket of ``per_window`` failures refilled over ``window_s`` seconds; an empty bucket is answered
429 with ``Retry-After`` until a token is back. A server runs for weeks: at most ``max_clients``
buckets are kept (the least recently failed dropped first), and a bucket that has refilled is
forgotten."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

#: failed code lookups or joins a client may make in a window
FAILURES_PER_WINDOW = 10
#: seconds in which a client's failures are forgiven
FAILURE_WINDOW_S = 60.0
#: client addresses remembered at most (each a few hundred bytes)
MAX_CLIENTS = 10_000
#: the answer to a client over its limit
TOO_MANY = "too many wrong codes: wait a minute and try again"


class FailureLimiter:
    """Token buckets of failures keyed by client address, capped in number, on an injectable
    ``clock`` (tests move it by hand)."""

    def __init__(
        self,
        per_window: int = FAILURES_PER_WINDOW,
        window_s: float = FAILURE_WINDOW_S,
        max_clients: int = MAX_CLIENTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_window < 1 or window_s <= 0 or max_clients < 1:
            raise ValueError("per_window, window_s and max_clients must be positive")
        self.per_window, self.window_s, self.max_clients, self.clock = per_window, window_s, max_clients, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (tokens, when)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._buckets)

    def _tokens(self, client: str, now: float) -> float:
        """The client's tokens now (a full bucket for one not remembered); a refilled bucket is dropped."""
        tokens, when = self._buckets.get(client, (self.per_window, now))
        tokens = min(self.per_window, tokens + max(0.0, now - when) * self.per_window / self.window_s)
        if tokens >= self.per_window:
            self._buckets.pop(client, None)
        return tokens

    def retry_after(self, client: str) -> int | None:
        """Seconds before ``client`` may try again, or None when it may now."""
        with self._lock:
            tokens = self._tokens(client, self.clock())
        if tokens >= 1:
            return None
        return max(1, math.ceil((1 - tokens) * self.window_s / self.per_window))

    def failed(self, client: str) -> None:
        """Count one failure of ``client``; the least recently failed clients beyond the cap are forgotten."""
        with self._lock:
            now = self.clock()
            tokens = self._tokens(client, now)
            self._buckets[client] = (max(0.0, tokens - 1), now)
            self._buckets.move_to_end(client)
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
            self._forget_refilled(now)

    def _forget_refilled(self, now: float) -> None:
        """Drop the oldest buckets that have refilled (a few a call: memory stays small without a sweep)."""
        for _ in range(2):
            oldest = next(iter(self._buckets), None)
            if oldest is None or self._tokens(oldest, now) < self.per_window:
                return
