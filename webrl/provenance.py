"""Where a result comes from: the commit of the code that made it, the time, the machine and the command. Result
files carry it (a bench's bench/results/*.json, a run's summary.json) so that a number is never quoted without it."""

from __future__ import annotations

import os
import platform
import re
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
        "command": command(checkout),
    }


def command(checkout: Path = CHECKOUT) -> str:
    """The running command as its user typed it: `webrl eval ...`, `python -m webrl ...`, `python bench/x.py ...`,
    its paths as `portable_command` shows them."""
    program = Path(sys.argv[0])
    if program.name == "__main__.py":
        words = ["python", "-m", program.parent.name]
    elif program.suffix == ".py":
        words = ["python", sys.argv[0]]
    else:
        words = [program.name]
    return portable_command(shlex.join([*words, *sys.argv[1:]]), checkout)


# A home folder by the usual names too, so that a file stamped on another machine reads the same everywhere.
HOME = re.compile(rf"^(?:{re.escape(str(Path.home()))}|/root|/home/[^/]+|/Users/[^/]+)(?=/|$)")


def portable_command(command: str, checkout: Path = CHECKOUT) -> str:
    """`command` without the machine's folders, for a result a page quotes: an absolute path (a word, or an
    option's `--name=` value) relative to `checkout` where it is inside it, else from `~` where it is in a home."""
    return " ".join(_quoted(_portable_word(word, checkout)) for word in shlex.split(command))


def _portable_word(word: str, checkout: Path) -> str:
    name, equals, value = word.partition("=") if word.startswith("--") else ("", "", word)
    if not value.startswith("/"):
        return word
    if Path(value).is_relative_to(checkout):
        value = Path(value).relative_to(checkout).as_posix()
    return name + equals + HOME.sub("~", value, count=1)


def _quoted(word: str) -> str:
    """shlex.quote, with a leading `~` left bare so that a shell still expands it."""
    if word == "~" or word.startswith("~/"):
        return word[:2] + (shlex.quote(word[2:]) if word[2:] else "")
    return shlex.quote(word)


def processor() -> str:
    """The processor's model name (Linux), else what the platform says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
