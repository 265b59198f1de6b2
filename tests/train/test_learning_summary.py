"""The learning benchmark's summaries from a result file's outcomes (`bench/learning.py --summarize`): each run's
gain is the mean over its environments of (arm − SFT) success, on the held-out environments for the headline and on
the demonstrated ones beside it; the stamp of the runs stays. Outcomes here are written by hand so that every gain
is known; bench/results/learning.json holds the measured ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "learning.py"
STAMP = {"commit": "0123456789ab", "date": "2026-12-01T00:00:00+00:00", "machine": "x", "cores": 2, "load_1min": 0.1}


def run(held_out: list[str], **arms: dict[str, str]) -> dict:
    return {"held_out": held_out, "pass_at": {env: 50.0 for env in held_out}, **arms}


def result_file(tmp_path: Path) -> Path:
    everything = {"e1": "0000", "e2": "0000", "e3": "1111", "e4": "1111", "p": "1111"}
    result = {
        **STAMP, "bench": "learning", "families": {"a": ["e1", "e2"], "b": ["e3", "e4"]}, "position_prior": ["p"],
        "arms": ["sft", "webrl", "filtered-bc"],
        "runs": {
            # held out e1, e3: webrl +50 and 0 (gain +25), filtered-bc +25 and -25 (0); demonstrated e2, e4:
            # webrl 0 and 0, filtered-bc +100 and -50 (+25)
            "0": {"0": run(["e1", "e3"], sft=everything,
                           webrl={**everything, "e1": "1100"},
                           **{"filtered-bc": {**everything, "e1": "1000", "e3": "1110", "e2": "1111", "e4": "1100"}})},
            # held out e2, e4: webrl +100 and -100 (0), filtered-bc 0; demonstrated e1, e3: webrl +50 and 0 (+25)
            "1": {"0": run(["e2", "e4"], sft=everything,
                           webrl={**everything, "e2": "1111", "e4": "0000", "e1": "1010"},
                           **{"filtered-bc": everything})},
        },
    }  # fmt: skip
    path = tmp_path / "learning.json"
    path.write_text(json.dumps(result))
    return path


def summarize(*paths: Path, out: Path | None = None) -> subprocess.CompletedProcess:
    json_option = ["--json", str(out)] if out else []
    command = [sys.executable, str(BENCH), "--summarize", *map(str, paths), *json_option]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_summarize_computes_every_runs_gain_from_the_outcomes_and_keeps_the_stamp(tmp_path):
    path = result_file(tmp_path)
    done = summarize(path)
    assert done.returncode == 0, done.stderr
    result = json.loads(path.read_text())
    held_out, demonstrated = result["summary"], result["summary_demonstrated"]
    assert held_out["gain webrl"]["per_run"] == [25.0, 0.0]
    assert held_out["gain filtered-bc"]["per_run"] == [0.0, 0.0]
    assert held_out["webrl − filtered-bc"]["per_run"] == [25.0, 0.0]
    assert demonstrated["gain webrl"]["per_run"] == [0.0, 25.0]
    assert demonstrated["gain filtered-bc"]["per_run"] == [25.0, 0.0]
    assert demonstrated["webrl − filtered-bc"]["per_run"] == [-25.0, 25.0]
    for summary in (*held_out.values(), *demonstrated.values()):
        low, high = summary["ci95"]
        assert summary["runs"] == 2 and low <= summary["mean"] <= high
    # the gates from the SFT actors: G1 over the demonstrated non-trivial environments (run 0: e2, e4 = 50%)
    assert result["gates"]["G1"]["demonstrated_nontrivial"] == [50.0, 50.0]
    assert {k: result[k] for k in STAMP} == STAMP and result["summarized_by"]


def test_summarize_refuses_a_file_that_is_not_a_learning_result(tmp_path):
    other = tmp_path / "demo.json"
    other.write_text(json.dumps({**STAMP, "bench": "demo"}))
    for path in (other, tmp_path / "missing.json"):
        done = summarize(path)
        assert done.returncode == 2 and str(path) in done.stderr and "Traceback" not in done.stderr
    assert json.loads(other.read_text()) == {**STAMP, "bench": "demo"}  # nothing written


def test_runs_from_several_files_combine_into_the_result_one_file_of_them_gives(tmp_path):
    """Seeds measured in different sessions: each file's stamp is kept with the runs it measured, the gains are
    those of one file holding every run; files that disagree on a setting, or measure a run twice, are refused."""
    whole = json.loads(result_file(tmp_path).read_text())
    later = {**STAMP, "commit": "fedcba987654", "date": "2026-12-02T00:00:00+00:00"}
    parts = []
    for name, split, stamp in (("late.json", "1", later), ("early.json", "0", STAMP)):
        parts.append(tmp_path / name)
        parts[-1].write_text(json.dumps({**whole, **stamp, "runs": {split: whole["runs"][split]}}))
    done = summarize(*parts, out=tmp_path / "combined.json")
    assert done.returncode == 0, done.stderr
    combined = json.loads((tmp_path / "combined.json").read_text())
    assert list(combined["runs"]) == ["0", "1"]  # in split order, whichever file came first
    assert combined["summary"]["gain webrl"]["per_run"] == [25.0, 0.0]
    assert combined["summary_demonstrated"]["webrl − filtered-bc"]["per_run"] == [-25.0, 25.0]
    assert [(s["commit"], s["runs"]) for s in combined["sources"]] == [
        ("fedcba987654", ["1/0"]),
        (STAMP["commit"], ["0/0"]),
    ]
    again = summarize(tmp_path / "combined.json", parts[1], out=tmp_path / "twice.json")
    assert again.returncode == 2 and "split 0 seed 0" in again.stderr and str(parts[1]) in again.stderr
    parts[1].write_text(json.dumps({**json.loads(parts[1].read_text()), "arms": ["sft", "webrl"]}))
    unlike = summarize(*parts, out=tmp_path / "unlike.json")
    assert unlike.returncode == 2 and '"arms"' in unlike.stderr and str(parts[1]) in unlike.stderr
    assert not (tmp_path / "twice.json").exists() and not (tmp_path / "unlike.json").exists()
