"""The training engine on the tiny Llama with real DeepSpeed: in this process for one-process runs, under the
DeepSpeed launcher for two processes, and in a child process that is killed for resume."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
from itertools import chain
from pathlib import Path

import pytest
import torch
from engine_script import SUMMARY
from engine_support import child_env, kill_past_step, load_model, train_tiny  # tests/rl is on sys.path (no __init__.py)
from transformers import AutoModelForCausalLM, AutoTokenizer

from webrl.errors import UsageError
from webrl.rl.checkpoint import Checkpoints, read_state
from webrl.rl.engine import TrainSettings, launch_command, own_extensions_dir, rank_micro_batches, sample_order

SCRIPT = Path(__file__).with_name("engine_script.py")
FAST = {"lr": 1e-3, "precision": "fp32"}


def events(run_dir: Path, name: str = "sft") -> list[dict]:
    rows = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return [row for row in rows if row["name"] == name]


def run_script(
    tiny: Path,
    run_dir: Path,
    settings: TrainSettings,
    items: int,
    *,
    launcher: list[str] = (),
    out: Path | None = None,
    step_delay: float = 0.0,
) -> subprocess.Popen:
    command = [*launcher] if launcher else [sys.executable]
    command += [
        str(SCRIPT),
        "--model",
        str(tiny),
        "--run-dir",
        str(run_dir),
        "--settings",
        settings.model_dump_json(),
        "--items",
        str(items),
        "--step-delay",
        str(step_delay),
    ]
    command += ["--out", str(out)] if out else []
    return subprocess.Popen(command, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(process: subprocess.Popen, timeout: float = 240) -> dict:
    """The child's training summary; its output when it failed."""
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output[-4000:]
    return json.loads(next(line for line in output.splitlines() if line.startswith(SUMMARY))[len(SUMMARY) :])


def assert_same_weights(a: torch.nn.Module, b: torch.nn.Module) -> None:
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.allclose(x, y, rtol=0, atol=1e-7), name


def test_data_order_is_the_same_global_batches_for_any_world_size():
    order = sample_order(12, seed=3, epochs=2)
    assert sorted(order[:12]) == list(range(12)) and sorted(order[12:]) == list(range(12))
    assert (order == sample_order(12, seed=3, epochs=2)).all() and not (order == sample_order(12, 4, 2)).all()
    one = TrainSettings(micro_batch_size=2, grad_accum=2)
    two = TrainSettings(micro_batch_size=2, grad_accum=1)
    for step in (1, 2, 6):
        alone = list(chain(*rank_micro_batches(order, step, one, 0, 1)))
        shared = list(chain(*rank_micro_batches(order, step, two, 0, 2), *rank_micro_batches(order, step, two, 1, 2)))
        assert alone == shared == order[(step - 1) * 4 : step * 4].tolist()


@pytest.mark.parametrize(("zero_stage", "gradient_checkpointing"), [(0, False), (2, True)])
def test_training_lowers_the_loss_logs_every_step_and_always_saves_the_last(
    tiny, tmp_path, zero_stage, gradient_checkpointing
):
    settings = TrainSettings(
        zero_stage=zero_stage, micro_batch_size=2, save_every=2, gradient_checkpointing=gradient_checkpointing, **FAST
    )
    checkpoints = Checkpoints(tmp_path / "checkpoints" / "sft")
    saved = []
    _, summary = train_tiny(
        tiny,
        tmp_path,
        settings,
        items=10,
        on_step=lambda step, metrics: saved.append(getattr(checkpoints.latest(), "name", None)),
    )
    rows = events(tmp_path)
    assert summary["steps"] == 5 and [row["step"] for row in rows] == [1, 2, 3, 4, 5]
    assert rows[-1]["loss"] < rows[0]["loss"] - 0.3, [row["loss"] for row in rows]
    assert all(row["grad_norm"] > 0 and row["lr"] == 1e-3 and row["tokens_per_s"] > 0 for row in rows)
    assert saved == [None, "step-000002", "step-000002", "step-000004", "step-000005"]
    assert [p.name for p in checkpoints.root.glob("step-*")] == ["step-000005"]
    assert list((tmp_path / "tb" / "sft").glob("events.out.tfevents.*"))


