"""Task families as plug-ins: a family is one class that says how its tasks are named and split, how an episode
starts and ends on its pages, what its reports add, and how the curriculum makes new tasks from failed ones.

Generic code (the environment, the episode runner, the training recipe, its settings, metrics and reports) asks
`family_of(task)` or `family_of_set(name)` and calls these methods; it never asks which family it has. The
families are found through the `webrl.task_families` entry points (pyproject.toml; webrl.tasks.installed), so a
new family is one package and one entry point line, in webrl or in a package of its own (docs/task-families.md).
A family also brings its evaluators (by eval type), the model of the data its tasks carry (`Task.family_data`),
the settings its episodes take, its report columns, and the evaluation modes it adds (`webrl eval --mode`: its own
evaluator scoring its own tasks, e.g. WebArena-Verified's). The defaults below are those of the WebArena-format
tasks: the page never ends an episode, and there is nothing to add to a report.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from webrl.errors import UsageError
from webrl.tasks.installed import ENTRY_POINTS, families
from webrl.tasks.load import NamedTaskSets
from webrl.tasks.model import Task

if TYPE_CHECKING:  # the families' argument types, from layers above this one (never imported at run time here)
    from playwright.async_api import Page

__all__ = ["ENTRY_POINTS", "families"]  # found in webrl.tasks.installed, asked for here

# An evaluator of one eval type: awaited as evaluator(task, answer, page, mode=..., rules=..., judge=..., urls=...)
# (page: the episode's last page, None where there is none; rules: the mode whose rules apply, strict's are
# webarena's), it gives its part of the evaluation, a dict with its "type" and "score" (0.0, 1.0 or None:
# unjudged) and whatever it checked, or raises webrl.evaluators.result.EvaluationError: an error for the task.
Evaluator = Callable[..., Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class CurriculumContext:
    """What a family may use to make a phase's new tasks."""

    phase: int
    seed: int  # the run's
    generator: str  # the run's task generator: evolver, or an LLM spec
    state_dir: Path  # the sites' snapshots, the families' caches
    sites_seed: int  # the running sites' data seed
    models_dir: Path


@dataclass(frozen=True)
class EvalMode:
    """An evaluation mode a family adds (`webrl eval --mode NAME`): the family's `evaluate` scores every episode of a
    run in it, and only the family's tasks."""

    description: str  # for --mode's help: what the mode judges
    errors_count_as: str = "failure"  # how an episode whose evaluation failed enters the success rate (or "left out")
    records_network: bool = False  # whether its episodes keep their network trace unless --record-network says
    rescores: bool = False  # whether `webrl eval --rescore RUN` scores a run's records again offline (`rescore`)


@dataclass(frozen=True)
class SummaryTable:
    """A table `webrl eval` prints after the success rates (its last row, `total`, in bold)."""

    title: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]]
    total: tuple[str, ...] | None = None


