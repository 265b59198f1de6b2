"""``program_html``: page contents after the episode.

For each target in order: resolve the URL (``func:`` expressions with the variable ``__last_url__`` = the current
page URL), go there unless it is ``"last"`` (this navigates the agent's own page, so a later ``"last"`` target sees
the page the previous target opened), select a string (whole ``page.content()``, a JS expression, or a ``func:``
helper call with ``__page__`` = the page), then score it against ``required_contents``.

Mode differences, each marked in the code:
- html.unescape of the selection: webarena only (VAB and BrowserGym do not).
- ``lambda:`` locators, and a ``None`` selection scoring 0 and ending the loop: vab and browsergym only.
- exact_match cleaning: webarena/browsergym strip, vab does not.
- must_include: always split on ``|OR|``; webarena/browsergym substring (no tokenising), vab the one-token rule.
- must_exclude, required_values: vab only; fuzzy_match (references joined with ", ", one judge call): vab and
  browsergym. The webarena mode raises on any of them, as the original does.
- An empty required_contents is an error in every mode (the originals' else branch); a bare-string must_include
  fails the originals' assert in webarena and vab and is a one-item list in browsergym (webrl's normalisation).

Navigation settling: the originals ``time.sleep(3)`` after every ``goto``. We wait for the 'load' state, then for
'networkidle' up to ``NETWORK_IDLE_CAP_MS``, then sleep ``NAVIGATION_SETTLE_S`` — 0 by default, which is enough
for the embedded sites (server-rendered, no late requests); set it to 3 to reproduce the original timing on the
real WebArena containers.
"""

from __future__ import annotations

import asyncio
import html
from typing import Any

from webrl.evaluators.helpers import call_expression, helper_namespace
from webrl.evaluators.judge import Judge, ask, decide_fuzzy, fuzzy_messages
from webrl.evaluators.result import NOT_A_SITE_PAGE, EvaluationError, Running, as_list
from webrl.evaluators.string_match import exact_match, must_exclude, must_include, required_values

OR = " |OR| "
NAVIGATION_SETTLE_S = 0.0  # the originals: 3 s (time.sleep(3)) after every goto
NETWORK_IDLE_CAP_MS = 2_000


async def navigate(page, url: str) -> None:
    await page.goto(url)
    try:
        await page.wait_for_load_state("load")
        await page.wait_for_load_state("networkidle", timeout=NETWORK_IDLE_CAP_MS)
    except Exception:  # noqa: BLE001, S110 - a page that keeps polling: settle on what loaded
        pass
    if NAVIGATION_SETTLE_S:
        await asyncio.sleep(NAVIGATION_SETTLE_S)


async def select(page, target, mode: str, namespace: dict) -> tuple[str | None, dict[str, Any]]:
    """The selected string (None: VAB's "wrong page" signal) and a note of how it was selected."""
    locator = target.locator
    if not locator.strip():
        return await page.content(), {"selector": "page.content()"}
    if locator.startswith(("document.", "[...document.")):
        # prep_actions: run in order, the first failure ends them silently (one try around the loop)
        try:
            for action in target.prep_actions or []:
                await page.evaluate(f"() => {action}")
        except Exception:  # noqa: BLE001, S110 - the originals ignore every prep_action error
            pass
        try:
            value = await page.evaluate(f"() => {locator}")
            # str() of the Python value, as the originals: JS null/undefined -> None -> "None" (truthy!)
            selected = str(value) or ""
        except Exception:  # noqa: BLE001 - the page is wrong: empty selection (as the originals)
            selected = ""
        return selected, {"selector": "js"}
    if locator.startswith("lambda:") and mode in ("vab", "browsergym"):
        # VAB's lambda locators: lstrip("lambda:") strips a *set of characters*, reproduced as is
        try:
            value = await page.evaluate(locator.lstrip("lambda:"))  # noqa: B005 - the quirk, on purpose
        except Exception:  # noqa: BLE001 - any failure is VAB's None
            value = None
        return (value or None), {"selector": "lambda"}
    if locator.startswith("func:"):
        expression = locator.split("func:", 1)[1].replace("__page__", "page")
        value = await call_expression(expression, namespace, {"page": page})
        return value, {"selector": "func", "expression": expression}
    raise EvaluationError(f"unknown locator {locator!r} for the {mode} HTML evaluator")


