"""`webrl eval`: run a policy over a task set and write the leaderboard numbers.

Episodes run concurrently, one browser context each, worker k on site instance k (so tasks that
write never see each other's changes). Every finished episode is appended to `episodes.jsonl` at
once, so Ctrl-C loses at most the episodes in flight and `--resume` skips the finished ones. An episode that
ends in an environment fault (after its one retry) is recorded as env_error and runs again on --resume; two
such episodes in a row stop the run (the sites are down: the rest would only fail, or wait on a hung server),
and the summary counts what was planned, judged, faulted and never run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import platform
import statistics
from collections import defaultdict, deque
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import TextIO

from webrl.errors import IncompleteRun, UsageError
from webrl.evaluators.judge import Judge
from webrl.evaluators.result import error_counts_as
from webrl.files import write_atomically
from webrl.policy.base import Policy
from webrl.provenance import provenance
from webrl.runs.episodes import EvalSettings, save_screenshots
from webrl.runs.executor import Executor, Work, dispatch, play_episode
from webrl.runs.executor_factory import executor_for
from webrl.runs.records import EPISODES_FILE, EpisodeRecord, parse_episode, read_episodes
from webrl.runs.report import write_report
from webrl.runs.summary import EvalSummary
from webrl.sites.base import SiteBackend
from webrl.tasks.family import families, family_of, family_of_record, family_options
from webrl.tasks.model import Task

RUN_FILE = "run.json"  # what the run's episodes depend on; a --resume must not change it
# The settings that change what an episode records (not parallel, repeats, screenshots or where it is written)
IDENTITY = (
    "tasks",
    "task_suite",
    "policy",
    "backend",
    "mode",
    "judge",
    "observation",
    "action_space",
    "escape_text",
    "click_at",
    "max_steps",
    "temperature",
    "max_tokens",
    "context",
    "seed",
    "record_network",
    *family_options(),  # the task families' settings of an episode
)
STOP_AFTER_FAULTS = 2  # environment faults in a row that end a run


def run_identity(settings: EvalSettings, tasks: list[Task]) -> dict:
    """The IDENTITY settings and a digest of the tasks themselves (a task file edited between runs counts)."""
    configs = json.dumps([t.to_config() for t in tasks], sort_keys=True, default=str)
    return {
        **settings.model_dump(mode="json", include=set(IDENTITY)),
        "tasks_digest": hashlib.sha256(configs.encode()).hexdigest()[:16],
    }


def check_identity(out: Path, identity: dict, resume: bool) -> None:
    """Refuse to --resume a run with settings or tasks other than its own (its score would blend two runs)."""
    path = out / RUN_FILE
    if resume and path.exists():
        recorded = json.loads(path.read_text())
        changed = [f"{k}: {recorded.get(k)!r} -> {identity[k]!r}" for k in identity if recorded.get(k) != identity[k]]
        if changed:
            raise UsageError(
                f"{out}: --resume with other settings than the run's ({'; '.join(changed)}); continue it "
                "with its own, or choose another --out"
            )


def finished_episodes(path: Path) -> set[tuple[int | str, int]]:
    """The (task, repeat) pairs already judged. A line cut short by a crash and an episode that ended in an
    environment fault are dropped (rewriting the file atomically), so that those episodes run again."""
    kept = []
    for number, line in enumerate(path.read_text().splitlines() if path.exists() else [], start=1):
        try:
            json.loads(line)
        except json.JSONDecodeError:
            continue
        record = parse_episode(line, f"{path}:{number}")
        if record.status != "env_error":
            kept.append(record)
    if path.exists():
        write_atomically(path, "".join(record.to_line() for record in kept))
    return {record.key for record in kept}


Groups = Callable[[list[EpisodeRecord]], dict[str, dict]]  # a run's groups of episodes: name -> success


async def run_eval(
    settings: EvalSettings,
    tasks: list[Task],
    executor: Executor,
    on_episode=lambda record: None,
    groups: Groups | None = None,
) -> EvalSummary:
    """Play every (task, repeat) of the run on the executor's slots, each free slot taking the next from one
    queue; write each record (and its screenshots) as it comes back, then the summary (with the `groups` of its
    episodes, if given) and report."""
    settings = executor.check(settings, tasks)
    episodes_path = settings.out / EPISODES_FILE
    if not settings.resume and episodes_path.exists():
        raise UsageError(f"{episodes_path} exists: pass --resume to continue that run, or choose another --out")
    identity = run_identity(settings, tasks)
    check_identity(settings.out, identity, settings.resume)
    planned = len(tasks) * settings.repeats
    async with executor.slots(settings, tasks) as slots:  # nothing is written before they are ours
        settings.out.mkdir(parents=True, exist_ok=True)
        write_atomically(settings.out / RUN_FILE, json.dumps(identity, indent=1))
        done = finished_episodes(episodes_path) if settings.resume else set()
        queue = deque(Work((t, r)) for t, r in play_order(tasks, settings.repeats) if (t.task_id, r) not in done)
        try:
            with episodes_path.open("a") as sink:
                writer = EpisodeWriter(settings.out, sink, on_episode)
                await dispatch(slots, queue, play_episode, writer.played, writer.lost, writer.stopped)
        finally:  # also on Ctrl-C: what finished is summarised and reported, the rest runs with --resume
            summary = write_summary(settings, executor, planned, groups)
    return summary


def play_order(tasks: list[Task], repeats: int) -> list[tuple[Task, int]]:
    """Every (task, repeat) of a run, repeat by repeat in the tasks' order, except that the episodes of a family
    that starts an episode on the page the last one left (MiniWoB++) come page by page: a worker then loads a page
    once, not once per episode (a load is ~100 ms of CPU on 2 cores). An episode's outcome does not depend on the
    order (its sampling seed is its own, and a reused page starts the same problem as a fresh one)."""
    page = {t.task_id: t.start_urls[0] if family_of(t).reuses_page(t) else "" for t in tasks}
    return sorted(((t, r) for r in range(repeats) for t in tasks), key=lambda episode: page[episode[0].task_id])


class EpisodeWriter:
    """Appends each episode that comes back to the run folder at once (its record, its screenshots), and counts
    the environment faults in a row that stop a run."""

    def __init__(self, out: Path, sink: TextIO, on_episode: Callable[[EpisodeRecord], None]):
        self.out, self.sink, self.on_episode = out, sink, on_episode
        self.faults_in_a_row = 0

    def played(self, work: Work, result: tuple[EpisodeRecord, dict[str, bytes]]) -> None:
        record, screenshots = result
        self.write(record.model_copy(update={"requeued": work.lost}), screenshots)

    def lost(self, work: Work, error: str) -> None:
        self.write(lost_episode(*work.args, error, requeued=work.lost - 1), {})

    def stopped(self) -> bool:
        return self.faults_in_a_row >= STOP_AFTER_FAULTS

    def write(self, record: EpisodeRecord, screenshots: dict[str, bytes]) -> None:
        self.faults_in_a_row = self.faults_in_a_row + 1 if record.status == "env_error" else 0
        save_screenshots(self.out, screenshots)
        self.sink.write(record.to_line())
        self.sink.flush()
        self.on_episode(record)


def lost_episode(task: Task, repeat: int, error: str, requeued: int) -> EpisodeRecord:
    """The record of an episode whose environment workers died under it again and again: an environment fault."""
    why = f"its environment worker died {requeued + 1} times (last: {error})"
    return EpisodeRecord.unplayed(task, repeat, "env_error", why, requeued=requeued)


def incomplete(summary: EvalSummary) -> str | None:
    """What of a run's planned episodes was not judged, as one line (None: every one was)."""
    counts = summary.episodes
    if not counts.count("env_error") and not counts.missing:
        return None
    return (
        f"incomplete: {counts.count('done')} of {counts.planned} planned episodes judged, "
        f"{counts.count('env_error')} ended in an environment fault, {counts.missing} not run"
    )


