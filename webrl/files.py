"""Writing files and folders all-or-nothing: a reader (a resumed run, vLLM, the next phase, a browser showing a
report) sees the old content or the new, never a half-written one; secrets only their owner may read; and one
JSON-lines line read as an object, or a JSON file read into its model, or a usage error saying where."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from webrl.errors import UsageError, field_problem

STAGING_PREFIX = ".tmp-"


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Name `path` in the errors of writing it that name no file: a full disk (Python's write() errors carry no path,
    SQLite's "database or disk is full" not even an errno). The CLI says where and what to do (webrl.cli.main)."""
    try:
        yield
    except sqlite3.OperationalError as err:
        if getattr(err, "sqlite_errorcode", None) is None or err.sqlite_errorcode & 0xFF != sqlite3.SQLITE_FULL:
            raise
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from err
    except OSError as err:
        if err.filename is not None:
            raise
        raise OSError(err.errno, err.strerror, str(path)) from err


def write_atomically(path: Path, content: str | bytes) -> None:
    """Replace `path` by `content` (text or bytes) through a temporary file beside it and one rename."""
    path = Path(path)
    tmp = path.with_name(f"{STAGING_PREFIX}{path.name}")
    try:
        with writing(path):
            if isinstance(content, bytes):
                tmp.write_bytes(content)
            else:
                tmp.write_text(content)
    except OSError:
        with suppress(OSError):
            tmp.unlink()  # what a full disk let through would keep it full
        raise
    os.replace(tmp, path)


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path`, readable and writable by its owner only (0600), whatever mode the file had: open's
    mode applies only to a new file, so a token file left 0644 would otherwise stay readable by every local user."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with writing(path), os.fdopen(fd, "w") as f:
        f.write(text)


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


def json_object(line: str, where: str) -> dict:
    """One line of a JSON-lines file that must hold an object; a usage error naming `where` otherwise."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as err:
        raise UsageError(f"{where}: not valid JSON ({err.msg})") from None
    if not isinstance(value, dict):
        raise UsageError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def read_json(path: Path) -> Any:
    """A JSON file's value; a usage error naming the file where it cannot be read or is not JSON."""
    try:
        return json.loads(Path(path).read_text())
    except OSError as err:
        raise UsageError(f"{path}: cannot read it ({err.strerror})") from None
    except json.JSONDecodeError as err:
        raise UsageError(f"{path}: not valid JSON ({err.msg})") from None


def validated(kind: Any, data: Any, where: Path | str) -> Any:
    """`data` as `kind` (a pydantic model, or a type of them such as list[Model]); a usage error naming `where`
    and the field at fault otherwise."""
    try:
        return TypeAdapter(kind).validate_python(data)
    except ValidationError as err:
        problem = field_problem(err)
        field = f"field '{problem.field}': " if problem.loc else ""
        raise UsageError(f"{where}: {field}{problem.message}") from None
