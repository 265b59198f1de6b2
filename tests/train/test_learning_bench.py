"""The learning benchmark (bench/learning.py) end to end at a smoke's size: one split, one seed, one phase, two
families of two environments and one position-prior environment, against the real sites, the real `webrl train` and
`webrl eval`. It checks that every piece of the result is there and consistent with the run folders; what the
numbers are at this size says nothing (bench/results/learning.json holds the measurement)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from webrl.train.settings import read_settings

pytestmark = pytest.mark.slow  # demonstrations, an SFT, a phase per arm and their evaluations (minutes)

BENCH = Path(__file__).resolve().parents[2] / "bench" / "learning.py"
SMOKE = """\
train:
  phases: 1
  parallel: 1
  tasks_per_phase: 6
  max_steps: 3
  sft: {epochs: 1}
  update: {epochs: 1}
"""


def smoke_command(tmp_path: Path) -> list[str]:
    settings = tmp_path / "smoke.yaml"
    settings.write_text(SMOKE)
    return [
        sys.executable, str(BENCH), "--splits", "1", "--seeds", "0", "--arms", "sft", "webrl", "filtered-bc", "grpo",
        "--family", "quoted=click-button,click-link", "--family", "tabs=click-tab,click-tab-2-easy",
        "--prior", "click-test", "--demos", "2", "--final-seeds", "3", "--settings", str(settings),
        "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "learning.json"),
    ]  # fmt: skip


def test_one_split_one_seed_one_phase(sites, tmp_path):
    command = smoke_command(tmp_path)
    out, result_file = tmp_path / "runs", tmp_path / "learning.json"
    done = subprocess.run(command, env=sites, capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(result_file.read_text())
    assert (
        result["bench"] == "learning"
        and result["commit"]
        and result["families"]["quoted"]
        == [
            "click-button",
            "click-link",
        ]
    )
    run = result["runs"]["1"]["0"]
    # split 1 holds out the second environment of each family's fixed shuffle: one per family, never the prior one
    assert len(run["held_out"]) == 2 and "click-test" not in run["held_out"]
    assert {e for e in run["held_out"]} <= {"click-button", "click-link", "click-tab", "click-tab-2-easy"}
    for arm in ("sft", "webrl", "filtered-bc", "grpo"):
        # every environment evaluated on the 3 final test seeds, after SFT and after the last phase
        assert sorted(run[arm]) == ["click-button", "click-link", "click-tab", "click-tab-2-easy", "click-test"]
        assert all(len(outcomes) == 3 and set(outcomes) <= {"0", "1"} for outcomes in run[arm].values())
    assert set(run["pass_at"]) == set(run["held_out"]) and all(0 <= v <= 100 for v in run["pass_at"].values())
    base = out / "split-1" / "seed-0"
    assert (base / "sft" / "phases" / "0" / "sft" / "actor").is_dir() and (base / "webrl" / "phases" / "1").is_dir()
    demos = (base / "sft" / "phases" / "0" / "demos.jsonl").read_text().splitlines()
    assert {json.loads(line)["task_id"].rpartition(".")[0] for line in demos} == set(
        ["click-button", "click-link", "click-tab", "click-tab-2-easy", "click-test"]
    ) - set(run["held_out"])
    # the group arm rolls out as many episodes a phase as the others: a quarter of the tasks (here 6 // 4), 4 times
    grpo = read_settings(base / "grpo")
    assert (grpo.algorithm, grpo.group_size, grpo.tasks_per_phase) == ("grpo", 4, 1)
    for name in ("gain webrl", "gain filtered-bc", "gain grpo", "webrl − filtered-bc"):
        summary = result["summary"][name]
        low, high = summary["ci95"]
        assert summary["runs"] == 1 and low <= summary["mean"] <= high, (name, summary)
    assert set(result["summary_demonstrated"]) == set(result["summary"])  # the same gains on the demonstrated envs
    assert set(result["gates"]) == {"G1", "G2", "G3"}
    assert result["gates"]["G3"]["holds"] is None  # one seed: no two SFT actors of a split to compare
    # A second call finds every run finished and measures the same numbers again (resumable, nothing re-run).
    again = subprocess.run(command, env=sites, capture_output=True, text=True, timeout=600, check=False)
    assert again.returncode == 0 and json.loads(result_file.read_text())["runs"] == result["runs"]


def live_processes() -> dict[int, int]:
    """Every live process's parent, from /proc (Linux, as the benchmark's machines are)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, parent = stat.read_text().rpartition(")")[2].split()[:2]
        except OSError:  # it ended while we looked
            continue
        if state != "Z":
            parents[int(stat.parent.name)] = int(parent)
    return parents


def descendants(pid: int) -> set[int]:
    parents, found = live_processes(), {pid}
    while grown := {child for child, parent in parents.items() if parent in found} - found:
        found |= grown
    return found - {pid}


def test_stopping_the_bench_stops_its_run(sites, tmp_path):
    """SIGTERM to the bench (what `kill` sends) ends the `webrl train` it started and that run's own processes: a
    run left behind would go on writing the folder the next bench resumes."""
    bench = subprocess.Popen(smoke_command(tmp_path), env=sites, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline, run = time.monotonic() + 120, set()
    while len(run) < 2 and bench.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)  # until `webrl train` has started processes of its own (its demonstration workers)
        run = descendants(bench.pid)
    assert run, f"the bench started no run: {bench.stderr.read() if bench.poll() is not None else ''}"
    bench.send_signal(signal.SIGTERM)
    assert bench.wait(timeout=60) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 60
    while run & set(live_processes()) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = run & set(live_processes())
    for pid in left:  # so that a failure here leaves nothing behind
        os.kill(pid, signal.SIGKILL)
    assert not left, "processes of the stopped bench's run still live"
