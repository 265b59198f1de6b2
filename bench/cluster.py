"""The Ray executor's cost on one machine: the same oracle episodes with the local executor and with environment
workers on a local Ray cluster on loopback (a head and one node per worker, each with one unit of `webrl_env`), at equal
worker counts; ratios side by side from one run (these machines are shared and noisy).

    .venv/bin/python bench/cluster.py [--episodes 40] [--workers 1 2] [--json bench/results/cluster.json]

Prints per number of episodes at once: the local run (one process, one Chromium, one site server), Ray with a
worker per node (a Chromium and a site server each: the cluster layout) and Ray with one worker holding every slot
(the local run's processes: what Ray itself adds); wall time and episodes/s, Ray's time to have its workers ready
(placing, spawning, sites, browser, policy), the memory of a worker's process tree (worker, site server, Chromium)
beside the local process tree's, and a Ray node's own memory (its raylet). The last line is Ray with a worker per
node over local at the most episodes at once, the workers' start included ("after start": without it, the
cost of a long run).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import psutil
from rich.console import Console
from rich.table import Table
from stamp import add_json_option, write_result  # bench/ is on sys.path when a bench runs
from throughput import sample

from webrl.config import load_config
from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.sites.embedded.backend import up_on_free_ports

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
    done = summary.episodes.count("done")
    return {"wall_s": wall, "episodes_per_s": len(tasks) / wall, "done": done, "mb": peak[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="episodes at once")
    add_json_option(parser)
    args = parser.parse_args()
    # Ray on loopback, as the tests keep it: its single-machine switch (named for Windows and macOS) makes the driver
    # and every node take 127.0.0.1 as this machine's address; Ray reads it when imported, and the nodes inherit it.
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    import ray
    from ray.cluster_utils import Cluster

    from webrl.runs.ray_executor import RayExecutor

    console = Console()
    most = max(args.workers)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        tasks = sample(TASKS, state, args.episodes)
        local_sites = up_on_free_ports(
            load_config(flags={"state_dir": state, "sites.sites": "miniwob", "sites.instances": most}, environ={})
        )
        config = local_sites.config
        head = {"num_cpus": 0, "include_dashboard": False, "node_ip_address": "127.0.0.1"}
        cluster = Cluster(initialize_head=True, head_node_args=head)
        nodes = [
            cluster.add_node(num_cpus=1, resources={"webrl_env": 1}, node_ip_address="127.0.0.1") for _ in range(most)
        ]
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False, logging_level="ERROR")
        base = dict(tasks=TASKS, policy="oracle", screenshots=False)
        try:
            for at_once in args.workers:
                settings = EvalSettings(**base, parallel=at_once, out=state / f"local-{at_once}")
                local = run(settings, tasks, LocalExecutor(local_sites, make_policy("oracle")), lambda: [os.getpid()])
                rows.append({"executor": "local", "workers": 1, "slots": at_once, **local})
                # Ray: a worker per node (a browser and a site server each), and one worker with every slot (the
                # local run's processes: what Ray itself adds)
                for workers, slots in sorted({(at_once, 1), (1, at_once)}, reverse=True):
                    cluster_settings = config.cluster.model_copy(update={"executor": "ray", "workers": workers})
                    settings = EvalSettings(**base, parallel=slots, out=state / f"ray-{workers}x{slots}")
                    with RayExecutor(config.model_copy(update={"cluster": cluster_settings}), settings) as executor:
                        remote = run(settings, tasks, executor, lambda: [w["pid"] for w in executor.workers])
                    raylet = max(tree_mb(node.all_processes["raylet"][0].process.pid) for node in nodes)
                    remote |= {
                        "ready_s": executor.ready_s,
                        "raylet_mb": raylet,
                        "ratio": remote["wall_s"] / local["wall_s"],
                        "ratio_after_start": (remote["wall_s"] - executor.ready_s) / local["wall_s"],
                    }
                    rows.append({"executor": "ray", "workers": workers, "slots": slots, **remote})
        finally:
            ray.shutdown()
            cluster.shutdown()
            local_sites.down()
    table = Table(
        "executor",
        "workers × slots",
        "wall s",
        "episodes/s",
        "workers ready s",
        "MB per worker",
        "raylet MB",
        "÷ local",
        "÷ local after start",
        title=f"{args.episodes} oracle episodes of {TASKS}, one machine ({psutil.cpu_count()} cores)",
    )
    for row in rows:
        ray_row = row["executor"] == "ray"
        table.add_row(
            row["executor"],
            f"{row['workers']} × {row['slots']}",
            f"{row['wall_s']:.1f}",
            f"{row['episodes_per_s']:.2f}",
            f"{row['ready_s']:.1f}" if ray_row else "",
            f"{row['mb']:.0f}",
            f"{row['raylet_mb']:.0f}" if ray_row else "",
            f"{row['ratio']:.2f}×" if ray_row else "",
            f"{row['ratio_after_start']:.2f}×" if ray_row else "",
        )
    console.print(table)
    if args.json:
        write_result(args.json, {"bench": "cluster", "episodes": args.episodes, "tasks": TASKS, "rows": rows})
    ratio = next(r["ratio"] for r in rows if r["executor"] == "ray" and (r["workers"], r["slots"]) == (most, 1))
    console.print(f"ray ({most} workers) / local wall time, {most} at once, {args.episodes} episodes: {ratio:.2f}×")


if __name__ == "__main__":
    main()
