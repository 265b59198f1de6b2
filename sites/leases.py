"""Exclusive use of a site instance. A run's worker k holds the lease of instance k for as long as it runs episodes
there, so that a second run, or a manual `webrl reset`, on that instance is refused instead of changing the pages
and databases under the first run's episodes (which would record wrong scores as if nothing had happened).

A lease is an exclusive flock on `<state dir>/leases/instance-<k>.lock`: the kernel releases it when its holder
ends, however it ends, so a killed run never leaves one behind. The file says who holds it, for the refusal.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from webrl.errors import UsageError


def lease_path(state_dir: Path, instance: int) -> Path:
    return Path(state_dir) / "leases" / f"instance-{instance}.lock"


@contextmanager
def instance_lease(state_dir: Path, instance: int, holder: str) -> Iterator[None]:
    """Hold instance `instance` for the block; `holder` says what for (e.g. the run's command and folder).
    Refused with a UsageError naming the current holder when another process, or another block of this one,
    holds it."""
    path = lease_path(state_dir, instance)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"site instance {instance} is in use by {_holder(path)}; wait until it ends, or use "
                "another instance (`webrl up --instances N`)"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} ({holder})".encode())
        yield
    finally:
        os.close(fd)  # and with it the lock


def known_instances(state_dir: Path) -> list[int]:
    """The instances that have been leased in this state dir (the only ones a run can be holding)."""
    return sorted(int(p.stem.removeprefix("instance-")) for p in (Path(state_dir) / "leases").glob("instance-*.lock"))


def _holder(path: Path) -> str:
    try:
        return path.read_text().strip() or "another process"
    except OSError:
        return "another process"
