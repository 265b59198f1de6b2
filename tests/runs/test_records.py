"""Episode records: files written before records had a schema version load whole, what is written reads back the
same, and a bad line is refused naming the file, the line, the task and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webrl.errors import UsageError
from webrl.runs.records import SCHEMA_VERSION, EpisodeRecord, read_episodes

# Four lines of episodes.jsonl files webrl wrote before records had a version (an unjudged and a judged embedded
# shopping task from an oracle run, a MiniWoB++ success and a failure from the CPU demo's phase 0 evaluation).
RECORDED = Path(__file__).with_name("data") / "episodes-v1.jsonl"


def test_a_file_of_the_previous_release_loads_with_nothing_lost():
    originals = [json.loads(line) for line in RECORDED.read_text().splitlines()]
    records = read_episodes(RECORDED)
    assert [r.task_id for r in records] == sorted((o["task_id"] for o in originals), key=str)
    by_id = {r.task_id: r for r in records}
    for original in originals:
        record = by_id[original["task_id"]]
        assert record.schema_version == 1
        dumped = record.model_dump(mode="json")
        # every field, every step, as it was; a family's data at the top under its name, as then (the record holds
        # it in family_data); a null one (not the family's episode) is no key now
        if original.get("miniwob", {}) is None:
            del original["miniwob"]
        assert {key: dumped[key] for key in original} == original and "family_data" not in dumped
    shop, miniwob = by_id[187], by_id["focus-text.0"]
    assert shop.judged and shop.success and shop.family_data == {} and shop.steps[0].observation.startswith("<html")
    assert miniwob.family_data["miniwob"].env == "focus-text" and miniwob.success and by_id[84].success is None


def test_what_is_written_reads_back_the_same(tmp_path):
    records = read_episodes(RECORDED)
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(r.model_copy(update={"schema_version": SCHEMA_VERSION}).to_line() for r in records))
    again = read_episodes(tmp_path)  # a run folder reads its episodes.jsonl
    assert again == [r.model_copy(update={"schema_version": SCHEMA_VERSION}) for r in records]
    assert all(json.loads(line)["schema_version"] == SCHEMA_VERSION for line in path.read_text().splitlines())
    assert read_episodes(tmp_path / "nothing") == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"status": "finished"}, "status"),
        ({"steps": [{"index": 0}]}, "steps.0.url"),
        ({"score": "high"}, "score"),
    ],
)
def test_a_bad_line_names_the_file_line_task_and_field(tmp_path, change, field):
    good = RECORDED.read_text().splitlines()[2]
    path = tmp_path / "episodes.jsonl"
    path.write_text(good + "\n" + json.dumps({**json.loads(good), **change}) + "\n")
    with pytest.raises(UsageError, match=f"{path}:2: task 'focus-text.0': field '{field}'"):
        read_episodes(path)
    path.write_text(good + "\n{not json\n")
    with pytest.raises(UsageError, match=f"{path}:2: not valid JSON"):
        read_episodes(path)


def test_a_record_says_what_it_was():
    done = EpisodeRecord(task_id=3, repeat=1, status="done", score=0.0)
    assert (done.judged, done.success, done.acted, done.name, done.key) == (True, False, False, "3-1", (3, 1))
    assert EpisodeRecord(task_id=3, status="env_error").success is None


def test_text_no_encoding_takes_is_stored_escaped_and_read_back_exactly(tmp_path):
    """A lone surrogate (what `exit(message="\\ud800")` parses to) in the answer, the URL, the observation."""
    odd = "x\ud800y\udfff\x00"
    step = {"index": 0, "url": f"http://127.0.0.1/{odd}", "observation": odd, "response": odd, "action": {}}
    record = EpisodeRecord(task_id=1, status="done", score=0.0, answer=odd, steps=[step], last_observation=odd)
    line = record.to_line()
    assert line.isascii() and "\\ud800" in line
    (tmp_path / "episodes.jsonl").write_text(line)
    assert read_episodes(tmp_path) == [record]
