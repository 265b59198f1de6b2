"""The WebArena-format tasks: the embedded WebArena-Lite look-alike suite and the real WebArena files. An episode is
the start page and the agent's actions until it answers; the page never ends it. New tasks come from the procedural
evolver (verifiable by construction) or from an LLM generator (scored by the ORM). Its evaluators are WebArena's
rules (webrl.evaluators.router); its report is WebRL's table, a column per site."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webrl.curriculum.seen import Seen, next_task_id
from webrl.evaluators.router import RULE_EVALUATORS
from webrl.sites.embedded.suite import TASK_SETS as EMBEDDED_SUITE
from webrl.tasks.family import CurriculumContext, SummaryTable, TaskFamily
from webrl.tasks.load import WEBARENA_FILES
from webrl.tasks.model import Task

if TYPE_CHECKING:  # records are read, never made, here (webrl.runs is imported by the settings that ask families)
    from webrl.runs.records import EpisodeRecord
    from webrl.runs.summary import EvalSummary

# WebRL's table convention: column -> site; a task counts under its first site.
SITE_COLUMNS = {"Reddit": "reddit", "GitLab": "gitlab", "CMS": "shopping_admin", "Map": "map", "OSS": "shopping"}


def site_column(sites: list[str]) -> str:
    """The WebRL table column a task counts under: its first site's, else "Other"."""
    return next((column for column, site in SITE_COLUMNS.items() if sites and sites[0] == site), "Other")


class WebArenaFamily(TaskFamily):
    name = "webarena"
    task_sets = (EMBEDDED_SUITE, WEBARENA_FILES)
    default = True  # a task file's tasks are in WebArena's format unless another family claims them
    success_columns = (*SITE_COLUMNS, "Other")  # WebRL's table: a task counts under its first site
    evaluators = RULE_EVALUATORS

    def owns(self, task: Task) -> bool:
        return True

    def success_column(self, record: EpisodeRecord) -> str:
        return site_column(record.sites)

    def summary_tables(self, summary: EvalSummary) -> list[SummaryTable]:
        """WebRL's table (mean ± std over repeats); its Average is the whole run's."""
        rates = summary.success_rate
        if not any(column in rates for column in self.success_columns):
            return []  # none of the run's episodes is a WebArena-format task
        columns = (*self.success_columns, "Average")
        cells = tuple(f"{rates[c].mean} ± {rates[c].std}" if c in rates else "–" for c in columns)
        return [SummaryTable("success rate (%)", columns, [cells])]

    def is_train_set(self, name: str) -> bool:
        return name == "embedded:train"  # the WebArena files have no train split

    def new_tasks(
        self, failed: list[Task], known: list[Task], trained: list[Task], want: int, context: CurriculumContext
    ) -> tuple[list[Task], dict[str, Any]]:
        seen, first_id = Seen(known), next_task_id(known)
        if context.generator == "evolver":
            from webrl.curriculum.evolve import Evolver

            evolver = Evolver.from_snapshots(context.state_dir / "snapshots", context.sites_seed, context.seed)
            tasks, evolved = evolver.evolve(failed, seen, first_id=first_id, keep=want, phase=context.phase)
            return tasks, {
                "made": dict(evolved.made),
                "made_by_site": dict(evolved.made_by_site),
                "skipped_seeds": dict(evolved.skipped),
            }
        from webrl.curriculum.generate import generate_tasks, make_generator

        generator = make_generator(context.generator, context.models_dir)
        try:
            tasks, generated = generate_tasks(
                failed, generator, seen, first_id=first_id, keep=want, seed=context.seed, phase=context.phase
            )
        finally:
            if hasattr(generator, "close"):
                generator.close()
        return tasks, {
            "calls": generated.calls,
            "found": generated.found,
            "errors": generated.errors,
            "rejected": dict(generated.rejected),
            "kept_by_site": dict(generated.kept_by_site),
        }
