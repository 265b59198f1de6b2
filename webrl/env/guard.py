"""The guard: every connection a browser context opens goes through a SOCKS5 proxy of webrl's that admits only the
episode's site origins, so no script on the page can reach anything else or switch the guard off.

Playwright's request routing (the guard before this one) sees neither WebSockets nor WebRTC, and a page's script
could reach around it; a proxy sits below the page. SOCKS5 rather than an HTTP proxy: Chromium opens one SOCKS
connection per destination host:port and names that destination in the handshake, so the proxy decides on
connections alone and then only copies bytes (it never parses a request, and plain HTTP to two origins never shares
one proxy connection as it can with an HTTP proxy). Chromium routes loopback through the proxy too (Playwright adds
`<-loopback>` to the bypass list), and webrl.browser's launch switches keep WebRTC off UDP (which would not pass
the proxy) and QUIC off.

One proxy per browser context, listening on 127.0.0.1, on the event loop of the environment that owns it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import struct

from webrl.netutil import host_port

_SOCKS = 5
_CONNECT = 1
_REPLY_OK, _REPLY_REFUSED, _REPLY_NOT_SUPPORTED = 0, 2, 7  # 2: "connection not allowed by ruleset"
_CHUNK = 1 << 16


class OriginGuard:
    """A SOCKS5 proxy admitting connections to `allowed` host:ports only; every refused destination is appended to
    `blocked` (as `host:port`)."""

    def __init__(self):
        self.allowed: frozenset[str] = frozenset()
        self.blocked: list[str] = []
        self._server: asyncio.AbstractServer | None = None
        self._connections: dict[asyncio.Task, str | None] = {}  # each client connection: its admitted host:port

    async def start(self) -> str:
        """Listen on a free loopback port (once); returns the proxy's address for Playwright (`socks5://...`)."""
        if self._server is None:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"socks5://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    def allow(self, urls) -> None:
        """From now on admit only the origins of `urls`; open connections to any other are cut (a browser keeps
        connections alive, and the last episode's must not serve the next)."""
        self.allowed = frozenset(hp for url in urls if (hp := host_port(url)) is not None)
        for task, target in list(self._connections.items()):
            if target is not None and target not in self.allowed:
                task.cancel()

    def admits(self, url: str) -> bool:
        """Whether a page at `url` may be loaded now: an http(s)/ws(s) URL of an admitted host:port."""
        return host_port(url) in self.allowed

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections[task] = None
        try:
            target = await self._handshake(reader, writer)
            if target is not None:
                self._connections[task] = f"{target[0]}:{target[1]}"
                await self._relay(reader, writer, *target)
        except (OSError, asyncio.IncompleteReadError, ValueError, asyncio.CancelledError):
            pass  # the browser or the site closed the connection, or the guard cut it: nothing to report
        finally:
            del self._connections[task]
            writer.close()

    async def _handshake(self, reader, writer) -> tuple[str, int] | None:
        """RFC 1928 without authentication. Returns the admitted (host, port), or None after refusing."""
        version, count = await reader.readexactly(2)
        await reader.readexactly(count)  # the offered methods: "no authentication" is the only one Chromium offers
        writer.write(bytes([_SOCKS, 0]))
        version, command, _, kind = await reader.readexactly(4)
        if kind == 1:
            host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
        elif kind == 3:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode("idna").lower()
        elif kind == 4:
            host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
        else:
            raise ValueError(f"SOCKS address type {kind}")
        (port,) = struct.unpack("!H", await reader.readexactly(2))
        if command != _CONNECT:  # UDP ASSOCIATE and BIND: never admitted
            self.blocked.append(f"{host}:{port}")
            writer.write(_reply(_REPLY_NOT_SUPPORTED))
            return None
        if f"{host}:{port}" not in self.allowed:
            self.blocked.append(f"{host}:{port}")
            writer.write(_reply(_REPLY_REFUSED))
            return None
        return host, port

    async def _relay(self, reader, writer, host: str, port: int) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
        except OSError:
            writer.write(_reply(5))  # connection refused: the site is down
            return
        writer.write(_reply(_REPLY_OK))
        try:
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        finally:
            upstream_writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
    finally:
        if writer.can_write_eof():
            try:
                writer.write_eof()
            except OSError:
                pass


def _reply(code: int) -> bytes:
    return bytes([_SOCKS, code, 0, 1, 0, 0, 0, 0, 0, 0])
