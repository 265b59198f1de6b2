"""The bookkeeping commands on the embedded suite: wall time of `webrl tasks stats`, `tasks show` and `tasks export`
each in a fresh state directory: the first time (the snapshots and the suite are built) and after (the suite is
read from its cache in the state directory).

    .venv/bin/python bench/tasks_commands.py [--json bench/results/tasks-commands.json]

Prints one table: command, first run (s), later runs (s, median of 3).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from rich.console import Console
from rich.table import Table
from stamp import add_json_option, table_numbers, write_result  # bench/ is on sys.path when a bench runs

COMMANDS = {
    "tasks stats": ["tasks", "stats"],
    "tasks show 5": ["tasks", "show", "5"],
    "tasks export": ["tasks", "export", "--out", "{tmp}/suite.json"],
}


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "webrl", *args], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_json_option(parser)
    args = parser.parse_args()
    table = Table(title="webrl tasks commands on the embedded suite (fresh state dir)")
    for column in ("command", "first run (s)", "later runs (s, median of 3)"):
        table.add_column(column, justify="left" if column == "command" else "right")
    for name, command in COMMANDS.items():
        with tempfile.TemporaryDirectory() as tmp:  # each command's first run in a state dir of its own
            env = dict(os.environ, WEBRL_STATE_DIR=tmp)
            command = [a.format(tmp=tmp) for a in command]
            first = timed(command, env)
            later = statistics.median(timed(command, env) for _ in range(3))
            table.add_row(name, f"{first:.1f}", f"{later:.1f}")
    Console().print(table)
    if args.json:
        write_result(args.json, table_numbers(table))


if __name__ == "__main__":
    main()
