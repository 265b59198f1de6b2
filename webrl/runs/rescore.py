"""`webrl eval --rescore RUN --mode MODE`: a finished run's episodes scored again from what they recorded (the
answer and the network trace beside each record), without the sites, in a task family's mode that allows it
(`EvalMode.rescores`: WebArena-Verified's, whose evaluator reads only those).

The run folder is left as it is: the re-scored records, summary and report go into their own folder, with the traces
they were scored from. An episode that never reached a judgement (an environment or policy error) stays as it was.
What is read is checked first: an answer or a trace whose digest is not the one its record was scored with (an
edited answer, a request added to a HAR) makes that episode an evaluation error that says so, and a record that
names a file outside the run folder is refused.
"""

from __future__ import annotations

from pathlib import Path

from webrl.errors import UsageError
from webrl.evaluators.result import error_result
from webrl.files import write_atomically
from webrl.runs.eval import summarize
from webrl.runs.records import (
    EPISODES_FILE,
    EpisodeEval,
    EpisodeRecord,
    answer_digest,
    digest,
    read_episodes,
    run_file,
)
from webrl.runs.report import write_report
from webrl.runs.summary import EvalSummary, read_summary
from webrl.tasks.family import TaskFamily, family_modes, family_of_mode, family_options

JUDGED = ("done", "unjudged", "error")  # what an evaluator saw; env_error and policy_error never got that far


def changed(record: EpisodeRecord, trace: bytes | None) -> str | None:
    """Why the answer or the trace is not what the episode was scored with (None: both are)."""
    if "answer" not in record.digests:
        return "the record carries no digests of what it was scored from (written before schema version 4)"
    if answer_digest(record.answer) != record.digests["answer"]:
        return "the answer is not the one the episode was scored with (its digest differs): it was edited"
    if trace is not None and digest(trace) != record.digests.get("network_trace"):
        return f"the network trace {record.network_trace} is not the one the episode was scored with (digest differs)"
    return None


def rescore_record(
    record: EpisodeRecord, run: Path, out: Path, family: TaskFamily, mode: str, options: dict
) -> EpisodeRecord:
    if record.status not in JUDGED:
        return record
    path = run_file(run, record, record.network_trace) if record.network_trace else None
    trace = path.read_bytes() if path is not None and path.is_file() else None
    if why := changed(record, trace):  # an edited file is never scored
        result = error_result([], why, None, mode)
    else:
        result = family.rescore(mode, record, path, options)
    if trace is not None:  # the rescore's folder keeps what it scored, as a run keeps it
        (out / record.network_trace).parent.mkdir(parents=True, exist_ok=True)
        (out / record.network_trace).write_bytes(trace)
    return record.model_copy(
        update={
            "status": "done" if result.status == "scored" else result.status,
            "score": result.score,
            "eval": EpisodeEval(mode=mode, details=result.details),
            "network_trace": record.network_trace if trace is not None else None,
        }
    )


def rescore(run: Path, out: Path, mode: str | None = None) -> EvalSummary:
    """Score `run`'s episodes again in `mode` (None: the run's own) into `out` (episodes.jsonl, summary.json,
    report.html), as its task family's `rescore` does offline. Returns the new summary."""
    before = read_summary(run)
    mode = mode or before.settings.mode
    family = rescoring_family(mode)
    settings = before.settings.model_copy(update={"out": out, "mode": mode, "resume": False})
    records = read_episodes(run)
    if not records:
        raise UsageError(f"{run}/{EPISODES_FILE}: no episodes to re-score")
    if (out / EPISODES_FILE).exists():
        raise UsageError(f"{out / EPISODES_FILE} exists: choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    options = {name: getattr(settings, name) for name in family_options()}
    again = [rescore_record(r, run, out, family, mode, options) for r in records]
    write_atomically(out / EPISODES_FILE, "".join(r.to_line() for r in again))
    summary = summarize(again, settings, before.policy, before.episodes.planned)
    summary.rescored_from = str(run)
    summary.write(out)
    write_report(out, again, summary)
    return summary


def rescoring_family(mode: str) -> TaskFamily:
    """The task family whose `mode` scores a run offline; any other mode is refused."""
    family = family_of_mode(mode)
    if family is None or not family.modes[mode].rescores:
        modes = " or ".join(f"--mode {name}" for name, m in family_modes().items() if m.rescores)
        raise UsageError(f"--rescore with --mode {mode}: not yet: only {modes} scores a run offline")
    return family
