"""webrl's browsergym mode side by side with BrowserGym's own WebArena-Lite evaluation: the
evaluators of ``browsergym-webarenalite`` and the task's ``validate`` of ``browsergym-webarena`` (the open-tab
safeguard, the answer taken from the chat, AssertionError scored 0), run on the same local pages, answers and
judge replies as ``evaluate(..., mode="browsergym")``. Both judges talk to the same local stand-in for the OpenAI
API. ``DIFFERENCES`` lists every case where the two disagree on purpose (docs/fidelity.md).

BrowserGym's code needs packages the project does not install (browsergym-core, browsergym-webarena, libwebarena's
openai, beartype, gymnasium, aiolimiter, text-generation, tiktoken, aiohttp...; browsergym-core also pins
playwright==1.44 and lxml<6): without them the test is skipped, saying so. To run it, install them beside the
project into a separate folder, e.g. ``pip install --target /tmp/bg --no-deps browsergym-core==0.14.3
browsergym-webarena==0.14.3 beartype gymnasium cloudpickle farama-notifications aiolimiter openai
text-generation tiktoken aiohttp multidict attrs yarl propcache aiohappyeyeballs aiosignal frozenlist sniffio jiter
distro`` and run pytest with ``PYTHONPATH=/tmp/bg``. NLTK's Punkt data, which BrowserGym's tokenizer loads from disk, is
written here from the model webrl.evaluators.tokenize uses (no download)."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest
from eval_support import make_task

from webrl.evaluators import OpenAIJudge, evaluate

SITE_VARIABLES = ("REDDIT", "SHOPPING", "SHOPPING_ADMIN", "GITLAB", "WIKIPEDIA", "MAP", "HOMEPAGE")


@pytest.fixture(scope="module")
def browsergym(tmp_path_factory):
    """BrowserGym's evaluator router, its task's validate, and libwebarena's OpenAI module; a skip without them."""
    import nltk

    from webrl.evaluators.tokenize import _tokenizers

    data = tmp_path_factory.mktemp("nltk_data")
    nltk.data.path.insert(0, str(data))
    (data / "tokenizers" / "punkt_tab").mkdir(parents=True)
    from nltk.tokenize.punkt import save_punkt_params

    save_punkt_params(_tokenizers()[0]._params, dir=str(data / "tokenizers" / "punkt_tab" / "english"))
    saved = {name: os.environ.get(name) for name in SITE_VARIABLES}
    os.environ.update({name: saved[name] or f"http://{name.lower()}.test" for name in SITE_VARIABLES})
    try:  # libwebarena asserts these are set when it is imported; the cases here use none of them
        from browsergym.webarena.task import GenericWebArenaTask
        from browsergym.webarenalite.evaluators import evaluator_router
        from openai.resources.chat import completions  # noqa: F401 - what its judge imports only when it calls
        from webarena.llms.providers import openai_utils
    except ImportError as err:
        pytest.skip(f"BrowserGym's WebArena evaluation code does not import ({err}); see this file's docstring")
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name)
    yield SimpleNamespace(router=evaluator_router, validate=GenericWebArenaTask.validate, openai=openai_utils)
    nltk.data.path.remove(str(data))


@pytest.fixture(scope="module")
def sync_browser():
    """BrowserGym's evaluators drive a *sync* Playwright page (webrl's an async one, on its own thread)."""
    from playwright.sync_api import sync_playwright

    from webrl.browser import launch_chromium

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


FORM = """<html><head><title>Edit post</title></head><body><h1>Tom &amp; Jerry</h1>
<input name="title" value="  Hello World  "><input name="count" value="12"></body></html>"""
T = "document.querySelector(\"[name='title']\").value"


def html(*contents, locator=T) -> dict:
    return {
        "eval_types": ["program_html"],
        "reference_answers": None,
        "reference_url": "",
        "program_html": [{"url": "last", "locator": locator, "required_contents": c} for c in contents],
    }


def strings(answers, **more) -> dict:
    return {
        "eval_types": ["string_match"],
        "reference_answers": answers,
        "reference_url": "",
        "program_html": [],
        "string_note": "the store has no such product",
        **more,
    }


def url(reference, **more) -> dict:
    return {
        "eval_types": ["url_match"],
        "reference_answers": None,
        "reference_url": reference,
        "program_html": [],
        **more,
    }


