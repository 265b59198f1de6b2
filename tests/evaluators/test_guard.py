"""The guard of the strict mode (webrl train's reward) against dumped answers and URLs, with the thresholds decided
from data: every oracle answer of both embedded splits still scores 1.0, and every dump scores 0 under the strict
mode, where the leaderboard modes keep their scores and mark each such 1.0 `dump_suspect`.

The dumps: the whole text of the page the oracle answered on, and of the start page; one fixed answer made of every
string reference of the train split; "1 2 3 4 5" for the star-count tasks; and one URL whose path and query list
every url_match reference of the test split."""

from __future__ import annotations

import asyncio

import lxml.html
import pytest
from eval_support import make_task

from webrl.env.actions import parse_action
from webrl.evaluators import evaluate
from webrl.evaluators.guard import MAX_EXTRA_WORDS, url_matches
from webrl.evaluators.helpers import PseudoPage
from webrl.tasks.load import substitute
from webrl.tasks.templates import eval_kind

LEADERBOARD = ("webarena", "vab")


def scores(task, answer, page=None, status=None, modes=("strict", *LEADERBOARD), urls=None):
    """Each mode's result of one episode."""

    async def all_modes():
        return {m: await evaluate(task, answer, page, mode=m, status=status, urls=urls) for m in modes}

    return asyncio.run(all_modes())


def oracle_answer(task) -> str:
    return parse_action(task.cheat[-1], "webrl").argument


def must_include_tasks(suite, split):
    return [t for t in suite if t.split == split and eval_kind(t) == "must_include"]


def train_references(suite) -> list[str]:
    """Every distinct string reference of the train split (must_include and exact_match: 331 of them)."""
    found = []
    for task in suite:
        answers = task.eval.reference_answers
        if task.split != "train" or "string_match" not in task.eval.eval_types:
            continue
        for value in (answers.must_include or [], [answers.exact_match] if answers.exact_match else []):
            found += [v for v in value if v not in found]
    return found


def test_every_oracle_answer_of_both_splits_passes_the_guard(suite):
    checked = 0
    for task in suite:
        if eval_kind(task) in ("must_include", "exact_match"):
            results = scores(task, oracle_answer(task))
            assert {m: r.score for m, r in results.items()} == {"strict": 1.0, "webarena": 1.0, "vab": 1.0}, (
                task.task_id,
                oracle_answer(task),
                results["strict"].details,
            )
            assert not any(r.dump_suspect for r in results.values()), task.task_id
            checked += 1
    assert checked == 495  # 396 must_include and 99 exact_match tasks


def dumped(results: dict, leaderboard: dict) -> None:
    """Count the leaderboard's 1.0 scores of one dump; the strict mode gives none, and marks none."""
    assert results["strict"].score == 0.0 and not results["strict"].dump_suspect
    assert any(d["type"] == "guard" for d in results["strict"].details)
    for mode in LEADERBOARD:
        if results[mode].score == 1.0:
            assert results[mode].dump_suspect, (mode, results[mode].details)
            leaderboard[mode] += 1


def test_a_fixed_answer_of_every_train_reference_passes_nothing_strict(suite):
    references = train_references(suite)
    assert len(references) == 331
    answer = ", ".join(references)
    leaderboard = dict.fromkeys(LEADERBOARD, 0)
    for task in must_include_tasks(suite, "test"):
        dumped(scores(task, answer), leaderboard)
    assert leaderboard == {"webarena": 18, "vab": 16}  # of the test split's 58: what WebArena's rules hand out


def test_every_star_count_at_once_passes_nothing_strict(suite):
    stars = [t for t in must_include_tasks(suite, "test") if "How many stars" in t.intent]
    leaderboard = dict.fromkeys(LEADERBOARD, 0)
    for task in stars:
        results = scores(task, "1 2 3 4 5")
        dumped(results, leaderboard)
        [guard] = [d for d in results["strict"].details if d["type"] == "guard"]
        assert "numbers that no reference holds" in guard["problems"][0]
    assert len(stars) == 3 and leaderboard == {"webarena": 3, "vab": 3}


