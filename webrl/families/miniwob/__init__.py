"""MiniWoB++: a task is an environment page and the seed of its problem generator (its `family_data`). The page
shows its problem once the harness starts the episode (page.py) and ends the episode itself on a right or wrong
submit, which the page's own reward scores (reward.py); an episode may start on the page the previous one of the
same environment left. Reports add a table per environment; a training run's evaluation is also split into the
environments the SFT was shown and the others; new tasks are new seeds of the failed environments and environments
not met yet (curriculum.py). The tasks are read off the miniwob site's pages (tasks.py)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from webrl.errors import WebrlError
from webrl.families.miniwob.curriculum import evolve_miniwob
from webrl.families.miniwob.page import DEFAULT_TIME_LIMIT_S, episode_done, start_episode
from webrl.families.miniwob.reward import miniwob_reward
from webrl.families.miniwob.tasks import TASK_SETS, parse_set_name
from webrl.tasks.family import CurriculumContext, SummaryTable, TaskFamily
from webrl.tasks.model import Task

if TYPE_CHECKING:  # records are read, never made, here (webrl.runs is imported by the settings that ask families)
    from playwright.async_api import Page

    from webrl.runs.records import EpisodeRecord
    from webrl.runs.summary import EvalSummary

ENVIRONMENT_COLUMNS = ("demonstrated envs", "new envs")  # the environments the SFT saw, and the others
TIME_LIMIT = "miniwob_time_limit_s"  # the settings key and, as miniwob_time_limit, the option of the page timer


class MiniwobEpisode(BaseModel):
    """A MiniWoB++ task's data: the environment (`miniwob/<env>.html`) and the seed of its problem generator."""

    model_config = ConfigDict(extra="allow")

    env: str = Field(pattern=r"^[a-z0-9-]+$")
    seed: int


class MiniwobFamily(TaskFamily):
    name = "miniwob"
    task_sets = (TASK_SETS,)
    llm_generation = False  # a new task is a new seed: the evolver's
    evaluators = {"miniwob_reward": miniwob_reward}
    data_model = MiniwobEpisode
    options = {
        TIME_LIMIT: (
            float,
            Field(
                DEFAULT_TIME_LIMIT_S,
                gt=0,
                description="Seconds a MiniWoB++ page gives an episode before it ends it with reward -1 (the "
                "package's own limits of 10-30 s are for scripted agents).",
                json_schema_extra={"option": "miniwob_time_limit"},
            ),
        )
    }

    def owns(self, task: Task) -> bool:
        return self.data(task) is not None

    def reuses_page(self, task: Task) -> bool:
        # MiniWoB++'s own driver starts episode after episode on one load (it ends the last one, seeds and calls
        # core.startEpisodeReal), which gives the same problem as a fresh load without the load
        return len(task.start_urls) == 1

    async def start(self, page: Page, task: Task, restart: bool, options: dict[str, Any]) -> bool:
        utterance = await start_episode(
            page, self.data(task).seed, options.get(TIME_LIMIT, DEFAULT_TIME_LIMIT_S), restart
        )
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
        return f"{self.data(task).env}:{self.data(task).seed}"  # the seed makes the page's problem

    def summary(self, records: Sequence[EpisodeRecord], settings: Any) -> dict[str, Any]:
        """Per environment (judged episodes of every repeat): success %, mean raw reward of the page, mean steps;
        and the mean of the environments' success rates, the number MiniWoB++ papers report."""
        by_env: dict[str, list[EpisodeRecord]] = defaultdict(list)
        for record in records:
            if self.owns_record(record) and record.judged:
                by_env[self.data(record).env].append(record)
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

    def summary_tables(self, summary: EvalSummary) -> list[SummaryTable]:
        """A row per environment, and (a training run's evaluation) the environments the SFT was shown and the
        others."""
        miniwob = summary.section(self.name)
        if miniwob is None:
            return []
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
        timer = getattr(summary.settings, TIME_LIMIT)
        tables = [
            SummaryTable(
                f"MiniWoB++ (episode timer {timer:g} s)" if timer else "MiniWoB++",
                ("environment", "episodes", "success %", "raw reward", "steps"),
                rows,
                total=("mean over environments", "", mean, "", ""),
            )
        ]
        split = [(name, cell) for name, cell in (summary.groups or {}).items() if name in ENVIRONMENT_COLUMNS]
        if split:
            tables.append(
                SummaryTable(
                    "MiniWoB++: environments the SFT was shown (demonstrated) and the others (new)",
                    ("environments", "episodes", "success %"),
                    [(name, str(cell.episodes), f"{cell.mean:.1f}") for name, cell in split],
                )
            )
        return tables

    def groups(self, records: Sequence[EpisodeRecord], demonstrated: Sequence[Task]) -> dict[str, dict]:
        """Success (%) on the judged episodes of the environments the SFT was shown and of the others, which only
        the curriculum brings."""
        shown_envs = {self.data(t).env for t in demonstrated if self.owns(t)}
        groups: dict[str, list[bool]] = {name: [] for name in ENVIRONMENT_COLUMNS}
        for record in records:
            if self.owns_record(record) and record.judged:
                shown = self.data(record).env in shown_envs
                groups[ENVIRONMENT_COLUMNS[0 if shown else 1]].append(record.success)
        return {
            name: {"mean": round(100 * sum(won) / len(won), 1), "episodes": len(won)}
            for name, won in groups.items()
            if won
        }

    def new_tasks(
        self, failed: list[Task], known: list[Task], trained: list[Task], want: int, context: CurriculumContext
    ) -> tuple[list[Task], dict[str, Any]]:
        environments = {self.data(t).env for t in trained if self.owns(t)}
        return evolve_miniwob(
            failed,
            known,
            want,
            trained=environments,
            seed=context.seed,
            phase=context.phase,
            cache_dir=context.state_dir,
        )