class TaskFamily:
    """One kind of task. Subclasses set `name` and `task_sets` and override what differs from these defaults."""

    name: str = ""
    task_sets: tuple[NamedTaskSets, ...] = ()  # the named task sets the family provides
    llm_generation: bool = True  # whether an LLM generator (not only the evolver) may write the family's tasks
    default: bool = False  # the family of every task no other family owns (the WebArena format's)
    success_columns: tuple[str, ...] = ()  # what `success_column` gives, in the table's order
    evaluators: dict[str, Evaluator] = {}  # eval type -> its evaluator (webrl.evaluators.router asks them)
    # The model of the data the family's tasks carry, under its name, in Task.family_data (and their episode
    # records'); None: its tasks carry none. A task naming one of its eval types carries it, and only such a task.
    data_model: type[BaseModel] | None = None
    # Settings the family's episodes take, added to `webrl eval`'s (webrl.runs.eval_settings: option, settings
    # key, summary.json's settings): name -> (type, pydantic Field); an episode's `start` gets their values.
    options: dict[str, tuple[Any, Any]] = {}
    modes: dict[str, EvalMode] = {}  # the evaluation modes the family adds, by name (after webrl's own)

    # -- tasks ---------------------------------------------------------------------------------------------------

    def owns(self, task: Task) -> bool:
        """Whether `task` is one of the family's (the default family is asked last)."""
        raise NotImplementedError

    def data(self, item: Task | Any) -> Any:
        """The family's data on a task or an episode record (None: none)."""
        return item.family_data.get(self.name)

    def owns_set(self, name: str) -> bool:
        return any(sets.owns(name) for sets in self.task_sets)

    def load_set(self, name: str, cache_dir: Path, seed: int) -> list[Task]:
        return next(sets for sets in self.task_sets if sets.owns(name)).load(name, cache_dir, seed)

    def is_train_set(self, name: str) -> bool:
        """Whether `name` is a train split the recipe may learn on (its test seeds stay held out)."""
        return self.owns_set(name) and name.endswith(":train")

    def task_config(self, raw: dict[str, Any]) -> dict[str, Any] | None:
        """A raw task in a format of the family's own as a task config (WebArena's format, the family's data under
        its name); None: not in such a format (webrl.tasks.load reads it as WebArena's)."""
        return None

    def record_data(self, data: Any) -> Any:
        """What of the family's data on a task its episode records keep (None: nothing)."""
        return data

    def shown_intent(self, task: Task, mode: str) -> str:
        """The task instruction the policy is shown in an evaluation `mode`."""
        return task.intent

    # -- episodes (webrl.env.browser_env) ------------------------------------------------------------------------

    def reuses_page(self, task: Task) -> bool:
        """Whether an episode may start on the page the previous one left, without loading it again."""
        return False

    async def start(self, page: Page, task: Task, restart: bool, options: dict[str, Any]) -> bool:
        """Start the episode once the start page has loaded (`restart`: on the previous episode's page; `options`:
        the run's values of the family's `options`); True if that changed the page (the environment then waits
        for it to be at rest)."""
        return False

    async def ended(self, page: Page) -> bool:
        """Whether the page ended the episode itself (the agent's last step)."""
        return False

    def start_key(self, task: Task) -> str:
        """What besides the start URL, sites and sign-in decides the first page (the critic filter observes each
        distinct first page once)."""
        return ""

    # -- the family's evaluation modes (`modes`) -----------------------------------------------------------------

    def run_options(self, mode: str, tasks: str) -> dict[str, Any]:
        """The values of the family's `options` that a run in its `mode` takes from its --tasks, before anything
        starts."""
        return {}

    def check_run(self, mode: str, tasks: Sequence[Task], settings: Any, urls: dict[str, str]) -> None:
        """Before any episode of a run in the family's `mode` (`settings`: its EvalSettings; `urls`: site instance
        0's): refuse, with a UsageError, what the mode cannot score."""

    async def evaluate(
        self, mode: str, task: Task, answer: str | None, *, trace: list[dict] | None, urls: dict, options: dict
    ) -> Any:
        """Score a finished episode in the family's `mode` from its answer and network trace (HAR entries; None:
        none recorded), as an EvalResult (webrl.evaluators.result); `options`: the run's values of the family's
        options."""
        raise NotImplementedError

    def rescore(self, mode: str, record: Any, trace: Path | None, options: dict[str, Any]) -> Any:
        """Score an episode record (webrl.runs.records) again offline in the family's `mode`, from its answer and its
        network trace file (None: none), as an EvalResult; only where the mode `rescores`."""
        raise NotImplementedError

    # -- what the family adds to reports -------------------------------------------------------------------------

    def owns_record(self, record: Any) -> bool:
        """Whether an episode record (webrl.runs.records) is of one of the family's tasks (the default family's
        are the records no other family owns); a family keeping data on its tasks: the records with it."""
        return self.data_model is not None and self.data(record) is not None

    def success_column(self, record: Any) -> str | None:
        """The column of the success-rate table (summary.json's success_rate) that a judged episode of the family
        counts under besides "Average"; None: "Average" only (the family's own tables break it down)."""
        return None

    def summary(self, records: Sequence[Any], settings: Any) -> dict[str, Any]:
        """A section of an evaluation's summary.json from its episode records (webrl.runs.records) and its
        settings (EvalSettings); {}: none."""
        return {}

    def summary_tables(self, summary: Any) -> list[SummaryTable]:
        """The tables of the family's episodes that `webrl eval` prints and report.html shows, from the
        evaluation's summary (webrl.runs.summary.EvalSummary: its section of it, the success rates, the groups);
        []: none of its episodes."""
        return []

    def summary_lines(self, summary: Any) -> list[str]:
        """Lines `webrl eval` prints after the evaluation errors, from the evaluation's summary (an EvalSummary);
        []: none."""
        return []

    def groups(self, records: Sequence[Any], demonstrated: Sequence[Task]) -> dict[str, dict]:
        """Success (%) of a phase's judged evaluation episodes in the family's groups, given the demonstration
        tasks (e.g. the environments the SFT was shown and the others); {}: no groups."""
        return {}

    # -- the curriculum ------------------------------------------------------------------------------------------

    def new_tasks(
        self, failed: list[Task], known: list[Task], trained: list[Task], want: int, context: CurriculumContext
    ) -> tuple[list[Task], dict[str, Any]]:
        """Up to `want` new candidate tasks from the `failed` ones, none among `known` (the family's tasks and
        every phase's); `trained` are the tasks the run has learnt from. A report for tasks-report.json."""
        raise NotImplementedError


