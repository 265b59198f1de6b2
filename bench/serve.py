"""Episodes through `webrl serve`: how many oracle episodes per second an OpenEnv client gets at 1, 2 and 4
sessions, against `webrl eval`'s runner in-process on the same tasks with as many workers. Goal: >= 0.8x.

Starts the real embedded server (free ports, a temporary state directory, 4 instances) and takes a fixed sample of
a task set (default: MiniWoB++'s test seeds of the scripted environments). For each count it runs the sample
in-process (bench/throughput.py's run), then starts `webrl serve --instances N` in a subprocess and plays the
sample through openenv-core's GenericEnvClient, N sessions taking the next task from one queue, the oracle
answering in this process from the served observation (as a trainer's policy would). Screenshots are off on both
sides. The rate is the steady one on both sides: episodes after the first over the time from the first's end to
the last's (neither Chromium's launch nor the server's start is counted).

    .venv/bin/python bench/serve.py [--tasks miniwob:test] [--episodes 40] [--sessions 1 2 4] [--json RESULT.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from openenv.core.generic_client import GenericEnvClient
from rich.console import Console
from rich.table import Table
from stamp import add_json_option, table_numbers, write_result  # bench/ is on sys.path when a bench runs
from throughput import bench_sites, sample

from webrl.netutil import free_port
from webrl.policy.base import PolicyInput, Sampling
from webrl.policy.factory import make_policy
from webrl.policy.oracle import OraclePolicy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.runs.serve import served_observation

GOAL = 0.8


def serve(state: Path, task_file: Path, sessions: int, out: Path) -> tuple[subprocess.Popen, str]:
    """`webrl serve` on the bench's sites, once it answers /health."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBRL_")} | {"WEBRL_STATE_DIR": str(state)}
    options = ["--tasks", str(task_file), "--instances", str(sessions), "--port", str(port), "--out", str(out)]
    server = subprocess.Popen(
        [sys.executable, "-m", "webrl", "serve", *options, "--no-screenshots"], env=env, stdout=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    while server.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return server, url
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit(f"webrl serve exited with {server.returncode}")


def rate(ends: list[float]) -> float:
    """Episodes per second from the times the episodes ended."""
    return (len(ends) - 1) / (max(ends) - min(ends))


def in_process(backend, tasks: list, out: Path, workers: int) -> float:
    """`webrl eval`'s runner with the oracle on `workers` instances."""
    settings = EvalSettings(tasks="bench", policy="oracle", out=out, parallel=workers, screenshots=False)
    ends = []
    executor = LocalExecutor(backend, make_policy("oracle"))
    asyncio.run(run_eval(settings, tasks, executor, lambda record: ends.append(time.perf_counter())))
    return rate(ends)


async def play_all(url: str, tasks: list, sessions: int) -> tuple[list[float], list[float]]:
    """Every task once over `sessions` client sessions: when each episode ended, and its reward."""
    queue, ends, rewards, oracle = list(tasks), [], [], OraclePolicy()

    async def session() -> None:
        async with GenericEnvClient(base_url=url) as client:
            while queue:
                task = queue.pop()
                result, history = await client.reset(task_id=str(task.task_id)), []
                while not result.done:
                    seen = PolicyInput(task, history, served_observation(result.observation))
                    history.append(oracle.act([seen], Sampling())[0].text)
                    result = await client.step({"text": history[-1]})
                ends.append(time.perf_counter())
                rewards.append(result.reward)

    await asyncio.gather(*(session() for _ in range(sessions)))
    return ends, rewards


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="miniwob:test")
    parser.add_argument("--episodes", type=int, default=40, help="oracle episodes per row and side")
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 2, 4])
    add_json_option(parser)
    args = parser.parse_args()
    console = Console()
    table = Table(title=f"{args.tasks}: oracle episodes/s through `webrl serve` and in-process (goal >= {GOAL}x)")
    columns = ("sessions / workers", "in-process episodes/s", "served episodes/s", "served / in-process", "solved")
    for column in columns:
        table.add_column(column, justify="right")
    raw = {}
    with bench_sites(max(args.sessions)) as (backend, state):
        tasks = sample(args.tasks, state, args.episodes)
        task_file = state / "bench-tasks.json"
        task_file.write_text(json.dumps([t.to_config() for t in tasks], default=str))
        for n in args.sessions:
            local = in_process(backend, tasks, state / f"eval-{n}", n)
            server, url = serve(state, task_file, n, state / f"served-{n}")
            try:
                ends, rewards = asyncio.run(play_all(url, tasks, n))
            finally:
                server.send_signal(signal.SIGINT)
                server.wait(timeout=60)
            served = rate(ends)
            solved = f"{rewards.count(1.0)}/{len(rewards)}"  # the oracle solves every task: less is a finding
            table.add_row(str(n), f"{local:.2f}", f"{served:.2f}", f"{served / local:.2f}", solved)
            raw[str(n)] = {"in_process": local, "served": served}
    console.print(table)
    if args.json:
        write_result(args.json, table_numbers(table, sessions=raw, episodes=len(tasks)))


if __name__ == "__main__":
    main()
