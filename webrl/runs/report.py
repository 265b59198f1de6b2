"""report.html: per episode the intent, each step's action with a screenshot thumbnail, the score and why."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from webrl.files import write_atomically
from webrl.runs.records import EpisodeRecord

TEMPLATES = Path(__file__).with_name("templates")


def write_report(out: Path, rows: list[EpisodeRecord], summary: dict) -> Path:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))
    rows = sorted(rows, key=lambda r: (str(r.task_id), r.repeat))
    html = env.get_template("report.html").render(rows=rows, summary=summary)
    path = out / "report.html"
    write_atomically(path, html)
    return path
