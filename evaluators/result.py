"""The outcome of evaluating one task, and the running score each evaluator keeps.

A score of ``None`` means *unjudged*: a rule needed an LLM judge (fuzzy_match, the unachievable-reason rule) and
none was given. It is never turned into a silent pass or fail; only a factor of 0 elsewhere decides the task
without the judge (a product with a 0 factor is 0 whatever the judge would say).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from webrl.tasks.family import family_modes

MODES: tuple[str, ...] = ("webarena", "vab", "browsergym")  # the leaderboards' WebArena rule evaluators' semantics
STRICT = "strict"  # WebArena's rules and the guard (evaluators/guard.py): the reward agents are trained on
RULE_MODES: tuple[str, ...] = (*MODES, STRICT)  # webrl's own; the task families add theirs (TaskFamily.modes)
Status = Literal["scored", "unjudged", "error"]
# How a task whose evaluation raised (status 'error') enters the success rate, per mode:
# - webarena: WebArena's run.py catches the exception, logs it and never appends a score: the task is left out
#   of the average (which divides by the tasks scored).
# - vab: VAB's run.py leaves the task's score at -0.1; its score.py drops it from the finished tasks and divides
#   the successes by all 165 ("overall accuracy", the number WebRL reports): the task counts as a failure.
# - browsergym: left out, as before (BrowserGym itself scores an AssertionError 0 and lets the rest crash the
#   episode).
# - strict: a reward of 0, as a training reward must (an episode left out would hide what made it fail).
# A task family's mode says how it counts them (EvalMode.errors_count_as).
ERROR_COUNTS_AS: dict[str, str] = {
    "webarena": "left out",
    "vab": "failure",
    "browsergym": "left out",
    "strict": "failure",
}
# Why url_match or a program_html target scored 0 without looking (webrl, all modes: see evaluators/router.py).
NOT_A_SITE_PAGE = "the last page is not an http(s) page of the sites, so it is not judged"


def all_modes() -> tuple[str, ...]:
    """Every evaluation mode: webrl's own, then the installed task families'."""
    return (*RULE_MODES, *family_modes())


def error_counts_as(mode: str) -> str:
    """How an episode whose evaluation failed enters `mode`'s success rate: "left out" or "failure"."""
    return ERROR_COUNTS_AS[mode] if mode in ERROR_COUNTS_AS else family_modes()[mode].errors_count_as


class EvalResult(BaseModel):
    score: float | None  # None: unjudged or error
    status: Status
    mode: str  # one of all_modes()
    judge: str | None = None  # the judge's name (model and endpoint) when one was given
    details: list[dict[str, Any]] = Field(default_factory=list)  # one entry per evaluator, checks inside
    # a leaderboard mode's 1.0 that the strict mode's guard fails: why (empty: none, or not a leaderboard mode)
    dump_suspect: list[str] = Field(default_factory=list)

    @property
    def success(self) -> bool:
        return self.score == 1.0


def error_result(details: list[dict], error: str, field: str | None, mode: str, judge: str | None = None) -> EvalResult:
    """An evaluation that failed: the cause, the task's field at fault (None: not the task file) and how the mode
    counts it in the success rate (``counts_as``). The cause may quote the agent's text: what no encoding takes (a
    lone surrogate) is escaped, so that the line prints anywhere."""
    printable = error.encode("utf-8", "backslashreplace").decode("utf-8")
    details.append({"type": "error", "error": printable, "field": field, "counts_as": error_counts_as(mode)})
    return EvalResult(score=None, status="error", mode=mode, judge=judge, details=details)


class EvaluationError(Exception):
    """A failure the original harness would have crashed on (bad url_note, unknown locator, a helper's HTTP
    error, an unparsable judge reply in the webarena/vab modes): the task gets status 'error', no score.
    ``field`` names the task's field when the task file itself is the cause."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class AssertionFailed(EvaluationError):
    """Where the originals fail an ``assert`` (a judge reply without the decision words, a value that must be a
    list): an error in the webarena/vab modes; BrowserGym catches AssertionError and scores the task 0."""


def as_list(value: Any, field: str, mode: str) -> list:
    """A value the originals assert is a list (must_include, fuzzy_match): a bare string fails that assert in the
    webarena and vab modes (WebArena-Lite task 81); browsergym keeps webrl's normalisation, a one-item list."""
    if isinstance(value, list):
        return value
    if mode == "browsergym":
        return [value]
    raise AssertionFailed(f"{field} is {value!r}, not a list: the {mode} evaluator asserts a list", field)


@dataclass
class Running:
    """A running product with unjudged factors kept aside: ``value`` multiplies the judged factors, ``pending``
    says whether an unjudged factor is in the product."""

    value: float = 1.0
    pending: bool = False
    checks: list[dict[str, Any]] = field(default_factory=list)

    def times(self, factor: float | None, **check: Any) -> None:
        if factor is None:
            self.pending = True
        else:
            self.value *= float(factor)
        self.checks.append({**check, "score": factor})

    def outcome(self) -> float | None:
        if self.value == 0.0:
            return 0.0
        return None if self.pending else self.value
