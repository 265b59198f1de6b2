"""The memory plan: its parameter counts are the real models' and PEFT's, its model states DeepSpeed's own
estimators', and `webrl train --plan` prints it for a preset without training."""

from __future__ import annotations

import json

import pytest
from cli_support import private_env, webrl
from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs, model_to_params
from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

from webrl.policy.models import load_causal_lm, resolve_model
from webrl.rl.lora import trainable_model
from webrl.rl.memory import PUBLISHED_SHAPES, Shape, model_states, plan
from webrl.rl.settings import LoraSettings

LORA = LoraSettings(rank=8, target_modules=["q_proj", "v_proj", "down_proj"])


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    return resolve_model("reader", tmp_path_factory.mktemp("models"))


def test_the_counts_from_the_config_are_the_models_and_pefts(reader):
    shape = Shape.from_config(json.loads((reader / "config.json").read_text()))
    model = load_causal_lm(reader)
    assert shape.params() == sum(p.numel() for p in model.parameters())
    assert shape.largest_layer() == model_to_params(model)[1]  # the module ZeRO-3 gathers at once
    for lora in (LORA, LoraSettings(rank=4)):
        adapter = trainable_model(reader, lora, seed=0)
        assert shape.adapter_params(lora) == sum(p.numel() for p in adapter.parameters() if p.requires_grad)


@pytest.mark.parametrize("gpus", [1, 2, 4, 8])
def test_model_states_are_deepspeeds_estimates(gpus):
    params, largest = 8_030_261_248, 525_336_576  # Llama-3.1-8B: all parameters, the embedding
    assert sum(model_states(params, 0, largest, 2, gpus)) == pytest.approx(
        estimate_zero2_model_states_mem_needs(params, gpus, cpu_offload=False)[1], abs=1
    )
    assert sum(model_states(params, 0, largest, 3, gpus)) == pytest.approx(
        estimate_zero3_model_states_mem_needs(params, largest, gpus, cpu_offload=False, cpu_offload_params=False)[1],
        abs=1,
    )
    assert sum(model_states(params, 0, largest, 2, gpus, offload=True)) == pytest.approx(
        estimate_zero2_model_states_mem_needs(params, gpus, cpu_offload=True)[1], abs=1
    )
    assert sum(model_states(params, 0, largest, 3, gpus, offload=True)) == pytest.approx(
        estimate_zero3_model_states_mem_needs(params, largest, gpus)[1],
        abs=1,  # optimizer and weights offloaded
    )
    # with LoRA the adapter trains as DeepSpeed counts it, the frozen base costs its bf16 weights
    adapter = 20_971_520
    assert sum(model_states(adapter, params, largest, 2, gpus)) == pytest.approx(
        estimate_zero2_model_states_mem_needs(adapter, gpus, cpu_offload=False)[1] + 2 * params, abs=1
    )
    zero = [sum(model_states(params, 0, largest, stage, gpus)) for stage in range(4)]
    assert zero == sorted(zero, reverse=True) if gpus > 1 else zero[0] == zero[1] == zero[2]


def test_lora_and_more_gpus_need_less_memory():
    shape = PUBLISHED_SHAPES["meta-llama/Llama-3.1-8B"]
    assert shape.params() == 8_030_261_248  # Llama-3.1-8B's (its model card's count)
    full = plan(shape, LoraSettings(), 3, 8, 16384, True)
    lora = plan(shape, LoraSettings(rank=16), 3, 8, 16384, True)
    assert (
        lora["actor"].optimizer < full["actor"].optimizer / 100
        and lora["actor"].activations == full["actor"].activations
    )
    alone = plan(shape, LoraSettings(), 3, 1, 16384, True)["actor"]
    assert alone.total - alone.activations > 5 * (full["actor"].total - full["actor"].activations)
    assert full["critic"].activations < full["actor"].activations  # no logits over the vocabulary


def test_train_plan_prints_every_stage_fully_and_with_lora(tmp_path):
    result = webrl(private_env(tmp_path / "state") | {"COLUMNS": "200"}, "train", "--preset", "ci", "--plan")
    assert result.returncode == 0, result.stderr
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in result.stdout.splitlines() if "│" in line]
    assert [row[:2] for row in rows] == [[m, str(stage)] for m in ("full", "LoRA r=16") for stage in range(4)]
    assert all(float(row[-1]) > 0 for row in rows) and "tiny" in result.stdout


def test_the_paper_presets_plan_needs_no_download(tmp_path):
    """The paper's models plan from their published shapes: offline, with no Hugging Face cache, at once."""
    env = private_env(tmp_path / "state") | {"COLUMNS": "200", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    result = webrl(env, "train", "--preset", "paper", "--plan")
    assert result.returncode == 0, result.stderr
    assert "Llama-3.1-8B (8,030.3M parameters)" in " ".join(result.stdout.split())