def test_an_answer_may_restate_the_task_but_not_outgrow_its_references():
    task = make_task(
        {"eval_types": ["string_match"], "reference_answers": {"must_include": ["David"]}},
        intent="Who wrote the most recent review of the Scriptora Mesh Desk Organizer?",
    )
    restated = "The most recent review of the Scriptora Mesh Desk Organizer was written by David."
    assert scores(task, restated)["strict"].score == 1.0
    padded = "David " + " ".join(f"w{k}" for k in range(MAX_EXTRA_WORDS))
    assert scores(task, padded)["strict"].score == 1.0
    assert scores(task, padded + " one-more")["strict"].score == 0.0
    numeric = make_task(
        {"eval_types": ["string_match"], "reference_answers": {"must_include": ["40.405", "-79.960"]}},
        intent="Tell me the coordinates of CareWell Pharmacy in DD format.",
    )
    assert scores(numeric, "40.40592, -79.96047")["strict"].score == 1.0  # more decimals of a decimal reference
    assert scores(numeric, "40.405, -79.960 or 40.412, -79.955")["strict"].score == 0.0


@pytest.mark.slow  # the oracle over the test split's 58 must_include tasks (~1 min)
def test_the_page_and_start_page_dumps_pass_nothing_strict(suite, site_servers, run_oracle):
    tasks = must_include_tasks(suite, "test")
    backend = site_servers("shopping", "shopping_admin", "reddit", "gitlab", "map")
    rows = run_oracle(backend, tasks)
    counts = {}
    for task in tasks:
        first, last = rows[task.task_id]["steps"][0]["observation"], rows[task.task_id]["last_observation"]
        for name, page in (("page", last), ("start page", first)):
            for form, text in (("html", page), ("text", lxml.html.fromstring(page).text_content())):
                leaderboard = counts.setdefault(f"{name} {form}", dict.fromkeys(LEADERBOARD, 0))
                dumped(scores(task, text), leaderboard)
    assert counts["page text"] == {"webarena": 51, "vab": 51}, counts  # of 58
    assert counts["start page text"]["webarena"] > 10, counts


URL_RULES = [
    # (reference, last URL, the guard's verdict)
    ("http://127.0.0.1:7770/a/b", "http://127.0.0.1:7770/a/b/", True),  # a trailing '/'
    ("http://127.0.0.1:7770/a/b", "HTTP://LOCALHOST:7770/a//b", True),  # case, loopback name, '//'
    ("http://127.0.0.1:80/a%20b", "http://127.0.0.1/a b", True),  # default port, percent-escapes
    ("http://h:1/s?q=shoe", "http://h:1/s?page=2&q=shoe", True),  # the reference's query among the URL's
    ("http://h:1/a/b", "http://h:1/a/bc", False),  # WebArena's substring rule passes these
    ("http://h:1/a/b", "http://h:1/x/h:1/a/b", False),
    ("http://h:1/s?q=shoe", "http://h:1/s?q=boot&q=shoe", True),  # a value among the URL's values
    ("http://h:1/s?q=shoe", "http://h:1/s", False),
    ("http://h:1/a", "https://h:1/a", False),  # the scheme counts
    ("http://h:1/a", "http://h:2/a", False),
]


@pytest.mark.parametrize(("reference", "url", "verdict"), URL_RULES)
def test_url_rules(reference, url, verdict):
    assert url_matches(reference, url) is verdict


def test_one_url_listing_every_url_reference_passes_nothing_strict(suite):
    """The URL dump: a shop page (a 404) whose path lists every url_match reference of the test split and whose
    query holds all their parameters; each task's own reference page (a 200) passes."""
    urls = {site: f"http://127.0.0.1:{7770 + k}" for k, site in enumerate(("shopping", "shopping_admin", "reddit"))}
    urls |= {"gitlab": "http://127.0.0.1:8023", "map": "http://127.0.0.1:3000"}
    tasks = [substitute(t, urls) for t in suite if t.split == "test" and eval_kind(t) == "url_match"]
    references = [ref for t in tasks for ref in t.eval.reference_url.split(" |OR| ")]
    path = "/".join(ref.split("://", 1)[1].split("?")[0] for ref in references)
    query = "&".join(ref.split("?", 1)[1] for ref in references if "?" in ref)
    dump = PseudoPage(None, f"{urls['shopping']}/{path}?{query}")
    leaderboard = dict.fromkeys(LEADERBOARD, 0)
    for task in tasks:
        dumped(scores(task, "", dump, status=404, urls=urls), leaderboard)
        reference = PseudoPage(None, task.eval.reference_url)
        assert {m: r.score for m, r in scores(task, "", reference, status=200, urls=urls).items()} == {
            "strict": 1.0,
            "webarena": 1.0,
            "vab": 1.0,
        }
    # VAB matches the full URL string, "http://" included: this dump fools WebArena's netloc+path rule only
    assert len(tasks) == 21 and leaderboard == {"webarena": 21, "vab": 0}


