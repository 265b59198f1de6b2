"""How much does one environment step cost? Goal: median <= 60 ms on the embedded sites.

A step is: execute the action in Chromium, wait until the page is stable (load, then 30 ms without a
request and 30 ms without a DOM change), and build the next observation. VAB-WebArena-Lite instead
sleeps a fixed 3 s after every action. The benchmark replays a scripted browsing session on the
embedded shop (menu clicks, searches, scrolling, going back) through the one episode runner, several
episodes, and prints the median and p90 of each part.

    .venv/bin/python bench/step.py [--episodes 3] [--json RESULT.json]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table
from stamp import add_json_option, write_result  # bench/ is on sys.path when a bench runs

from webrl.config import load_config
from webrl.policy.oracle import OraclePolicy
from webrl.runs.episodes import Browsers, EvalSettings, open_env, run_episode
from webrl.sites.embedded.backend import EmbeddedBackend, up_on_free_ports
from webrl.tasks.model import Task

VAB_SLEEP_MS = 3000
GOAL_MS = 60  # an earlier goal of 100 ms was met on 2026-12-02 (docs/log.md)
SESSION = [
    'do(action="Click", element="{Home & Kitchen}")',
    'do(action="Scroll Down")',
    'do(action="Click", element="{Bedding}")',
    'do(action="Go Backward")',
    'do(action="Search", argument="yoga mat", element="{placeholder=Search entire store here...}")',
    'do(action="Scroll Down")',
    'do(action="Scroll Up")',
    'do(action="Click", element="{Electronics}")',
    'do(action="Click", element="{Sports & Outdoors}")',
    'do(action="Go Backward")',
    'do(action="Type", argument="headlamp", element="{placeholder=Search entire store here...}")',
    'do(action="Press Enter")',
]


def session_task() -> Task:
    return Task.model_validate(
        {
            "task_id": 0,
            "sites": ["shopping"],
            "start_url": "__SHOPPING__",
            "require_login": False,
            "storage_state": None,
            "intent": "Browse the shop.",
            "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["x"]}},
            "cheat": SESSION,
        }
    )


async def measure(backend: EmbeddedBackend, episodes: int, out: Path) -> list[dict[str, float]]:
    """The scripted session's step timings over `episodes` episodes of the one episode runner."""
    settings = EvalSettings(tasks="bench", out=out, max_steps=len(SESSION) + 1, screenshots=False)
    steps = []
    async with Browsers() as browsers, open_env(browsers, backend, 0, settings) as env:
        for repeat in range(episodes):
            row = await run_episode(env, browsers, OraclePolicy(), session_task(), repeat, settings)
            steps += [step.timings_ms for step in row.steps[: len(SESSION)]]  # not the final answer
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3)
    add_json_option(parser)
    args = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as state:
        backend = up_on_free_ports(
            load_config(flags={"state_dir": Path(state), "sites.sites": ["shopping"]}, environ={})
        )
        try:
            with console.status(f"{args.episodes} scripted episodes of {len(SESSION)} steps"):
                steps = asyncio.run(measure(backend, args.episodes, Path(state) / "episodes"))
        finally:
            backend.down()
    table = Table(title=f"BrowserEnv step on the embedded shop, {len(steps)} steps")
    for column in ("part", "median", "p90", "max"):
        table.add_column(column, justify="left" if column == "part" else "right")
    parts = ["act", "wait_load", "wait_network", "wait_rest", "settle", "observe", "total"]
    numbers = {}
    for part in parts:
        values = [s.get(part, 0.0) for s in steps]
        numbers[part] = {"median_ms": statistics.median(values), "p90_ms": statistics.quantiles(values, n=10)[-1]}
        table.add_row(
            part, f"{numbers[part]['median_ms']:.0f} ms", f"{numbers[part]['p90_ms']:.0f} ms", f"{max(values):.0f} ms"
        )
    console.print(table)
    if args.json:
        write_result(args.json, {"bench": "step", "steps": len(steps), "parts": numbers})
    median = statistics.median(s["total"] for s in steps)
    console.print(
        f"median step overhead {median:.0f} ms: goal ≤ {GOAL_MS} ms {'✓' if median <= GOAL_MS else '✗'}; "
        f"VAB's fixed sleep alone is {VAB_SLEEP_MS} ms ({VAB_SLEEP_MS / median:.0f}× longer)"
    )


if __name__ == "__main__":
    main()
