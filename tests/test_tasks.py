"""Task configurations: both real task files load (every evaluator config accepted), the data quirks give
warnings, bad files give a UsageError naming file / task / field, placeholders are substituted, folders and named
sets load from the PyPI distributions that ship them (the GitHub fallback is replaced by a stub: no network in
tests)."""

from __future__ import annotations

import importlib.metadata
import json
import re
import urllib.error
from collections import Counter
from pathlib import Path

import pytest

from webrl.errors import UsageError
from webrl.sites.task_sets import resolve_task_set
from webrl.tasks import TASK_SETS, Task, load_tasks, substitute, task_set_file
from webrl.tasks import load as load_module

# The real files, from the installed distributions (scripts/install.sh); no cache is needed for them.
LITE = task_set_file("webarena-lite", "/nonexistent")
FULL = task_set_file("webarena", "/nonexistent")


@pytest.fixture(scope="module")
def lite() -> list[Task]:
    return load_tasks(LITE)


@pytest.fixture(scope="module")
def full() -> list[Task]:
    return load_tasks(FULL)


def by_id(tasks):
    return {t.task_id: t for t in tasks}


def test_all_tasks_load_with_every_evaluator_config(lite, full):
    assert len(lite) == 165 and len(full) == 812
    assert [t.task_id for t in lite] == list(range(165))
    # the counts of WebArena's 812 tasks and WebArena-Lite's 165
    assert Counter(tuple(t.eval.eval_types) for t in full) == {
        ("string_match",): 325,
        ("program_html",): 282,
        ("url_match", "program_html"): 129,
        ("url_match",): 66,
        ("string_match", "url_match"): 10,
    }
    assert Counter(tuple(t.eval.eval_types) for t in lite) == {
        ("string_match",): 78,
        ("program_html",): 48,
        ("url_match", "program_html"): 19,
        ("url_match",): 18,
        ("string_match", "url_match"): 2,
    }
    assert sum(len(t.eval.program_html) for t in full) == 651
    assert sum(1 for t in full if t.eval.reference_answers and t.eval.reference_answers.fuzzy_match == "N/A") == 36
    assert sum(1 for t in full if len(t.eval.reference_urls) > 1) == 7
    assert sum(1 for t in full for p in t.eval.program_html if p.prep_actions) == 10
    assert {p.required_contents.rule for t in lite for p in t.eval.program_html} == {
        "exact_match",
        "must_include",
        "fuzzy_match",
    }
    assert by_id(lite)[0].old_task_id == 4 and by_id(lite)[164].old_task_id == 811


def test_round_trip_keeps_everything(lite, full):
    # Lite included: its task 81's bare-string must_include stays as the file has it
    for tasks, path in ((lite, LITE), (full, FULL)):
        for task, original in zip(tasks, json.loads(path.read_text()), strict=True):
            assert task.to_config() == original, task.task_id


def test_reference_answer_order_is_kept(lite):
    # must_include before fuzzy_match (Lite 64): the order the evaluators iterate
    assert [k for k, _ in by_id(lite)[64].eval.reference_answers.items()] == ["must_include", "fuzzy_match"]
    task = Task.model_validate(
        {
            **json.loads(LITE.read_text())[64],
            "eval": {
                **json.loads(LITE.read_text())[64]["eval"],
                "reference_answers": {"fuzzy_match": "N/A", "must_include": ["x"]},
            },
        }
    )
    assert [k for k, _ in task.eval.reference_answers.items()] == ["fuzzy_match", "must_include"]


@pytest.mark.parametrize(
    ("file", "task_id", "needle"),
    [
        ("lite", 81, "must_include is a bare string"),
        ("lite", 51, "fuzzy_match is the list ['N/A']"),
        ("lite", 91, "fuzzy_match is the list ['N/A']"),
        ("lite", 94, "' |OR| ' alternatives"),
        ("lite", 71, "GitLab clone host"),
        ("lite", 45, "url_match without url_note"),
        ("lite", 123, "required_contents uses fuzzy_match"),
        ("full", 386, "' |OR| ' alternatives"),
        ("full", 296, "GitLab clone host"),
        ("full", 723, "top-level string_note"),
    ],
)
def test_quirks_give_warnings(lite, full, file, task_id, needle):
    task = by_id(lite if file == "lite" else full)[task_id]
    assert any(needle in w for w in task.warnings), task.warnings


