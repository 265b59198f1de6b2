"""LoRA through real PEFT under the real DeepSpeed engine: the engine's steps equal a plain PEFT + torch AdamW loop
on the same batches (ZeRO 0, 2 and 3), two ZeRO-2 ranks equal one, a checkpoint holds the adapter only and resumes
exactly and only on its base, and the exported adapter loads on its base, merged, and nowhere else."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from cli_support import webrl
from engine_support import (  # tests/rl is on sys.path (no __init__.py)
    child_env,
    kill_past_step,
    token_items,
    train_tiny,
)
from test_engine import events, events_so_far, finish, run_script
from test_sft_update import MAX_TOKENS, episode, sequence_logprobs, update_command, update_env, write_jsonl
from transformers import AutoModelForCausalLM, AutoTokenizer

from webrl.errors import UsageError
from webrl.policy.models import BASE_RECORD, base_folder, is_adapter, load_causal_lm, load_tokenizer, resolve_model
from webrl.rl.checkpoint import Checkpoints, read_state
from webrl.rl.critic import Critic
from webrl.rl.data import load_steps
from webrl.rl.engine import TrainSettings, launch_command, rank_micro_batches, sample_order
from webrl.rl.job_spec import SftJob
from webrl.rl.lora import trainable_model
from webrl.rl.settings import LoraSettings, SftSettings
from webrl.rl.sft import run_sft

LORA = LoraSettings(rank=4, alpha=8, target_modules=["q_proj", "v_proj", "down_proj"])
FAST = {"lr": 1e-2, "precision": "fp32", "lora": LORA}


@pytest.fixture(scope="module")
def reader(tmp_path_factory) -> Path:
    """A copy of the reader model's folder of its own: a test overwrites its weights."""
    built = resolve_model("reader", tmp_path_factory.mktemp("models"))
    return Path(shutil.copytree(built, tmp_path_factory.mktemp("base") / "reader"))


def adapter_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.named_parameters() if "lora_" in name}


