"""report.html: the run's success rates in its task families' tables, its settings, and per episode the intent,
each step's action with a screenshot thumbnail, the score and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from jinja2 import Environment, FileSystemLoader, select_autoescape

from webrl.files import write_atomically
from webrl.runs.records import EpisodeRecord
from webrl.runs.summary import EvalSummary
from webrl.tasks.family import summary_tables

TEMPLATES = Path(__file__).with_name("templates")


def render(template: str, path: Path, **context: Any) -> Path:
    """Write `path` from one of the report templates; `value | yaml` shows settings as a settings file reads."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))
    env.filters["yaml"] = lambda value: yaml.safe_dump(value, sort_keys=False, allow_unicode=True)
    # the agent's text may hold what UTF-8 cannot encode (a lone surrogate): shown escaped, as \ud800
    write_atomically(path, env.get_template(template).render(**context).encode("utf-8", "backslashreplace"))
    return path


def headline(summary: EvalSummary) -> str:
    """The run's success rate on all its judged episodes, in one line."""
    average = summary.success_rate.get("Average")
    if average is None:
        return f"{summary.policy} on {summary.settings.tasks}: no episode judged"
    repeats = summary.settings.repeats
    spread = f" ± {average.std} over {repeats} repeats" if repeats > 1 else ""
    return (
        f"{summary.policy} on {summary.settings.tasks}: {average.mean}%{spread} "
        f"of {average.episodes} judged episodes succeeded"
    )


def write_report(out: Path, rows: list[EpisodeRecord], summary: EvalSummary) -> Path:
    rows = sorted(rows, key=lambda r: (str(r.task_id), r.repeat))
    return render(
        "report.html",
        out / "report.html",
        rows=rows,
        summary=summary,
        headline=headline(summary),
        tables=summary_tables(summary),
    )
