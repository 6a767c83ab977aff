"""Client-side request and token limits: an asyncio token bucket.

A bucket holds up to ``capacity`` units and refills at ``rate`` units per second. ``acquire(n)``
waits until the level covers ``n`` (or the bucket is full, for a request larger than the
bucket: it then runs and leaves the level negative, so later requests wait for the debt), then
takes ``n``. ``adjust(delta)`` corrects a reservation once the true cost is known (the token
count a server reports in ``usage``). Waiters are served in arrival order (one lock).
"""

from __future__ import annotations

import asyncio
import time


class TokenBucket:
    """``per_minute`` units per minute, with bursts of up to ``burst`` units (default: one
    second's worth, at least 1)."""

    def __init__(self, per_minute: float, *, burst: float | None = None) -> None:
        if per_minute <= 0:
            raise ValueError(f"rate must be > 0 per minute, got {per_minute}")
        self.rate = per_minute / 60.0
        self.capacity = burst if burst is not None else max(1.0, self.rate)
        self.level = self.capacity
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self, n: float = 1.0) -> None:
        async with self._lock:
            while True:
                self._refill()
                need = min(n, self.capacity)
                if self.level >= need:
                    self.level -= n
                    return
                await asyncio.sleep((need - self.level) / self.rate)

    def adjust(self, delta: float) -> None:
        """Take ``delta`` more units (negative: give some back)."""
        self._refill()
        self.level = min(self.capacity, self.level - delta)


__all__ = ["TokenBucket"]
