"""WebArena task configurations: the models, loading (file, folder, WebArena file), URL placeholders, templates."""

from webrl.tasks.load import TASK_SETS, NamedTaskSets, TaskSetSource, load_tasks, substitute, task_set_file
from webrl.tasks.model import EvalSpec, ProgramHtml, ReferenceAnswers, RequiredContents, Task

__all__ = [
    "TASK_SETS",
    "EvalSpec",
    "ProgramHtml",
    "ReferenceAnswers",
    "RequiredContents",
    "Task",
    "NamedTaskSets",
    "TaskSetSource",
    "load_tasks",
    "substitute",
    "task_set_file",
]
