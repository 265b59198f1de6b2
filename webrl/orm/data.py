"""Labelled trajectories for the ORM: what it reads (intent, action history, final page) and the rule label.

Two sources, mixed freely (`load_examples` takes several paths):
- a `webrl eval` run folder, or its episodes.jsonl: every judged episode (status "done") is an example with
  label = 1 if its score is 1 else 0 (the success rate's definition) and html = `last_observation`, the page
  the agent saw before its last action (the official traces' `html`). Unjudged, evaluator-error, env_error
  and policy_error episodes are skipped and counted: they carry no rule label.
- a JSONL file of example records {intent, responses, html, label, [task_id], [sites], [source]}, e.g. the
  rollouts of other harnesses converted by hand.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from webrl.errors import UsageError
from webrl.files import json_object
from webrl.runs.records import EPISODES_FILE, EpisodeRecord, parse_episode


@dataclass(frozen=True)
class Example:
    """One trajectory as the ORM reads it; `label` is 1 for success, 0 for failure, None when not judged."""

    intent: str
    responses: tuple[str, ...]
    html: str
    label: int | None = None
    task_id: int | str | None = None
    sites: tuple[str, ...] = ()
    source: str = ""

    def record(self) -> dict[str, Any]:
        """The JSONL record `load_examples` reads back."""
        return {**asdict(self), "responses": list(self.responses), "sites": list(self.sites)}


@dataclass
class Loaded:
    """What `load_examples` found: the examples and, per reason, the episodes it skipped."""

    examples: list[Example] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)


def _require(record: dict, key: str, types: tuple[type, ...], where: str) -> Any:
    """`record[key]`, which must exist and have one of `types` (bool is not an int here)."""
    if key not in record:
        raise UsageError(f"{where}: missing field '{key}'")
    value = record[key]
    if isinstance(value, bool) or not isinstance(value, types):
        expected = " or ".join(t.__name__ for t in types)
        raise UsageError(f"{where}: field '{key}' must be {expected}, got {type(value).__name__}")
    return value


def _strings(record: dict, key: str, where: str, required: bool = True) -> tuple[str, ...]:
    """A list-of-strings field as a tuple ([] when optional and absent)."""
    if key not in record and not required:
        return ()
    values = _require(record, key, (list,), where)
    bad = next((i for i, value in enumerate(values) if not isinstance(value, str)), None)
    if bad is not None:
        raise UsageError(f"{where}: field '{key}' item {bad} must be str, got {type(values[bad]).__name__}")
    return tuple(values)


def _label(record: dict, where: str) -> int:
    value = _require(record, "label", (int, float), where)
    if value not in (0, 1):
        raise UsageError(f"{where}: field 'label' must be 0 or 1, got {value!r}")
    return int(value)


def example_from_record(record: dict, where: str, source: str) -> Example:
    """An Example from one JSONL example record."""
    task_id = record.get("task_id")
    if task_id is not None and (isinstance(task_id, bool) or not isinstance(task_id, int | str)):
        raise UsageError(f"{where}: field 'task_id' must be int or str, got {type(task_id).__name__}")
    return Example(
        intent=_require(record, "intent", (str,), where),
        responses=_strings(record, "responses", where),
        html=_require(record, "html", (str,), where),
        label=_label(record, where),
        task_id=task_id,
        sites=_strings(record, "sites", where, required=False),
        source=str(record.get("source") or source),
    )


def episode_example(record: EpisodeRecord, where: str = "episode", source: str = "") -> Example:
    """What the ORM reads of one episode (any status, as long as it acted); the label is the rule score's success
    when the episode was judged (status "done"), else None. The label is the guarded one: a leaderboard mode's
    success that the strict mode's guard fails (dump_suspect) is a failure, so that no ORM learns to reward dumps."""
    if not record.steps:
        raise UsageError(f"{where}: field 'steps' is empty (the episode never acted)")
    if record.last_observation is None:
        raise UsageError(
            f"{where}: missing field 'last_observation' (the final page; episodes recorded before "
            "webrl eval stored it cannot be judged: run the evaluation again)"
        )
    return Example(
        intent=record.intent,
        responses=tuple(step.response for step in record.steps),
        html=record.last_observation,
        label=None if record.success is None else int(record.success and not record.suspect),
        task_id=record.task_id,
        sites=tuple(record.sites),
        source=source,
    )


def _jsonl_path(path: Path) -> Path:
    """The file to read: a run folder's episodes.jsonl, or the file itself."""
    if path.is_dir():
        episodes = path / EPISODES_FILE
        if not episodes.is_file():
            raise UsageError(f"{path} is a folder without {EPISODES_FILE} (not a webrl eval run)")
        return episodes
    if not path.is_file():
        raise UsageError(f"{path}: no such file or folder")
    return path


def read_examples(path: Path, loaded: Loaded) -> None:
    """Add the examples of one run folder or JSONL file to `loaded`; records with `steps` are episodes."""
    path = _jsonl_path(Path(path))
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"cannot read {path}: {err}") from None
    source = str(path.parent if path.name == EPISODES_FILE else path)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        record = json_object(line, where)
        if "steps" in record:  # an episode record
            episode = parse_episode(line, where)
            if not episode.judged:
                loaded.skipped[episode.status] += 1  # no rule label: unjudged, error, env_error, policy_error
            else:
                loaded.examples.append(episode_example(episode, f"{where}: task {episode.task_id!r}", source))
            continue
        if "task_id" in record:
            where = f"{where}: task {record['task_id']!r}"
        loaded.examples.append(example_from_record(record, where, source))


def load_examples(paths: list[Path]) -> Loaded:
    """Every labelled example of `paths` (run folders or JSONL files), in order."""
    loaded = Loaded()
    for path in paths:
        read_examples(Path(path), loaded)
    if not loaded.examples:
        raise UsageError(
            f"no labelled examples in {', '.join(map(str, paths))} (episodes skipped: {dict(loaded.skipped) or 'none'})"
        )
    return loaded


def write_examples(path: Path, examples: list[Example]) -> None:
    """A JSONL file of example records (what `load_examples` reads)."""
    Path(path).write_text("".join(json.dumps(example.record()) + "\n" for example in examples))
