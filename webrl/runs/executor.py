"""Where a run's episodes are played: in this process (`LocalExecutor`, the default) or by environment workers on a
Ray cluster (webrl.runs.ray_executor). The driver (run_eval) keeps the queue and writes the run folder either
way; an executor only offers *slots*, each of which plays one job at a time on its own browser environment.

A job is a module-level coroutine function `job(slot, *args)` given an `EnvSlot` (the environment, the browser, the
policy and the run's settings): `play_episode` for episodes, the critic filter's start pages for pages. Locally
the slot is right here; on Ray the job and its arguments travel to the worker and its result comes back.

This module never imports Ray: a run with the local executor needs no cluster package at all. The executor a
configuration names: webrl.runs.executor_factory.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    ExitStack,
    asynccontextmanager,
)
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from webrl.env.browser_env import BrowserEnv
from webrl.errors import UsageError
from webrl.evaluators.judge import Judge
from webrl.policy.base import Policy
from webrl.runs.episodes import Browsers, EvalSettings, open_env, run_episode
from webrl.runs.records import EpisodeRecord
from webrl.sites.base import SiteBackend
from webrl.sites.leases import instance_lease
from webrl.tasks.model import Task

T = TypeVar("T")


class WorkerLost(Exception):
    """The slot's worker died while it ran a job (a node went down, its process was killed): the job's result is
    lost and the slot is gone; the driver may give the job to another slot."""


@dataclass
class EnvSlot:
    """What a job runs with: one browser environment on one site instance, the shared browser, the policy."""

    env: BrowserEnv
    browsers: Browsers
    policy: Policy | None
    settings: EvalSettings


Job = Callable[..., Awaitable[T]]


class Slot(Protocol):
    name: str  # where it runs, for messages ("local 0", "worker 1 slot 0 on 10.0.0.5")

    async def run(self, job: Job[T], *args: Any) -> T:
        """`job(env_slot, *args)` on this slot; raises WorkerLost when the slot's worker dies meanwhile."""


class Executor(Protocol):
    kind: str  # "local" or "ray", for the summary
    policy_name: str  # the policy the slots act with, for the summary

    def check(self, settings: EvalSettings, tasks: list[Task]) -> EvalSettings:
        """Refuse a run that cannot start (one line, before the run folder is touched); the settings with what the
        executor adds (when sites are reset)."""

    def slots(self, settings: EvalSettings, tasks: list[Task]) -> AbstractAsyncContextManager[list[Slot]]:
        """The slots for the run, released afterwards."""

    def describe(self) -> dict:
        """What the summary records of where the episodes ran."""


MAX_REQUEUES = 1  # a job whose worker died runs once more elsewhere; then it is given up (on_lost)


@dataclass
class Work:
    """One job's arguments in a queue, and how often a dying worker took it down."""

    args: tuple
    lost: int = 0


async def dispatch(
    slots: list[Slot],
    queue: deque[Work],
    job: Job[T],
    on_result: Callable[[Work, T], None],
    on_lost: Callable[[Work, str], None],
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Run `job` over the queue, each free slot taking the next work, until the queue is empty (or `stop()`);
    `on_result` as each comes back. A work whose slot's worker died goes back to the front of the queue for the
    other slots (MAX_REQUEUES times; then `on_lost`), and that slot is gone. Works left when every slot is gone
    stay in the queue."""
    in_flight = 0

    async def drive(slot: Slot) -> None:
        nonlocal in_flight
        while not stop():
            if not queue:
                if not in_flight:
                    return
                await asyncio.sleep(0.05)  # a work in flight may yet come back to the queue
                continue
            work = queue.popleft()
            in_flight += 1
            try:
                result = await slot.run(job, *work.args)
            except WorkerLost as err:
                work.lost += 1
                if work.lost <= MAX_REQUEUES:
                    queue.appendleft(work)
                else:
                    on_lost(work, f"{slot.name}: {err}")
                return
            finally:
                in_flight -= 1
            on_result(work, result)

    await asyncio.gather(*(drive(slot) for slot in slots))


async def play_episode(slot: EnvSlot, task: Task, repeat: int) -> tuple[EpisodeRecord, dict[str, bytes]]:
    """One episode on `slot`: its record, and its screenshots (relative path -> JPEG) for the driver to write."""
    screenshots: dict[str, bytes] = {}
    record = await run_episode(slot.env, slot.browsers, slot.policy, task, repeat, slot.settings, screenshots)
    return record, screenshots


@dataclass
class LocalSlot:
    name: str
    env_slot: EnvSlot

    async def run(self, job: Job[T], *args: Any) -> T:
        return await job(self.env_slot, *args)


class LocalExecutor:
    """Episodes in this process: slot k on site instance k of the running backend, all sharing one Chromium."""

    kind = "local"

    def __init__(self, backend: SiteBackend, policy: Policy | None, judge: Judge | None = None):
        self.backend, self.policy, self.judge = backend, policy, judge
        self.policy_name = policy.name if policy is not None else "none"

    def check(self, settings: EvalSettings, tasks: list[Task]) -> EvalSettings:
        plan = self.backend.running()
        if plan is None:
            raise UsageError("the sites are not running; start them with `webrl up`")
        if settings.parallel > plan.instances:
            raise UsageError(
                f"--parallel {settings.parallel} needs {settings.parallel} site instances; "
                f"start them with `webrl up --instances {settings.parallel}`"
            )
        missing = sorted({s for t in tasks for s in t.sites if s not in plan.sites and s != "wikipedia"})
        if missing:
            raise UsageError(f"the tasks need sites that are not running: {', '.join(missing)}")
        return settings.model_copy(update={"site_resets": self.backend.reset_policy})

    @asynccontextmanager
    async def slots(self, settings: EvalSettings, tasks: list[Task]) -> AsyncIterator[list[Slot]]:
        with ExitStack() as leases:  # slot k uses instance k, and no other run or reset may while it does
            state_dir = self.backend.config.state_dir
            for instance in range(settings.parallel):
                leases.enter_context(instance_lease(state_dir, instance, f"a run into {settings.out}"))
            async with Browsers() as browsers, AsyncExitStack() as envs:
                yield [
                    LocalSlot(
                        f"local {k}",
                        EnvSlot(
                            await envs.enter_async_context(open_env(browsers, self.backend, k, settings, self.judge)),
                            browsers,
                            self.policy,
                            settings,
                        ),
                    )
                    for k in range(settings.parallel)
                ]

    def describe(self) -> dict:
        return {"kind": self.kind}
