"""Where time goes: `timed` adds a block's milliseconds to a named entry of a timings dict."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def timed(timings: dict[str, float], name: str) -> Iterator[None]:
    """Add the milliseconds the block takes (to 0.1 ms) to `timings[name]`, also when it raises; a name timed
    again accumulates (an episode's policy time over its steps)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = round(timings.get(name, 0.0) + (time.perf_counter() - start) * 1000, 1)
