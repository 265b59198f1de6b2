"""`webrl orm train`: tiny trained on rule labels beats the majority class on held-out trajectories; the class
balancing and the skipping of prompts that cannot fit."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest
from cli_support import events
from orm_support import TRAIN_ARGS, orm_cli, synthetic_examples

from webrl.cli.main import app
from webrl.errors import UsageError
from webrl.orm.data import write_examples
from webrl.orm.evaluate import run_orm_eval
from webrl.orm.train import Item, balance_classes, encode_items
from webrl.policy.models import is_adapter, load_tokenizer

pytestmark = pytest.mark.slow  # trains an outcome reward model


def test_trained_orm_beats_the_majority_class(trained, tmp_path):
    metrics = json.loads((trained["out"] / "metrics.json").read_text())
    assert metrics["data"]["examples"] == 64 and metrics["data"]["skipped_too_long"] == 0
    assert metrics["orm"]["optimizer_steps"] == 32 and metrics["orm"]["loss_last"] < metrics["orm"]["loss_first"] / 4
    assert metrics["settings"]["lr"] == 2e-3 and "orm train" in trained["stdout"]
    report = run_orm_eval(str(trained["out"] / "orm"), [trained["held_out"]], tmp_path / "held_out.json")
    overall = report["scores"]["Overall"]
    assert overall["n"] == 48 and 0.55 < overall["majority"] < 0.75
    assert overall["accuracy"] >= overall["majority"] + 0.15, overall
    assert overall["tp"] > 0 and overall["tn"] > 0  # it tells the classes apart, not one answer for all


def test_defaults_follow_the_reference():
    import typer

    train = typer.main.get_command(app).commands["orm"].commands["train"]
    defaults = {param.name: param.default for param in train.params}
    assert defaults["lr"] == 5e-6 and defaults["epochs"] == 4 and defaults["balance"] is False
    assert defaults["lr_schedule"] == "cosine" and defaults["warmup"] == 0.1
    assert all(param.help for param in train.params)  # every option explains itself


def test_balance_repeats_the_rarer_class():
    items = [Item([1], 0)] * 7 + [Item([2], 1), Item([3], 1)]
    balanced = balance_classes(items, seed=0)
    assert balanced[:9] == items and Counter(item.label for item in balanced) == {0: 7, 1: 7}
    assert all(item in (Item([2], 1), Item([3], 1)) for item in balanced[9:])
    assert balance_classes(items, seed=0) == balanced  # seeded
    with pytest.raises(UsageError, match="both classes"):
        balance_classes([Item([1], 0)] * 3, seed=0)


def test_prompts_that_cannot_fit_are_skipped_and_counted(tiny):
    tokenizer = load_tokenizer(tiny)
    short, long = synthetic_examples(2, seed=6)
    long = replace(long, intent="buy everything " * 400)
    items, skipped = encode_items(tokenizer, [short, long], max_tokens=600)
    assert skipped == 1 and len(items) == 1 and items[0].label == short.label and len(items[0].input_ids) <= 600


def test_two_ranks_on_ray_train_as_one_process_with_two_micro_batches(tiny, ray_cluster, tmp_path):
    """`webrl orm train --executor ray --nodes 2`: a rank on each of the cluster fixture's two worker nodes (gloo
    between them) takes the same optimizer steps as one process accumulating two micro-batches."""
    data = tmp_path / "train.jsonl"
    write_examples(data, synthetic_examples(32, seed=3))
    common = ["train", "--data", str(data), "--model", str(tiny), *TRAIN_ARGS, "--epochs", "1", "--zero-stage", "2"]
    one = orm_cli(tmp_path, *common, "--out", str(tmp_path / "one"), "--grad-accum", "2")
    assert one.returncode == 0, one.stderr[-3000:]
    on_ray = ["--executor", "ray", "--ray-address", ray_cluster.address, "--nodes", "2"]
    two = orm_cli(tmp_path, *common, "--out", str(tmp_path / "ray"), *on_ray)
    assert two.returncode == 0, two.stdout[-3000:] + two.stderr[-3000:]
    assert "2 node(s) × 1 rank(s) placed by Ray" in (tmp_path / "ray.log").read_text()
    losses = {run: [row["loss"] for row in events(tmp_path / run, "orm") if "loss" in row] for run in ("one", "ray")}
    assert len(losses["one"]) == 4
    assert losses["ray"] == pytest.approx(losses["one"], rel=1e-3, abs=1e-5)


def test_an_orm_trains_as_a_lora_adapter_that_scores_on_its_base(tiny, tmp_path):
    data = tmp_path / "train.jsonl"
    write_examples(data, synthetic_examples(16, seed=1))
    lora = ["--lora-rank", "4", "--epochs", "1", "--micro-batch-size", "4"]
    run = orm_cli(tmp_path, "train", "--data", str(data), "--model", str(tiny), "--out", str(tmp_path / "out"), *lora)
    assert run.returncode == 0, run.stderr
    orm = tmp_path / "out" / "orm"
    assert is_adapter(orm) and not (orm / "model.safetensors").exists()
    report = run_orm_eval(str(orm), [data], tmp_path / "scores.json")
    assert report["scores"]["Overall"]["n"] == 16
