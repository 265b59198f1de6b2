"""How many MiniWoB++ episodes and steps per second does the harness give the oracle, with 1 and 2 workers?

Starts the real embedded server (the miniwob site, two instances, free ports, a temporary state directory), builds
the test seeds of every scripted environment, and runs `webrl eval`'s runner with the oracle over the same
sample, once with 1 worker and once with 2 (screenshots off, as in training rollouts). Every episode must succeed.

    .venv/bin/python bench/miniwob.py [--episodes 120]

Prints episodes/s, steps/s, the median episode time and the 2-worker/1-worker ratio in one table (ratios from one
run: these machines are shared and noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from webrl.config import load_config, on_free_ports
from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.sites.embedded.backend import EmbeddedBackend
from webrl.sites.miniwob.tasks import scripted_names
from webrl.sites.task_sets import resolve_task_set


def run(backend, tasks, out: Path, workers: int) -> dict:
    settings = EvalSettings(tasks="bench", policy="oracle", out=out, parallel=workers, screenshots=False)
    start = time.perf_counter()
    asyncio.run(run_eval(settings, tasks, backend, make_policy("oracle")))
    wall = time.perf_counter() - start
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    steps = sum(len(r["steps"]) for r in rows)
    return {"episodes": len(rows), "steps": steps, "wall": wall, "success": sum(r["score"] == 1.0 for r in rows),
            "median_episode_s": statistics.median(r["seconds"] for r in rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=120, help="oracle episodes per row")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        config = on_free_ports(load_config(flags={"state_dir": state, "sites.sites": ["miniwob"],
                                                  "sites.instances": 2}, environ={}))
        backend = EmbeddedBackend(config)
        backend.up()
        try:
            scripted = set(scripted_names())
            tasks = [t for t in resolve_task_set("miniwob:test", state) if t.miniwob.env in scripted]
            tasks = tasks[:args.episodes]
            results = {workers: run(backend, tasks, state / f"run{workers}", workers) for workers in (1, 2)}
        finally:
            backend.down()
    table = Table(title=f"MiniWoB++ oracle throughput ({len(tasks)} episodes of "
                        f"{len({t.miniwob.env for t in tasks})} environments, screenshots off)")
    for column in ("workers", "episodes/s", "steps/s", "median episode", "oracle success", "ratio vs 1 worker"):
        table.add_column(column, justify="right")
    for workers, r in results.items():
        ratio = (r["episodes"] / r["wall"]) / (results[1]["episodes"] / results[1]["wall"])
        table.add_row(str(workers), f"{r['episodes'] / r['wall']:.2f}", f"{r['steps'] / r['wall']:.2f}",
                      f"{r['median_episode_s']:.2f} s", f"{r['success']}/{r['episodes']}", f"{ratio:.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
