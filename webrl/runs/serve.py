"""`webrl serve`: webrl's sites and harness as an OpenEnv environment (openenv-core's own server: a FastAPI app
whose WebSocket sessions each hold one environment), so that any OpenEnv client can train on them.

Each session leases one site instance and its browser environment (a browser context of its own) from a pool of
the served instances for as long as it lives; a session beyond them is refused by openenv-core's capacity check.
A session that ends (closes, disconnects, or idles past the timeout) closes its context and hands the instance
back. Every episode resets the dirty sites of its task before it starts, exactly as `webrl eval`'s do, so a
session never sees what another one wrote; the guard admits only the task's sites. Episodes are played by the same
`Episode` as `webrl eval`'s (webrl.runs.episodes): the same observation, action parsing, limits and evaluators, and,
with a run folder, the same episode records.

Bad input (an unknown task, a step before a reset, a message that is not an action) raises here and reaches the
client as openenv-core's error message; the server goes on.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, ConcurrencyConfig, Observation, ServerMode, State
from pydantic import Field
from starlette.responses import PlainTextResponse
from starlette.websockets import WebSocketClose, WebSocketDisconnect

from webrl.env.browser_env import StepResult
from webrl.env.observation import Observation as PageObservation
from webrl.errors import UsageError
from webrl.evaluators.judge import Judge
from webrl.files import write_atomically
from webrl.policy.prompt import webrl_prompt
from webrl.runs.episodes import ENV_FAULTS, Episode, EvalSettings, fault_line
from webrl.runs.eval import RUN_FILE, EpisodeWriter, run_identity, write_summary
from webrl.runs.executor import EnvSlot, LocalExecutor
from webrl.runs.records import EPISODES_FILE, EpisodeRecord
from webrl.sites.base import SiteBackend
from webrl.tasks.model import Task


@dataclass(frozen=True)
class Listen:
    """Where the server listens and how many sessions it takes."""

    host: str
    port: int
    instances: int  # sessions at once: one site instance each
    idle_timeout_s: float | None = None  # a session idle this long is ended and its instance freed
    token: str | None = None  # required of every request (the base URL's first path part) when given


class WebrlAction(Action):
    """One model response, as `webrl eval` hands a policy's answer to the environment."""

    text: str = Field(
        description='The raw response: one action in the action syntax, e.g. do(action="Click", element="3") or '
        'exit(message="42"); comment lines are kept in the history. One that does not parse is a counted no-op.'
    )


class WebrlObservation(Observation):
    """What the policy sees after a reset or a step; `reward` is the evaluation's score on the last step."""

    prompt: str = Field(description="WebRL's completion prompt for this step (instruction, history, page).")
    html: str = Field(description="The page as the policy sees it: the simplified HTML (or the axtree).")
    kind: str = Field(description="How the page is written (--observation): webrl, compact or axtree.")
    instruction: str = Field(description="The task instruction the policy is shown.")
    url: str = Field(description="The page's URL.")
    task_id: str = Field(description="The episode's task.")
    step: int = Field(description="Steps taken in this episode.")
    boxes: dict[int, tuple[float, float, float, float]] = Field(
        description="Element id -> its box on the viewport (x, y, width, height in CSS px)."
    )
    error: str | None = Field(None, description="Why the last action failed (unparseable, refused, no element).")
    truncated_by: str | None = Field(None, description="The limit that ended the episode, if one did.")
    evaluation: dict[str, Any] | None = Field(
        None, description="On the last step: the evaluator's status, score, mode and details."
    )


def served_observation(observation: dict) -> PageObservation:
    """The webrl observation a served one (its JSON) stands for, so that a webrl policy can act as a client."""
    boxes = {int(i): tuple(box) for i, box in observation["boxes"].items()}
    return PageObservation(
        text=observation["html"],
        url=observation["url"],
        title="",
        ids=sorted(boxes),
        boxes=boxes,
        kind=observation["kind"],
    )


class WebrlState(State):
    """The session's episode: its task, the site instance it holds, the sites its reset reset, its score."""

    task_id: str | None = None
    instance: int | None = None
    reset_sites: list[str] = Field(default_factory=list)
    done: bool = False
    score: float | None = None


@dataclass
class Served:
    """What every session shares: the settings and tasks, the pool of free environments (one per site instance),
    the event loop they live in and the run folder's writer."""

    settings: EvalSettings
    tasks: dict[str, Task]
    free: asyncio.Queue[EnvSlot]
    loop: asyncio.AbstractEventLoop
    writer: EpisodeWriter
    repeats: Counter = field(default_factory=Counter)

    def pick(self, task_id: str | None, seed: int | None) -> Task:
        """The task `task_id`, else the one at `seed` (modulo the set's size), else one at random."""
        if task_id is not None:
            if str(task_id) not in self.tasks:
                raise ValueError(f"reset: unknown task_id {task_id!r}: not in the served set {self.settings.tasks}")
            return self.tasks[str(task_id)]
        if seed is not None and not isinstance(seed, int):
            raise ValueError(f"reset: seed {seed!r} is not an integer")
        ordered = list(self.tasks.values())
        return ordered[seed % len(ordered)] if seed is not None else random.choice(ordered)


