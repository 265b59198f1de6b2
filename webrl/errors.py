"""The two kinds of failure a user sees: their input was wrong (exit 2) or the run failed (exit 1).

Both carry one clear line for the terminal; the CLI prints tracebacks only with --debug.
"""


class WebrlError(Exception):
    """A runtime failure (exit code 1): something went wrong while doing valid work."""

    exit_code = 1


class UsageError(WebrlError):
    """Bad input (exit code 2): a flag, file, field or state the user can fix. Name what and where."""

    exit_code = 2
