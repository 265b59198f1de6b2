"""Batched generation in rollouts: steps/s of `hf:` rollouts when the parallel episodes' model calls run one at a
time (one answer per generation, as before batching) or batched (the calls waiting together run as one batch).

Starts the real embedded server (free ports, a temporary state directory), takes a fixed sample of a task set
(default: MiniWoB++'s test seeds, spread over the scripted environments), and rolls the model out over it as
`webrl train` does (temperature 1, seeded, screenshots off), once per worker count and mode:

    .venv/bin/python bench/generation.py [--model tiny] [--tasks miniwob:test] [--episodes 40] [--workers 1 2 4] \
        [--json bench/results/generation.json]

Prints per worker count: steps/s in each mode, their ratio, the mean batch size and the median generation time
per call (the time a generation took, not the wait for it), in one table (ratios from one run: these machines are
shared and noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from stamp import add_json_option, table_numbers, write_result  # bench/ is on sys.path when a bench runs
from throughput import bench_sites, sample

from webrl.policy.hf import HFPolicy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.runs.records import read_episodes

MODES = {"one at a time": 1, "batched": 8}  # the policy's batch size


def run(backend, tasks, policy: HFPolicy, out: Path, workers: int, max_steps: int) -> dict:
    settings = EvalSettings(
        tasks="bench",
        policy=policy.name,
        out=out,
        parallel=workers,
        screenshots=False,
        temperature=1.0,
        seed=0,
        max_tokens=48,
        max_steps=max_steps,
    )
    start = time.perf_counter()
    asyncio.run(run_eval(settings, tasks, LocalExecutor(backend, policy)))
    wall = time.perf_counter() - start
    records = read_episodes(out)
    answers = [step.policy for record in records for step in record.steps if step.policy]
    return {
        "steps": sum(len(record.steps) for record in records),
        "wall": wall,
        "batch": statistics.mean(a["batch_size"] for a in answers),
        "latency_ms": 1000 * statistics.median(a["latency_s"] for a in answers),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny", help="model spec (tiny, smollm2-135m, an HF folder)")
    parser.add_argument("--tasks", default="miniwob:test")
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--max-steps", type=int, default=6)
    add_json_option(parser)
    args = parser.parse_args()
    console = Console()
    with bench_sites(max(args.workers)) as (backend, state):
        tasks = sample(args.tasks, state, args.episodes)
        policies = {
            mode: HFPolicy(args.model, cache_dir=state / "models", batch_size=size) for mode, size in MODES.items()
        }
        results = {
            (w, mode): run(backend, tasks, policy, state / f"{w}-{MODES[mode]}", w, args.max_steps)
            for w in args.workers
            for mode, policy in policies.items()
        }
    table = Table(
        title=f"hf:{args.model} rollouts over {len(tasks)} {args.tasks} episodes (temperature 1, screenshots off)"
    )
    for column in (
        "workers",
        *(f"steps/s {m}" for m in MODES),
        "ratio",
        "mean batch (batched)",
        *(f"generation ms {m}" for m in MODES),
    ):
        table.add_column(column, justify="right")
    for w in args.workers:
        rates = [results[w, m]["steps"] / results[w, m]["wall"] for m in MODES]
        table.add_row(
            str(w),
            *(f"{r:.2f}" for r in rates),
            f"{rates[1] / rates[0]:.2f}",
            f"{results[w, 'batched']['batch']:.2f}",
            *(f"{results[w, m]['latency_ms']:.0f}" for m in MODES),
        )
    console.print(table)
    if args.json:
        write_result(args.json, table_numbers(table))


if __name__ == "__main__":
    main()
