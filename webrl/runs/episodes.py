"""The one episode runner: `webrl eval`, the training loop's rollouts, evaluations and demonstrations, the
critic filter's start pages and the benches all drive the browser environment through `open_env` and
`run_episode`.

An episode's outcome is an EpisodeRecord (webrl.runs.records): the task, status, score, answer, evaluation
details and every step (the observation the policy answered, its raw response, the parsed action, errors and
timings).
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from webrl.browser import launch_chromium
from webrl.env.browser_env import BrowserEnv, EnvOptions, Limits, StepResult
from webrl.env.network import har_bytes
from webrl.env.observation import Observation
from webrl.errors import SitesChanged, SitesUnavailable
from webrl.evaluators.judge import Judge
from webrl.evaluators.result import EvalResult
from webrl.policy.base import Policy, PolicyInput, Sampling
from webrl.runs.eval_settings import EvalSettings
from webrl.runs.records import EpisodeEval, EpisodeRecord, EpisodeStep, answer_digest, digest
from webrl.sites.base import SiteBackend
from webrl.tasks.family import family_of, family_options
from webrl.tasks.model import Task
from webrl.timing import timed

ENV_ERROR_RETRIES = 1
ENV_FAULTS = (PlaywrightError, OSError, asyncio.TimeoutError, SitesUnavailable, SitesChanged)


class Browsers:
    """The one Chromium that all workers share, launched on first use and relaunched if it crashed; an async
    context manager that owns Playwright."""

    def __init__(self):
        self.playwright, self.browser, self.lock = None, None, asyncio.Lock()

    async def __aenter__(self) -> Browsers:
        self.playwright = await async_playwright().start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()
        await self.playwright.stop()

    async def get(self):
        async with self.lock:
            if self.browser is None or not self.browser.is_connected():
                self.browser = await launch_chromium(self.playwright)
            return self.browser

    async def close(self) -> None:
        if self.browser is not None and self.browser.is_connected():
            await self.browser.close()


@asynccontextmanager
async def open_env(
    browsers: Browsers,
    backend: SiteBackend,
    instance: int = 0,
    settings: EvalSettings | None = None,
    judge: Judge | None = None,
) -> AsyncIterator[BrowserEnv]:
    """A browser environment on the backend's site `instance`, set up as `settings` say (the defaults without);
    its page is closed afterwards."""
    settings = settings or EvalSettings(tasks="", out=Path())
    env = BrowserEnv(
        await browsers.get(),
        backend,
        instance,
        observation=settings.observation,
        action_space=settings.action_space,
        limits=Limits(settings.max_steps),
        mode=settings.mode,
        judge=judge,
        family_options={name: getattr(settings, name) for name in family_options()},
        options=EnvOptions(settings.escape_text, settings.click_at),
        record_network=settings.records_network,
    )
    try:
        yield env
    finally:
        await env.shutdown()


class PolicyFailure(Exception):
    """The policy could not answer (e.g. its server is down): recorded, not retried, not a score."""


async def run_episode(
    env: BrowserEnv,
    browsers: Browsers,
    policy: Policy,
    task: Task,
    repeat: int,
    settings: EvalSettings,
    screenshots: dict[str, bytes] | None = None,
) -> EpisodeRecord:
    """One episode. An environment fault (site down, browser crash) is retried once, then recorded as
    env_error; neither counts as an agent failure. With `settings.screenshots`, each step's screenshot goes into
    `screenshots` (its path in the run folder -> JPEG) for the caller to write, or, without that dict, into the
    run folder at once; so does the episode's network trace (network/<task>-<repeat>.har) when it is recorded."""
    status, error = "env_error", None
    for _ in range(ENV_ERROR_RETRIES + 1):
        started = time.perf_counter()
        shots: dict[str, bytes] = {}
        try:
            env.browser = env.auth.browser = await browsers.get()
            record = await _episode(env, policy, task, repeat, settings, started, shots)
            if screenshots is None:
                save_screenshots(settings.out, shots)
            else:
                screenshots.update(shots)
            return record
        except PolicyFailure as err:
            status, error = "policy_error", str(err)
            break
        except ENV_FAULTS as err:  # site or browser failures: not the agent's fault (bugs still raise)
            error = fault_line(err)
            try:
                await env.shutdown()  # the retry starts in a new tab
            except Exception:  # the context died with its browser (shutdown has forgotten it already)
                pass
        finally:
            await env.close()
    return EpisodeRecord.unplayed(task, repeat, status, error)


def fault_line(err: BaseException) -> str:
    """An environment fault in one line, for its episode's record."""
    return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


def step_sampling(settings: EvalSettings, task: Task, repeat: int, step: int) -> Sampling:
    """The decoding settings of one answer. A seeded sampled run gives each answer its own seed from (run seed,
    task, repeat, step), so an episode re-run after a crash samples exactly what it would have, whatever else
    ran in between or beside it."""
    seed = None
    if settings.seed is not None and settings.temperature > 0:
        seed = zlib.crc32(f"{settings.seed}:{task.task_id}:{repeat}:{step}".encode())
    return Sampling(temperature=settings.temperature, max_tokens=settings.max_tokens, seed=seed)