def test_a_cosine_schedule_warms_up_then_decays_and_sets_every_steps_rate(tiny, tmp_path):
    settings = TrainSettings(
        zero_stage=2, micro_batch_size=2, lr=1e-3, lr_schedule="cosine", warmup=0.2, precision="fp32"
    )
    assert [settings.lr_at(step, 10) for step in (1, 2, 3, 4, 10)] == pytest.approx(
        [5e-4, 1e-3, 1e-3, 1e-3 * 0.5 * (1 + math.cos(math.pi / 8)), 1e-3 * 0.5 * (1 + math.cos(math.pi * 7 / 8))]
    )
    assert TrainSettings(lr=1e-3).lr_at(7, 10) == 1e-3
    train_tiny(tiny, tmp_path, settings, items=20)
    assert [row["lr"] for row in events(tmp_path)] == pytest.approx([settings.lr_at(step, 10) for step in range(1, 11)])


def test_a_changed_setting_refuses_to_resume(tiny, tmp_path):
    train_tiny(tiny, tmp_path, TrainSettings(zero_stage=0, micro_batch_size=4, **FAST), items=8)
    with pytest.raises(UsageError, match="lr"):
        train_tiny(tiny, tmp_path, TrainSettings(zero_stage=0, micro_batch_size=4, lr=1e-4, precision="fp32"), items=8)


def test_zero3_save_pretrained_reloads_as_the_trained_model(tiny, tmp_path):
    settings = TrainSettings(zero_stage=3, micro_batch_size=2, lr=1e-3, precision="bf16")
    engine, _ = train_tiny(tiny, tmp_path, settings, items=4)
    out = tmp_path / "hf"
    engine.save_pretrained(out, tokenizer=AutoTokenizer.from_pretrained(tiny))
    reloaded = AutoModelForCausalLM.from_pretrained(out)
    ids = torch.tensor([[1, 50, 60, 70, 80, 90]])
    with torch.no_grad():
        assert torch.allclose(engine.module(input_ids=ids).logits, reloaded(input_ids=ids).logits, atol=1e-6)
        untrained = load_model(tiny).to(torch.bfloat16)
        assert not torch.allclose(untrained(input_ids=ids).logits, reloaded(input_ids=ids).logits, atol=1e-2)
    assert reloaded.dtype == torch.bfloat16
    assert AutoTokenizer.from_pretrained(out).bos_token == AutoTokenizer.from_pretrained(tiny).bos_token
    assert not list(tmp_path.glob(".tmp-*"))


@pytest.mark.slow  # two training processes
def test_two_processes_match_one_process_with_gradient_accumulation(tiny, tmp_path):
    two = TrainSettings(zero_stage=2, micro_batch_size=1, grad_accum=1, **FAST)
    process = run_script(tiny, tmp_path / "two", two, items=8, launcher=launch_command(2))
    train_tiny(tiny, tmp_path / "one", two.model_copy(update={"grad_accum": 2}), items=8)
    summary = finish(process)
    shared, alone = events(tmp_path / "two"), events(tmp_path / "one")
    assert summary["steps"] == 4 and len(shared) == len(alone) == 4
    for a, b in zip(shared, alone, strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4) and a["grad_norm"] == pytest.approx(
            b["grad_norm"], rel=1e-4
        )
    checkpoint = Checkpoints(tmp_path / "two" / "checkpoints" / "sft").latest()
    assert {p.name for p in checkpoint.glob("rng-rank*.pt")} == {"rng-rank0.pt", "rng-rank1.pt"}


