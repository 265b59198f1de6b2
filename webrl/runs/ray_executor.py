"""`--executor ray`: a run's episodes on environment workers of a Ray cluster (docs/cluster.md).

An environment worker is a Ray actor on a node that offers the environment resource (`webrl_env`): it owns a private
state dir, free ports, the sites the run's tasks need (one instance per slot), one Chromium and the policy (an hf:
model on its CPUs, or a client of the model-server pool). The driver (run_eval) keeps the one queue and writes the
run folder; a slot here forwards a job (an episode) to its worker and brings the result back. A worker that dies
takes its in-flight jobs with it: they come back as WorkerLost and the driver requeues them on the other slots.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, AsyncExitStack, ExitStack, asynccontextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import RayActorError

from webrl.cluster import connect
from webrl.config import ClusterConfig, Config
from webrl.errors import UsageError, WebrlError
from webrl.policy.factory import policy_builder
from webrl.runs.episodes import Browsers, EvalSettings, open_env
from webrl.runs.executor import EnvSlot, Job, Slot, T, WorkerLost
from webrl.runs.model_servers import ServerPool
from webrl.sites.base import SiteBackend
from webrl.tasks.model import Task

STOP_TIMEOUT_S = 30
EXIT_TIMEOUT_S = 30  # how long a run waits for its killed workers' processes to end


def env_capacity(cluster: ClusterConfig) -> int:
    """How many environment workers the cluster can hold: its units of the environment resource."""
    return int(ray.cluster_resources().get(cluster.env_resource, 0))


class RayExecutor:
    """Episodes on environment workers of a Ray cluster (see the module docstring); a context manager that joins
    the cluster and, for a vllm: policy, starts and stops the model servers, or has a pool the caller keeps across
    runs (`kept`) serve the policy's model."""

    kind = "ray"

    def __init__(
        self,
        config: Config,
        settings: EvalSettings,
        models_dir: Path | None = None,
        starting: Callable[[], AbstractContextManager] = nullcontext,
        kept: ServerPool | None = None,
    ):
        self.config, self.cluster, self.starting, self.kept = config, config.cluster, starting, kept
        self.models_dir = Path(models_dir).resolve() if models_dir else None
        self.policy_name = settings.policy
        self.worker_policy = absolute_model_path(settings.policy)  # what the workers build (vllm: becomes a pool)
        self.workers: list[dict] = []  # what each worker reported when it started
        self.ready_s: float | None = None  # from asking for the workers to all of them ready
        self._servers = ExitStack()

    def __enter__(self) -> RayExecutor:
        policy_builder(self.worker_policy)  # a bad spec: refused here, not on every worker
        connect(self.cluster.address)
        capacity = env_capacity(self.cluster)
        if capacity == 0:
            raise UsageError(
                f"no node of the Ray cluster at {self.cluster.address} offers the environment resource "
                f"'{self.cluster.env_resource}'; start the nodes that may run browsers with "
                f"`ray start --resources '{{\"{self.cluster.env_resource}\": 1}}'`"
            )
        if self.cluster.workers and self.cluster.workers > capacity:
            raise UsageError(
                f"cluster.workers {self.cluster.workers}: the cluster offers {capacity} unit(s) of "
                f"'{self.cluster.env_resource}'"
            )
        if self.worker_policy.startswith("vllm:"):
            pool = self.kept
            if pool is None:  # this run's own pool
                pool = ServerPool(self.cluster, self.models_dir)
                self._servers.callback(pool.close)
            with self.starting():
                self.worker_policy = pool.serve(self.worker_policy.removeprefix("vllm:"))
        return self

    def __exit__(self, *exc) -> None:
        self._servers.close()

    def check(self, settings: EvalSettings, tasks: list[Task]) -> EvalSettings:
        return settings  # the workers start their own sites; each reports when it resets them (describe)

    @asynccontextmanager
    async def slots(self, settings: EvalSettings, tasks: list[Task]) -> Iterator[list[Slot]]:
        count = self.cluster.workers or env_capacity(self.cluster)
        sites = sorted({site for task in tasks for site in task.sites} - {"wikipedia"})
        worker_class = ray.remote(EnvWorker).options(
            resources={self.cluster.env_resource: 1},
            num_cpus=self.cluster.worker_cpus,
            max_restarts=0,  # a dead worker's episodes go to the others; a restarted one would only duplicate them
        )
        actors = [
            worker_class.remote(self.config, settings, sites, self.worker_policy, self.models_dir) for _ in range(count)
        ]
        began = time.perf_counter()
        try:
            self.workers = await asyncio.gather(*(actor.start.remote() for actor in actors))
            self.ready_s = round(time.perf_counter() - began, 2)  # placing, spawning and starting them
            yield [
                RaySlot(f"worker {k} slot {j} on {info['node']}", actor, j)
                for k, (actor, info) in enumerate(zip(actors, self.workers, strict=True))
                for j in range(settings.parallel)
            ]
        finally:
            await asyncio.gather(*(_stop(actor) for actor in actors))
            # ray.kill only asks: a run ends when its workers have, where this host can see them
            here = ray.util.get_node_ip_address()
            await asyncio.to_thread(_wait_for_exit, [w["pid"] for w in self.workers if w["node"] == here])

    def describe(self) -> dict:
        return {
            "kind": self.kind,
            "address": self.cluster.address,
            "policy": self.worker_policy,
            "ready_s": self.ready_s,
            "workers": self.workers,
        }