async def program_html(
    task, page, *, mode: str, judge: Judge | None, urls: dict[str, str] | None, last_page_judged: bool = True
) -> dict[str, Any]:
    """`last_page_judged` False: the agent's last page is no page of the sites, and a target that reads it ("last",
    or a `func:` of `__last_url__`) scores 0 (evaluators/router.py)."""
    namespace = helper_namespace(urls)
    run = Running()
    for index, target in enumerate(task.eval.program_html):
        url = target.url
        if not last_page_judged and (url == "last" or "__last_url__" in url):
            run.times(0.0, target=index, url=page.url[:500], note=NOT_A_SITE_PAGE)
            break
        if url.startswith("func"):
            url = await call_expression(url.split("func:", 1)[1], namespace, {"__last_url__": page.url})
        if url != "last":
            await navigate(page, url)
        selected, how = await select(page, target, mode, namespace)
        check: dict[str, Any] = {"target": index, "url": url, **how}
        if selected is None:
            if mode in ("vab", "browsergym"):  # "the page is wrong": score 0 and stop
                run.value = 0.0
                run.checks.append({**check, "score": 0.0, "note": "selection is None"})
                break
            raise EvaluationError(f"program_html[{index}]: the selection is None")
        if not isinstance(selected, str):
            selected = str(selected)
        if mode == "webarena":
            selected = html.unescape(selected)  # as the original; not in vab/browsergym
        check["selected"] = selected[:500]
        await _score(run, target.required_contents, selected, check, task, mode, judge)
    return {"type": "program_html", "score": run.outcome(), "checks": run.checks}


async def _score(run: Running, contents, selected: str, check: dict, task, mode: str, judge) -> None:
    # the originals' if/elif precedence: exact_match, must_include, must_exclude, required_values, fuzzy_match
    field = f"eval.program_html[{check['target']}].required_contents"
    clean_mode = "vab" if mode == "vab" else "webarena"  # browsergym: the original cleaning (strip)
    if contents.exact_match is not None:
        run.times(
            exact_match(contents.exact_match, selected, clean_mode),
            **check,
            rule="exact_match",
            reference=contents.exact_match,
        )
    elif contents.must_include is not None:
        for item in as_list(contents.must_include, f"{field}.must_include", mode):
            # webarena/browsergym: substring (tokenize=False); vab: its one-token rule
            hit = any(must_include(alt, selected, clean_mode, tokenize=False) for alt in item.split(OR))
            run.times(float(hit), **check, rule="must_include", reference=item)
    elif contents.must_exclude is not None and mode == "vab":
        for item in contents.must_exclude:
            if OR in item:  # VAB asserts that must_exclude has no alternatives
                raise EvaluationError(f"must_exclude item {item!r} has ' |OR| ' alternatives")
            run.times(must_exclude(item, selected), **check, rule="must_exclude", reference=item)
    elif contents.required_values is not None and mode == "vab":
        run.times(
            required_values(contents.required_values, selected),
            **check,
            rule="required_values",
            reference=contents.required_values,
        )
    elif contents.fuzzy_match is not None and mode in ("vab", "browsergym"):
        reference = ", ".join(contents.fuzzy_match)
        # called even after a 0, as the originals; vab: its own prompt; browsergym: the original WebArena prompt
        score, reply = await ask(
            judge, fuzzy_messages(task.intent, reference, selected, vab=mode == "vab"), decide_fuzzy
        )
        run.times(score, **check, rule="fuzzy_match", reference=reference, reply=reply)
    else:
        raise EvaluationError(
            f"required_contents rule {contents.rule!r} is not supported by the {mode} HTML evaluator", field
        )
