"""url_match: the rules of WebArena's URLEvaluator (webarena, browsergym) and VAB-WebArena-Lite's URLExactEvaluator
(vab) as a table, then against real pages in Chromium (page.url after real navigation; list order against
program_html)."""

from __future__ import annotations

import pytest
from eval_support import make_task, run

from webrl.evaluators import evaluate
from webrl.evaluators.url_match import vab_url_score, webarena_url_score

H = "http://h:7770"

TABLE = [
    # (reference_url, predicted url, webarena, vab EXACT, vab GOLD in PRED)
    (f"{H}/a/b", f"{H}/a/b/", 1, 1, 1),  # trailing '/' stripped on both sides
    (f"{H}/a/b/", f"{H}/a/b", 1, 1, 1),
    (f"{H}/a/b", f"{H}/a/bc", 1, 0, 1),  # base is a substring test (webarena PR #77)
    (f"{H}/a/b", f"{H}/x/a/b", 0, 0, 0),  # ...of netloc + path, so a prefix path differs
    (f"{H}/a/b", "https://h:7770/a/b", 1, 0, 0),  # scheme dropped by webarena only
    (f"{H}/a/b", f"{H}/a/b#top", 1, 0, 1),  # fragment dropped by webarena
    (f"{H}/s?q=shoe&page=2", f"{H}/s?page=2&q=shoe&x=1", 1, 0, 0),  # query as sets; extra keys ignored
    (f"{H}/s?q=shoe", f"{H}/s?q=boot", 0, 0, 0),
    (f"{H}/s?q=shoe", f"{H}/s", 0, 0, 0),
    (f"{H}/s?q=a&q=b", f"{H}/s?q=b", 1, 0, 0),  # one of the key's values suffices
    # |OR|: bases are alternatives, but the queries of ALL alternatives are merged and all keys required
    (f"{H}/a?x=1 |OR| {H}/b?y=2", f"{H}/a?x=1", 0, 1, 1),
    (f"{H}/a?x=1 |OR| {H}/b?y=2", f"{H}/a?x=1&y=2", 1, 0, 1),
    (f"{H}/f/ml |OR| {H}/f/tech", f"{H}/f/tech/123", 1, 0, 1),
    (f"{H}/f/ml |OR| {H}/f/tech", f"{H}/f/tech", 1, 1, 1),
    # vab maps localhost to 127.0.0.1; webarena compares the netloc as it is
    ("http://localhost:7770/x", "http://127.0.0.1:7770/x", 0, 1, 1),
    # vab strips ONE trailing '/', webarena all of them
    (f"{H}/a", f"{H}/a//", 1, 0, 1),
    # an empty reference: webarena passes anything, vab EXACT nothing
    ("", f"{H}/anything", 1, 0, 1),
]


@pytest.mark.parametrize(("reference", "pred", "webarena", "exact", "gold"), TABLE)
def test_url_rules(reference, pred, webarena, exact, gold):
    assert webarena_url_score(pred, reference) == webarena
    assert vab_url_score(pred, reference, "EXACT") == exact
    assert vab_url_score(pred, reference, "GOLD in PRED") == gold


def url_task(reference: str, note: str | None = "GOLD in PRED", types=("url_match",), program=()):
    spec = {
        "eval_types": list(types),
        "reference_answers": None,
        "reference_url": reference,
        "program_html": list(program),
    }
    if note is not None:
        spec["url_note"] = note
    return make_task(spec)


class FakePage:
    def __init__(self, url):
        self.url = url


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        # url_note absent: GOLD in PRED for webarena/browsergym, EXACT for vab (Lite task 45)
        (None, {"webarena": 1.0, "browsergym": 1.0, "vab": 0.0}),
        ("GOLD in PRED", {"webarena": 1.0, "browsergym": 1.0, "vab": 1.0}),
        # any other note: the original raises; vab knows EXACT
        ("EXACT", {"webarena": "error", "browsergym": "error", "vab": 0.0}),
    ],
)
def test_url_note_per_mode(note, expected):
    task = url_task(f"{H}/issues/719", note)
    for mode, want in expected.items():
        result = run(evaluate(task, None, FakePage(f"{H}/issues/719?tab=notes"), mode=mode))
        if want == "error":
            assert result.status == "error" and "url_note" in result.details[-1]["error"]
        else:
            assert result.score == want, mode


def test_lite_task_45_modes(lite_tasks):
    task = next(t for t in lite_tasks if t.task_id == 45)
    urls = {"gitlab": H}
    page = FakePage(f"{H}/a11yproject/a11yproject.com/-/issues/719/")
    scores = {m: run(evaluate(task, "yes", page, mode=m, urls=urls)).score for m in ("webarena", "vab", "browsergym")}
    assert scores == {"webarena": 1.0, "vab": 1.0, "browsergym": 1.0}  # EXACT after stripping one '/'
    page = FakePage(f"{H}/a11yproject/a11yproject.com/-/issues/719#note_3")
    scores = {m: run(evaluate(task, "yes", page, mode=m, urls=urls)).score for m in ("webarena", "vab", "browsergym")}
    assert scores == {"webarena": 1.0, "vab": 0.0, "browsergym": 1.0}


def test_real_pages_and_order_against_program_html(async_browser, static_site):
    base = static_site.base
    static_site.pages["/f/machinelearning/12/a-post"] = "<title>post</title><p>hello</p>"
    static_site.pages["/other"] = "<p>elsewhere</p>"
    check_other = {"url": f"{base}/other", "locator": "", "required_contents": {"must_include": ["elsewhere"]}}

    async def scenario(page):
        await page.goto(f"{base}/f/machinelearning/12/a-post/?sort=new&page=1")
        out = {}
        for mode in ("webarena", "vab"):
            task = url_task(f"{base}/f/machinelearning/12/a-post?sort=new")
            out[mode] = (await evaluate(task, None, page, mode=mode)).score
        # url_match first: it sees the agent's URL; program_html then navigates away
        first = url_task(f"{base}/f/machinelearning", types=("url_match", "program_html"), program=[check_other])
        out["url_first"] = (await evaluate(first, None, page)).score
        assert page.url == f"{base}/other"
        # program_html first: url_match sees the page program_html navigated to
        await page.goto(f"{base}/f/machinelearning/12/a-post")
        second = url_task(f"{base}/f/machinelearning", types=("program_html", "url_match"), program=[check_other])
        out["url_second"] = (await evaluate(second, None, page)).score
        return out

    out = async_browser.run(scenario)
    # Chromium reports the URL with the trailing slash before '?': webarena parses, vab compares strings
    assert out == {"webarena": 1.0, "vab": 0.0, "url_first": 1.0, "url_second": 0.0}
