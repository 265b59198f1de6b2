"""``evaluate``: one evaluator per ``eval_type``, in list order, scores multiplied.

Order matters because ``program_html`` navigates the page; ``url_match`` reads ``page.url`` when its turn comes.

Combining: any error -> status 'error' (score None; the original harness would have crashed on that task; how
that counts in the success rate is ``ERROR_COUNTS_AS[mode]``); else a 0 from any evaluator -> scored 0; else an
unjudged part -> 'unjudged' (score None); else the product (1.0 for an empty ``eval_types``, as in the originals).
An eval type the originals do not know is an error before any evaluator runs (their router raises). A failed
assert of the originals (``AssertionFailed``) is an error too, except in browsergym, which scores the task 0 as
BrowserGym catches AssertionError.

Only real pages are judged (all modes, a deliberate difference): ``url_match`` and the ``program_html`` targets that
read the last page score 0 when that page is not an http(s) page of one of the sites (``urls``), whatever its
text: a ``data:`` page, a ``javascript:`` result, a ``blob:`` or another origin could hold the reference URL or the
required contents, written by the agent.

Modes (``MODES``, the leaderboards'): ``webarena`` = the original evaluator, ``vab`` = VAB-WebArena-Lite's, used for
the WebRL numbers, ``browsergym`` = BrowserGym's WebArena-Lite hybrid; ``strict`` = WebArena's rules and the guard
against dumped answers and URLs (evaluators/guard.py: its failure is a factor of 0; in a leaderboard mode it marks a
1.0 ``dump_suspect`` instead). BrowserGym's safeguard is applied in the browsergym mode: any open tab on a host:port
that is none of the sites' (``urls``) scores 0. Each eval type is scored by the evaluator of the task family that
brings it (webrl.tasks.family: `evaluators`), the same in every mode; the WebArena rules below are the default
family's. A task family may add a mode of its own (`TaskFamily.modes`, e.g. WebArena-Verified's): the family's
`evaluate` then scores the episode from its answer and network trace, and none of the above applies.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from webrl.evaluators.guard import LOOPBACK, guard_problems
from webrl.evaluators.judge import Judge
from webrl.evaluators.program_html import program_html
from webrl.evaluators.result import (
    MODES,
    NOT_A_SITE_PAGE,
    STRICT,
    AssertionFailed,
    EvalResult,
    EvaluationError,
    all_modes,
    error_result,
)
from webrl.evaluators.string_match import string_match
from webrl.evaluators.url_match import url_match
from webrl.netutil import host_port
from webrl.tasks.family import family_of_mode
from webrl.tasks.installed import evaluators
from webrl.tasks.load import PLACEHOLDER, substitute


def _has_placeholder(task) -> bool:
    return bool(PLACEHOLDER.search(task.model_dump_json()))


def site_page(url: str, urls: dict[str, str] | None) -> bool:
    """Whether `url` is an http(s) page on one of the sites' host:ports (`urls`: site -> base URL; without them, any
    http(s) page). `localhost` and 127.0.0.1 are one host, as VAB's URL evaluator takes them."""
    target = _loopback(host_port(url))
    return target is not None and (not urls or target in {_loopback(host_port(u)) for u in urls.values() if u})


def _loopback(target: str | None) -> str | None:
    host, _, port = (target or "").rpartition(":")
    return f"{LOOPBACK.get(host, host)}:{port}" if target else None


async def _foreign_tabs(page, urls: dict[str, str]) -> list[str]:
    """BrowserGym: open tabs whose host:port is none of the sites'. It compares netlocs only, so a tab
    without one (about:blank, data:) passes, as does chrome://newtab, and any path on a site's host."""
    allowed = {"", "newtab"} | {urlparse(u).netloc for u in urls.values() if u}
    context = getattr(page, "context", None)  # a PseudoPage or a stand-in may have none
    return [
        other.url
        for other in (context.pages if context is not None else [page])
        if urlparse(other.url).netloc not in allowed
    ]


