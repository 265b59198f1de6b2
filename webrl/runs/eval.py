"""`webrl eval`: run a policy over a task set and write the leaderboard numbers.

Episodes run concurrently, one browser context each, worker k on site instance k (so tasks that
write never see each other's changes). Every finished episode is appended to `episodes.jsonl` at
once, so Ctrl-C loses at most the episodes in flight and `--resume` skips the finished ones.
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import subprocess
import time
import zlib
from collections import defaultdict
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright
from pydantic import BaseModel, Field

from webrl.browser import launch_chromium
from webrl.env.browser_env import BrowserEnv, Limits
from webrl.env.miniwob import DEFAULT_TIME_LIMIT_S
from webrl.errors import UsageError
from webrl.policy.base import Policy, PolicyInput, Sampling
from webrl.runs.report import write_report
from webrl.tasks.model import Task

# WebRL's table convention: column -> site; a task counts under its first site.
SITE_COLUMNS = {"Reddit": "reddit", "GitLab": "gitlab", "CMS": "shopping_admin", "Map": "map", "OSS": "shopping"}
ENV_ERROR_RETRIES = 1
ENV_FAULTS = (PlaywrightError, OSError, asyncio.TimeoutError)


class EvalSettings(BaseModel):
    """The whole harness configuration; written into summary.json."""

    tasks: str = Field(description="Task set name or path.")
    task_suite: str | None = None  # the embedded suite's version, when the tasks come from it
    policy: str = "oracle"
    backend: str = "embedded"
    parallel: int = Field(1, ge=1)
    repeats: int = Field(1, ge=1)
    max_steps: int = Field(30, ge=1)
    mode: Literal["webarena", "vab", "browsergym"] = "webarena"
    judge: str = "none"
    observation: Literal["webrl", "axtree"] = "webrl"
    action_space: Literal["webrl", "webarena"] = "webrl"
    temperature: float = 0.0
    max_tokens: int = Field(2048, ge=1)  # per answer (WebRL: 2048)
    seed: int | None = None  # with temperature > 0: every answer's sampling seed derives from it (exact resume)
    miniwob_time_limit_s: float = Field(DEFAULT_TIME_LIMIT_S, gt=0)  # a MiniWoB++ page's episode timer
    limit: int | None = Field(None, ge=1)  # only the first N tasks of the set
    out: Path
    resume: bool = False
    screenshots: bool = True


def finished_episodes(path: Path) -> set[tuple[int, int]]:
    """The (task, repeat) pairs already recorded. A line cut short by a crash is dropped (rewriting
    the file atomically), so that episode runs again."""
    rows = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    if path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(row) + "\n" for row in rows))
        tmp.replace(path)
    return {(row["task_id"], row["repeat"]) for row in rows}


async def run_eval(settings: EvalSettings, tasks: list[Task], backend, policy: Policy, judge=None,
                   on_episode=lambda row: None) -> dict:
    plan = backend.running()
    if plan is None:
        raise UsageError("the sites are not running; start them with `webrl up`")
    if settings.parallel > plan.instances:
        raise UsageError(f"--parallel {settings.parallel} needs {settings.parallel} site instances; "
                         f"start them with `webrl up --instances {settings.parallel}`")
    missing = sorted({s for t in tasks for s in t.sites if s not in plan.sites and s != "wikipedia"})
    if missing:
        raise UsageError(f"the tasks need sites that are not running: {', '.join(missing)}")
    settings.out.mkdir(parents=True, exist_ok=True)
    episodes_path = settings.out / "episodes.jsonl"
    if not settings.resume and episodes_path.exists():
        raise UsageError(f"{episodes_path} exists: pass --resume to continue that run, or choose another --out")
    done = finished_episodes(episodes_path) if settings.resume else set()
    queue: asyncio.Queue = asyncio.Queue()
    for repeat in range(settings.repeats):
        for task in tasks:
            if (task.task_id, repeat) not in done:
                queue.put_nowait((task, repeat))

    try:
        async with async_playwright() as playwright:
            browsers = Browsers(playwright)
            try:
                with episodes_path.open("a") as sink:
                    async def worker(instance: int) -> None:
                        env = BrowserEnv(None, backend, instance, observation=settings.observation,
                                         action_space=settings.action_space, limits=Limits(settings.max_steps),
                                         mode=settings.mode, judge=judge,
                                         miniwob_time_limit_s=settings.miniwob_time_limit_s)
                        try:
                            while not queue.empty():
                                task, repeat = queue.get_nowait()
                                row = await run_episode(env, browsers, policy, task, repeat, settings)
                                sink.write(json.dumps(row) + "\n")
                                sink.flush()
                                on_episode(row)
                        finally:
                            await env.close()

                    await asyncio.gather(*(worker(k) for k in range(settings.parallel)))
            finally:
                await browsers.close()
    finally:  # also on Ctrl-C: what finished is summarised and reported, the rest runs with --resume
        summary = write_summary(settings, policy)
    return summary


def write_summary(settings: EvalSettings, policy: Policy) -> dict:
    """summary.json and report.html from the episodes recorded so far."""
    path = settings.out / "episodes.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    summary = summarize(rows, settings, policy)
    (settings.out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    write_report(settings.out, rows, summary)
    return summary


class Browsers:
    """The one Chromium that all workers share, relaunched if it crashed."""

    def __init__(self, playwright):
        self.playwright, self.browser, self.lock = playwright, None, asyncio.Lock()

    async def get(self):
        async with self.lock:
            if self.browser is None or not self.browser.is_connected():
                self.browser = await launch_chromium(self.playwright)
            return self.browser

    async def close(self) -> None:
        if self.browser is not None and self.browser.is_connected():
            await self.browser.close()


class PolicyFailure(Exception):
    """The policy could not answer (e.g. its server is down): recorded, not retried, not a score."""


async def run_episode(env: BrowserEnv, browsers: Browsers, policy: Policy, task: Task, repeat: int,
                      settings: EvalSettings) -> dict:
    """One episode. An environment fault (site down, browser crash) is retried once, then recorded as
    env_error; neither counts as an agent failure."""
    status, error = "env_error", None
    for _ in range(ENV_ERROR_RETRIES + 1):
        started = time.perf_counter()
        try:
            env.browser = env.auth.browser = await browsers.get()
            return await _episode(env, policy, task, repeat, settings, started)
        except PolicyFailure as err:
            status, error = "policy_error", str(err)
            break
        except ENV_FAULTS as err:  # site or browser failures: not the agent's fault (bugs still raise)
            error = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
        finally:
            try:
                await env.close()
            except Exception:  # the context died with its browser
                env.context = env.page = None
    return {"task_id": task.task_id, "repeat": repeat, "sites": task.sites, "intent": task.intent,
            **_miniwob_field(task), "status": status, "error": error, "score": None, "steps": [],
            "last_observation": None}


def _miniwob_field(task: Task) -> dict:
    return {"miniwob": task.miniwob.model_dump()} if task.miniwob is not None else {}


def step_sampling(settings: EvalSettings, task: Task, repeat: int, step: int) -> Sampling:
    """The decoding settings of one answer. A seeded sampled run gives each answer its own seed from (run seed,
    task, repeat, step), so an episode re-run after a crash samples exactly what it would have, whatever else
    ran in between or beside it."""
    seed = None
    if settings.seed is not None and settings.temperature > 0:
        seed = zlib.crc32(f"{settings.seed}:{task.task_id}:{repeat}:{step}".encode())
    return Sampling(temperature=settings.temperature, max_tokens=settings.max_tokens, seed=seed)


async def _episode(env, policy, task, repeat, settings, started) -> dict:
    obs, info = await env.reset(task)
    shots = settings.out / "screens"
    shots.mkdir(exist_ok=True)
    steps, result, why = [], None, None
    while True:
        seen = obs  # what the policy answers to; the last one is the ORM's final page (reference traces' html)
        try:
            sampling = step_sampling(settings, task, repeat, len(steps))
            [response] = await asyncio.to_thread(policy.act, [PolicyInput(env.task, env.history, obs)], sampling)
        except Exception as err:
            raise PolicyFailure(f"{type(err).__name__}: {err}") from err
        shot = None
        if settings.screenshots:
            shot = f"screens/{task.task_id}-{repeat}-{len(steps)}.jpg"
            await env.page.screenshot(path=settings.out / shot, type="jpeg", quality=40)
        obs, _, terminated, truncated, step_info = await env.step(response.text)
        record = env.steps[-1]
        steps.append({"index": record.index, "url": record.url, "observation": seen.text, "response": record.response,
                      "action": record.action, "error": record.error, "timings_ms": record.timings_ms,
                      "screenshot": shot, "policy": response.meta})
        if terminated or truncated:
            result, why = step_info["eval"], step_info["truncated_by"]
            break
    return {
        "task_id": task.task_id, "repeat": repeat, "sites": task.sites, "intent": task.intent, **_miniwob_field(task),
        "status": "done" if result.status == "scored" else result.status, "score": result.score,
        "answer": env.answer, "truncated_by": why, "eval": {"mode": result.mode, "judge": result.judge,
                                                            "details": result.details},
        "reset": info, "blocked_requests": env.blocked, "steps": steps, "last_observation": seen.text,
        "seconds": round(time.perf_counter() - started, 2),
    }


def site_column(sites: list[str]) -> str:
    """The WebRL table column a task counts under: its first site's, else "Other"."""
    return next((column for column, site in SITE_COLUMNS.items() if sites and sites[0] == site), "Other")


