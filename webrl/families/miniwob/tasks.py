"""MiniWoB++ as webrl tasks: a task is one (environment, seed) episode.

Named sets: ``miniwob`` (every supported environment), ``miniwob:ENV[,ENV...]``, each optionally followed by
``:train`` or ``:test``, and that by ``:N`` (the first N seeds of the split). Seeds split per environment: the test
seeds are 0..N-1 (N = TEST_SEEDS unless named; the learning benchmark evaluates on 50), the train seeds start at
TRAIN_SEED_START (so any number of fresh train seeds can be drawn without touching a test seed). A seed whose
problem no WebRL action can solve (its scripted solution finds the element to click covered) is left out. A set
is ordered seed by seed across its environments, so ``--limit N`` keeps an even spread.

A task's intent is the page's utterance for its seed and its ``cheat`` is the scripted solution
(``solutions/``) of that seed's problem: both are read off the real page in Chromium when a set is first built
and cached under ``<state_dir>/miniwob/`` (about 10 ms per task; the cache key includes the package version, the
solutions and the episode protocol). `BrowserEnv` checks the utterance again at every reset.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import json
import mimetypes
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webrl.errors import UsageError
from webrl.families.miniwob import page as protocol
from webrl.sites.miniwob import SOLUTIONS, environment_names, html_dir
from webrl.tasks import script
from webrl.tasks.load import NamedTaskSets
from webrl.tasks.model import Task

TEST_SEEDS = 10
TRAIN_SEEDS = 50
MAX_SEEDS = 1000  # a split's seeds, at most: N test seeds stay below TRAIN_SEED_START
TRAIN_SEED_START = 1000
SPLITS = ("train", "test")
BUILD_ORIGIN = "http://miniwob.build"  # pages served to the builder's browser by a route, no server needed

# Environments the WebRL action space (click or hover an element's centre, type, select, scroll the page, Enter)
# or its observation (simplified HTML: no colours, no SVG geometry) cannot express, with the reason.
UNSUPPORTED: dict[str, str] = {
    **{
        name: "needs dragging"
        for name in (
            "drag-box",
            "drag-circle",
            "drag-cube",
            "drag-items",
            "drag-items-grid",
            "drag-shapes",
            "drag-shapes-2",
            "drag-single-shape",
            "drag-sort-numbers",
            "resize-textarea",
            "use-slider",
            "use-slider-2",
        )
    },
    **{name: "needs selecting text with the mouse" for name in ("highlight-text", "highlight-text-2", "text-editor")},
    **{name: "needs drawing with the mouse" for name in ("draw-circle", "draw-line")},
    **{
        name: "needs clicking at coordinates, not on an element"
        for name in ("bisect-angle", "circle-center", "right-angle", "find-midpoint", "grid-coordinate", "hot-cold")
    },
    **{
        name: "the targets move or change over time (WebRL has no wait action)"
        for name in ("chase-circle", "moving-items", "simon-says", "stock-market")
    },
    "button-delay": "needs waiting 1-3 s between two clicks (WebRL has no wait action)",
    "form-sequence": "needs moving a slider (dragging; a click on its handle leaves the value as it is)",
    **{
        name: "its reply/retweet/like/share icons have no pointer cursor, role or handler the observation sees"
        for name in ("social-media", "social-media-all", "social-media-some")
    },
    "order-food": "its +/- controls are plain spans with no pointer cursor or handler the observation sees",
    "daily-calendar": "an event is made by dragging across half-hour slots",
    "enter-date": "a date field: a WebRL Type clicks its centre (the year) and every key stays in that segment",
    "tic-tac-toe": "the board's cells have no text, handler or role, so the observation does not show them",
    **{
        name: "colours, which the simplified HTML does not show"
        for name in ("click-color", "click-shades", "use-colorwheel", "use-colorwheel-2")
    },
    **{
        name: "SVG shapes, whose geometry the simplified HTML does not show"
        for name in (
            "click-shape",
            "count-shape",
            "count-sides",
            "identify-shape",
            "click-pie",
            "click-pie-nodelay",
            "hover-shape",
            "ascending-numbers",
            "visual-addition",
        )
    },
    **{name: "a flight-booking site outside miniwob/ (FlightWoB)" for name in ("book-flight", "book-flight-nodelay")},
}


@dataclass(frozen=True)
class Environment:
    name: str
    status: str  # "scripted" (supported, with a scripted solution), "supported" or "unsupported"
    reason: str = ""


def solution_files() -> list[Path]:
    return sorted(p for p in SOLUTIONS.glob("*.js") if p.name != "common.js")


def solutions_js() -> str:
    """One function of the utterance that returns every solver by environment name."""
    groups = ",\n".join(p.read_text().strip() for p in solution_files())
    return f"(utterance) => {{\n{(SOLUTIONS / 'common.js').read_text()}\nreturn Object.assign({{}},\n{groups});\n}}"


def scripted_names() -> list[str]:
    """The environments the solution files solve."""
    names = [n for p in solution_files() for n in re.findall(r'^  "([a-z0-9-]+)": ', p.read_text(), re.MULTILINE)]
    if len(set(names)) != len(names):
        raise ValueError(f"{SOLUTIONS}: an environment is solved twice")
    return sorted(names)


def environments() -> list[Environment]:
    scripted = set(scripted_names())
    return [
        Environment(name, "unsupported", UNSUPPORTED[name])
        if name in UNSUPPORTED
        else Environment(name, "scripted" if name in scripted else "supported")
        for name in environment_names()
    ]


def supported_names() -> list[str]:
    return [e.name for e in environments() if e.status != "unsupported"]


SET_FORM = "miniwob[:ENV[,ENV...]][:train|:test[:N]]"


def parse_set_name(name: str) -> tuple[list[str], list[str], int | None]:
    """``miniwob[:ENV,...][:train|:test[:N]]`` -> (environments, splits, seeds per split or None for the split's
    default); bad names are a UsageError."""
    parts = name.split(":")
    count = None
    if len(parts) > 2 and parts[-2] in SPLITS:
        if not parts[-1].isdigit() or not 1 <= int(parts[-1]) <= MAX_SEEDS:
            raise UsageError(f"task set {name!r}: {parts[-1]!r} is not a number of seeds (1-{MAX_SEEDS})")
        count = int(parts.pop())
    if parts[0] != "miniwob" or len(parts) > 3:
        raise UsageError(f"task set {name!r}: expected {SET_FORM}")
    splits = list(SPLITS)
    if len(parts) > 1 and parts[-1] in SPLITS:
        splits = [parts.pop()]
    if len(parts) == 1:
        return supported_names(), splits, count
    if len(parts) > 2:
        raise UsageError(f"task set {name!r}: {parts[-1]!r} is not a split (train or test)")
    by_name = {e.name: e for e in environments()}
    envs = [e.strip() for e in parts[1].split(",") if e.strip()]
    for env in envs:
        if env not in by_name:
            raise UsageError(
                f"task set {name!r}: unknown MiniWoB environment {env!r} (`webrl tasks miniwob` lists them)"
            )
        if by_name[env].status == "unsupported":
            raise UsageError(f"task set {name!r}: MiniWoB environment {env!r} is not supported: {by_name[env].reason}")
    return envs, splits, count


def seeds(split: str, count: int | None = None) -> range:
    """The split's first `count` seeds (default: TEST_SEEDS or TRAIN_SEEDS)."""
    if split == "test":
        return range(count or TEST_SEEDS)
    return range(TRAIN_SEED_START, TRAIN_SEED_START + (count or TRAIN_SEEDS))


