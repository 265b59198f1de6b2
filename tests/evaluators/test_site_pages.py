"""Only real pages are judged: a page the agent wrote (data:, a blob: made by the site's own script, javascript:'s
result) that holds the reference URL or the required contents scores 0 in every mode, with the reason; the same
checks on the site's real page score 1 (so the refusal is what decides)."""

from __future__ import annotations

import pytest
from eval_support import make_task

from webrl.evaluators.result import MODES, NOT_A_SITE_PAGE
from webrl.evaluators.router import evaluate


def url_task(reference: str):
    return make_task({"eval_types": ["url_match"], "reference_url": reference, "url_note": "GOLD in PRED"})


def last_page_task(required: str, url: str = "last"):
    return make_task(
        {
            "eval_types": ["program_html"],
            "program_html": [
                {"url": url, "locator": "document.body.innerText", "required_contents": {"must_include": [required]}}
            ],
        }
    )


BLOB_JS = """(gold) => { location.href = URL.createObjectURL(new Blob([`<p>${gold}</p>`], {type: "text/html"})); }"""


@pytest.mark.parametrize("mode", MODES)
def test_pages_the_agent_wrote_satisfy_no_evaluator(async_browser, static_site, mode):
    base = static_site.base
    static_site.pages["/gold"] = "<p>the gold order #000178</p>"
    urls = {"shopping": base}
    reference = f"{base}/gold"

    async def scenario(page):
        scores = {}
        await page.goto(reference)  # the real page: judged
        scores["real url"] = await evaluate(url_task(reference), None, page, mode=mode, urls=urls)
        scores["real contents"] = await evaluate(last_page_task("#000178"), None, page, mode=mode, urls=urls)
        await page.goto(f"data:text/html,<p>{reference} the gold order %23000178</p>")  # the data-URL reward hack
        scores["data url"] = await evaluate(url_task(reference), None, page, mode=mode, urls=urls)
        scores["data contents"] = await evaluate(last_page_task("#000178"), None, page, mode=mode, urls=urls)
        await page.goto(reference)
        async with page.expect_navigation():
            await page.evaluate(BLOB_JS, "the gold order #000178")  # same-origin script makes the page it ends on
        scores["blob contents"] = await evaluate(last_page_task("#000178"), None, page, mode=mode, urls=urls)
        scores["blob via __last_url__"] = await evaluate(
            last_page_task("#000178", "func:'__last_url__'"), None, page, mode=mode, urls=urls
        )
        return scores

    results = async_browser.run(scenario)
    assert {k: r.score for k, r in results.items()} == {
        "real url": 1.0,
        "real contents": 1.0,
        "data url": 0.0,
        "data contents": 0.0,
        "blob contents": 0.0,
        "blob via __last_url__": 0.0,
    }
    for name in ("data url", "data contents", "blob contents"):
        assert any(NOT_A_SITE_PAGE in str(d) for d in results[name].details), (name, results[name].details)


def test_another_origin_is_not_a_site_page(async_browser, static_site):
    """A page of a server that is none of the sites (another port, say) is not judged either."""
    static_site.pages["/gold"] = "<p>gold</p>"

    async def scenario(page):
        await page.goto(f"{static_site.base}/gold")
        return await evaluate(url_task(f"{static_site.base}/gold"), None, page, urls={"shopping": "http://127.0.0.1:9"})

    assert async_browser.run(scenario).score == 0.0
