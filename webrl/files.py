"""Writing files and folders all-or-nothing: a reader (a resumed run, vLLM, the next phase, a browser showing a
report) sees the old content or the new, never a half-written one."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STAGING_PREFIX = ".tmp-"


def write_atomically(path: Path, content: str | bytes) -> None:
    """Replace `path` by `content` (text or bytes) through a temporary file beside it and one rename."""
    path = Path(path)
    tmp = path.with_name(f"{STAGING_PREFIX}{path.name}")
    if isinstance(content, bytes):
        tmp.write_bytes(content)
    else:
        tmp.write_text(content)
    os.replace(tmp, path)


@contextmanager
def atomic_dir(dest: Path) -> Iterator[Path]:
    """Yield an empty folder next to `dest` that replaces `dest` only if the block succeeds."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{dest.name}-", dir=dest.parent))
    try:
        yield tmp
        old = dest.with_name(f"{STAGING_PREFIX}{dest.name}-old")
        if dest.exists():
            shutil.rmtree(old, ignore_errors=True)
            dest.rename(old)
        tmp.rename(dest)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