def test_vab_judges_a_localhost_page_of_a_site_served_at_127_0_0_1(async_browser, static_site):
    """VAB's URL evaluator reads localhost as 127.0.0.1: such a page is a page of the sites in every mode."""
    static_site.pages["/gold"] = "<p>gold</p>"
    reference = f"{static_site.base}/gold"
    task = make_task({"eval_types": ["url_match"], "reference_url": reference, "url_note": "GOLD in PRED"})

    async def scenario(page):
        await page.goto(reference.replace("127.0.0.1", "localhost"))
        return await evaluate(task, None, page, mode="vab", urls={"shopping": static_site.base})

    assert async_browser.run(scenario).score == 1.0


def test_a_url_dump_played_live_is_marked_and_fails_strict(site_servers, tmp_path):
    """Through webrl eval's runner: the agent goes to a 404 page whose path holds the reference, and stops. The
    environment records the page's status from the browser, so the strict mode fails it and webarena marks it."""
    import json
    from pathlib import Path

    from webrl.policy.factory import make_policy
    from webrl.runs.eval import EvalSettings, run_eval
    from webrl.runs.executor import LocalExecutor
    from webrl.runs.records import read_episodes
    from webrl.tasks.load import load_tasks
    from webrl.tasks.model import Task

    backend = site_servers("shopping", "shopping_admin")
    shop = backend.urls(0)["shopping"]
    smoke = load_tasks(Path(__file__).parents[2] / "sites" / "embedded" / "tasks" / "smoke.json")[1]
    host = shop.split("://", 1)[1]
    dumping = [f"goto [{shop}/x/{host}/bytewise-streaming-webcam.html]", "stop []"]
    dump = Task.model_validate({**smoke.to_config(), "cheat": dumping})
    honest = Task.model_validate(
        {**smoke.to_config(), "task_id": 9, "cheat": [f"goto [{shop}/bytewise-streaming-webcam.html]", "stop []"]}
    )
    got = {}
    for mode in ("webarena", "strict"):
        settings = EvalSettings(
            tasks="dump", out=tmp_path / mode, mode=mode, action_space="webarena", screenshots=False
        )
        summary = asyncio.run(run_eval(settings, [dump, honest], LocalExecutor(backend, make_policy("oracle"))))
        got[mode] = {r.task_id: r for r in read_episodes(tmp_path / mode)}, summary
    records, summary = got["webarena"]
    assert records[1].score == 1.0 and records[9].score == 1.0 and summary.dump_suspect == 1
    assert "answered HTTP 404" in " ".join(records[1].dump_suspect) and not records[9].dump_suspect
    assert "dump_suspect: 1 of the successes" in (tmp_path / "webarena" / "report.html").read_text()
    records, summary = got["strict"]
    assert records[1].score == 0.0 and records[9].score == 1.0 and summary.dump_suspect == 0
    [guard] = [d for d in records[1].eval.details if d["type"] == "guard"]
    assert any("answered HTTP 404" in p for p in guard["problems"]), json.dumps(guard)


def test_only_a_check_of_the_agents_own_page_needs_it_to_have_answered_2xx():
    from webrl.evaluators.guard import reads_last_page

    def html(*urls):
        targets = [{"url": u, "locator": "document.title", "required_contents": {"exact_match": "x"}} for u in urls]
        return make_task({"eval_types": ["program_html"], "program_html": targets})

    assert reads_last_page(html("last")) and reads_last_page(html("func:reddit_get_post_url('__last_url__')"))
    assert not reads_last_page(html("http://h/f/x", "last"))  # "last" is then the page the evaluator opened
    assert reads_last_page(make_task({"eval_types": ["url_match"], "reference_url": "http://h/a"}))
