"""A training's ranks on a Ray cluster (`--executor ray`, docs/cluster.md part 2): `nodes` × `procs` processes placed
by Ray, each running what the DeepSpeed launcher's processes run — `webrl train`'s job file, or the very `webrl
sft` / `rl-update` / `orm train` command line — in the driver's working directory, with the launcher's variables
(RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT: rank 0's node is the rendezvous), so one code path trains under
both (webrl.rl.engine.init_distributed). Gloo on CPU, NCCL on GPUs.

The working directory and the training's folder must be on storage every node sees, at the same path (checkpoints,
per-rank RNG files, the weights rank 0 writes): `check_shared` proves it before a rank starts, and names the node
that cannot see it.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import ray
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from webrl.cluster import connect
from webrl.config import ClusterConfig
from webrl.errors import UsageError, WebrlError
from webrl.netutil import free_port
from webrl.rl.engine import DIST_VARIABLES
from webrl.rl.job_spec import SftJob, UpdateJob, write_job

PLACE_TIMEOUT_S = 120  # a placement the cluster cannot give by then is refused
TAIL_LINES = 8


class Rank:
    """One training process's host (a Ray actor in a bundle of the training's placement group)."""

    def node(self) -> str:
        return ray.util.get_node_ip_address()

    def rendezvous(self) -> tuple[str, int]:
        """Rank 0's: this node's address and a free port on it."""
        return ray.util.get_node_ip_address(), free_port()

    def sees(self, path: str, token: str) -> bool:
        """Whether the driver's `token` file is at `path` here, and this node's answer can be left beside it."""
        try:
            if Path(path).read_text() != token:
                return False
            Path(f"{path}.{ray.util.get_node_ip_address()}.{os.getpid()}").write_text(token)
            return True
        except OSError:
            return False

    def run(self, command: list[str], cwd: str, variables: dict[str, str]) -> tuple[int, str]:
        """Run the rank's process (all its memory returned when it ends) in the driver's working directory, which
        the shared storage gives every node; exit code and output."""
        if not Path(cwd).is_dir():
            return 2, f"error: {ray.util.get_node_ip_address()} has no folder {cwd} (the driver's working directory)\n"
        env = {k: v for k, v in os.environ.items() if k not in DIST_VARIABLES} | variables
        done = subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, check=False, preexec_fn=_die_with_parent
        )
        return done.returncode, done.stdout + done.stderr


def _die_with_parent() -> None:
    """In the training process, before it runs: end it when the rank that started it ends (a killed driver's
    ranks are killed by Ray; their training must not go on writing into the folder a resumed run uses)."""
    import ctypes
    import signal

    if sys.platform != "linux":
        return
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG


def check_shared(folder: Path, ranks: list) -> None:
    """Refuse a folder that a rank's node cannot see: the driver writes a token there, every rank reads it back
    and leaves its own answer, which the driver reads."""
    folder.mkdir(parents=True, exist_ok=True)
    probe, token = folder / ".shared-check", secrets.token_hex(8)
    probe.write_text(token)
    try:
        nodes = ray.get([rank.node.remote() for rank in ranks])
        seen = ray.get([rank.sees.remote(str(probe.resolve()), token) for rank in ranks])
        answers = {p.read_text() for p in folder.glob(".shared-check.*")}
        for node, ok in zip(nodes, seen, strict=True):
            if not ok or answers != {token}:
                raise UsageError(
                    f"{folder.resolve()}: node {node} cannot see this folder; a training's folder must be on storage "
                    "every node sees, at the same path (docs/cluster.md)"
                )
    finally:
        for path in [probe, *folder.glob(".shared-check.*")]:
            path.unlink(missing_ok=True)


def train_on_ray(job: SftJob | UpdateJob, nodes: int, procs: int, cluster: ClusterConfig, log: Path) -> None:
    """Run `job` (its job file) as `nodes` × `procs` ranks placed by Ray; see `run_ranks`."""
    command = [sys.executable, "-m", "webrl.rl.job", str(write_job(job))]
    code, output = run_ranks(command, job.out, nodes, procs, cluster, log)
    if code != 0:
        tail = "".join(output.splitlines(keepends=True)[-TAIL_LINES:])
        raise WebrlError(f"training `{job.kind}` into {job.out} failed (exit {code}); its end:\n{tail}")


def run_ranks(
    command: list[str],
    folder: Path,
    nodes: int,
    procs: int,
    cluster: ClusterConfig,
    log: Path,
    variables: dict[str, str] | None = None,
) -> tuple[int, str]:
    """Run `command` as `nodes` × `procs` ranks placed by Ray (a GPU per rank where the cluster has GPUs, else a
    CPU), each with `variables` and the DeepSpeed launcher's, once every node has shown it sees `folder`. Every
    rank's output goes to `log`; returns the first failed rank's exit code and output, else rank 0's."""
    connect(cluster.address)
    gpus = ray.cluster_resources().get("GPU", 0) > 0
    unit = {"GPU": 1, "CPU": 1} if gpus else {"CPU": 1}
    began = time.perf_counter()
    bundles = [{k: v * procs for k, v in unit.items()} for _ in range(nodes)]  # one per node
    group = placement_group(bundles, strategy="STRICT_SPREAD" if nodes > 1 else "PACK")
    if not _placed(group):
        remove_placement_group(group)
        raise UsageError(
            f"the Ray cluster at {cluster.address} cannot place {nodes} node(s) × {procs} training process(es) "
            f"({'a GPU' if gpus else 'a CPU'} each, every node its own)"
        )
    try:
        rank_class = ray.remote(Rank)
        ranks = [
            rank_class.options(
                num_cpus=1,
                num_gpus=1 if gpus else 0,
                scheduling_strategy=PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=node),
            ).remote()
            for node in range(nodes)
            for _ in range(procs)
        ]
        check_shared(folder, ranks)
        address, port = ray.get(ranks[0].rendezvous.remote())
        placed_s = time.perf_counter() - began
        rendezvous = {"WORLD_SIZE": str(nodes * procs), "MASTER_ADDR": address, "MASTER_PORT": str(port)}
        common = (variables or {}) | rendezvous
        results = ray.get(
            [
                # Ray shows a rank only its own GPU: device 0 for it
                rank.run.remote(
                    command, os.getcwd(), common | {"RANK": str(k), "LOCAL_RANK": "0" if gpus else str(k % procs)}
                )
                for k, rank in enumerate(ranks)
            ]
        )
    finally:
        remove_placement_group(group)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as sink:
        sink.write(f"--- {nodes} node(s) × {procs} rank(s) placed by Ray in {placed_s:.1f} s (folder checked)\n")
        for k, (_, output) in enumerate(results):
            sink.write(f"--- rank {k}\n{output}")
    return next(((code, output) for code, output in results if code != 0), results[0])


def _placed(group) -> bool:
    try:
        ray.get(group.ready(), timeout=PLACE_TIMEOUT_S)
        return True
    except ray.exceptions.GetTimeoutError:
        return False
