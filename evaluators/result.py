"""The outcome of evaluating one task, and the running score each evaluator keeps.

A score of ``None`` means *unjudged*: a rule needed an LLM judge (fuzzy_match, the unachievable-reason rule) and
none was given. It is never turned into a silent pass or fail; only a factor of 0 elsewhere decides the task
without the judge (a product with a 0 factor is 0 whatever the judge would say).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

Mode = Literal["webarena", "vab", "browsergym"]
MODES: tuple[str, ...] = ("webarena", "vab", "browsergym")
Status = Literal["scored", "unjudged", "error"]


class EvalResult(BaseModel):
    score: float | None  # None: unjudged or error
    status: Status
    mode: Mode
    judge: str | None = None  # the judge's name (model and endpoint) when one was given
    details: list[dict[str, Any]] = Field(default_factory=list)  # one entry per evaluator, checks inside

    @property
    def success(self) -> bool:
        return self.score == 1.0


class EvaluationError(Exception):
    """A failure the original harness would have crashed on (bad url_note, unknown locator, a helper's HTTP
    error, an unparsable judge reply in the webarena/vab modes): the task gets status 'error', no score."""


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

    @property
    def decided(self) -> bool:
        """True when a factor of 0 already fixes the product (no judge call can change it)."""
        return self.value == 0.0

    def outcome(self) -> float | None:
        if self.value == 0.0:
            return 0.0
        return None if self.pending else self.value
