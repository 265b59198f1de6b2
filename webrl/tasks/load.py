"""Loading task configurations: a JSON list, one task object, a folder of per-task files, or a named set.

Named sets (``TASK_SETS``) are looked up in ``<cache_dir>/tasks/<file>`` and otherwise fetched once from their
upstream GitHub repository at a pinned commit (the same commits the shared reference describes). Offline, the
user is told to pass ``--tasks PATH`` or to copy the file into the cache.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from webrl.errors import UsageError
from webrl.tasks.model import Task

# Whole placeholder tokens are replaced, so __SHOPPING__ never eats the start of __SHOPPING_ADMIN__.
PLACEHOLDER = re.compile(r"__([A-Z][A-Z_]*[A-Z])__")
PLACEHOLDER_SITES = ("shopping", "shopping_admin", "reddit", "gitlab", "map", "wikipedia", "homepage")
FETCH_TIMEOUT_S = 60


@dataclass(frozen=True)
class TaskSetSource:
    file: str  # the name under <cache_dir>/tasks/
    url: str  # raw file at a pinned upstream commit
    origin: str  # repository and path, for messages


TASK_SETS: dict[str, TaskSetSource] = {
    "webarena-lite": TaskSetSource(
        file="test_webarena_lite.raw.json",
        url="https://raw.githubusercontent.com/THUDM/VisualAgentBench/9055fc299c366ef34700d1710215fb60a0d8c35e/"
            "VAB-WebArena-Lite/new/test_webarena_lite.raw.json",
        origin="THUDM/VisualAgentBench: VAB-WebArena-Lite/new/test_webarena_lite.raw.json",
    ),
    "webarena": TaskSetSource(
        file="webarena_test.raw.json",
        url="https://raw.githubusercontent.com/web-arena-x/webarena/f62e0b99bc7d9e0cd996d0cf5ebb2225780ec279/"
            "config_files/test.raw.json",
        origin="web-arena-x/webarena: config_files/test.raw.json",
    ),
}


# -- loading --------------------------------------------------------------------------------------------------


def _field(loc: tuple) -> tuple[str, str]:
    """A pydantic error location as ('eval.program_html[0].url', 'item 2: ') - union member tags dropped, a trailing
    list index moved into the message (so the field reads 'eval.eval_types')."""
    parts = [p for p in loc if isinstance(p, int) or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(p))]
    parts = [p for p in parts if p not in ("str", "int", "float", "bool", "list", "dict", "none")]
    prefix = ""
    if parts and isinstance(parts[-1], int):
        prefix = f"item {parts.pop()}: "
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return text or "(task)", prefix


def parse_task(raw: Any, source: str, index: int | None = None) -> Task:
    """Validate one raw task; errors name the source, the task id and the field."""
    if isinstance(raw, dict) and "task_id" in raw:
        who = f"task {raw['task_id']}"
    else:
        who = f"entry {index}" if index is not None else "task"
    if not isinstance(raw, dict):
        raise UsageError(f"{source}: {who}: expected a JSON object, got {type(raw).__name__}")
    try:
        return Task.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        field, prefix = _field(tuple(first["loc"]))
        message = first["msg"]
        message = message.removeprefix("Value error, ")
        more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
        raise UsageError(f"{source}: {who}: field '{field}': {prefix}{message}{more}") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UsageError(f"{path}: not valid JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except OSError as err:
        raise UsageError(f"{path}: cannot read: {err.strerror or err}") from None


def _tasks_in(data: Any, source: str) -> list[Task]:
    if isinstance(data, list):
        return [parse_task(raw, source, i) for i, raw in enumerate(data)]
    if isinstance(data, dict):
        return [parse_task(data, source)]
    raise UsageError(f"{source}: expected a task object or a list of tasks, got {type(data).__name__}")


def _natural(path: Path) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name))


def load_tasks(path: str | Path) -> list[Task]:
    """Tasks from a JSON file (one task object or a list of them) or from a folder of ``*.json`` files
    (each a task or a list; files in natural order: 2.json before 10.json). Task ids must be unique."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.json"), key=_natural)
        if not files:
            raise UsageError(f"{path}: no *.json task files in this folder")
        tasks, seen = [], {}
        for file in files:
            for task in _tasks_in(_read_json(file), str(file)):
                if task.task_id in seen:
                    raise UsageError(f"{file}: task {task.task_id}: duplicate task_id (also in {seen[task.task_id]})")
                seen[task.task_id] = file.name
                tasks.append(task)
        return tasks
    if not path.exists():
        raise UsageError(f"{path}: no such task file or folder")
    tasks = _tasks_in(_read_json(path), str(path))
    ids = [t.task_id for t in tasks]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise UsageError(f"{path}: task {dup}: duplicate task_id")
    return tasks


