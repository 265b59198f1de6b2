"""MiniWoB++: a task is an environment page and the seed of its problem generator. The page shows its problem once
the harness starts the episode (webrl.env.miniwob) and ends the episode itself on a right or wrong submit; an
episode may start on the page the previous one of the same environment left. Reports add a table per environment;
a training run's evaluation is also split into the environments the SFT was shown and the others; new tasks are
new seeds of the failed environments and environments not met yet (webrl.curriculum.miniwob)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from playwright.async_api import Page

from webrl.curriculum.miniwob import evolve_miniwob
from webrl.env.miniwob import episode_done, start_episode
from webrl.errors import WebrlError
from webrl.runs.records import EpisodeRecord
from webrl.runs.train_report import ENVIRONMENT_COLUMNS
from webrl.sites.miniwob.tasks import TASK_SETS, parse_set_name
from webrl.tasks.family import CurriculumContext, SummaryTable, TaskFamily
from webrl.tasks.model import Task


class MiniwobFamily(TaskFamily):
    name = "miniwob"
    task_sets = (TASK_SETS,)
    llm_generation = False  # a new task is a new seed: the evolver's

    def owns(self, task: Task) -> bool:
        return task.miniwob is not None

    def owns_record(self, record: EpisodeRecord) -> bool:
        return record.miniwob is not None

    def reuses_page(self, task: Task) -> bool:
        # MiniWoB++'s own driver starts episode after episode on one load (it ends the last one, seeds and calls
        # core.startEpisodeReal), which gives the same problem as a fresh load without the load
        return len(task.start_urls) == 1

    async def start(self, page: Page, task: Task, restart: bool, time_limit_s: float) -> bool:
        utterance = await start_episode(page, task.miniwob.seed, time_limit_s, restart)
        if utterance != task.intent:  # the task set was built by another package version or browser
            raise WebrlError(
                f"MiniWoB task {task.task_id}: the page's utterance {utterance!r} is not the task's "
                f"intent {task.intent!r}"
            )
        return True

    async def ended(self, page: Page) -> bool:
        return await episode_done(page)

    def is_train_set(self, name: str) -> bool:
        # a count of seeds may follow the split (miniwob:ENV,...:train:N)
        return self.owns_set(name) and parse_set_name(name)[1] == ["train"]

    def start_key(self, task: Task) -> str:
        return f"{task.miniwob.env}:{task.miniwob.seed}"  # the seed makes the page's problem

    def summary(self, records: Sequence[EpisodeRecord]) -> dict[str, Any]:
        """Per environment (judged episodes of every repeat): success %, mean raw reward of the page, mean steps;
        and the mean of the environments' success rates, the number MiniWoB++ papers report."""
        by_env: dict[str, list[EpisodeRecord]] = defaultdict(list)
        for record in records:
            if self.owns_record(record) and record.judged:
                by_env[record.miniwob.env].append(record)
        if not any(self.owns_record(record) for record in records):
            return {}
        environments = {}
        for env, episodes in sorted(by_env.items()):
            rewards = [d["raw_reward"] for r in episodes for d in r.eval.details if d.get("type") == "miniwob_reward"]
            environments[env] = {
                "episodes": len(episodes),
                "success": round(100 * statistics.mean(float(r.score == 1.0) for r in episodes), 1),
                "raw_reward": round(statistics.mean(rewards), 3) if rewards else None,
                "steps": round(statistics.mean(len(r.steps) for r in episodes), 2),
            }
        mean = statistics.mean(e["success"] for e in environments.values()) if environments else None
        return {"miniwob": {"environments": environments, "mean_success": None if mean is None else round(mean, 1)}}

    def summary_tables(self, summary: dict[str, Any]) -> list[SummaryTable]:
        """A row per environment, and (a training run's evaluation) the environments the SFT was shown and the
        others."""
        if "miniwob" not in summary:
            return []
        miniwob = summary["miniwob"]
        rows = [
            (
                env,
                str(row["episodes"]),
                f"{row['success']:.1f}",
                "–" if row["raw_reward"] is None else f"{row['raw_reward']:.2f}",
                f"{row['steps']:.1f}",
            )
            for env, row in miniwob["environments"].items()
        ]
        mean = "–" if miniwob["mean_success"] is None else f"{miniwob['mean_success']:.1f}"
        timer = summary["settings"].get("miniwob_time_limit_s")
        tables = [
            SummaryTable(
                f"MiniWoB++ (episode timer {timer:g} s)" if timer else "MiniWoB++",
                ("environment", "episodes", "success %", "raw reward", "steps"),
                rows,
                total=("mean over environments", "", mean, "", ""),
            )
        ]
        split = [(name, cell) for name, cell in summary.get("groups", {}).items() if name in ENVIRONMENT_COLUMNS]
        if split:
            tables.append(
                SummaryTable(
                    "MiniWoB++: environments the SFT was shown (demonstrated) and the others (new)",
                    ("environments", "episodes", "success %"),
                    [(name, str(cell["episodes"]), f"{cell['mean']:.1f}") for name, cell in split],
                )
            )
        return tables

    def groups(self, records: Sequence[EpisodeRecord], demonstrated: Sequence[Task]) -> dict[str, dict]:
        """Success (%) on the judged episodes of the environments the SFT was shown and of the others, which only
        the curriculum brings."""
        shown_envs = {t.miniwob.env for t in demonstrated if t.miniwob is not None}
        groups: dict[str, list[bool]] = {name: [] for name in ENVIRONMENT_COLUMNS}
        for record in records:
            if self.owns_record(record) and record.judged:
                shown = record.miniwob.env in shown_envs
                groups[ENVIRONMENT_COLUMNS[0 if shown else 1]].append(record.success)
        return {
            name: {"mean": round(100 * sum(won) / len(won), 1), "episodes": len(won)}
            for name, won in groups.items()
            if won
        }

    def new_tasks(
        self, failed: list[Task], known: list[Task], trained: list[Task], want: int, context: CurriculumContext
    ) -> tuple[list[Task], dict[str, Any]]:
        environments = {t.miniwob.env for t in trained if t.miniwob is not None}
        return evolve_miniwob(
            failed,
            known,
            want,
            trained=environments,
            seed=context.seed,
            phase=context.phase,
            cache_dir=context.state_dir,
        )
