"""The Ray executor's cost on one machine: the same oracle episodes with the local executor and with environment
workers on a local Ray cluster (a head and one node per worker, each with one unit of `webrl_env`), at equal
worker counts; ratios side by side from one run (these machines are shared and noisy).

    .venv/bin/python bench/cluster.py [--episodes 40] [--workers 1 2] [--json bench/results/cluster.json]

Prints per worker count: wall time and episodes/s of both executors, Ray's time to start its workers (sites,
browser, policy), the memory of a worker's process tree (worker, its site server and Chromium) beside the local
run's, and each Ray node's own memory (its raylet); the last line is Ray's wall time over local's at the largest
worker count, workers' start included.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import psutil
import ray
from ray.cluster_utils import Cluster
from rich.console import Console
from rich.table import Table
from stamp import write_result  # bench/ is on sys.path when a bench runs
from throughput import sample

from webrl.config import load_config, on_free_ports
from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.runs.ray_executor import RayExecutor
from webrl.sites.embedded.backend import EmbeddedBackend

TASKS = "miniwob:test"


def tree_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants, in MB."""
    try:
        root = psutil.Process(pid)
        return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)]) / 2**20
    except psutil.NoSuchProcess:
        return 0.0


def run(settings: EvalSettings, tasks: list, executor, pids) -> dict:
    """Wall time of one run, and the largest memory of the process trees `pids()` names, sampled per episode."""
    peak = [0.0]

    def sampled(record) -> None:
        peak[0] = max(peak[0], max((tree_mb(pid) for pid in pids()), default=0.0))

    start = time.perf_counter()
    summary = asyncio.run(run_eval(settings, tasks, executor, sampled))
    wall = time.perf_counter() - start
    return {"wall_s": wall, "episodes_per_s": len(tasks) / wall, "done": summary["episodes"].get("done", 0), "mb": peak[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--json", type=Path, help="also write the numbers, stamped (bench/stamp.py), to this file")
    args = parser.parse_args()
    console = Console()
    most = max(args.workers)
    numbers: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        config = on_free_ports(
            load_config(flags={"state_dir": state, "sites.sites": "miniwob", "sites.instances": most}, environ={})
        )
        tasks = sample(TASKS, state, args.episodes)
        local_sites = EmbeddedBackend(config)
        local_sites.up()
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
        nodes = [cluster.add_node(num_cpus=1, resources={"webrl_env": 1}) for _ in range(most)]
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False, logging_level="ERROR")
        try:
            for workers in args.workers:
                base = dict(tasks=TASKS, policy="oracle", screenshots=False)
                local = run(
                    EvalSettings(**base, parallel=workers, out=state / f"local-{workers}"),
                    tasks,
                    LocalExecutor(local_sites, make_policy("oracle")),
                    lambda: [psutil.Process().pid],
                )
                ray_config = config.model_copy(
                    update={"cluster": config.cluster.model_copy(update={"executor": "ray", "workers": workers})}
                )
                settings = EvalSettings(**base, out=state / f"ray-{workers}")
                with RayExecutor(ray_config, settings) as executor:
                    remote = run(settings, tasks, executor, lambda: [w["pid"] for w in executor.workers])
                    remote["start_s"] = max(w["start_s"] for w in executor.workers)
                remote["raylet_mb"] = max(tree_mb(node.all_processes["raylet"][0].process.pid) for node in nodes)
                numbers[str(workers)] = {"local": local, "ray": remote, "ratio": remote["wall_s"] / local["wall_s"]}
        finally:
            ray.shutdown()
            cluster.shutdown()
            local_sites.down()
    table = Table(
        "workers",
        "local s",
        "ray s",
        "local ep/s",
        "ray ep/s",
        "ray start s",
        "local MB",
        "ray worker MB",
        "raylet MB",
        "ray / local",
        title=f"{args.episodes} oracle episodes of {TASKS}, one machine ({psutil.cpu_count()} cores)",
    )
    for workers, n in numbers.items():
        local, remote = n["local"], n["ray"]
        table.add_row(
            workers,
            f"{local['wall_s']:.1f}",
            f"{remote['wall_s']:.1f}",
            f"{local['episodes_per_s']:.2f}",
            f"{remote['episodes_per_s']:.2f}",
            f"{remote['start_s']:.1f}",
            f"{local['mb']:.0f}",
            f"{remote['mb']:.0f}",
            f"{remote['raylet_mb']:.0f}",
            f"{n['ratio']:.2f}×",
        )
    console.print(table)
    if args.json:
        write_result(args.json, {"bench": "cluster", "episodes": args.episodes, "tasks": TASKS, "workers": numbers})
    console.print(f"ray / local wall time, {most} worker(s), {args.episodes} episodes: {numbers[str(most)]['ratio']:.2f}×")


if __name__ == "__main__":
    main()
