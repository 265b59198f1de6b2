"""The kinds of failure a user sees: their input was wrong (exit 2), the run failed (exit 1), or a run of
episodes ended before every planned one was judged (exit 3: `--resume` continues it).

Both carry one clear line for the terminal; the CLI prints tracebacks only with --debug.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


class WebrlError(Exception):
    """A runtime failure (exit code 1): something went wrong while doing valid work."""

    exit_code = 1


class UsageError(WebrlError):
    """Bad input (exit code 2): a flag, file, field or state the user can fix. Name what and where."""

    exit_code = 2


def unknown_form(what: str, forms: tuple[str, ...]) -> UsageError:
    """ "unknown <what>; valid forms: A, B, C" on one line: each form's syntax, the first word of its line in
    `forms` (the option's --help explains them)."""
    return UsageError(f"unknown {what}; valid forms: {', '.join(form.split()[0] for form in forms)}")


class SitesUnavailable(UsageError):
    """The sites are not running, or stopped answering. A state the user fixes (`webrl up`); to an episode
    that is running, an environment fault like a crashed browser."""


class PortTaken(UsageError):
    """A port the sites are to listen on is in use. On ports chosen free a moment before (up_on_free_ports),
    another process took it in between, and other free ports will do."""


class SitesChanged(WebrlError):
    """A site of a running episode was reset by someone else (`webrl reset --force`): the episode's outcome would
    be judged on a state its actions did not make, so it is an environment fault, not a score."""


class IncompleteRun(WebrlError):
    """A run of episodes that ended with planned episodes not judged (the sites went down): exit code 3."""

    exit_code = 3


@dataclass(frozen=True)
class FieldProblem:
    """The first thing pydantic refused in an input, in the parts every usage error is written from."""

    loc: tuple[str | int, ...]  # the field's path (an int: a list's index); empty for a rule over several fields
    message: str  # pydantic's, without its "Value error, " prefix
    kind: str  # pydantic's error type: "missing", "value_error" (a validator's own message), ...
    value: Any  # the refused input
    others: int  # how many more problems the input has

    @property
    def field(self) -> str:
        return ".".join(str(part) for part in self.loc)

    @property
    def got(self) -> str:
        """ ", not VALUE" where pydantic's message does not say what it got (a validator's own message does)."""
        return "" if self.kind in ("value_error", "missing") else f", not {self.value}"


def field_problem(err: ValidationError) -> FieldProblem:
    first = err.errors()[0]
    return FieldProblem(
        loc=tuple(first["loc"]),
        message=first["msg"].removeprefix("Value error, "),
        kind=first["type"],
        value=first.get("input"),
        others=err.error_count() - 1,
    )
