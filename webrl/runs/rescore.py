"""`webrl eval --rescore RUN --mode verified`: a finished run's episodes scored again from what they recorded (the
answer and the network trace beside each record), without the sites, as WebArena-Verified's evaluator allows.

The run folder is left as it is: the re-scored records, summary and report go into their own folder. An episode
that never reached a judgement (an environment or policy error) stays as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from webrl.errors import UsageError
from webrl.evaluators import verified
from webrl.evaluators.result import error_result
from webrl.files import write_atomically
from webrl.runs.episodes import EvalSettings
from webrl.runs.eval import summarize
from webrl.runs.records import EPISODES_FILE, EpisodeEval, EpisodeRecord, read_episodes
from webrl.runs.report import write_report

JUDGED = ("done", "unjudged", "error")  # what an evaluator saw; env_error and policy_error never got that far


def _recorded_urls(record: EpisodeRecord) -> dict[str, str] | None:
    """The site URLs the live scoring read the trace against (None: it did not get that far)."""
    for detail in record.eval.details if record.eval else []:
        if detail.get("type") == "verified" and isinstance(detail.get("urls"), dict):
            return detail["urls"]
    return None


def rescore_record(record: EpisodeRecord, run: Path, out: Path, dataset: Path | None) -> EpisodeRecord:
    if record.status not in JUDGED:
        return record
    trace = run / record.network_trace if record.network_trace else None
    urls = _recorded_urls(record)
    if urls is None:  # the trace's URLs cannot be read back as __SITE__/... without them
        why = "the record does not say which site URLs its trace was read against (not scored in --mode verified)"
        result = error_result([], why, None, "verified")
    else:
        result = verified.score(record.task_id, record.answer, trace, dataset=dataset, urls=urls)
    return record.model_copy(
        update={
            "status": "done" if result.status == "scored" else result.status,
            "score": result.score,
            "eval": EpisodeEval(mode="verified", details=result.details),
            "network_trace": os.path.relpath(trace, out) if trace else None,
        }
    )


def rescore(run: Path, out: Path) -> dict:
    """Score `run`'s episodes again in the verified mode into `out` (episodes.jsonl, summary.json, report.html),
    each against the site URLs its live scoring recorded. Returns the new summary."""
    try:
        before = json.loads((run / "summary.json").read_text())
        settings = EvalSettings.model_validate({**before["settings"], "out": out, "mode": "verified", "resume": False})
    except (OSError, json.JSONDecodeError, KeyError, ValueError) as err:
        raise UsageError(f"{run}/summary.json: not a finished run's summary ({type(err).__name__}: {err})") from None
    records = read_episodes(run)
    if not records:
        raise UsageError(f"{run}/{EPISODES_FILE}: no episodes to re-score")
    if (out / EPISODES_FILE).exists():
        raise UsageError(f"{out / EPISODES_FILE} exists: choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    again = [rescore_record(r, run, out, settings.verified_dataset) for r in records]
    write_atomically(out / EPISODES_FILE, "".join(r.to_line() for r in again))
    planned = before.get("episodes", {}).get("planned", len(again))
    summary = summarize(again, settings, before.get("policy", settings.policy), planned) | {"rescored_from": str(run)}
    write_atomically(out / "summary.json", json.dumps(summary, indent=2, default=str))
    write_report(out, again, summary)
    return summary