def absolute_model_path(spec: str) -> str:
    """`spec` with a model folder given by a relative path made absolute: a worker's working directory is not the
    driver's (the folder itself must be on storage every node sees, docs/cluster.md)."""
    kind, _, rest = spec.partition(":")
    if kind in ("hf", "vllm") and rest and Path(rest).exists():
        return f"{kind}:{Path(rest).resolve()}"
    return spec


async def _stop(actor) -> None:
    """Let a worker close its browser and sites, then end it (a dead one: nothing to do)."""
    try:
        await asyncio.wait_for(actor.stop.remote(), STOP_TIMEOUT_S)
    except (RayActorError, TimeoutError):
        pass
    ray.kill(actor)


def _wait_for_exit(pids: list[int]) -> None:
    deadline = time.monotonic() + EXIT_TIMEOUT_S
    while any(map(_running, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)


def _running(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, ended and not yet reaped by its raylet, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@dataclass
class RaySlot:
    name: str
    actor: Any  # the EnvWorker's handle
    index: int

    async def run(self, job: Job[T], *args: Any) -> T:
        try:
            return await self.actor.run.remote(self.index, job, *args)
        except RayActorError as err:
            raise WorkerLost(str(err).splitlines()[0]) from None


class EnvWorker:
    """One host's environment (a Ray actor, see the module docstring): `start`, then `run` jobs on its slots,
    then `stop`. Everything it starts ends with its process: the site server watches it, Chromium is its child."""

    def __init__(self, config: Config, settings: EvalSettings, sites: list[str], policy: str, models_dir: Path | None):
        self.root = Path(tempfile.mkdtemp(prefix="webrl-worker-"))
        own_sites = config.sites.model_copy(update={"instances": settings.parallel, "sites": sites or None})
        self.config = config.model_copy(update={"state_dir": self.root, "sites": own_sites, "cluster": ClusterConfig()})
        self.settings, self.policy_spec, self.models_dir = settings, policy, models_dir
        self.backend: SiteBackend | None = None
        self.policy = None
        self.slots: list[EnvSlot] = []
        self.stack = AsyncExitStack()

    async def start(self) -> dict:
        """Bring up the sites, the policy and one browser environment per slot; what and where, for the summary."""
        from webrl.evaluators.judge import parse_judge_spec
        from webrl.policy.factory import make_policy
        from webrl.sites.backends import make_backend
        from webrl.sites.embedded.backend import up_on_free_ports

        began = time.perf_counter()
        # free ports: several workers may share a host; the sites end with this process however it ends
        self.backend = await asyncio.to_thread(up_on_free_ports, self.config, make_backend, os.getpid())
        self.policy = make_policy(self.policy_spec, self.models_dir, self.settings.context)
        await asyncio.to_thread(self.policy.start)
        browsers = await self.stack.enter_async_context(Browsers())
        judge = parse_judge_spec(self.settings.judge)
        for k in range(self.settings.parallel):
            env = await self.stack.enter_async_context(open_env(browsers, self.backend, k, self.settings, judge))
            self.slots.append(EnvSlot(env, browsers, self.policy, self.settings))
        return {
            "node": ray.util.get_node_ip_address(),
            "pid": os.getpid(),
            "slots": len(self.slots),
            "site_resets": self.backend.reset_policy,
            "start_s": round(time.perf_counter() - began, 2),
        }

    async def run(self, index: int, job: Job[T], *args: Any) -> T:
        return await job(self.slots[index], *args)

    async def stop(self) -> None:
        try:
            await self.stack.aclose()
            if self.policy is not None:  # None: it was not built
                self.policy.close()
            if self.backend is not None:  # None: its sites did not start
                await asyncio.to_thread(self.backend.down)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def describe_cluster(cluster: ClusterConfig) -> list[dict]:
    """The cluster's live nodes: address, CPUs, GPUs, environment slots (webrl doctor --ray-address)."""
    connect(cluster.address)
    nodes = []
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        resources = node.get("Resources", {})
        nodes.append(
            {
                "node": node.get("NodeManagerAddress"),
                "cpus": resources.get("CPU", 0),
                "gpus": resources.get("GPU", 0),
                "env": resources.get(cluster.env_resource, 0),
            }
        )
    if not nodes:
        raise WebrlError(f"the Ray cluster at {cluster.address} has no live node")
    return nodes