def run_policy(
    settings: EvalSettings,
    tasks: list[Task],
    backend: SiteBackend,
    models_dir: Path | None = None,
    judge: Judge | None = None,
    on_episode=lambda record: None,
    groups: Groups | None = None,
    kept: Policy | None = None,
) -> EvalSummary:
    """`run_eval` with the policy `settings.policy` names, on the executor the backend's configuration names
    (the training loop's rollouts, evaluations and demonstrations: each frees its model before the next stage,
    unless the training keeps its rollout server: `kept`, executor_for's)."""
    with executor_for(settings, backend, models_dir, judge, kept=kept) as executor:
        summary = asyncio.run(run_eval(settings, tasks, executor, on_episode, groups))
    if summary.episodes.missing:  # stopped by faults: the stage is not done
        raise IncompleteRun(f"{settings.out}: {incomplete(summary)}")
    return summary


def write_summary(
    settings: EvalSettings, executor: Executor, planned: int, groups: Groups | None = None
) -> EvalSummary:
    """summary.json and report.html from the episodes recorded so far, out of `planned`."""
    records = read_episodes(settings.out)
    summary = summarize(records, settings, executor.policy_name, planned, groups, executor.describe())
    summary.write(settings.out)
    write_report(settings.out, records, summary)
    return summary