def test_quirks_are_kept_as_the_file_has_them(lite, full):
    t81 = by_id(lite)[81]
    assert t81.eval.reference_answers.must_include == "yjlou"  # the evaluators decide what it gives, per mode
    # "N/A" (string) and ["N/A"] (list) stay distinguishable: the evaluators treat them differently
    assert by_id(lite)[114].eval.reference_answers.fuzzy_match == "N/A"
    assert by_id(lite)[51].eval.reference_answers.fuzzy_match == ["N/A"]
    # tasks without quirks have no warnings
    assert sum(1 for t in lite if t.warnings) == 10 and sum(1 for t in full if t.warnings) == 16
    assert not by_id(full)[0].warnings
    # a fuzzy_match string other than N/A stays a string, with a warning
    raw = json.loads(LITE.read_text())[64]
    task = Task.model_validate({**raw, "eval": {**raw["eval"], "reference_answers": {"fuzzy_match": "10h"}}})
    assert task.eval.reference_answers.fuzzy_match == "10h" and "only 'N/A' may be a string" in task.warnings[0]


def test_helpers_start_urls_and_reference_urls(full):
    multi = next(t for t in full if " |AND| " in t.start_url)
    assert len(multi.start_urls) >= 2 and all(" |AND| " not in u for u in multi.start_urls)
    assert by_id(full)[604].reference_urls == by_id(full)[604].eval.reference_url.split(" |OR| ")
    assert by_id(full)[0].start_urls == [by_id(full)[0].start_url]


URLS = {
    "shopping": "http://127.0.0.1:7770",
    "shopping_admin": "http://127.0.0.1:7780/admin",
    "reddit": "http://127.0.0.1:9999",
    "gitlab": "http://127.0.0.1:8023",
    "map": "http://127.0.0.1:3000",
    "wikipedia": "http://127.0.0.1:8888",
    "homepage": "http://127.0.0.1:4399/",
}


def test_substitution_everywhere(lite, full):
    for task in lite + full:
        done = substitute(task, URLS)
        text = json.dumps(done.to_config())
        assert not re.search(r"__(SHOPPING|SHOPPING_ADMIN|REDDIT|GITLAB|MAP|WIKIPEDIA|HOMEPAGE)__", text), task.task_id
        assert done.warnings == task.warnings
    t146 = substitute(by_id(lite)[146], URLS)
    assert t146.eval.reference_urls[0] == "http://127.0.0.1:9999/f/machinelearning"
    assert "http://127.0.0.1:8023/convexegg/chatgpt" in t146.eval.program_html[0].required_contents.must_include
    admin = next(t for t in full if "__SHOPPING_ADMIN__" in t.start_url)
    assert substitute(admin, URLS).start_url.startswith("http://127.0.0.1:7780/admin")
    # a site without a URL: left as it is, and noted
    partial = substitute(admin, {"shopping": "http://s"})
    assert "__SHOPPING_ADMIN__" in partial.start_url
    assert any("no URL for the placeholder __SHOPPING_ADMIN__" in w for w in partial.warnings)
    # the homepage URL's trailing slash is not doubled
    assert (
        substitute(
            Task.model_validate({**json.loads(LITE.read_text())[0], "start_url": "__HOMEPAGE__/x"}), URLS
        ).start_url
        == "http://127.0.0.1:4399/x"
    )


def write(path: Path, data) -> Path:
    path.write_text(json.dumps(data))
    return path


