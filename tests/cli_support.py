"""The `webrl` command in a subprocess, as a user runs it (tests/ is on sys.path: no __init__.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from webrl.config import DEFAULT_PORTS, instance_port
from webrl.netutil import free_port_blocks


def webrl(env: dict, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "webrl", *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def private_env(state_dir, instances: int = 1) -> dict:
    """The environment of a `webrl` command on its own state dir, every port of `instances` moved to a free one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBRL_")}
    env["WEBRL_STATE_DIR"] = str(state_dir)
    ports = free_port_blocks([*DEFAULT_PORTS, "control"], instances, instance_port)
    env["WEBRL_SITES__CONTROL_PORT"] = str(ports.pop("control"))
    for site, port in ports.items():
        env[f"WEBRL_SITES__PORTS__{site.upper()}"] = str(port)
    env["COLUMNS"] = "200"
    return env


def events(out: Path, name: str) -> list[dict]:
    """The rows of training `name` (sft, actor, critic, orm) in a run's events.jsonl, as far as it is written."""
    path = out / "events.jsonl"
    lines = path.read_text().splitlines(keepends=True) if path.exists() else []
    return [row for row in (json.loads(line) for line in lines if line.endswith("\n")) if row["name"] == name]
