"""Where a result comes from: the commit of the code that made it, the time, the machine and the command. Result
files carry it (a bench's bench/results/*.json, a run's summary.json) so that a number is never quoted without it."""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def provenance(checkout: Path = CHECKOUT) -> dict:
    """The commit of `checkout` ("+dirty" when its tracked files have uncommitted changes; "unknown" outside git),
    the time, the machine (processor, cores), its load average over the last minute, and the running command."""

    def git(*args: str) -> str:
        try:
            result = subprocess.run(
                ["git", "-C", str(checkout), *args], capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        return result.stdout.strip() if result.returncode == 0 else ""

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = commit != "unknown" and bool(git("status", "--porcelain", "--untracked-files=no"))
    return {
        "commit": commit + ("+dirty" if dirty else ""),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": processor(),
        "cores": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2),
        "command": command(),
    }


def command() -> str:
    """The running command as its user typed it: `webrl eval ...`, `python -m webrl ...`, `python bench/x.py ...`."""
    program = Path(sys.argv[0])
    if program.name == "__main__.py":
        words = ["python", "-m", program.parent.name]
    elif program.suffix == ".py":
        words = ["python", sys.argv[0]]
    else:
        words = [program.name]
    return shlex.join([*words, *sys.argv[1:]])


def processor() -> str:
    """The processor's model name (Linux), else what the platform says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
