"""WebArena task configurations: the models, loading (file, folder, named set) and URL placeholders."""

from webrl.tasks.load import TASK_SETS, TaskSetSource, load_tasks, resolve_task_set, substitute, task_set_file
from webrl.tasks.model import EvalSpec, ProgramHtml, ReferenceAnswers, RequiredContents, Task

__all__ = [
    "TASK_SETS", "EvalSpec", "ProgramHtml", "ReferenceAnswers", "RequiredContents", "Task", "TaskSetSource",
    "load_tasks", "resolve_task_set", "substitute", "task_set_file",
]