@pytest.mark.slow  # trains, is killed, resumes
def test_a_killed_run_resumed_ends_with_the_uninterrupted_weights(tiny, tmp_path):
    settings = TrainSettings(zero_stage=2, micro_batch_size=2, save_every=1, **FAST)
    killed = run_script(tiny, tmp_path / "killed", settings, items=10, step_delay=1.0)
    train_tiny(tiny, tmp_path / "whole", settings, items=10, out=tmp_path / "whole" / "hf")
    kill_past_step(killed, lambda: events_so_far(tmp_path / "killed"))
    latest = read_state(Checkpoints(tmp_path / "killed" / "checkpoints" / "sft").latest())["step"]
    assert killed.returncode == -signal.SIGKILL and 1 <= latest < 5  # the kill may land before step 2 is saved

    summary = finish(run_script(tiny, tmp_path / "killed", settings, items=10, out=tmp_path / "killed" / "hf"))
    assert summary["resumed_from"] == latest and summary["steps"] == 5
    assert_same_weights(load_model(tmp_path / "killed" / "hf"), load_model(tmp_path / "whole" / "hf"))
    resumed, whole = events(tmp_path / "killed"), events(tmp_path / "whole")
    assert [row["step"] for row in resumed] == [1, 2, 3, 4, 5]
    assert [row["loss"] for row in resumed] == pytest.approx([row["loss"] for row in whole], rel=1e-6)


def events_so_far(run_dir: Path) -> list[dict]:
    """The complete lines of a run's events.jsonl while it is being written."""
    path = run_dir / "events.jsonl"
    lines = path.read_text().splitlines(keepends=True) if path.exists() else []
    return [json.loads(line) for line in lines if line.endswith("\n")]


def test_a_master_port_taken_before_use_is_replaced_and_children_do_not_inherit_the_group(tmp_path):
    """The one-process group's port is chosen free, but something may take it before the group listens on it (an
    outgoing connection on a busy machine): the group then starts on another port. The group's address stays out
    of the environment: a `webrl` command this process starts would otherwise join the group and fail on its
    taken port (a CI failure). Run in a child process (one process group per process); the first port offered
    is one this test listens on."""
    script = tmp_path / "taken_port.py"
    script.write_text(
        "import os, socket\n"
        "import torch.distributed as dist\n"
        "import webrl.rl.engine as engine\n"
        "from webrl.netutil import free_port\n"
        "taken = socket.socket()\n"
        "taken.bind(('127.0.0.1', 0))\n"
        "taken.listen()\n"
        "offered = iter([taken.getsockname()[1], free_port()])\n"
        "engine.free_port = lambda: next(offered)\n"
        "engine.init_distributed()\n"
        "print('joined', dist.is_initialized(), next(offered, 'both offered'),\n"
        "      [name for name in ('RANK', 'MASTER_PORT') if name in os.environ])\n"
    )
    result = subprocess.run(
        [sys.executable, str(script)], env=child_env(), capture_output=True, text=True, timeout=240, check=False
    )
    assert "joined True both offered []" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]


def test_deepspeeds_compiled_ops_stay_in_this_environment(monkeypatch, tmp_path):
    """DeepSpeed's shared-memory op, built by every process group, is built again (~40 s) when the shared
    ~/.cache/torch_extensions holds another environment's build: each virtual environment keeps its own (the
    tests run in one), and a TORCH_EXTENSIONS_DIR that is set stays."""
    import os

    assert sys.prefix != sys.base_prefix, "the tests run in the project's virtual environment"
    monkeypatch.setattr(os, "environ", {})
    own_extensions_dir()
    assert os.environ == {"TORCH_EXTENSIONS_DIR": str(Path(sys.prefix) / "torch_extensions")}
    os.environ["TORCH_EXTENSIONS_DIR"] = str(tmp_path)
    own_extensions_dir()
    assert os.environ == {"TORCH_EXTENSIONS_DIR": str(tmp_path)}