# name -> (eval block ("SITE" is the local site's URL), answer (None: no chat message), the page's path,
#          a second tab's URL or None, the judge's replies in order)
CASES = {
    "exact_match strips and unquotes": (strings({"exact_match": "Yes"}), "  'YES' ", "/form", None, []),
    "no answer is 'whatever'": (strings({"exact_match": "whatever"}), None, "/form", None, []),
    "one-char must_include tokenised": (strings({"must_include": ["0"]}), "$0.00", "/form", None, []),
    "|OR| is literal in string_match": (strings({"must_include": ["65 |OR| 3"]}), "3", "/form", None, []),
    "bare-string must_include": (strings({"must_include": "yjlou"}), "yjlou", "/form", None, []),
    "fuzzy: a call per reference, after a 0": (
        strings({"must_include": ["zzz"], "fuzzy_match": ["a", "b"]}),
        "a",
        "/form",
        None,
        ["correct", "correct"],
    ),
    "fuzzy: an unparsable reply": (strings({"fuzzy_match": ["a", "b"]}), "a", "/form", None, ["maybe", "correct"]),
    "N/A: the unachievable judge": (strings({"fuzzy_match": "N/A"}), "out of stock", "/form", None, ["same"]),
    "N/A without string_note": (
        {k: v for k, v in strings({"fuzzy_match": "N/A"}).items() if k != "string_note"},
        "out of stock",
        "/form",
        None,
        ["same"],
    ),
    "url: GOLD in PRED, query subset": (url("SITE/form?a=1", url_note="GOLD in PRED"), "", "/form?a=1&b=2", None, []),
    "url: EXACT note": (url("SITE/form", url_note="EXACT"), "", "/form", None, []),
    "url: null note": (url("SITE/form", url_note=None), "", "/form", None, []),
    "html: exact_match strips": (html({"exact_match": "hello world"}), "", "/form", None, []),
    "html: no html.unescape": (html({"must_include": ["tom & jerry"]}, locator=""), "", "/form", None, []),
    "html: lambda locator is None": (
        html({"exact_match": "x"}, locator="lambda:document.title"),
        "",
        "/form",
        None,
        [],
    ),
    "html: fuzzy, joined": (html({"fuzzy_match": ["hello", "world"]}), "", "/form", None, ["correct"]),
    "html: required_values": (html({"required_values": ["> 10"]}), "", "/form", None, []),
    "html: empty required_contents": (html({}), "", "/form", None, []),
    "unknown eval type": (
        strings({"exact_match": "x"}) | {"eval_types": ["string_match", "image_match"]},
        "x",
        "/form",
        None,
        [],
    ),
    "empty eval_types": (strings({"exact_match": "x"}) | {"eval_types": []}, "x", "/form", None, []),
    "a data: tab": (strings({"exact_match": "x"}), "x", "/form", "data:text/html,<p>x</p>", []),
    "a tab on another host": (strings({"exact_match": "x"}), "x", "/form", "OTHER/form", []),
}
# Where webrl's browsergym mode differs from BrowserGym on purpose: name -> (BrowserGym's, webrl's) (outcome,
# judge calls); an outcome is a score or "error" (BrowserGym raises out of validate; webrl records an error)
DIFFERENCES = {
    # BrowserGym catches the failed assert and scores 0; webrl keeps its normalisation (a one-item list)
    "bare-string must_include": [(0.0, 0), (1.0, 0)],
    # BrowserGym's KeyError crashes the episode; webrl asks the judge with an empty reason
    "N/A without string_note": [("error", 0), (1.0, 1)],
}


def run_browsergym(bg, tmp_path, browser, block, answer, path, tab, base) -> float | str:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"task_id": 1, "intent": "What is it?", "sites": ["shopping"], "eval": block}))
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.goto(base + path)
        if tab:
            context.new_page().goto(tab)
        stand_in = SimpleNamespace(
            webarena_instance=SimpleNamespace(urls={"shopping": base}, home_url="http://homepage.test"),
            evaluator=bg.router(str(config)),
            config_file=str(config),
        )
        chat = [{"role": "assistant", "message": answer}] if answer is not None else []
        score, done, _, _ = bg.validate(stand_in, page, chat)
        return float(score)
    except Exception:  # noqa: BLE001 - BrowserGym raising out of the episode
        return "error"
    finally:
        context.close()


def run_webrl(async_browser, block, answer, path, tab, base, judge) -> float | str:
    async def scenario(page):
        await page.goto(base + path)
        if tab:
            await (await page.context.new_page()).goto(tab)
        result = await evaluate(make_task(block), answer, page, mode="browsergym", judge=judge, urls={"shopping": base})
        return "error" if result.status == "error" else result.score

    return async_browser.run(scenario)


@pytest.mark.slow  # two browsers over 22 cases (~15 s)
def test_browsergym_mode_against_browsergym(
    browsergym, sync_browser, async_browser, static_site, chat_server, monkeypatch, tmp_path
):
    static_site.pages["/form"] = FORM
    base = static_site.base
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{chat_server.base}/v1")
    monkeypatch.setattr(browsergym.openai, "_client", None)  # libwebarena keeps one client: this server's
    judge = OpenAIJudge(f"{chat_server.base}/v1", "gpt-4-1106-preview")
    outcomes = {}
    for name, (block, answer, path, tab, replies) in CASES.items():
        block = json.loads(json.dumps(block).replace("SITE", base))
        tab = tab and tab.replace("OTHER", base.replace("127.0.0.1", "localhost"))
        sides = []
        for side in ("browsergym", "webrl"):
            queue = list(replies)
            chat_server.answer = lambda body, queue=queue: (200, queue.pop(0) if queue else "correct")
            chat_server.requests.clear()
            if side == "browsergym":
                outcome = run_browsergym(browsergym, tmp_path, sync_browser, block, answer, path, tab, base)
            else:
                outcome = run_webrl(async_browser, block, answer, path, tab, base, judge)
            sides.append((outcome, len(chat_server.requests)))
        outcomes[name] = sides
    for name, (theirs, ours) in outcomes.items():
        assert [theirs, ours] == DIFFERENCES.get(name, [theirs, theirs]), name
    # the table is not vacuous: it has passes, failures, errors and judge calls on both sides
    assert {o for (o, _), _ in outcomes.values()} >= {0.0, 1.0, "error"}
    assert sum(calls for (_, calls), _ in outcomes.values()) == 5
