"""The verified mode: WebArena-Verified's task sets read from the installed package, and its own evaluator judging
what webrl records (the structured answer, the HAR trace) on the embedded shop. The package decides every score;
the tests only write small tasks in its format and check that webrl plumbs them through."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("webarena_verified", reason="pip install --no-deps webarena-verified==1.2.3 (scripts/install.sh)")

from webrl.errors import UsageError  # noqa: E402
from webrl.families.verified import evaluator as verified  # noqa: E402
from webrl.families.verified.tasks import verified_dataset  # noqa: E402
from webrl.policy.factory import make_policy  # noqa: E402
from webrl.policy.prompt import webrl_prompt  # noqa: E402
from webrl.runs.eval import EvalSettings, run_eval  # noqa: E402
from webrl.runs.executor import LocalExecutor  # noqa: E402
from webrl.runs.records import read_episodes  # noqa: E402
from webrl.runs.rescore import rescore  # noqa: E402
from webrl.runs.summary import read_summary  # noqa: E402
from webrl.sites.task_sets import resolve_task_set  # noqa: E402
from webrl.tasks.family import family_of  # noqa: E402
from webrl.tasks.load import load_tasks  # noqa: E402


def answer(task_type: str, data=None, status: str = "SUCCESS") -> str:
    body = json.dumps({"task_type": task_type, "status": status, "retrieved_data": data, "error_details": None})
    return f"exit(message='{body}')"


PRICE = {
    "evaluator": "AgentResponseEvaluator",
    "results_schema": {"type": "array", "items": {"type": "number"}},
    "expected": {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": [30.95]},
}
OPENED = [
    {
        "evaluator": "AgentResponseEvaluator",
        "results_schema": {"type": "null"},
        "expected": {"task_type": "navigate", "status": "SUCCESS", "retrieved_data": None},
    },
    {"evaluator": "NetworkEventEvaluator", "expected": {"url": "__SHOPPING__/bytewise-streaming-webcam.html"}},
]
SADDLE = "__SHOPPING__/spokewise-gel-bike-saddle.html"
SEARCH = [
    'do(action="Search", argument="webcam", element="{placeholder=Search entire store here...}")',
    'do(action="Scroll Down")',
    'do(action="Click", element="{Bytewise Streaming Webcam}")',
]
# task id -> (start URL, eval blocks, scripted solution)
TASKS = {
    0: (SADDLE, [PRICE], [answer("RETRIEVE", [30.95])]),  # the right answer
    1: (SADDLE, [PRICE], [answer("RETRIEVE", [31.95])]),  # a wrong one
    2: ("__SHOPPING__", OPENED, [*SEARCH, answer("NAVIGATE")]),  # the trace has the page's request
    3: ("__SHOPPING__", OPENED, [answer("NAVIGATE")]),  # it does not
    4: (SADDLE, [PRICE], ['exit(message="$30.95")']),  # an answer that does not parse
    5: ("__SHOPPING__ |AND| __WIKIPEDIA__", OPENED, [answer("NAVIGATE")]),  # a second tab on a site nobody runs
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """The package's 812 tasks (its evaluator reads only whole datasets, and no field it does not know: the
    scripted solutions are added to webrl's tasks) with tasks 0-4 replaced by ours."""
    tasks = json.loads(verified_dataset().read_text())
    for i, task in enumerate(tasks):
        if task["task_id"] in TASKS:
            start, blocks, _ = TASKS[task["task_id"]]
            intent = "What is the price of the Spokewise Gel Bike Saddle?" if blocks == [PRICE] else "Open the webcam"
            tasks[i] = {
                **{k: task[k] for k in ("task_id", "intent_template_id", "intent_template", "instantiation_dict")},
                "sites": ["shopping"],
                "start_urls": start.split(" |AND| "),
                "intent": intent,
                "eval": blocks,
                "revision": 1,
            }
    path = tmp_path_factory.mktemp("verified") / "dataset.json"
    path.write_text(json.dumps(tasks))
    return path


@pytest.fixture(scope="module")
def played(site_servers, dataset, tmp_path_factory):
    """The oracle's run of tasks 0-4 in the verified mode on the embedded shop."""
    store = site_servers("shopping", "shopping_admin")
    store.reset()
    tasks = [t.model_copy(update={"cheat": TASKS[t.task_id][2]}) for t in load_tasks(dataset) if t.task_id in TASKS]
    out = tmp_path_factory.mktemp("run")
    settings = EvalSettings(
        tasks=str(dataset), policy="oracle", out=out, mode="verified", verified_dataset=dataset, screenshots=False
    )
    summary = asyncio.run(run_eval(settings, tasks, LocalExecutor(store, make_policy("oracle"))))
    return out, summary, {r.task_id: r for r in read_episodes(out)}, store