def lite_raw(i: int) -> dict:
    return json.loads(LITE.read_text())[i]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t: t.pop("intent"), "task 17: field 'intent': Field required"),
        (lambda t: t.update(start_url=5), "task 17: field 'start_url': Input should be a valid string"),
        (lambda t: t["eval"].pop("eval_types"), "task 17: field 'eval.eval_types': Field required"),
        (
            lambda t: t["eval"].update(
                eval_types=["program_html"], program_html=[{"url": "last", "required_contents": {"exact_match": "x"}}]
            ),
            "task 17: field 'eval.program_html[0].locator': Field required",
        ),
        (
            lambda t: t["eval"]["reference_answers"].update(must_include=[1, 2]),
            "task 17: field 'eval.reference_answers.must_include': item 0: Input should be a valid string",
        ),
        # an unknown placeholder or site failed only in the browser (an env_error the score left out)
        (lambda t: t.update(start_url="__SHOPING__/x"), "task 17: field 'start_url': unknown placeholder __SHOPING__"),
        (
            lambda t: t.update(start_url="__GITLAB__ |AND| shop/x"),
            "task 17: field 'start_url': 'shop/x' is neither a site placeholder",
        ),
        (lambda t: t.update(sites=["gitlab", "shoping"]), "task 17: field 'sites': unknown site 'shoping'"),
        # a misspelt placeholder in a URL the evaluator compares was never substituted: the task scored 0, unexplained
        (
            lambda t: t.update(start_url="__GITLAB__/x?next=__SHOPPPING__/y"),
            "task 17: field 'start_url': unknown placeholder __SHOPPPING__",
        ),
        (
            lambda t: t["eval"].update(eval_types=["url_match"], reference_url="__GITLAB__/a |OR| __SHOPPPING__/b"),
            "task 17: field 'eval.reference_url': unknown placeholder __SHOPPPING__",
        ),
        (lambda t: t["eval"].update(url_note="__SHOPPPING__"), "task 17: field 'eval.url_note': unknown placeholder"),
        (
            lambda t: t["eval"].update(
                program_html=[{"url": "__SHOPPPING__/x", "locator": "", "required_contents": {"exact_match": "x"}}]
            ),
            "task 17: field 'eval.program_html[0].url': unknown placeholder __SHOPPPING__",
        ),
    ],
)
def test_bad_files_name_file_task_and_field(tmp_path, mutate, message):
    raw = lite_raw(17)
    raw["eval"]["reference_answers"] = raw["eval"]["reference_answers"] or {"exact_match": "x"}
    raw["eval"]["eval_types"] = ["string_match"]
    mutate(raw)
    path = write(tmp_path / "tasks.json", [lite_raw(0), raw])
    with pytest.raises(UsageError) as err:
        load_tasks(path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value), str(err.value)


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        # eval blocks the originals only reject when they evaluate them: the file loads, the task carries a warning
        # (and the evaluators give that task its mode's outcome: tests/evaluators/test_malformed.py)
        (
            lambda t: t["eval"].update(eval_types=["string_match", "image_match"]),
            "eval_types has 'image_match', which no evaluator here knows",
        ),
        (lambda t: t["eval"].update(eval_types=[]), "eval_types is empty: every mode scores the task 1.0"),
        (
            lambda t: t["eval"].update(eval_types=["url_match"], reference_url="http://x/a", url_note="SOMETIMES"),
            "url_note is 'SOMETIMES', neither 'GOLD in PRED' nor 'EXACT'",
        ),
        (
            lambda t: t["eval"].update(eval_types=["url_match"], reference_url="http://x/a", url_note=None),
            "url_note is None",
        ),
        (
            lambda t: t["eval"].update(eval_types=["url_match"], reference_url=None, url_note="GOLD in PRED"),
            "url_match but reference_url is null",
        ),
        (lambda t: t["eval"].update(reference_answers=None), "string_match but reference_answers is null"),
        (lambda t: t["eval"].update(reference_answers={"must_include": "x"}), "must_include is a bare string ('x')"),
        (
            lambda t: t["eval"].update(reference_answers={"fuzzy_match": "N/A"}, string_note=None),
            "fuzzy_match 'N/A' without eval.string_note",
        ),
        (
            lambda t: t["eval"].update(
                eval_types=["program_html"], program_html=[{"url": "last", "locator": "", "required_contents": {}}]
            ),
            "program_html[0].required_contents has none of exact_match",
        ),
    ],
)
def test_malformed_eval_blocks_load_with_a_warning(tmp_path, mutate, needle):
    raw = lite_raw(17)
    raw["eval"]["reference_answers"] = raw["eval"]["reference_answers"] or {"exact_match": "x"}
    raw["eval"]["eval_types"] = ["string_match"]
    mutate(raw)
    tasks = load_tasks(write(tmp_path / "tasks.json", [lite_raw(0), raw]))
    assert len(tasks) == 2 and any(needle in w for w in tasks[1].warnings), tasks[1].warnings
    assert tasks[1].to_config() == raw  # kept as the file has it


def test_bad_files_other_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    with pytest.raises(UsageError, match=r"bad.json: not valid JSON: .* line 1"):
        load_tasks(bad)
    with pytest.raises(UsageError, match="expected a task object or a list"):
        load_tasks(write(tmp_path / "n.json", 3))
    with pytest.raises(UsageError, match="entry 1: expected a JSON object, got str"):
        load_tasks(write(tmp_path / "s.json", [lite_raw(0), "task"]))
    with pytest.raises(UsageError, match="task 0: duplicate task_id"):
        load_tasks(write(tmp_path / "d.json", [lite_raw(0), lite_raw(0)]))
    with pytest.raises(UsageError, match="e.json: no tasks in this file"):
        load_tasks(write(tmp_path / "e.json", []))
    with pytest.raises(UsageError, match="no such task file"):
        load_tasks(tmp_path / "missing.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no \\*.json task files"):
        load_tasks(tmp_path / "empty")