def summarize(rows: list[dict], settings: EvalSettings, policy: Policy) -> dict:
    """Per-site success rates in WebRL's column order, mean ± std over repeats."""
    by_repeat: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row["status"] == "done":
            column = site_column(row["sites"])
            by_repeat[row["repeat"]][column].append(float(row["score"] == 1.0))
            by_repeat[row["repeat"]]["Average"].append(float(row["score"] == 1.0))
    table = {}
    for column in [*SITE_COLUMNS, "Other", "Average"]:
        rates = [100 * statistics.mean(r[column]) for r in by_repeat.values() if r.get(column)]
        if rates:
            table[column] = {"mean": round(statistics.mean(rates), 1),
                             "std": round(statistics.stdev(rates), 1) if len(rates) > 1 else 0.0,
                             "episodes": sum(len(r[column]) for r in by_repeat.values())}
    counts = defaultdict(int)
    for row in rows:
        counts[row["status"]] += 1
    return {
        "created": datetime.now(UTC).isoformat(),
        "settings": settings.model_dump(mode="json"),
        "policy": policy.name,
        "success_rate": table,
        **({"miniwob": miniwob_table(rows)} if any(row.get("miniwob") for row in rows) else {}),
        "episodes": dict(counts),
        "versions": {name: _version(name) for name in ("webrl", "playwright", "torch", "transformers")},
        "python": platform.python_version(),
        "git_commit": _git_commit(),
    }


def miniwob_table(rows: list[dict]) -> dict:
    """MiniWoB++ per environment (scored episodes of every repeat): success %, mean raw reward of the page, mean
    steps; and the mean of the environments' success rates, the number MiniWoB++ papers report."""
    by_env: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        if row.get("miniwob") and row["status"] == "done":
            by_env[row["miniwob"]["env"]].append(row)
    environments = {}
    for env, episodes in sorted(by_env.items()):
        rewards = [d["raw_reward"] for r in episodes for d in r["eval"]["details"] if d.get("type") == "miniwob_reward"]
        environments[env] = {
            "episodes": len(episodes),
            "success": round(100 * statistics.mean(float(r["score"] == 1.0) for r in episodes), 1),
            "raw_reward": round(statistics.mean(rewards), 3) if rewards else None,
            "steps": round(statistics.mean(len(r["steps"]) for r in episodes), 2),
        }
    mean = statistics.mean(e["success"] for e in environments.values()) if environments else None
    return {"environments": environments, "mean_success": None if mean is None else round(mean, 1)}


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], check=False, capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None