async def evaluate(
    task,
    answer: str | None,
    page,
    *,
    mode: str = "webarena",
    judge: Judge | None = None,
    urls: dict[str, str] | None = None,
    trace: list[dict] | None = None,
    options: dict[str, Any] | None = None,
    status: int | None = None,
) -> EvalResult:
    """Score one finished episode.

    ``answer``: the text of the agent's final ``stop [...]`` (None: the agent gave none). ``page``: the active
    Playwright **async** Page at the end (may be None for a string_match-only task). ``urls``: site name -> base
    URL; used for the ``__SITE__`` placeholders still in the task, the shopping helpers, and BrowserGym's
    open-tab check. ``trace``: the episode's network trace (HAR entries), which a task family's mode may judge
    (``options``: the run's values of the families' options). ``status``: the HTTP status the last page's document
    answered with (None: unknown), which the guard reads."""
    if mode not in all_modes():
        raise ValueError(f"unknown evaluation mode {mode!r} (one of {', '.join(all_modes())})")
    if family := family_of_mode(mode):
        return await family.evaluate(mode, task, answer, trace=trace, urls=urls or {}, options=options or {})
    judge_name = getattr(judge, "name", None) if judge is not None else None
    if urls and _has_placeholder(task):
        task = substitute(task, urls)
    details: list[dict[str, Any]] = [{"type": "warning", "text": w} for w in task.warnings]
    parts: list[float | None] = []
    rules = "webarena" if mode == STRICT else mode  # the strict mode: WebArena's rules, and the guard
    last_url = page.url if page is not None else None  # before program_html navigates the page
    try:
        known = evaluators()
        unknown = [t for t in task.eval.eval_types if t not in known]
        if unknown:
            raise EvaluationError(
                f"eval_type {unknown[0]!r} is not supported (the eval types: {', '.join(known)})", "eval.eval_types"
            )
        if rules == "browsergym" and urls and page is not None:
            foreign = await _foreign_tabs(page, urls)
            if foreign:
                details.append({"type": "open_tabs", "score": 0.0, "foreign": foreign})
                parts.append(0.0)
        for eval_type in task.eval.eval_types:
            part = await known[eval_type](task, answer, page, mode=mode, rules=rules, judge=judge, urls=urls)
            details.append(part)
            parts.append(part["score"])
        if mode == STRICT and (problems := guard_problems(task, answer, last_url, status, strict=True)):
            details.append({"type": "guard", "score": 0.0, "problems": problems})
            parts.append(0.0)
    except AssertionFailed as err:
        if rules != "browsergym":
            return _error(details, str(err), err.field, mode, judge_name)
        details.append({"type": "assertion", "score": 0.0, "error": str(err), "field": err.field})
        return EvalResult(score=0.0, status="scored", mode=mode, judge=judge_name, details=details)
    except EvaluationError as err:
        return _error(details, str(err), err.field, mode, judge_name)
    except Exception as err:  # noqa: BLE001 - whatever else fails (navigation, a closed page, a helper's network,
        # the agent's text that a request cannot encode) is this episode's evaluation error, never the run's end
        return _error(details, f"{type(err).__name__}: {err}", None, mode, judge_name)
    if any(p == 0.0 for p in parts):
        return EvalResult(score=0.0, status="scored", mode=mode, judge=judge_name, details=details)
    if any(p is None for p in parts):
        return EvalResult(score=None, status="unjudged", mode=mode, judge=judge_name, details=details)
    score = 1.0
    for p in parts:
        score *= p
    # a leaderboard mode keeps its rules, and says when its 1.0 is one that the guard would fail
    suspect = guard_problems(task, answer, last_url, status, strict=False) if mode in MODES and score == 1.0 else []
    return EvalResult(score=score, status="scored", mode=mode, judge=judge_name, details=details, dump_suspect=suspect)


# The WebArena rules: the default task family's evaluators (webrl.families.webarena), by eval type.


async def _string_match(task, answer, page, *, rules, judge, **_) -> dict[str, Any]:
    return await string_match(task, answer, mode=rules, judge=judge)


async def _url_match(task, answer, page, *, rules, urls, **_) -> dict[str, Any]:
    if page is None:
        raise EvaluationError("url_match needs the page")
    return url_match(task, page.url, mode=rules) if site_page(page.url, urls) else not_a_site_page(page.url)


async def _program_html(task, answer, page, *, rules, judge, urls, **_) -> dict[str, Any]:
    if page is None:
        raise EvaluationError("program_html needs the page")
    return await program_html(
        task, page, mode=rules, judge=judge, urls=urls, last_page_judged=site_page(page.url, urls)
    )


RULE_EVALUATORS = {
    "string_match": _string_match,
    "url_match": _url_match,
    "program_html": _program_html,
}


def not_a_site_page(url: str) -> dict[str, Any]:
    return {"type": "url_match", "score": 0.0, "url": url[:500], "note": NOT_A_SITE_PAGE}


_error = error_result
