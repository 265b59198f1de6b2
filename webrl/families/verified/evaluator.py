"""The verified mode: WebArena-Verified's own evaluator (the `webarena-verified` package's `WebArenaVerified`)
judges an episode from the agent's structured response and the episode's network trace (HAR). webrl writes no rule
of its own here: it turns the `exit(message=...)` answer into the response the package reads (`parse_answer`),
hands over the trace it recorded, and files the package's verdict as an EvalResult.

The package is imported only when this mode runs (webrl works without it). Its evaluator reads a whole dataset
(812 tasks, its own check): the installed package's md5-pinned file, or a file in its format that `--tasks` named.
"""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path
from typing import Any

from webrl.errors import UsageError, field_problem
from webrl.evaluators.result import EvalResult, error_result
from webrl.families.verified.tasks import VERIFIED_DISTRIBUTION, verified_dataset

# The sites the package knows, by webrl's names (its placeholders are the same: __SHOPPING__, ...)
VERIFIED_SITES = ("shopping", "shopping_admin", "reddit", "gitlab", "wikipedia", "map")
RESPONSE_KEYS = ("task_type", "status", "retrieved_data", "error_details")
# What the task instruction adds in the verified mode: the structured response `parse_answer` reads
VERIFIED_RESPONSE = (
    "\n\nWhen you finish, answer with exit(message='<JSON>'), where <JSON> is one object: "
    '{"task_type": "RETRIEVE" (the task asks for information), "MUTATE" (it changes something) or "NAVIGATE" '
    '(it asks to open a page), "status": "SUCCESS", or the failure: "NOT_FOUND_ERROR", "PERMISSION_DENIED_ERROR", '
    '"ACTION_NOT_ALLOWED_ERROR", "DATA_VALIDATION_ERROR" or "UNKNOWN_ERROR", "retrieved_data": the list of the '
    "requested values for RETRIEVE (numbers as numbers), else null, "
    '"error_details": null, or why the task failed}.'
)


class AnswerUnparsed(ValueError):
    """The exit message is not the structured response (the episode is still scored: the package fails it)."""


def parse_answer(text: str | None) -> dict[str, Any]:
    """The structured response in an exit message: one JSON object (text around it, e.g. a code fence, is
    ignored) with `task_type` and `status`, checked against the package's own response model."""
    from pydantic import ValidationError
    from webarena_verified.types.agent_response import FinalAgentResponse

    body = (text or "").strip()
    if not body:
        raise AnswerUnparsed("the answer is empty")
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise AnswerUnparsed("the answer holds no JSON object")
    try:
        data = json.loads(body[start : end + 1])
    except json.JSONDecodeError as err:
        raise AnswerUnparsed(f"the answer's JSON does not parse: {err.msg} at column {err.colno}") from None
    if not isinstance(data, dict):
        raise AnswerUnparsed("the answer's JSON is not an object")
    unknown = [k for k in data if k not in RESPONSE_KEYS]
    if unknown:
        raise AnswerUnparsed(f"the answer has the unknown key {unknown[0]!r} (keys: {', '.join(RESPONSE_KEYS)})")
    try:
        FinalAgentResponse.model_validate(dict(data))
    except ValidationError as err:
        problem = field_problem(err)
        raise AnswerUnparsed(f"the answer's field {problem.field or '(response)'!r}: {problem.message}") from None
    return data


def environments(urls: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The package's `environments` config from webrl's site URLs: each site's placeholder and base URL (the
    evaluator turns recorded URLs back into `__SITE__/...` with it)."""
    return {f"__{site.upper()}__": {"urls": [url.rstrip("/")]} for site, url in urls.items() if site in VERIFIED_SITES}


@functools.lru_cache(maxsize=64)  # one per dataset and site instance (--parallel): ~0.5 s to build each
def _scorer(dataset: str, environments_json: str):
    try:
        from webarena_verified.api import WebArenaVerified
        from webarena_verified.core.utils import logger
        from webarena_verified.types.config import WebArenaVerifiedConfig
    except ImportError as err:
        raise UsageError(
            f"--mode verified needs {VERIFIED_DISTRIBUTION} and its evaluator's dependencies ({err}); "
            "see docs/tasks.md#webarena-verified"
        ) from None
    # Its logger prints a traceback for every task it fails; webrl records the reason in the episode instead.
    logger.disabled = True
    # url-normalize 2.2.1 (its pin) asks idna for a deprecated option on every URL it reads
    warnings.filterwarnings("ignore", "Transitional processing is deprecated", DeprecationWarning)
    config = WebArenaVerifiedConfig(test_data_file=Path(dataset), environments=json.loads(environments_json))
    try:
        return WebArenaVerified(config=config)
    except Exception as err:  # noqa: BLE001 - its reader fails in many ways on a file that is not its dataset
        raise UsageError(f"{dataset}: WebArena-Verified's evaluator refuses this dataset: {err}") from None


def verified_scorer(dataset: Path | None, urls: dict[str, str]):
    """The package's evaluator for `dataset` (None: the installed package's pinned file) and the sites' URLs; made
    once per process and reused (loading the dataset takes ~0.5 s)."""
    path = Path(dataset) if dataset is not None else verified_dataset()
    return _scorer(str(path.resolve()), json.dumps(environments(urls), sort_keys=True))


def score(
    task_id: int | str,
    answer: str | None,
    trace: list[dict] | Path | None,
    *,
    dataset: Path | None,
    urls: dict[str, str],
) -> EvalResult:
    """Score one episode with the package's evaluator. `trace`: the HAR's entries, or the HAR file; None when the
    episode has none. Whatever is wrong with the input (an answer that does not parse, no trace, a task id not in
    the dataset) is a reason in the result, never an exception."""
    scorer = verified_scorer(dataset, urls)  # first: without the package, one clear error for the run
    details: list[dict[str, Any]] = []
    response: Any = answer or ""
    try:
        response = parse_answer(answer)
    except AnswerUnparsed as err:
        details.append({"type": "verified_answer", "parsed": False, "error": str(err)})
    else:
        details.append({"type": "verified_answer", "parsed": True})
    if trace is None or (isinstance(trace, Path) and not trace.is_file()):
        why = "the episode has no network trace" if trace is None else f"no network trace at {trace}"
        return _error(details, f"{why} (record it with --record-network)")
    if isinstance(trace, list) and not trace:
        return _error(details, "the network trace is empty: the episode made no request")
    if not isinstance(task_id, int):
        return _error(details, f"task id {task_id!r} is not one of WebArena-Verified's (integers)")
    try:
        result = scorer.evaluate_task(task_id=task_id, agent_response=response, network_trace=trace)
    except Exception as err:  # noqa: BLE001 - the agent's response or trace broke it: this episode's error
        return _error(details, f"{type(err).__name__}: {err}")
    details.append(
        {
            "type": "verified",
            "status": str(result.status),
            "score": result.score,
            "evaluators": [
                {
                    "evaluator": part.evaluator_name,
                    "status": str(part.status),
                    "score": part.score,
                    "error": part.error_msg,
                    "assertions": [a.model_dump(mode="json") for a in part.assertions or ()],
                }
                for part in result.evaluators_results
            ],
            "task_revision": result.task_revision,
            "package": result.webarena_verified_version,
            "urls": dict(urls),  # what the trace's URLs were read against: an offline re-score reads them again
        }
    )
    if str(result.status) == "error":
        return _error(details, result.error_msg or "the package's evaluator reported an error")
    return EvalResult(score=float(result.score), status="scored", mode="verified", details=details)


def _error(details: list[dict], error: str) -> EvalResult:
    return error_result(details, error, None, "verified")