# -- placeholders ---------------------------------------------------------------------------------------------


def _replace(value: Any, table: dict[str, str], missing: set[str]) -> Any:
    if isinstance(value, str):
        def sub(match: re.Match) -> str:
            key = match.group(0)
            if key in table:
                return table[key]
            if match.group(1).lower() in PLACEHOLDER_SITES:
                missing.add(key)
            return key
        return PLACEHOLDER.sub(sub, value)
    if isinstance(value, list):
        return [_replace(v, table, missing) for v in value]
    if isinstance(value, dict):
        return {k: _replace(v, table, missing) for k, v in value.items()}
    return value


def substitute(task: Task, urls: dict[str, str]) -> Task:
    """A copy of ``task`` with ``__SHOPPING__``, ``__SHOPPING_ADMIN__``, ``__REDDIT__``, ``__GITLAB__``, ``__MAP__``,
    ``__WIKIPEDIA__`` and ``__HOMEPAGE__`` replaced by the site base URLs in ``urls`` (keys: site names).

    Like the original data preparation (a text replace over the whole file) this replaces the placeholders in
    every string of the task: start_url, reference_url, program_html urls, locators and required contents
    (WebArena-Lite task 146 expects ``__GITLAB__/...`` inside a post) and the reference answers. A placeholder of a
    site missing from ``urls`` is left as it is and noted in ``warnings``. Trailing slashes of the URLs are kept
    out, as in the original configuration."""
    table = {f"__{site.upper()}__": url.rstrip("/") for site, url in urls.items()}
    missing: set[str] = set()
    data = task.to_config()
    warnings = list(task.warnings)
    data = _replace(data, table, missing)
    data["warnings"] = warnings + [
        f"no URL for the placeholder {key}: left as it is" for key in sorted(missing)
        if f"no URL for the placeholder {key}: left as it is" not in warnings
    ]
    return Task.model_validate(data)


# -- named sets -----------------------------------------------------------------------------------------------


def _fetch(source: TaskSetSource, target: Path) -> None:
    request = urllib.request.Request(source.url, headers={"User-Agent": "webrl"})
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:
        body = response.read()
    json.loads(body)  # refuse to cache something that is not JSON
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(body)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


EMBEDDED_SETS = ("embedded", "embedded:train", "embedded:test")


def resolve_task_set(name_or_path: str | Path, cache_dir: str | Path, seed: int = 0) -> list[Task]:
    """A path (file or folder) loads directly; ``embedded[:train|:test]`` is the embedded suite built from the
    sites' data for `seed`; a name of ``TASK_SETS`` loads ``<cache_dir>/tasks/<file>``, fetching it from
    upstream into the cache first when it is not there."""
    name = str(name_or_path)
    if name in EMBEDDED_SETS:
        from webrl.tasks.suite import build_suite

        tasks = build_suite(Path(cache_dir) / "snapshots", seed)
        split = name.partition(":")[2]
        return [t for t in tasks if not split or t.split == split]
    if name not in TASK_SETS:
        path = Path(name_or_path)
        if path.exists():
            return load_tasks(path)
        raise UsageError(f"unknown task set {name!r}: not a file or folder, and not one of the named sets "
                         f"({', '.join([*EMBEDDED_SETS, *TASK_SETS])})")
    source = TASK_SETS[name]
    target = Path(cache_dir) / "tasks" / source.file
    if not target.exists():
        try:
            _fetch(source, target)
        except (urllib.error.URLError, OSError, ValueError) as err:
            reason = getattr(err, "reason", None) or err
            raise UsageError(
                f"task set {name!r} is not in the cache ({target}) and could not be downloaded from {source.url} "
                f"({reason}); pass --tasks PATH to a copy of {source.origin}, or copy that file to {target}"
            ) from None
    return load_tasks(target)