def task_id(env: str, seed: int) -> str:
    return f"{env}.{seed}"


def miniwob_tasks(name: str, cache_dir: str | Path, sites_seed: int = 0) -> list[Task]:
    """The named MiniWoB set, seed-major: seed s of every environment before seed s + 1. (The pages have no
    seeded site data: `sites_seed` is not used.)"""
    envs, splits, count = parse_set_name(name)
    pairs = [(env, seed, split) for split in splits for seed in seeds(split, count) for env in envs]
    return build_tasks(pairs, cache_dir)


TASK_SETS = NamedTaskSets(
    names=SET_FORM,
    owns=lambda name: name == "miniwob" or name.startswith("miniwob:"),
    load=miniwob_tasks,
)


def build_tasks(pairs: list[tuple[str, int, str]], cache_dir: str | Path) -> list[Task]:
    """Tasks for (environment, seed, split) triples, read off the pages where the cache lacks them."""
    cache = ProblemCache(Path(cache_dir))
    missing = [(env, seed) for env, seed, _ in pairs if cache.get(env, seed) is None]
    if missing:
        cache.update(read_problems(missing))
    problems = [(env, seed, split, cache.get(env, seed)) for env, seed, split in pairs]
    return [
        make_task(env, seed, split, p["intent"], p["steps"])
        for env, seed, split, p in problems
        if not p.get("unsolvable")
    ]


