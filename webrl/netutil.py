"""Port checks with a useful answer to "who has this port?", and the host:port a URL reaches."""

from __future__ import annotations

import os
import random
import socket
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def port_owner(port: int) -> str | None:
    """'pid 123 (python3)' for the process listening on `port`, when /proc tells (Linux); else None."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # 0A = LISTEN
                inodes.add(f"socket:[{inode}]")
    if not inodes:
        return None
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") in inodes for fd in fds):
                name = Path(f"/proc/{pid}/comm").read_text().strip()
                return f"pid {pid} ({name})"
        except OSError:
            continue
    return None


def free_port() -> int:
    """A port that is free now (for tests and benchmarks)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_port_blocks(names: list[str], count: int, port_of: Callable[[int, int], int]) -> dict[str, int]:
    """A base port per name such that port_of(base, k) is free for k < count and no two blocks meet
    (for running sites on free ports in tests and benchmarks)."""
    span = max(port_of(0, k) for k in range(count))
    taken: set[int] = set()
    bases: dict[str, int] = {}
    while len(bases) < len(names):
        base = free_port()
        if base + span > 65535:  # the kernel's free ports are high (32768 up): many instances need a lower base
            base = random.randrange(1024, 65536 - span)
        block = {port_of(base, k) for k in range(count)}
        if not block & taken and all(port_free("127.0.0.1", p) for p in block):
            taken |= block
            bases[names[len(bases)]] = base
    return bases


def host_port(url: str) -> str | None:
    """`host:port` of an http(s) or ws(s) URL (the scheme's default port when none is given), the host lowercased and
    an IPv6 one without brackets; None for any other scheme (javascript:, data:, blob:, file:, about:, ...)."""
    parts = urlsplit(url)
    default = {"http": 80, "ws": 80, "https": 443, "wss": 443}.get(parts.scheme)
    if default is None or not parts.hostname:
        return None
    try:
        port = parts.port or default
    except ValueError:  # a port out of range
        return None
    return f"{parts.hostname}:{port}"
