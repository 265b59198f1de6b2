"""`webrl eval --rescore RUN --mode verified`: a finished run's episodes scored again from what they recorded (the
answer and the network trace beside each record), without the sites, as WebArena-Verified's evaluator allows.

The run folder is left as it is: the re-scored records, summary and report go into their own folder, with the traces
they were scored from. An episode that never reached a judgement (an environment or policy error) stays as it was.
What is read is checked first: an answer or a trace whose digest is not the one its record was scored with (an
edited answer, a request added to a HAR) makes that episode an evaluation error that says so, and a record that
names a file outside the run folder is refused.
"""

from __future__ import annotations

from pathlib import Path

from webrl.errors import UsageError
from webrl.evaluators import verified
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

JUDGED = ("done", "unjudged", "error")  # what an evaluator saw; env_error and policy_error never got that far


def _recorded_urls(record: EpisodeRecord) -> dict[str, str] | None:
    """The site URLs the live scoring read the trace against (None: it did not get that far)."""
    for detail in record.eval.details if record.eval else []:
        if detail.get("type") == "verified" and isinstance(detail.get("urls"), dict):
            return detail["urls"]
    return None


def changed(record: EpisodeRecord, trace: bytes | None) -> str | None:
    """Why the answer or the trace is not what the episode was scored with (None: both are)."""
    if "answer" not in record.digests:
        return "the record carries no digests of what it was scored from (written before schema version 4)"
    if answer_digest(record.answer) != record.digests["answer"]:
        return "the answer is not the one the episode was scored with (its digest differs): it was edited"
    if trace is not None and digest(trace) != record.digests.get("network_trace"):
        return f"the network trace {record.network_trace} is not the one the episode was scored with (digest differs)"
    return None


def rescore_record(record: EpisodeRecord, run: Path, out: Path, dataset: Path | None) -> EpisodeRecord:
    if record.status not in JUDGED:
        return record
    path = run_file(run, record, record.network_trace) if record.network_trace else None
    trace = path.read_bytes() if path is not None and path.is_file() else None
    urls = _recorded_urls(record)
    if urls is None:  # the trace's URLs cannot be read back as __SITE__/... without them
        why = "the record does not say which site URLs its trace was read against (not scored in --mode verified)"
        result = error_result([], why, None, "verified")
    elif why := changed(record, trace):
        result = error_result([], why, None, "verified")
    else:
        result = verified.score(record.task_id, record.answer, path, dataset=dataset, urls=urls)
    if trace is not None:  # the rescore's folder keeps what it scored, as a run keeps it
        (out / record.network_trace).parent.mkdir(parents=True, exist_ok=True)
        (out / record.network_trace).write_bytes(trace)
    return record.model_copy(
        update={
            "status": "done" if result.status == "scored" else result.status,
            "score": result.score,
            "eval": EpisodeEval(mode="verified", details=result.details),
            "network_trace": record.network_trace if trace is not None else None,
        }
    )


def rescore(run: Path, out: Path) -> EvalSummary:
    """Score `run`'s episodes again in the verified mode into `out` (episodes.jsonl, summary.json, report.html),
    each against the site URLs its live scoring recorded. Returns the new summary."""
    before = read_summary(run)
    settings = before.settings.model_copy(update={"out": out, "mode": "verified", "resume": False})
    records = read_episodes(run)
    if not records:
        raise UsageError(f"{run}/{EPISODES_FILE}: no episodes to re-score")
    if (out / EPISODES_FILE).exists():
        raise UsageError(f"{out / EPISODES_FILE} exists: choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    again = [rescore_record(r, run, out, settings.verified_dataset) for r in records]
    write_atomically(out / EPISODES_FILE, "".join(r.to_line() for r in again))
    summary = summarize(again, settings, before.policy, before.episodes.planned)
    summary.rescored_from = str(run)
    summary.write(out)
    write_report(out, again, summary)
    return summary
