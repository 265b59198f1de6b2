"""summary.json and metrics.json as their models read and write them: the previous release's files (copied from a
learning bench run, its machine's paths replaced) load, a written file reads back equal, and a bad file is a usage
error naming the file and the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_support import webrl

from webrl.errors import UsageError
from webrl.runs.eval import summarize
from webrl.runs.eval_settings import EvalSettings
from webrl.runs.records import read_episodes
from webrl.runs.summary import SUMMARY_FILE, read_summary
from webrl.runs.train_metrics import METRICS_FILE, read_metrics, read_phase_metrics, write_metrics

DATA = Path(__file__).with_name("data")
SUMMARY_V1, METRICS_V1 = DATA / "summary-v1.json", DATA / "phase-metrics-v1.json"


def test_the_previous_releases_summary_loads_as_it_was():
    summary = read_summary(SUMMARY_V1)
    assert summary.schema_version == 1 and summary.dump_suspect == 0  # neither was written then
    assert summary.success_rate["Average"].mean == 52.9 and summary.groups["new envs"].episodes == 40
    assert summary.episodes.planned == summary.episodes.count("done") == 187 and summary.executor.kind == "local"
    assert summary.settings.observation == "compact" and summary.section("miniwob")["mean_success"] == 53.7
    # every key and value of the file, in its place, as written again
    assert summary.model_dump(mode="json") == {
        **json.loads(SUMMARY_V1.read_text()),
        "schema_version": 1,
        "dump_suspect": 0,
    }


def test_the_previous_releases_phase_metrics_load_as_they_were(tmp_path):
    metrics = read_phase_metrics(METRICS_V1)
    assert metrics.schema_version == 1 and metrics.phase == 2 and metrics.eval.valid_actions == 97.1
    assert metrics.eval.environments["demonstrated envs"].mean == 61.2 and metrics.rewards.success_rate == 30.0
    assert metrics.tasks_report["kept"] == 120 and metrics.training["data"]["trained_steps"] == 738
    assert metrics.demonstrations is None  # only phase 0 has them: left out of the file, as before
    assert metrics.model_dump(mode="json") == {**json.loads(METRICS_V1.read_text()), "schema_version": 1}
    (tmp_path / METRICS_FILE).write_text(json.dumps([json.loads(METRICS_V1.read_text())] * 2))
    assert read_metrics(tmp_path) == [metrics, metrics]  # a run's file: every phase's


def test_a_written_summary_and_metrics_read_back_equal(tmp_path):
    settings = EvalSettings(tasks="recorded", out=tmp_path, repeats=2)
    summary = summarize(read_episodes(DATA / "episodes-v1.jsonl"), settings, "oracle", 5, executor={"kind": "local"})
    summary.write(tmp_path)
    again = read_summary(tmp_path)
    assert again == summary and again.schema_version == 2 and again.episodes.missing == 1
    metrics = read_phase_metrics(METRICS_V1).model_copy(update={"schema_version": 2})
    write_metrics(tmp_path / METRICS_FILE, [metrics])
    assert read_metrics(tmp_path) == [metrics]


def test_a_bad_file_is_a_usage_error_naming_the_file_and_field(tmp_path, cli_env):
    data = json.loads(SUMMARY_V1.read_text())
    data["success_rate"]["Average"]["mean"] = "most"
    (tmp_path / SUMMARY_FILE).write_text(json.dumps(data))
    with pytest.raises(UsageError, match=rf"^{tmp_path / SUMMARY_FILE}: field 'success_rate.Average.mean': "):
        read_summary(tmp_path)
    (tmp_path / METRICS_FILE).write_text(json.dumps([json.loads(METRICS_V1.read_text()), {"phase": 3}]))
    with pytest.raises(UsageError, match=rf"^{tmp_path / METRICS_FILE}: field '1.algorithm': Field required$"):
        read_metrics(tmp_path)
    (tmp_path / METRICS_FILE).write_text('{"phase": ')
    with pytest.raises(UsageError, match=r"metrics.json: not valid JSON"):
        read_phase_metrics(tmp_path / METRICS_FILE)
    # the command that reads one says so on one line
    shutil.copy(DATA / "episodes-v1.jsonl", tmp_path / "episodes.jsonl")
    result = webrl(cli_env, "eval", "--rescore", str(tmp_path), "--mode", "verified", "--out", str(tmp_path / "again"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"{tmp_path / SUMMARY_FILE}: field 'success_rate.Average.mean'" in result.stderr