class WebrlEnvironment(Environment[WebrlAction, WebrlObservation, WebrlState]):
    """One session: openenv-core builds one per WebSocket session and closes it when the session ends."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session holds its own site instance and browser context

    def __init__(self, served: Served):
        super().__init__()
        self.served = served
        self.slot: EnvSlot | None = None  # leased at the first reset
        self.episode: Episode | None = None
        self.episode_id: str | None = None
        self.ended = False

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> WebrlObservation:
        raise ValueError("reset: webrl's episodes run in a WebSocket session (/ws)")

    def step(self, action: WebrlAction, timeout_s: float | None = None, **kwargs: Any) -> WebrlObservation:
        raise ValueError("step: webrl's episodes run in a WebSocket session (/ws)")

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None, **unknown: Any
    ) -> WebrlObservation:
        """A new episode of `task_id`, or of the task `seed` picks; an episode still running is dropped unrecorded."""
        if unknown:
            raise ValueError(f"reset: unknown argument {sorted(unknown)[0]!r} (it takes task_id, seed, episode_id)")
        self._check_open("reset")
        task = self.served.pick(task_id, seed)
        if self.slot is None:
            self.slot = await self.served.free.get()
        slot, screenshots = self.slot, {}
        self.served.repeats[task.task_id] += 1
        self.episode = Episode(slot.env, task, self.served.repeats[task.task_id] - 1, slot.settings, screenshots)
        self.episode_id = episode_id
        try:
            slot.env.browser = slot.env.auth.browser = await slot.browsers.get()  # relaunched if it crashed
            await self.episode.start(time.perf_counter())
        except ENV_FAULTS as err:
            self.episode = None
            await slot.env.shutdown()  # the next reset starts in a new context
            raise RuntimeError(f"reset: the environment failed ({fault_line(err)}); reset again") from err
        return self._observation()

    async def step_async(self, action: WebrlAction, timeout_s: float | None = None, **kwargs: Any) -> WebrlObservation:
        self._check_open("step")
        episode, slot = self.episode, self.slot
        if episode is None:
            raise ValueError("step: no episode; reset first")
        if episode.done:
            raise ValueError(f"step: episode of task {episode.task.task_id} has ended; reset for the next one")
        try:
            result = await episode.step(action.text)
            if episode.done:
                self.served.writer.write(await episode.finish(), episode.screenshots)
        except ENV_FAULTS as err:
            self.episode, why = None, fault_line(err)
            self.served.writer.write(EpisodeRecord.unplayed(episode.task, episode.repeat, "env_error", why), {})
            await slot.env.shutdown()  # the next reset starts in a new context
            raise RuntimeError(f"step: the environment failed ({why}); reset again") from err
        return self._observation(result)

    @property
    def state(self) -> WebrlState:
        episode = self.episode
        if episode is None:
            return WebrlState(episode_id=self.episode_id, instance=self.slot and self.slot.env.instance)
        result = episode.result
        return WebrlState(
            episode_id=self.episode_id,
            step_count=len(episode.steps),
            task_id=str(episode.task.task_id),
            instance=self.slot.env.instance,
            reset_sites=episode.reset_info["reset_sites"],
            done=episode.done,
            score=result.score if result is not None else None,
        )

    def close(self) -> None:
        """Hand the instance back. openenv-core calls this from a worker thread: the environment lives in the
        server's event loop, so the release runs there, and this waits for it."""
        self.ended = True
        if self.slot is None:
            return
        release = asyncio.run_coroutine_threadsafe(self._release(), self.served.loop)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a worker thread (openenv-core's way): wait, so the instance is free on return
            release.result()

    def _check_open(self, what: str) -> None:
        if self.ended:
            raise ValueError(f"{what}: this session was ended (idle too long); open a new one")

    async def _release(self) -> None:
        slot, self.slot, self.episode = self.slot, None, None
        await slot.env.close()
        await slot.env.shutdown()  # the next session gets a new browser context
        self.served.free.put_nowait(slot)

    def _observation(self, result: StepResult | None = None) -> WebrlObservation:
        episode = self.episode
        obs, env = episode.obs, episode.env
        evaluation = None
        if episode.result is not None:
            evaluation = episode.result.model_dump(mode="json", include={"status", "score", "mode", "details"})
        return WebrlObservation(
            prompt=webrl_prompt(episode.shown.intent, env.history, obs.text),
            html=obs.text,
            kind=obs.kind,
            instruction=episode.shown.intent,
            url=obs.url,
            task_id=str(episode.task.task_id),
            step=len(episode.steps),
            boxes=obs.boxes,
            error=result.info["error"] if result else None,
            truncated_by=episode.truncated_by,
            evaluation=evaluation,
            reward=result.reward if result else None,
            done=episode.done,
        )


class Gate:
    """Around openenv-core's app: with a token, admits only requests under /TOKEN (and strips it), so that a remote
    client needs it in its base URL (http://HOST:PORT/TOKEN), which every OpenEnv client takes as it is; and a
    session whose client closed its socket first ends quietly (openenv-core's own close then finds it gone)."""

    def __init__(self, app, token: str | None):
        self.app, self.prefix = app, f"/{token}" if token else ""

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] in ("http", "websocket") and self.prefix:
            path: str = scope["path"]
            head, rest = path[: len(self.prefix)], path[len(self.prefix) :]
            if not hmac.compare_digest(head.encode(), self.prefix.encode()) or rest[:1] not in ("", "/"):
                refusal = PlainTextResponse("forbidden", 403) if scope["type"] == "http" else WebSocketClose(1008)
                return await refusal(scope, receive, send)
            scope = {**scope, "path": rest or "/"}
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            pass


