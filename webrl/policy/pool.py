"""A pool of OpenAI-compatible servers behind one policy. An episode stays on one server for all its requests
(that server's prefix cache holds the episode's growing prompt); a new episode goes to the least-loaded live
server. A server that fails a request (no connection, a timeout, a 5xx) is left out for a while, and the
request is retried on another server."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

import httpx

from webrl.errors import WebrlError

DOWN_S = 60.0  # how long a failed server is left out before new work tries it again
MAX_KEYS = 10_000  # episodes remembered (least recently used dropped): far more than run at once

T = TypeVar("T")


@dataclass
class _Server:
    url: str
    in_flight: int = 0
    served: int = 0  # requests answered (a 4xx included: the server is fine, the request was not)
    failures: int = 0  # requests failed by the server's fault
    down_until: float = 0.0  # time.monotonic() until which it is left out; 0 again once it answers


def server_fault(err: BaseException) -> bool:
    """Whether a failed request is the server's fault (worth another server) rather than the request's (4xx)."""
    if isinstance(err, httpx.HTTPStatusError):
        return err.response.status_code >= 500
    return isinstance(err, httpx.TransportError)  # refused or reset connections, timeouts, broken replies


def describe_error(err: BaseException) -> str:
    """The error's type and first line: an HTTP error's status and URL, never the request headers (the key)."""
    return f"{type(err).__name__}: {(str(err).splitlines() or [''])[0][:200]}"


class ServerPool:
    """Thread-safe: the policy's worker threads share it."""

    def __init__(self, urls: Sequence[str], down_s: float = DOWN_S, max_keys: int = MAX_KEYS):
        self.urls = [url.rstrip("/") for url in urls]
        if isinstance(urls, str) or not self.urls or len(set(self.urls)) < len(self.urls):
            raise ValueError(f"a server pool needs a list of distinct base URLs, not {urls!r}")
        self._servers = [_Server(url) for url in self.urls]
        self._down_s, self._max_keys = down_s, max_keys
        self._homes: OrderedDict[str, _Server] = OrderedDict()  # episode -> its server, least recently used first
        self._lock = threading.Lock()

    def call(self, key: str | None, send: Callable[[str], T]) -> T:
        """`send(base_url)` on the server of episode `key` (None: any, e.g. a request outside an episode). On a
        server fault the server is left out, the episode moves, and `send` is retried on the next server; each
        server is tried at most once, down ones only when no live one is left (a pool of one server behaves
        like that server alone). Any other error of `send` is raised as it is."""
        tried: list[str] = []
        while True:
            try:
                with self.lease(key, skip=tried) as url:
                    return send(url)
            except Exception as err:
                if not server_fault(err):
                    raise
                tried.append(url)
                if len(tried) == len(self.urls):
                    raise WebrlError(
                        f"every server failed ({', '.join(tried)}); the last error: {describe_error(err)}"
                    ) from None

    @contextmanager
    def lease(self, key: str | None, skip: Collection[str] = ()) -> Iterator[str]:
        """The base URL for one request of episode `key`, counted in flight until the block ends; a server
        fault raised in the block leaves the server out for `down_s` seconds."""
        server = self._pick(key, skip)
        fault: bool | None = None  # stays None if interrupted (Ctrl-C): neither answered nor failed
        try:
            yield server.url
            fault = False
        except Exception as err:
            fault = server_fault(err)
            raise
        finally:
            with self._lock:
                server.in_flight -= 1
                if fault:
                    server.failures += 1
                    server.down_until = time.monotonic() + self._down_s
                elif fault is False:  # it answered: up, whatever it was marked
                    server.served += 1
                    server.down_until = 0.0

    def _pick(self, key: str | None, skip: Collection[str]) -> _Server:
        with self._lock:
            now = time.monotonic()
            home = self._homes.get(key) if key is not None else None
            if home is None or home.url in skip or home.down_until > now:
                # live ones first, then the least loaded; min() keeps the first of equals: list order breaks ties
                home = min(
                    (s for s in self._servers if s.url not in skip), key=lambda s: (s.down_until > now, s.in_flight)
                )
            if key is not None:
                self._homes[key] = home
                self._homes.move_to_end(key)
                if len(self._homes) > self._max_keys:
                    self._homes.popitem(last=False)
            home.in_flight += 1
            return home

    def stats(self) -> dict[str, dict]:
        """Per server: requests served, failures, in flight now, and whether it is left out now (for logs)."""
        with self._lock:
            now = time.monotonic()
            return {
                s.url: dict(served=s.served, failures=s.failures, in_flight=s.in_flight, down=s.down_until > now)
                for s in self._servers
            }