def test_the_prompt_asks_for_the_structured_answer_only_in_the_verified_mode(dataset):
    [task] = [t for t in load_tasks(dataset) if t.task_id == 0]
    assert family_of(task).shown_intent(task, "verified") == task.intent + verified.VERIFIED_RESPONSE
    assert family_of(task).shown_intent(task, "vab") == task.intent
    plain = webrl_prompt("Open my todos page", [], "<html/>")
    assert verified.VERIFIED_RESPONSE not in plain and plain.startswith("Task Instruction: Open my todos page\n\nRound")
    assert verified.parse_answer(answer("RETRIEVE", [1, 2]).removeprefix("exit(message='")[:-2])["retrieved_data"]
    for bad, why in [
        ("", "empty"),
        ("$30.95", "no JSON object"),
        ('{"task_type": "RETRIEVE"', "no JSON object"),
        ('{"task_type": "FETCH", "status": "SUCCESS"}', "task_type"),
        ('{"task_type": "RETRIEVE", "status": "SUCCESS", "answer": 1}', "unknown key 'answer'"),
    ]:
        with pytest.raises(verified.AnswerUnparsed, match=why):
            verified.parse_answer(bad)


def test_the_package_scores_what_webrl_recorded(played):
    out, summary, records, _ = played
    scores = {task_id: record.score for task_id, record in records.items()}
    assert scores == {0: 1.0, 1: 0.0, 2: 1.0, 3: 0.0, 4: 0.0, 5: 0.0}, {i: r.eval.details for i, r in records.items()}
    assert records[5].reset["skipped_tabs"] == ["__WIKIPEDIA__"] and records[0].reset["skipped_tabs"] == []
    for record in records.values():
        har = json.loads((out / record.network_trace).read_text())
        assert har["log"]["entries"] and record.eval.mode == "verified"
        judged = next(d for d in record.eval.details if d["type"] == "verified")
        assert [e["evaluator"] for e in judged["evaluators"]][0] == "AgentResponseEvaluator"
    opened = json.loads((out / records[2].network_trace).read_text())["log"]["entries"]
    page = [e for e in opened if e["request"]["url"].endswith("/bytewise-streaming-webcam.html")]
    assert page and {"name": "sec-fetch-dest", "value": "document"} in page[-1]["request"]["headers"]
    assert next(d for d in records[4].eval.details if d["type"] == "verified_answer")["parsed"] is False
    facts = summary.section("verified")
    assert facts["answers_unparsed"] == 1 and facts["network_trace_bytes"]["episodes"] == 6
    assert summary.settings.record_network is None and summary.success_rate["Average"].mean == 33.3
    lines = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert not any("verified" in line for line in lines)  # a record keeps none of its task's eval blocks
    report = (out / "report.html").read_text()
    assert "answers not the structured response: 1" in report and 'href="network/2-0.har"' in report


def test_rescoring_gives_the_live_scores(played, tmp_path):
    out, summary, records, _ = played
    again = rescore(out, tmp_path / "again")  # no sites: the records say which URLs they were read against
    assert {r.task_id: r.score for r in read_episodes(tmp_path / "again")} == {i: r.score for i, r in records.items()}
    assert again.success_rate == summary.success_rate and again.rescored_from == str(out)
    assert again.section("verified")["network_trace_bytes"] == summary.section("verified")["network_trace_bytes"]


def test_bad_input_is_a_reason_per_episode(played, dataset):
    out, _, records, store = played
    urls = store.urls(0)
    missing = verified.score(0, answer("RETRIEVE", [30.95]), out / "network" / "none.har", dataset=dataset, urls=urls)
    assert missing.status == "error" and "no network trace at" in missing.details[-1]["error"]
    trace = out / records[0].network_trace
    unknown = verified.score(99999, "", trace, dataset=dataset, urls=urls)
    assert unknown.status == "error" and "Task with id 99999 not found" in unknown.details[-1]["error"]
    with pytest.raises(UsageError, match="refuses this dataset"):
        verified.verified_scorer(Path(trace), urls)  # not a dataset at all: one line, naming the file


def test_the_cli_rescores_a_run_offline(played, cli_env, tmp_path):
    from cli_support import webrl

    out, summary, _, _ = played
    result = webrl(cli_env, "eval", "--rescore", str(out), "--mode", "verified", "--out", str(tmp_path / "again"))
    assert result.returncode == 0, result.stderr
    assert read_summary(tmp_path / "again").success_rate == summary.success_rate
    assert "1 answers were not the structured response" in result.stdout
    refused = webrl(cli_env, "eval", "--rescore", str(out), "--mode", "vab")
    assert refused.returncode == 2 and "not yet: only --mode verified" in refused.stderr