def test_folder_of_task_files(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    for i in (10, 2, 1):
        write(folder / f"{i}.json", lite_raw(i))
    write(
        folder / "extra.json",
        [
            lite_raw(3),
            {**lite_raw(4), "cheat": ["click [12]", "stop [done]"], "split": "train", "tier": 1, "source": "ours"},
        ],
    )
    (folder / "notes.txt").write_text("ignored")
    tasks = load_tasks(folder)
    assert [t.task_id for t in tasks] == [1, 2, 10, 3, 4]
    extra = tasks[-1]
    assert extra.cheat == ["click [12]", "stop [done]"] and extra.split == "train" and extra.tier == 1
    assert extra.model_extra == {"source": "ours"}  # unknown fields are kept
    write(folder / "dup.json", lite_raw(2))
    with pytest.raises(UsageError, match=r"dup.json: task 2: duplicate task_id \(also in 2.json\)"):
        load_tasks(folder)
    # one task object in a single file
    assert [t.task_id for t in load_tasks(write(tmp_path / "one.json", lite_raw(5)))] == [5]


def test_named_sets_come_from_their_distributions():
    for name, source in TASK_SETS.items():
        path = task_set_file(name, "/nonexistent")
        assert "site-packages" in str(path) and path.as_posix().endswith(source.path)
        assert load_module._md5(path.read_bytes()) == source.md5
    assert len(resolve_task_set("webarena-lite", "/nonexistent")) == 165
    assert len(resolve_task_set("webarena", "/nonexistent")) == 812


def test_a_distribution_with_another_file_is_refused(tmp_path, monkeypatch):
    other = tmp_path / TASK_SETS["webarena-lite"].path
    other.parent.mkdir(parents=True)
    other.write_text("[]")

    class Distribution:
        def locate_file(self, path):
            return tmp_path / path

    monkeypatch.setattr(load_module.importlib.metadata, "distribution", lambda name: Distribution())
    with pytest.raises(
        UsageError,
        match=r"md5 d751713988987e9331980363e24189ce is not the pinned fbeb3b6e.*"
        r"pip install --no-deps browsergym-webarenalite==0.14.3",
    ):
        resolve_task_set("webarena-lite", tmp_path)


def test_without_the_distributions_named_sets_are_cached_fetched_or_refused(tmp_path, monkeypatch):
    assert set(TASK_SETS) == {"webarena-lite", "webarena"}
    assert "THUDM/VisualAgentBench" in TASK_SETS["webarena-lite"].url
    assert TASK_SETS["webarena"].url.endswith("/config_files/test.raw.json")
    lite_bytes = LITE.read_bytes()
    # a path loads directly
    assert len(resolve_task_set(str(LITE), tmp_path)) == 165

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(load_module.importlib.metadata, "distribution", not_installed)

    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(load_module.urllib.request, "urlopen", offline)
    with pytest.raises(UsageError) as err:
        resolve_task_set("webarena-lite", tmp_path)
    text = str(err.value)
    assert "--tasks PATH" in text and str(tmp_path / "tasks" / "test_webarena_lite.raw.json") in text
    assert "pip install --no-deps browsergym-webarenalite==0.14.3" in text and "no network" in text
    with pytest.raises(UsageError, match="unknown task set 'webarena-xl'"):
        resolve_task_set("webarena-xl", tmp_path)

    # a successful download is cached (stub standing in for GitHub)
    class Response:
        def __init__(self, body):
            self.body = body

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            return self.body

    fetched = []

    def online(request, timeout):
        fetched.append(request.full_url)
        return Response(lite_bytes)

    monkeypatch.setattr(load_module.urllib.request, "urlopen", online)
    assert len(resolve_task_set("webarena-lite", tmp_path)) == 165
    assert (tmp_path / "tasks" / "test_webarena_lite.raw.json").read_bytes() == lite_bytes
    assert fetched == [TASK_SETS["webarena-lite"].url]
    # the cache is used afterwards (offline again)
    monkeypatch.setattr(load_module.urllib.request, "urlopen", offline)
    assert len(resolve_task_set("webarena-lite", tmp_path)) == 165
    # something that is not the pinned file (a proxy's HTML page, another commit's file) is not cached
    for body in (b"<html>", b"[]"):
        monkeypatch.setattr(load_module.urllib.request, "urlopen", lambda request, timeout, b=body: Response(b))
        with pytest.raises(UsageError, match="could not be downloaded.*is not the pinned bcb0f3bd"):
            resolve_task_set("webarena", tmp_path)
        assert not (tmp_path / "tasks" / "webarena_test.raw.json").exists()
