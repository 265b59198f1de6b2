"""The `webrl` command in a subprocess, as a user runs it (tests/ is on sys.path: no __init__.py)."""

from __future__ import annotations

import subprocess
import sys


def webrl(env: dict, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "webrl", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
