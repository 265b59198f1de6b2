"""Rollout throughput: how many oracle steps and episodes per second the harness gives, with 1, 2 and 4 workers,
and where an episode's time goes.

Starts the real embedded server (free ports, a temporary state directory, 4 instances), takes a fixed sample of a
task set (default: the embedded test split, then MiniWoB++'s test seeds of the scripted environments) and runs
the one episode runner with the oracle over it once per worker count (screenshots off, as in training rollouts).

    .venv/bin/python bench/throughput.py [--tasks embedded:test miniwob:test] [--episodes 60] [--workers 1 2 4]
                                         [--json RESULT.json]

Prints per task set: steps/s, episodes/s, oracle success over the judged episodes (an answer only an LLM judge
can score stays unjudged: the bench runs no judge) and the ratio to 1 worker in one table (ratios from one
run: these machines are shared and noisy), and the per-episode breakdown of the 2-worker run (medians and p90 of
the reset's parts, the policy, the steps, closing; `timings_ms` of every episode record).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.table import Table
from stamp import add_json_option, write_result  # bench/ is on sys.path when a bench runs

from webrl.config import load_config
from webrl.families.miniwob.tasks import scripted_names
from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.runs.records import EpisodeRecord, read_episodes
from webrl.sites.embedded.backend import EmbeddedBackend, up_on_free_ports
from webrl.sites.task_sets import resolve_task_set

RESET_PARTS = ("reset", "sign_in", "context", "start_page", "episode_start", "observe")
EPISODE_PARTS = ("policy", "steps", "close")


def sample(name: str, state: Path, episodes: int) -> list:
    tasks = [t for t in resolve_task_set(name, state) if t.cheat]
    if name.startswith("miniwob"):
        scripted = set(scripted_names())
        tasks = [t for t in tasks if t.family_data["miniwob"].env in scripted]
    step = max(1, len(tasks) // episodes)  # spread over the set: every site / environment
    return tasks[::step][:episodes]


def run(backend, tasks, out: Path, workers: int) -> tuple[dict, list[EpisodeRecord]]:
    settings = EvalSettings(tasks="bench", policy="oracle", out=out, parallel=workers, screenshots=False)
    start = time.perf_counter()
    asyncio.run(run_eval(settings, tasks, LocalExecutor(backend, make_policy("oracle"))))
    wall = time.perf_counter() - start
    rows = read_episodes(out)
    # An episode whose answer only an LLM judge can score (fuzzy_match) is unjudged here: the bench runs no judge.
    unjudged = sorted(str(r.task_id) for r in rows if r.status == "unjudged")
    failed = sorted(str(r.task_id) for r in rows if r.status != "unjudged" and not r.success)
    return {
        "episodes": len(rows),
        "steps": sum(len(r.steps) for r in rows),
        "wall": wall,
        "judged": len(rows) - len(unjudged),
        "success": len(rows) - len(unjudged) - len(failed),
        "failed": failed,
        "unjudged": unjudged,
    }, rows


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


def breakdown(rows: list[EpisodeRecord]) -> list[tuple[str, list[float]]]:
    """(part, per-episode milliseconds) for the reset's parts, the episode's parts, and what is outside the steps."""
    parts = [(f"reset: {p}", [r.reset["timings_ms"].get(p, 0.0) for r in rows]) for p in RESET_PARTS]
    parts += [(p, [r.timings_ms[p] for r in rows]) for p in EPISODE_PARTS]
    parts.append(
        (
            "outside the steps (total - policy - steps)",
            [r.timings_ms["total"] - r.timings_ms["policy"] - r.timings_ms["steps"] for r in rows],
        )
    )
    parts.append(("episode total", [r.timings_ms["total"] for r in rows]))
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["embedded:test", "miniwob:test"])
    parser.add_argument("--episodes", type=int, default=60, help="oracle episodes per row")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    add_json_option(parser)
    args = parser.parse_args()
    console = Console()
    numbers: dict[str, dict] = {}
    with bench_sites(max(args.workers)) as (backend, state):
        for name in args.tasks:
            tasks = sample(name, state, args.episodes)
            results = {w: run(backend, tasks, state / f"{name.replace(':', '-')}-{w}", w) for w in args.workers}
            report(console, name, tasks, results, args.workers)
            for w, (r, _) in results.items():  # the oracle solves every task: a failure is a finding
                if r["failed"]:
                    console.print(f"{name}, {w} workers: the oracle failed task {', '.join(r['failed'])}")
                if r["unjudged"]:
                    console.print(f"{name}, {w} workers: unjudged (needs an LLM judge): {', '.join(r['unjudged'])}")
            numbers[name] = {
                str(w): {
                    "steps_per_s": r["steps"] / r["wall"],
                    "episodes_per_s": r["episodes"] / r["wall"],
                    "success": r["success"],
                    "judged": r["judged"],
                    "episodes": r["episodes"],
                    "failed": r["failed"],
                    "unjudged": r["unjudged"],
                }
                for w, (r, _) in results.items()
            }
    if args.json:
        write_result(args.json, {"bench": "throughput", "workers": numbers})


@contextmanager
def bench_sites(instances: int) -> Iterator[tuple[EmbeddedBackend, Path]]:
    """The embedded sites up on free ports with a temporary state directory, for as long as the block runs."""
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        backend = up_on_free_ports(load_config(flags={"state_dir": state, "sites.instances": instances}, environ={}))
        try:
            yield backend, state
        finally:
            backend.down()


def report(console: Console, name: str, tasks: list, results: dict, workers: list[int]) -> None:
    table = Table(title=f"{name}: oracle throughput over {len(tasks)} episodes (screenshots off)")
    for column in ("workers", "steps/s", "episodes/s", "oracle success (judged)", "ratio vs 1 worker"):
        table.add_column(column, justify="right")
    base = results[workers[0]][0]
    for w, (r, _) in results.items():
        ratio = (r["steps"] / r["wall"]) / (base["steps"] / base["wall"])
        table.add_row(
            str(w),
            f"{r['steps'] / r['wall']:.2f}",
            f"{r['episodes'] / r['wall']:.2f}",
            f"{r['success']}/{r['judged']}" + (f" ({len(r['unjudged'])} unjudged)" if r["unjudged"] else ""),
            f"{ratio:.2f}",
        )
    console.print(table)
    shown = 2 if 2 in results else workers[0]
    parts = Table(title=f"{name}: where an episode's time goes ({shown} workers), ms")
    for column in ("part", "median", "p90"):
        parts.add_column(column, justify="left" if column == "part" else "right")
    for part, values in breakdown(results[shown][1]):
        parts.add_row(part, f"{statistics.median(values):.0f}", f"{p90(values):.0f}")
    console.print(parts)


if __name__ == "__main__":
    main()