def plain_loop(model_dir: Path, settings: TrainSettings, n_items: int) -> tuple[list[dict], torch.nn.Module]:
    """The same training written with PEFT and torch alone: AdamW over the adapter, the norm clipped; each step's
    loss and gradient norm."""
    model = trainable_model(model_dir, settings.lora, settings.seed).train()
    items = token_items(n_items, model.config.vocab_size)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=settings.lr, betas=settings.betas, weight_decay=settings.weight_decay)
    order = sample_order(n_items, settings.seed, settings.epochs)
    logged = []
    for step in range(1, len(order) // settings.global_batch(1) + 1):
        [micro] = rank_micro_batches(order, step, settings, 0, 1)
        ids = torch.stack([items[i] for i in micro])
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(params, settings.max_grad_norm)
        optimizer.step()
        optimizer.zero_grad()
        logged.append({"loss": loss.item(), "grad_norm": norm.item()})
    return logged, model


@pytest.mark.parametrize("zero_stage", [0, 2, 3])
def test_lora_steps_equal_a_plain_peft_loop(reader, tmp_path, zero_stage):
    settings = TrainSettings(zero_stage=zero_stage, micro_batch_size=2, **FAST)
    engine, summary = train_tiny(reader, tmp_path, settings, items=8)
    trained = {name for name, p in engine.module.named_parameters() if p.requires_grad}
    assert trained and all("lora_" in name for name in trained)
    logged, plain = plain_loop(reader, settings, 8)
    assert summary["steps"] == 4
    for row, expected in zip(events(tmp_path), logged, strict=True):
        assert row["loss"] == pytest.approx(expected["loss"], rel=1e-5)
        assert row["grad_norm"] == pytest.approx(expected["grad_norm"], rel=1e-4)
    assert logged[-1]["loss"] < logged[0]["loss"] - 0.1  # it learns: the adapter is what trains
    state = engine.state_dict()
    # ZeRO-3 reduces the gradients in another order, and Adam's first steps (g / sqrt(v)) turn the rounding of
    # near-zero gradients into up to 0.4% of a step (3.7e-5 at lr 1e-2); ZeRO 0 and 2 agree to 1e-6
    tolerance = 1e-2 * settings.lr if zero_stage == 3 else 1e-6
    for name, expected in adapter_weights(plain).items():
        assert torch.allclose(state[name], expected, rtol=0, atol=tolerance), name
    base = load_causal_lm(reader).state_dict()
    for name, value in plain.get_base_model().state_dict().items():
        if "lora_" not in name:  # the base's weights did not move
            assert torch.equal(value, base[name.replace(".base_layer", "")]), name


@pytest.mark.slow  # two training processes
def test_two_zero2_ranks_with_lora_match_one_rank(reader, tmp_path):
    two = TrainSettings(zero_stage=2, micro_batch_size=1, **FAST)
    process = run_script(reader, tmp_path / "two", two, items=8, launcher=launch_command(2))
    train_tiny(reader, tmp_path / "one", two.model_copy(update={"grad_accum": 2}), items=8)
    finish(process)
    for a, b in zip(events(tmp_path / "two"), events(tmp_path / "one"), strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4) and a["grad_norm"] == pytest.approx(
            b["grad_norm"], rel=1e-4
        )


@pytest.mark.slow  # trains, is killed, resumes
def test_a_killed_lora_run_resumes_exactly_from_a_checkpoint_of_the_adapter_only(reader, tmp_path):
    settings = TrainSettings(zero_stage=2, micro_batch_size=2, save_every=1, **FAST)
    killed = run_script(reader, tmp_path / "killed", settings, items=10, step_delay=1.0)
    train_tiny(reader, tmp_path / "whole", settings, items=10, out=tmp_path / "whole" / "adapter")
    kill_past_step(killed, lambda: events_so_far(tmp_path / "killed"))
    checkpoint = Checkpoints(tmp_path / "killed" / "checkpoints" / "sft").latest()
    state = read_state(checkpoint)
    assert state["resume_key"]["base"]["model"] == str(reader) and len(state["resume_key"]["base"]["digest"]) == 64
    [module_file] = checkpoint.glob("*model_states.pt")
    stored = set(torch.load(module_file, map_location="cpu", weights_only=False)["module"])
    model = trainable_model(reader, LORA, seed=0)
    frozen = {name for name, p in model.named_parameters() if not p.requires_grad}
    assert set(adapter_weights(model)) <= stored and not stored & frozen  # the adapter, not the base's weights
    assert sorted(p.name for p in checkpoint.glob("rng-rank*.pt")) == ["rng-rank0.pt"]

    summary = finish(run_script(reader, tmp_path / "killed", settings, items=10, out=tmp_path / "killed" / "adapter"))
    assert summary["resumed_from"] == state["step"] and summary["steps"] == 5
    resumed = load_causal_lm(tmp_path / "killed" / "adapter").state_dict()
    for name, value in load_causal_lm(tmp_path / "whole" / "adapter").state_dict().items():
        assert torch.equal(resumed[name], value), name
    assert [row["loss"] for row in events(tmp_path / "killed")] == pytest.approx(
        [row["loss"] for row in events(tmp_path / "whole")], rel=1e-6
    )


def test_a_lora_checkpoint_refuses_to_resume_on_another_base(reader, tmp_path):
    settings = TrainSettings(zero_stage=0, micro_batch_size=4, **FAST)
    train_tiny(reader, tmp_path, settings, items=8)
    other = resolve_model("reader:1", tmp_path / "models")
    with pytest.raises(UsageError, match="trains an adapter on .*reader.* resume on the same base model") as err:
        train_tiny(other, tmp_path, settings, items=8)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("zero_stage", [2, 3])
def test_the_exported_adapter_loads_merged_on_its_base_and_on_no_other(reader, tmp_path, zero_stage):
    settings = TrainSettings(zero_stage=zero_stage, micro_batch_size=2, **FAST)
    base = Path(shutil.copytree(reader, tmp_path / "base"))
    engine, _ = train_tiny(base, tmp_path, settings, items=4, out=tmp_path / "adapter")
    adapter = tmp_path / "adapter"
    assert is_adapter(adapter) and not (adapter / "model.safetensors").exists()
    ids = torch.tensor([[1, 50, 60, 70, 80, 90]])
    with torch.no_grad():
        expected = engine.module.eval()(input_ids=ids).logits
        merged = load_causal_lm(adapter)(input_ids=ids).logits
    assert torch.allclose(merged, expected, atol=1e-5)
    assert (adapter / BASE_RECORD).is_file()

    other = resolve_model("reader:1", tmp_path / "models")
    shutil.copy(other / "model.safetensors", base / "model.safetensors")
    with pytest.raises(UsageError, match="was trained on other weights .* cannot load on this base") as err:
        load_causal_lm(adapter)
    assert "\n" not in str(err.value)


def test_an_adapter_trains_further_only_with_its_own_shape(reader, tmp_path):
    train_tiny(reader, tmp_path, TrainSettings(zero_stage=0, micro_batch_size=4, **FAST), items=4, out=tmp_path / "a")
    further = trainable_model(tmp_path / "a", LORA, seed=1)
    assert [n for n, p in further.named_parameters() if p.requires_grad] == list(adapter_weights(further))
    # the saved adapter, not a new one (whose B matrices start at 0)
    assert all(p.abs().sum() > 0 for n, p in adapter_weights(further).items() if "lora_B" in n)
    with pytest.raises(UsageError, match=r"lora.rank: 8 differs from the adapter"):
        trainable_model(tmp_path / "a", LORA.model_copy(update={"rank": 8}), seed=1)


# ---- the trainings and exports with adapters -------------------------------------------------------------


@pytest.fixture(scope="module")
def lora_phase(reader, tmp_path_factory):
    """A LoRA SFT of reader on the demonstrations (in this process), then `webrl rl-update` with LoRA on the actor
    and on the critic."""
    root = tmp_path_factory.mktemp("lora-phase")
    demos = write_jsonl(root / "demos.jsonl", [row for task in range(4) for row in episode(task, True)])
    rollouts = write_jsonl(
        root / "rollouts.jsonl",
        [
            row
            for task in range(4)
            for row in episode(task, task % 2 == 0, episode=f"{task}-a", reward=float(task % 2 == 0))
        ],
    )
    settings = SftSettings(epochs=2, zero_stage=2, lr=1e-2, lr_schedule="constant", precision="fp32", lora=LORA)
    run_sft(SftJob(data=demos, model=str(reader), out=root / "sft", max_tokens=MAX_TOKENS, settings=settings))
    env = update_env(child_env()) | {"WEBRL_STATE_DIR": str(root / "state")}
    shape = ["--lora-alpha", "8", *(x for m in LORA.target_modules for x in ("--lora-target-modules", m))]
    lora_args = ["--lora-rank", "4", *shape, "--critic-lora-rank", "2", "--critic-lora-target-modules", "q_proj"]
    phase = {"demos": demos, "rollouts": rollouts, "sft": root / "sft", "env": env, "update": root / "update"}
    result = webrl(env, *update_command(phase, phase["update"], *lora_args), timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return phase


def test_a_lora_sft_and_update_write_adapters_and_leave_the_base(lora_phase, reader):
    sft, update = lora_phase["sft"] / "actor", lora_phase["update"]
    assert is_adapter(sft) and is_adapter(update / "actor") and is_adapter(update / "critic")
    assert (update / "critic" / "heads.pt").is_file()
    base = load_causal_lm(reader).state_dict()
    for folder in (sft, update / "actor"):
        # the adapter moved the model, which is the base plus it
        merged = load_causal_lm(folder).state_dict()
        assert any(not torch.equal(merged[name], base[name]) for name in base)
    tokenizer = load_tokenizer(sft)
    steps = load_steps(lora_phase["demos"])
    # the reference log-probs are the phase-start actor's: the SFT adapter on the base
    prepared = json.loads((update / "prepare.json").read_text())["mixed"]
    current = [row for row in prepared if row["source"] == "current"][:2]
    rollouts = load_steps(lora_phase["rollouts"])
    start = sequence_logprobs(sft, [rollouts[row["index"]] for row in current], tokenizer)
    assert start.tolist() == pytest.approx([row["ref_logp"] for row in current], rel=1e-4)
    assert sequence_logprobs(update / "actor", steps[:2], tokenizer).tolist() != start.tolist()
    critic = Critic.load(update / "critic")
    assert critic(torch.tensor([[1, 5, 9]]), torch.tensor([[1, 1, 1]])).shape == (1, 2, 2)


def test_models_merge_writes_a_folder_transformers_loads(lora_phase, tmp_path):
    result = webrl(lora_phase["env"], "models", "merge", str(lora_phase["update"]), "--out", str(tmp_path / "merged"))
    assert result.returncode == 0, result.stderr
    merged = AutoModelForCausalLM.from_pretrained(tmp_path / "merged")
    ids = torch.tensor([[1, 50, 60, 70, 80, 90]])
    with torch.no_grad():
        expected = load_causal_lm(lora_phase["update"] / "actor")(input_ids=ids).logits
        assert torch.allclose(merged(input_ids=ids).logits, expected, atol=1e-5)
    assert AutoTokenizer.from_pretrained(tmp_path / "merged").pad_token == "<|pad|>"

    refused = webrl(lora_phase["env"], "models", "merge", str(tmp_path / "merged"), "--out", str(tmp_path / "again"))
    assert refused.returncode == 2 and "no LoRA adapter there" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "again").exists()


def test_the_hf_policy_answers_with_base_plus_adapter(lora_phase, tmp_path):
    from webrl.policy.base import Sampling
    from webrl.policy.hf import HFPolicy

    adapter = lora_phase["update"] / "actor"
    assert webrl(lora_phase["env"], "models", "merge", str(adapter), "--out", str(tmp_path / "m")).returncode == 0
    prompt = load_steps(lora_phase["demos"])[0].prompt
    sampling = Sampling(temperature=0.0, max_tokens=12)
    with_adapter = HFPolicy(str(adapter), cache_dir=tmp_path / "models").complete([prompt], sampling)
    merged = HFPolicy(str(tmp_path / "m"), cache_dir=tmp_path / "models").complete([prompt], sampling)
    assert with_adapter[0].text == merged[0].text


def test_vllm_serves_an_adapter_on_its_base_and_refuses_a_stacked_one(lora_phase, tmp_path, monkeypatch):
    from webrl.policy.vllm import VLLMServer

    monkeypatch.setenv("WEBRL_VLLM_PYTHON", sys.executable)  # the command only: nothing starts
    actor = lora_phase["update"] / "actor"
    command = VLLMServer(actor, tmp_path / "vllm.log").command(8000)
    assert command[command.index("--model") + 1] == str(base_folder(actor))
    assert command[command.index("--enable-lora") :][:5] == [
        "--enable-lora",
        "--max-lora-rank",
        "8",
        "--max-loras",
        "2",
    ]
    # the critic's adapter names the SFT actor's adapter as its base: vLLM does not stack adapters
    with pytest.raises(UsageError, match="trained on another adapter(.|\n)*webrl models merge"):
        VLLMServer(lora_phase["update"] / "critic", tmp_path / "vllm.log").command(8000)


@pytest.mark.slow  # converts SmolLM2-135M from its wheel, then trains it
def test_a_lora_sft_of_smollm2_trains_an_adapter_a_fraction_of_its_size(tmp_path):
    model_dir = resolve_model("smollm2-135m", tmp_path / "models")
    demos = write_jsonl(tmp_path / "demos.jsonl", [row for task in range(2) for row in episode(task, True)])
    settings = SftSettings(lr=1e-3, lr_schedule="constant", precision="fp32", lora=LoraSettings(rank=8))
    summary = run_sft(
        SftJob(data=demos, model=str(model_dir), out=tmp_path / "sft", max_tokens=MAX_TOKENS, settings=settings)
    )
    adapter = tmp_path / "sft" / "actor"
    assert summary["sft"]["optimizer_steps"] == 6 and is_adapter(adapter)
    size = sum(f.stat().st_size for f in adapter.glob("*.safetensors"))
    base = sum(f.stat().st_size for f in model_dir.glob("*.safetensors"))
    assert size < base / 20  # 2.4M adapter parameters in fp32 beside 135M frozen ones in bf16
    # a full training's checkpoint holds 12 bytes a parameter (fp32 weights, Adam's two moments): 6x the bf16 base;
    # this one the adapter's, and the tied embedding once more (DeepSpeed leaves out frozen parameters by name)
    checkpoint = Checkpoints(tmp_path / "sft" / "checkpoints" / "sft").latest()
    assert sum(f.stat().st_size for f in checkpoint.rglob("*") if f.is_file()) < base
    tokenizer = load_tokenizer(adapter)
    step = load_steps(demos)[0]
    assert sequence_logprobs(adapter, [step], tokenizer) != sequence_logprobs(model_dir, [step], tokenizer)

    from webrl.cli.models import merge

    merge(adapter, out=tmp_path / "merged")  # written as the base is stored: bf16, its size
    assert AutoModelForCausalLM.from_pretrained(tmp_path / "merged").dtype == torch.bfloat16
    merged = sum(f.stat().st_size for f in (tmp_path / "merged").glob("*.safetensors"))
    assert merged == pytest.approx(base, rel=0.01)


def test_merge_finds_a_train_runs_last_actor_adapter(tmp_path):
    from webrl.cli.models import run_adapter

    for folder in ("phases/0/sft/actor", "phases/2/update/actor", "phases/10/update/actor"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "adapter_config.json").write_text("{}")
    (tmp_path / "phases/11/eval").mkdir(parents=True)  # a phase whose update learnt nothing keeps the last actor
    assert run_adapter(tmp_path) == tmp_path / "phases/10/update/actor"
    assert run_adapter(tmp_path / "phases/0/sft") == tmp_path / "phases/0/sft/actor"
    with pytest.raises(UsageError, match="no LoRA adapter there"):
        run_adapter(tmp_path / "phases/11")


@pytest.mark.parametrize("zero_stage", [0, 3])
def test_a_lora_run_continued_from_its_checkpoint_equals_one_run(reader, tmp_path, zero_stage):
    """The in-process counterpart of the kill test, under the stages it does not cover: one epoch, then the same
    training extended to two epochs resumes from the first's checkpoint."""
    settings = TrainSettings(zero_stage=zero_stage, micro_batch_size=2, **FAST)
    twice = settings.model_copy(update={"epochs": 2})
    train_tiny(reader, tmp_path / "continued", settings, items=4)
    continued, summary = train_tiny(reader, tmp_path / "continued", twice, items=4)
    whole, _ = train_tiny(reader, tmp_path / "whole", twice, items=4)
    assert summary["resumed_from"] == 2 and summary["steps"] == 4
    expected = whole.state_dict()
    for name, value in continued.state_dict().items():
        assert torch.allclose(value, expected[name], rtol=0, atol=1e-7), name