def make_app(served: Served, instances: int, idle_timeout_s: float | None) -> FastAPI:
    """openenv-core's server for `served`, in its production mode: /ws sessions and /health, /schema, /metadata;
    no stateless /reset or /step (a browser episode lives in a session)."""
    app = FastAPI(title="webrl", description="webrl's sites and WebRL harness as an OpenEnv environment")
    concurrency = ConcurrencyConfig(max_concurrent_envs=instances, session_timeout=idle_timeout_s)
    server = HTTPEnvServer(
        lambda: WebrlEnvironment(served), WebrlAction, WebrlObservation, concurrency_config=concurrency
    )
    server.register_routes(app, mode=ServerMode.PRODUCTION)
    return app


@asynccontextmanager
async def serving(
    settings: EvalSettings, tasks: list[Task], backend: SiteBackend, instances: int, judge: Judge | None = None
) -> AsyncIterator[Served]:
    """What a server on `instances` site instances shares, its environments ready. The instances are leased for the
    server's whole life, as `webrl eval`'s workers lease theirs; every episode's record goes into `settings.out` at
    once, and its summary and report are written when the server stops."""
    if (settings.out / EPISODES_FILE).exists():
        raise UsageError(f"{settings.out / EPISODES_FILE} exists: choose another --out")
    executor = LocalExecutor(backend, None, judge)
    executor.policy_name = "openenv client"  # who acted, in the summary
    settings = executor.check(settings.model_copy(update={"parallel": instances}), tasks)
    async with executor.slots(settings, tasks) as slots:
        settings.out.mkdir(parents=True, exist_ok=True)
        write_atomically(settings.out / RUN_FILE, json.dumps(run_identity(settings, tasks), indent=1))
        free: asyncio.Queue[EnvSlot] = asyncio.Queue()
        for slot in slots:
            free.put_nowait(slot.env_slot)
        played: list[EpisodeRecord] = []
        try:
            with (settings.out / EPISODES_FILE).open("a") as sink:
                writer = EpisodeWriter(settings.out, sink, played.append)
                yield Served(settings, {str(t.task_id): t for t in tasks}, free, asyncio.get_running_loop(), writer)
        finally:
            write_summary(settings, executor, len(played))


async def serve_forever(
    settings: EvalSettings,
    tasks: list[Task],
    backend: SiteBackend,
    listen: Listen,
    judge: Judge | None = None,
    on_ready: Callable[[], None] = lambda: None,
) -> None:
    """Serve until interrupted (Ctrl-C, SIGTERM); then write the run's summary and report."""
    async with serving(settings, tasks, backend, listen.instances, judge) as served:
        app = make_app(served, listen.instances, listen.idle_timeout_s)
        config = uvicorn.Config(
            Gate(app, listen.token),
            host=listen.host,
            port=listen.port,
            log_level="warning",
            access_log=False,  # request paths would show the token
        )
        server = uvicorn.Server(config)
        ready = asyncio.create_task(_when_started(server, on_ready))
        try:
            await server.serve()
        finally:
            ready.cancel()


async def _when_started(server: uvicorn.Server, on_ready: Callable[[], None]) -> None:
    while not server.started:
        await asyncio.sleep(0.05)
    on_ready()