def make_task(env: str, seed: int, split: str, intent: str, steps: list | None) -> Task:
    return Task.model_validate(
        {
            "task_id": task_id(env, seed),
            "sites": ["miniwob"],
            "start_url": f"__MINIWOB__/miniwob/{env}.html",
            "require_login": False,
            "storage_state": None,
            "intent_template": "",
            "intent": intent,
            "eval": {"eval_types": ["miniwob_reward"]},
            "family_data": {"miniwob": {"env": env, "seed": seed}},
            "cheat": cheat(steps) if steps is not None else None,
            "split": split,
        }
    )


def episode_of(task: Task) -> Any:
    """A MiniWoB++ task's environment and seed (webrl.families.miniwob.MiniwobEpisode); None: another family's."""
    return task.family_data.get("miniwob")


def cheat(steps: list) -> list[str]:
    """A solver's steps in the scripted-solution syntax (webrl.tasks.script)."""
    out = []
    for action, target, *argument in steps:
        argument = argument[0] if argument else None
        out.append(script.done(argument) if action == "exit" else script.do(action, target, argument))
    return out or [script.done()]


class ProblemCache:
    """(environment, seed) -> {intent, steps}, in one JSON file per package version and solutions source."""

    def __init__(self, cache_dir: Path):
        sources = [*sorted(SOLUTIONS.glob("*.js")), Path(__file__), Path(protocol.__file__)]
        key = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:12]
        version = importlib.metadata.version("miniwob")
        self.path = cache_dir / "miniwob" / f"problems-{version}-{key}.json"
        try:
            self.data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.data = {}

    def get(self, env: str, seed: int) -> dict | None:
        return self.data.get(task_id(env, seed))

    def update(self, problems: dict[str, dict]) -> None:
        self.data.update(problems)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
        tmp.write_text(json.dumps(self.data, sort_keys=True))
        tmp.replace(self.path)
        for stale in self.path.parent.glob("problems-*.json"):  # built by other solutions or package versions
            if stale != self.path:
                stale.unlink(missing_ok=True)


def read_problems(pairs: list[tuple[str, int]]) -> dict[str, dict]:
    """Each pair's utterance and solution, read in Chromium (in a thread of its own: callers may be inside an
    event loop)."""
    result: dict[str, dict] = {}
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.update(asyncio.run(_read_problems(pairs)))
        except BaseException as err:  # handed to the caller's thread
            errors.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result


async def _read_problems(pairs: list[tuple[str, int]]) -> dict[str, dict]:
    from playwright.async_api import async_playwright

    from webrl.browser import launch_chromium
    from webrl.env.browser_env import VIEWPORT

    scripted = set(scripted_names())
    solve_js = f"([name, utterance]) => ({solutions_js()})(utterance)[name]()"
    folder = html_dir()
    problems = {}
    async with async_playwright() as playwright:
        browser = await launch_chromium(playwright)
        try:
            context = await browser.new_context(viewport=VIEWPORT)
            await context.route(f"{BUILD_ORIGIN}/**", lambda route: _serve(route, folder))
            page = await context.new_page()
            for env in dict.fromkeys(env for env, _ in pairs):
                # One load per environment: a started episode generates the same problem for a seed whatever came
                # before on the page (checked in tests/tasks/test_miniwob.py against fresh loads).
                await page.goto(f"{BUILD_ORIGIN}/miniwob/{env}.html")
                for k, seed in enumerate(s for e, s in pairs if e == env):
                    utterance = await protocol.start_episode(page, seed, restart=k > 0)
                    problem = problems[task_id(env, seed)] = {"intent": utterance, "steps": None}
                    if env in scripted:
                        try:
                            problem["steps"] = await page.evaluate(solve_js, [env, utterance])
                        except Exception as err:
                            if "unsolvable: " not in str(err):
                                raise RuntimeError(f"solutions.js: {env} seed {seed}: {err}") from None
                            problem["unsolvable"] = str(err).partition("unsolvable: ")[2].splitlines()[0]
        finally:
            await browser.close()
    return problems


async def _serve(route, folder: Path) -> None:
    path = (folder / route.request.url.removeprefix(BUILD_ORIGIN).split("?")[0].lstrip("/")).resolve()
    if folder not in path.parents or not path.is_file():
        await route.fulfill(status=404, body="not found")
        return
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if kind.startswith("text/") or kind.endswith("javascript"):
        kind += "; charset=utf-8"  # as the miniwob site serves them (the pages declare none; unicode-test needs it)
    await route.fulfill(status=200, body=path.read_bytes(), content_type=kind)