def summarize(
    rows: list[EpisodeRecord],
    settings: EvalSettings,
    policy: str,
    planned: int,
    groups: Groups | None = None,
    executor: dict | None = None,
) -> EvalSummary:
    """Success rates per column of the episodes' task families (WebArena: per site in WebRL's order) and on
    average, mean ± std over repeats; each family's own section; the episodes planned, by status, and missing
    (planned but not recorded: the run stopped before them). An episode whose evaluation raised (status 'error',
    e.g. an eval block the mode's original evaluator rejects) enters the rates as that mode's original run loop
    counts it (``error_counts_as``: left out, or a failure) and is listed under ``evaluator_errors`` with its task,
    the field at fault and how it counted. `groups`: the run's groups of episodes (a training run's evaluation:
    the family's split by what its SFT was shown), under ``groups``; `executor`: where they ran."""
    counts_as = error_counts_as(settings.mode)
    by_repeat: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row.judged or (row.status == "error" and counts_as == "failure"):
            won = float(row.score == 1.0)
            if column := family_of_record(row).success_column(row):
                by_repeat[row.repeat][column].append(won)
            by_repeat[row.repeat]["Average"].append(won)
    table = {}
    for column in [*(c for family in families() for c in family.success_columns), "Average"]:
        rates = [100 * statistics.mean(r[column]) for r in by_repeat.values() if r.get(column)]
        if rates:
            table[column] = {
                "mean": round(statistics.mean(rates), 1),
                "std": round(statistics.stdev(rates), 1) if len(rates) > 1 else 0.0,
                "episodes": sum(len(r[column]) for r in by_repeat.values()),
            }
    counts = defaultdict(int)
    for row in rows:
        counts[row.status] += 1
    return EvalSummary(
        provenance=provenance(),
        settings=settings,
        policy=policy,
        success_rate=table,
        groups=groups(rows) if groups else None,
        episodes={
            "planned": planned,
            "statuses": counts,
            "missing": planned - len(rows),
            "requeued": sum(row.requeued for row in rows),
        },
        evaluator_errors=[
            {"task_id": row.task_id, "repeat": row.repeat, **evaluator_error(row), "counts_as": counts_as}
            for row in rows
            if row.status == "error"
        ],
        dump_suspect=sum(row.suspect for row in rows),
        versions={name: _version(name) for name in ("webrl", "playwright", "torch", "transformers")},
        python=platform.python_version(),
        executor=executor,
        # the task families' own sections (MiniWoB++'s environments, the verified mode's facts)
        **{key: value for family in families() for key, value in family.summary(rows, settings).items()},
    )


def evaluator_error(row: EpisodeRecord) -> dict:
    """The error an episode's evaluation ended in, and the task field at fault (None: not the task file)."""
    error = next(d for d in reversed(row.eval.details) if d.get("type") == "error")
    return {"field": error.get("field"), "error": error["error"]}


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