def test_the_tasks_start_urls_and_accounts_resolve_on_the_real_images(tmp_path):
    """`--backend docker --images webarena` runs WebArena-Verified's images: every start tab of the 812 tasks is on
    one of its sites (the map named, as `up` needs it), but a second tab on Wikipedia, which no backend runs and the
    environment leaves out; every site a task signs in to has WebArena's account; and the package's evaluator takes
    the sites' URLs as its environments."""
    from webrl.config import load_config
    from webrl.sites.base import ACCOUNTS
    from webrl.sites.docker.backend import DockerBackend
    from webrl.tasks.load import PLACEHOLDER, substitute

    sites = ["shopping", "shopping_admin", "reddit", "gitlab", "map"]
    config = load_config(flags={"state_dir": tmp_path, "sites.sites": sites}, environ={})
    plan = DockerBackend(config, "webarena").plan()
    urls = {site: plan.site_url(site, 0) for site in plan.sites}
    left = set()
    for task in resolve_task_set("webarena-verified", tmp_path):
        tabs = substitute(task, urls).start_urls
        assert not PLACEHOLDER.match(tabs[0]), task.task_id
        left |= {tab for tab in tabs[1:] if PLACEHOLDER.match(tab)}
        if task.storage_state:
            assert {s for s in task.sites if s not in ("map", "wikipedia")} <= set(ACCOUNTS), task.task_id
    assert left == {"__WIKIPEDIA__"}
    verified.verified_scorer(None, urls)  # its config validates the URLs


def test_without_its_trace_an_episode_is_an_evaluation_error(played, dataset, tmp_path):
    _, _, _, store = played
    [task] = [t.model_copy(update={"cheat": TASKS[0][2]}) for t in load_tasks(dataset) if t.task_id == 0]
    settings = EvalSettings(
        tasks="t", policy="oracle", out=tmp_path, mode="verified", verified_dataset=dataset, record_network=False
    )
    summary = asyncio.run(run_eval(settings, [task], LocalExecutor(store, make_policy("oracle"))))
    [record] = read_episodes(tmp_path)
    assert record.status == "error" and record.network_trace is None and not (tmp_path / "network").exists()
    assert "the episode has no network trace" in summary.evaluator_errors[0].error
    assert summary.evaluator_errors[0].counts_as == "failure" and summary.success_rate["Average"].mean == 0
    assert not EvalSettings(tasks="t", out=tmp_path).records_network  # the other modes record none by default


def test_a_verified_task_in_another_mode_is_an_evaluation_error(dataset):
    from webrl.evaluators import evaluate

    [task] = [t for t in load_tasks(dataset) if t.task_id == 0]
    result = asyncio.run(evaluate(task, "30.95", None, mode="vab"))
    assert result.status == "error" and result.details[-1]["field"] == "eval.eval_types"
    assert "scored by --mode verified only" in result.details[-1]["error"]


def copied(out: Path, tmp_path: Path) -> Path:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(out, run)
    return run


def rewrite_record(run: Path, task_id: int, **changes) -> None:
    lines = (run / "episodes.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    rows = [{**row, **changes} if row["task_id"] == task_id else row for row in rows]
    (run / "episodes.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_rescoring_refuses_a_trace_or_answer_that_changed_since_the_episode(played, tmp_path):
    """One request added to a failed episode's HAR (the page it never opened), one answer edited: each is scored
    as an error that says so, never as the success the edit was made for."""
    out, _, records, _ = played
    run = copied(out, tmp_path)
    opened = json.loads((out / records[2].network_trace).read_text())["log"]["entries"]
    page = [e for e in opened if e["request"]["url"].endswith("/bytewise-streaming-webcam.html")][-1]
    har = json.loads((run / records[3].network_trace).read_text())
    har["log"]["entries"].append(page)
    (run / records[3].network_trace).write_text(json.dumps(har))
    rewrite_record(run, 1, answer=answer("RETRIEVE", [30.95]).removeprefix("exit(message='")[:-2])
    again = rescore(run, tmp_path / "again")
    rescored = {r.task_id: r for r in read_episodes(tmp_path / "again")}
    assert rescored[3].status == "error" and rescored[1].status == "error", {i: r.score for i, r in rescored.items()}
    errors = {e.task_id: e.error for e in again.evaluator_errors}
    assert "network trace" in errors[3] and "digest" in errors[3] and "answer" in errors[1]
    assert rescored[0].score == 1.0 and rescored[2].score == 1.0  # the untouched ones as they were
    assert (tmp_path / "again" / rescored[0].network_trace).is_file()  # the rescore's folder has what it scored


def test_a_record_path_outside_the_run_folder_is_refused(played, tmp_path, cli_env):
    from cli_support import webrl

    out, _, records, _ = played
    run = copied(out, tmp_path)
    (tmp_path / "outside.har").write_bytes((out / records[0].network_trace).read_bytes())
    rewrite_record(run, 0, network_trace="../outside.har")
    with pytest.raises(UsageError, match=r"episodes.jsonl:\d+: task 0: field 'network_trace': .*outside the run"):
        rescore(run, tmp_path / "again")
    result = webrl(cli_env, "eval", "--rescore", str(run), "--mode", "verified", "--out", str(tmp_path / "cli"))
    assert result.returncode == 2 and "outside the run folder" in result.stderr and result.stderr.count("\n") == 1
    # a link out of the folder in its place is refused the same way
    run = copied(out, tmp_path / "linked")
    (run / records[0].network_trace).unlink()
    (run / records[0].network_trace).symlink_to(tmp_path / "outside.har")
    with pytest.raises(UsageError, match="outside the run folder"):
        rescore(run, tmp_path / "again-linked")
