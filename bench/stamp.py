"""A bench's result file: its numbers with the commit they measured, the date, the machine, its load and the command
that made them, so that the docs quote a file (scripts/docs_tables.py), never a number typed by hand."""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path


def stamp(checkout: Path | None = None) -> dict:
    """The commit of `checkout` (default: this file's; "+dirty" when it has uncommitted changes), the time, the
    machine (processor, cores) and its load average over the last minute, and the command that is running."""
    checkout = checkout or Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        result = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else ""

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return {
        "commit": commit + ("+dirty" if dirty else ""),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": processor(),
        "cores": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2),
        "command": shlex.join(["python", *sys.argv]),
    }


def processor() -> str:
    """The processor's model name (Linux), else what the platform says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def write_result(path: Path, numbers: dict) -> None:
    """Write `numbers` with their stamp to `path` as JSON."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**stamp(), **numbers}, indent=2) + "\n")