def save_screenshots(out: Path, screenshots: dict[str, bytes]) -> None:
    """Write an episode's screenshots into its run folder `out`."""
    for path, image in screenshots.items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_bytes(image)


class Episode:
    """One episode as it is played, step by step, and its record at the end: `run_episode` plays it with a policy,
    `webrl serve` with a client's actions. `timings` says where its time went: the reset (its parts in the record's
    `reset`), the policy (timed by whoever asks it), screenshots, the environment's steps (evaluation included),
    closing the context."""

    def __init__(self, env: BrowserEnv, task: Task, repeat: int, settings: EvalSettings, screenshots: dict[str, bytes]):
        self.env, self.task, self.repeat, self.settings, self.screenshots = env, task, repeat, settings, screenshots
        self.timings = dict.fromkeys(("reset", "policy", "screenshots", "steps", "close"), 0.0)
        self.steps: list[EpisodeStep] = []
        self.result: EvalResult | None = None  # the evaluation, once the episode ended
        self.truncated_by: str | None = None

    async def start(self, started: float) -> Observation:
        """Reset the environment to the task (`started`: perf_counter when the episode began, retries included);
        the first observation."""
        self.started = started
        with timed(self.timings, "reset"):
            self.obs, self.reset_info = await self.env.reset(self.task)
        # A task family's mode may ask for more than the task (a structured answer); the others show it as it is.
        task = self.env.task
        self.shown = task.model_copy(update={"intent": family_of(task).shown_intent(task, self.settings.mode)})
        return self.obs

    @property
    def done(self) -> bool:
        return self.result is not None

    async def step(self, text: str, policy_meta: dict | None = None) -> StepResult:
        """Apply one response to the observation the episode shows, and record the step."""
        seen = self.obs  # what the response answers; the last one is the ORM's final page (reference traces' html)
        shot = None
        if self.settings.screenshots:
            with timed(self.timings, "screenshots"):
                shot = f"screens/{self.task.task_id}-{self.repeat}-{len(self.steps)}.jpg"
                self.screenshots[shot] = await self.env.page.screenshot(type="jpeg", quality=40)
        with timed(self.timings, "steps"):
            result = await self.env.step(text)
        record = self.env.steps[-1]
        self.steps.append(
            EpisodeStep(
                index=record.index,
                url=record.url,
                observation=seen.text,
                response=record.response,
                action=record.action,
                error=record.error,
                timings_ms=record.timings_ms,
                capped=record.capped,
                screenshot=shot,
                policy=policy_meta or {},
            )
        )
        self.last_seen, self.obs = seen, result.observation
        if result.terminated or result.truncated:
            self.result, self.truncated_by = result.info["eval"], result.info["truncated_by"]
        return result

    async def finish(self) -> EpisodeRecord:
        """The ended episode's record; its network trace joins the screenshots."""
        env, task, repeat, result = self.env, self.task, self.repeat, self.result
        trace, digests = None, {"answer": answer_digest(env.answer)}  # what it was scored from (a rescore checks)
        if env.trace is not None:  # kept beside the record, as the screenshots are
            trace = f"network/{task.task_id}-{repeat}.har"
            self.screenshots[trace] = har_bytes(env.trace)
            digests["network_trace"] = digest(self.screenshots[trace])
        with timed(self.timings, "close"):
            await env.close()
        self.timings["total"] = round((time.perf_counter() - self.started) * 1000, 1)
        return EpisodeRecord.of(
            task,
            repeat,
            status="done" if result.status == "scored" else result.status,
            score=result.score,
            answer=env.answer,
            truncated_by=self.truncated_by,
            eval=EpisodeEval(mode=result.mode, judge=result.judge, details=result.details),
            dump_suspect=result.dump_suspect,
            reset=self.reset_info,
            blocked_requests=env.blocked,
            network_trace=trace,
            digests=digests,
            steps=self.steps,
            last_observation=self.last_seen.text,
            seconds=round(time.perf_counter() - self.started, 2),
            timings_ms=self.timings,
        )


async def _episode(
    env: BrowserEnv,
    policy: Policy,
    task: Task,
    repeat: int,
    settings: EvalSettings,
    started: float,
    screenshots: dict[str, bytes],
) -> EpisodeRecord:
    """One episode of `policy`, answer after answer until it ends."""
    episode = Episode(env, task, repeat, settings, screenshots)
    obs = await episode.start(started)
    while not episode.done:
        with timed(episode.timings, "policy"):
            try:
                sampling = step_sampling(settings, task, repeat, len(episode.steps))
                [response] = await asyncio.to_thread(
                    policy.act, [PolicyInput(episode.shown, env.history, obs, f"{task.task_id}:{repeat}")], sampling
                )
            except Exception as err:
                raise PolicyFailure(f"{type(err).__name__}: {err}") from err
        obs = (await episode.step(response.text, response.report())).observation
    return await episode.finish()