def family_of(task: Task) -> TaskFamily:
    """The family that owns `task`, else the default family."""
    return _owner(task.task_id, lambda family: family.owns(task))


def family_of_record(record: Any) -> TaskFamily:
    """The family whose task an episode record (webrl.runs.records) is of, else the default family."""
    return _owner(record.task_id, lambda family: family.owns_record(record))


def _owner(task_id: int | str, owns: Callable[[TaskFamily], bool]) -> TaskFamily:
    owners = [family for family in families() if not family.default and owns(family)]
    if len(owners) > 1:
        raise UsageError(f"task {task_id!r}: several task families claim it ({', '.join(f.name for f in owners)})")
    return owners[0] if owners else default_family()


def default_family() -> TaskFamily:
    """The family of the tasks no other family owns (the WebArena format's)."""
    return next(family for family in families() if family.default)


def summary_tables(summary: Any) -> list[SummaryTable]:
    """Every family's tables of an evaluation's summary, for the console and report.html alike."""
    return [table for family in families() for table in family.summary_tables(summary)]


def summary_lines(summary: Any) -> list[str]:
    """Every family's lines of an evaluation's summary, for the console."""
    return [line for family in families() for line in family.summary_lines(summary)]


def family_modes() -> dict[str, EvalMode]:
    """The evaluation modes the families add, by name."""
    return {name: mode for family in families() for name, mode in family.modes.items()}


def family_of_mode(mode: str) -> TaskFamily | None:
    """The family that adds evaluation `mode` (None: one of webrl's own, or unknown)."""
    return next((family for family in families() if mode in family.modes), None)


def family_of_set(name: str) -> TaskFamily | None:
    """The family whose named task set `name` is (None: a file or folder of tasks, or unknown)."""
    return next((family for family in families() if family.owns_set(name)), None)


def family_options() -> dict[str, tuple[Any, Any]]:
    """Every family's episode settings (`TaskFamily.options`)."""
    return {name: option for family in families() for name, option in family.options.items()}


def set_names() -> str:
    """How every family's task-set names read, for messages."""
    return ", ".join(sets.names for family in families() for sets in family.task_sets)
