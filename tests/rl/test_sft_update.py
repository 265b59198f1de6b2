"""SFT and the WebRL phase update on the tiny model with real DeepSpeed: SFT in this process, `webrl rl-update`
as a user runs it (one process, two under the DeepSpeed launcher, killed and resumed), the paper objective.

The data are small synthetic episodes in the exact WebRL prompt format: demonstrations (all successful) and
one phase's rollouts (even tasks succeed, odd ones fail; one step's response is too long to fit).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from cli_support import events, webrl
from engine_support import DIST_ENV, child_env, kill_past_step

from webrl.policy.models import load_causal_lm, load_tokenizer
from webrl.policy.prompt import webrl_prompt
from webrl.rl.critic import Critic
from webrl.rl.data import action_logprobs, collate, encode, load_steps, next_token_logprobs, pad_token_id
from webrl.rl.job_spec import SftJob
from webrl.rl.settings import SftSettings
from webrl.rl.sft import run_sft

pytestmark = pytest.mark.slow  # trains under DeepSpeed, some under its launcher

INTENTS = [
    "Search for red shoes",
    "Open the newest order",
    "Find the cheapest laptop",
    "Post a comment on the forum",
    "Show my account settings",
    "Add the blue mug to the cart",
]
MAX_TOKENS = 384
FAST = {"lr": 1e-3, "lr_schedule": "constant", "precision": "fp32"}  # a high constant rate: learns in few steps
# 2 epochs: long enough (~1-2 s of actor steps on an idle machine) for the kill test to land mid-training
UPDATE_ARGS = [
    "--lr",
    "1e-3",
    "--critic-lr",
    "1e-5",
    "--precision",
    "fp32",
    "--max-tokens",
    str(MAX_TOKENS),
    "--epochs",
    "2",
]


def page(task: int, step: int) -> str:
    return (
        f'<html> <body> <input id="{3 + step}" data-text="Search"/> <button id="{7 + task}" data-text="Go"> Go '
        f'</button> <a id="{12 + step}" href="/item/{task}">Result {task}-{step}</a> </body> </html>'
    )


def response(task: int, step: int, good: bool) -> str:
    if step == 2:
        return 'exit(message="done")'
    return f'# Element: the search box\ndo(action="Click", element="{3 + step if good else 20 + task}")'


def episode(task: int, good: bool, **fields) -> list[dict]:
    """Three steps of one task; `long_step` gets a response far over MAX_TOKENS."""
    long_step = fields.pop("long_step", None)
    history, rows = [], []
    for step in range(3):
        text = "# Note: " + "very long " * 400 + "\nexit()" if step == long_step else response(task, step, good)
        rows.append(
            {
                "task_id": task,
                "step": step,
                "prompt": webrl_prompt(INTENTS[task], history, page(task, step)),
                "response": text,
                **fields,
            }
        )
        history.append(text)
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def update_env(env: dict[str, str]) -> dict[str, str]:
    """`env` for a child: without the process-group variables an in-process engine set, one thread (tiny gains
    nothing from more, and on a loaded machine two threads spin)."""
    return {k: v for k, v in env.items() if k not in DIST_ENV} | {"OMP_NUM_THREADS": "1", "COLUMNS": "200"}


def update_command(phase: dict, out: Path, *extra: str) -> list[str]:
    return [
        "rl-update",
        "--data",
        str(phase["rollouts"]),
        "--actor",
        str(phase["sft"] / "actor"),
        "--replay-steps",
        str(phase["demos"]),
        "--out",
        str(out),
        *UPDATE_ARGS,
        *extra,
    ]


def sequence_logprobs(model_dir: Path, steps, tokenizer) -> torch.Tensor:
    """Σ action-token log-prob of every step under the model in `model_dir` (one row at a time)."""
    model = load_causal_lm(model_dir)
    with torch.no_grad():
        return torch.cat(
            [
                action_logprobs(
                    model, collate([encode(tokenizer, s.prompt, s.response, MAX_TOKENS)], pad_token_id(tokenizer))
                )[0]
                for s in steps
            ]
        )


def success_labels(phase: dict, out: Path) -> list[bool]:
    """Whether each step the update trained on (prepare.json's order) comes from a successful episode."""
    current = [row["reward"] > 0 for row in map(json.loads, phase["rollouts"].read_text().splitlines())]
    return [
        row["source"] != "current" or current[row["index"]]
        for row in json.loads((out / "prepare.json").read_text())["mixed"]
    ]


def assert_same_weights(a: Path, b: Path) -> None:
    left, right = load_causal_lm(a).state_dict(), load_causal_lm(b).state_dict()
    assert left.keys() == right.keys()
    for name in left:
        assert torch.equal(left[name], right[name]), name


@pytest.fixture(scope="module")
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def phase(tiny, tmp_path_factory, one_thread):
    """Phase 0 as the method runs it: SFT on the demonstrations (in this process), then `webrl rl-update` with
    the SFT actor, the demonstrations as replay, 1 process and grad_accum 2: the baseline of the tests below
    (2 processes x grad_accum 1 see the same global batches)."""
    root = tmp_path_factory.mktemp("phase")
    demos = write_jsonl(root / "demos.jsonl", [row for task in range(6) for row in episode(task, True)])
    rollouts = write_jsonl(
        root / "rollouts.jsonl",
        [
            row
            for task in range(6)
            for row in episode(
                task,
                task % 2 == 0,
                episode=f"{task}-a",
                reward=float(task % 2 == 0),
                long_step=1 if task == 5 else None,
            )
        ],
    )
    sft_summary = run_sft(
        SftJob(
            data=demos,
            model=str(tiny),
            out=root / "sft",
            max_tokens=MAX_TOKENS,
            settings=SftSettings(epochs=4, zero_stage=2, **FAST),
        )
    )
    phase = {
        "root": root,
        "demos": demos,
        "rollouts": rollouts,
        "sft": root / "sft",
        "sft_summary": sft_summary,
        "env": update_env(child_env()) | {"WEBRL_STATE_DIR": str(root / "state")},
        "update": root / "update",
    }
    began = time.perf_counter()
    result = webrl(phase["env"], *update_command(phase, phase["update"], "--grad-accum", "2"), timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    phase["update_seconds"], phase["update_stdout"] = time.perf_counter() - began, result.stdout
    return phase


def test_sft_lowers_the_response_nll_and_writes_a_loadable_folder(phase, tiny):
    tokenizer = load_tokenizer(tiny)
    steps = load_steps(phase["demos"])
    n_tokens = torch.tensor([encode(tokenizer, s.prompt, s.response, MAX_TOKENS).n_action for s in steps])
    before = -sequence_logprobs(tiny, steps, tokenizer).sum() / n_tokens.sum()
    after = -sequence_logprobs(phase["sft"] / "actor", steps, tokenizer).sum() / n_tokens.sum()
    assert after < before - 3.0, (before, after)
    summary = json.loads((phase["sft"] / "metrics.json").read_text())
    assert summary == phase["sft_summary"] and summary["data"] == {
        "steps": 18,
        "kept": 18,
        "skipped_too_long": 0,
        "max_tokens": MAX_TOKENS,
    }
    assert summary["sft"]["optimizer_steps"] == 4 * 18 and summary["sft"]["loss_last"] < summary["sft"]["loss_first"]
    # the loss counts response tokens only: each step's action tokens, averaged over the optimizer steps
    assert summary["sft"]["action_tokens_mean"] == pytest.approx(float(n_tokens.float().mean()))
    assert load_tokenizer(phase["sft"] / "actor").bos_token == tokenizer.bos_token
    assert list((phase["sft"] / "tb" / "sft").glob("events.out.tfevents.*"))


def page_nll(model_dir: Path, steps, tokenizer) -> float:
    """Token-mean NLL of the prompts' tokens (after BOS) under the model in `model_dir`."""
    model = load_causal_lm(model_dir)
    total, count = 0.0, 0
    with torch.no_grad():
        for s in steps:
            item = encode(tokenizer, s.prompt, s.response, MAX_TOKENS)
            logp = next_token_logprobs(model, collate([item], pad_token_id(tokenizer)))[0]
            n_page = len(item.input_ids) - 1 - item.n_action
            total, count = total - float(logp[:n_page].sum()), count + n_page
    return total / count


def test_sft_with_a_page_loss_also_learns_the_pages(phase, tiny):
    tokenizer = load_tokenizer(tiny)
    steps = load_steps(phase["demos"])
    out = phase["root"] / "sft-page"
    summary = run_sft(
        SftJob(
            data=phase["demos"],
            model=str(tiny),
            out=out,
            max_tokens=MAX_TOKENS,
            settings=SftSettings(epochs=4, zero_stage=0, page_loss=1.0, **FAST),
        )
    )
    answer_only = page_nll(phase["sft"] / "actor", steps, tokenizer)
    with_page = page_nll(out / "actor", steps, tokenizer)
    assert with_page < answer_only - 1.0, (answer_only, with_page)
    assert summary["sft"]["page_loss"] == 1.0 and phase["sft_summary"]["sft"]["page_loss"] == 0.0
    assert summary["sft"]["page_loss_mean"] > 0 and "page_loss_mean" not in phase["sft_summary"]["sft"]
    # the answer is still trained: its NLL falls as the answer-only SFT's does
    n_tokens = sum(encode(tokenizer, s.prompt, s.response, MAX_TOKENS).n_action for s in steps)
    assert -sequence_logprobs(out / "actor", steps, tokenizer).sum() / n_tokens < 1.0


def test_rl_update_writes_actor_critic_and_metrics(phase):
    out = phase["update"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["data"] == {
        "current_steps": 18,
        "current_kept": 17,
        "current_skipped_too_long": 1,
        "replay_candidates": 18,
        "replay_scored": 18,
        "replay_selected": metrics["data"]["replay_selected"],
        "trained_steps": 17 + metrics["data"]["replay_selected"],
    }
    assert 0 < metrics["data"]["replay_selected"] <= 18  # the SFT actor is confident on some demonstrations
    advantage = metrics["advantage"]
    assert advantage["positive_fraction_successful"] == 1.0  # official form: every successful step is positive
    assert advantage["min"] == pytest.approx(-0.6) and advantage["max"] == 1.0  # binarised
    for name in ("critic", "actor"):
        rows = events(out, name)
        assert len(rows) == metrics[name]["optimizer_steps"] == metrics["data"]["trained_steps"]  # 2 epochs / 2
        assert metrics[name]["tokens_per_s"] > 0 and metrics[name]["grad_norm_mean"] > 0
        assert list((out / "tb" / name).glob("events.out.tfevents.*"))
    # the critic moved from its fresh heads' guess toward its data's success rate (at the actor's 1e-3 it
    # overshoots to ~0.99 everywhere: the reason for --critic-lr); single steps' losses only follow the data order
    values, outcomes = json.loads((out / "values.json").read_text())["v"], success_labels(phase, out)
    rate = sum(outcomes) / len(outcomes)
    assert abs(sum(values) / len(values) - rate) < abs(events(out, "critic")[0]["value"] - rate) - 0.05
    assert metrics["critic_lr"] == 1e-5 and metrics["settings"]["lr"] == 1e-3
    assert {"kl_ref_mean", "log_ratio_mean", "positive_fraction_mean"} <= metrics["actor"].keys()
    assert "actor.tokens_per_s" in phase["update_stdout"] and "advantage.positive_fraction" in phase["update_stdout"]
    actor = load_causal_lm(out / "actor")
    assert actor.config.vocab_size == load_causal_lm(phase["sft"] / "actor").config.vocab_size
    assert load_tokenizer(out / "actor").eos_token == load_tokenizer(phase["sft"] / "actor").eos_token
    critic, start = Critic.load(out / "critic"), load_causal_lm(phase["sft"] / "actor")
    assert critic.heads[0][0].weight.shape == (critic.trunk.config.hidden_size,) * 2
    assert not torch.equal(critic.trunk.norm.weight, start.model.norm.weight)  # the trunk was trained too


def test_the_update_raises_the_log_prob_of_positive_advantage_actions(phase):
    out = phase["update"]
    prepared, values = (json.loads((out / name).read_text()) for name in ("prepare.json", "values.json"))
    current, replay = load_steps(phase["rollouts"]), load_steps(phase["demos"])
    steps = [(current if row["source"] == "current" else replay)[row["index"]] for row in prepared["mixed"]]
    tokenizer = load_tokenizer(out / "actor")
    reference = torch.tensor([row["ref_logp"] for row in prepared["mixed"]])
    n_tokens = torch.tensor([row["n_tokens"] for row in prepared["mixed"]])
    assert torch.allclose(sequence_logprobs(phase["sft"] / "actor", steps, tokenizer), reference, atol=1e-3)
    per_token = (sequence_logprobs(out / "actor", steps, tokenizer) - reference) / n_tokens
    positive = torch.tensor(values["advantage"]) > 0
    assert positive.any() and (~positive).any()
    assert per_token[positive].mean() > 0.05, per_token
    assert per_token[positive].mean() > per_token[~positive].mean() + 0.05  # negatives get no loss (official)


def test_paper_objective_lowers_its_loss_and_moves_log_probs_along_the_advantage(phase, tmp_path, cli_env):
    """The paper form pushes negative-advantage actions down too (the official one leaves them alone). Its
    squared loss on sequence log-ratios oscillates on this tiny data at the lr of the other tests (1e-3), so
    this runs one epoch at 1e-6: a small step down the loss (at 1e-5 one initialisation of `tiny` overshot)."""
    out, beta = tmp_path / "paper", 1.0
    result = webrl(
        update_env(cli_env),
        *update_command(
            phase,
            out,
            "--objective",
            "paper",
            "--beta",
            str(beta),
            "--lr",
            "1e-6",
            "--epochs",
            "1",
            "--zero-stage",
            "0",
        ),
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads((out / "metrics.json").read_text())
    assert summary["objective"] == {"form": "paper", "beta": beta, "lam": 0.5, "awr_temperature": 1.0}
    assert summary["actor"]["optimizer_steps"] == summary["data"]["trained_steps"]
    prepared, values = (json.loads((out / name).read_text()) for name in ("prepare.json", "values.json"))
    baseline = json.loads((phase["update"] / "prepare.json").read_text())["mixed"]
    assert [(row["source"], row["index"]) for row in prepared["mixed"]] == [(r["source"], r["index"]) for r in baseline]
    current, replay = load_steps(phase["rollouts"]), load_steps(phase["demos"])
    steps = [(current if row["source"] == "current" else replay)[row["index"]] for row in prepared["mixed"]]
    moved = sequence_logprobs(out / "actor", steps, load_tokenizer(out / "actor")) - torch.tensor(
        [row["ref_logp"] for row in prepared["mixed"]]
    )
    advantage = torch.tensor(values["advantage"])
    assert (advantage < 0).any() and (advantage > 0).any()  # Eq. 9: failed steps below zero
    assert (moved * advantage).sum() > 0, (moved, advantage)
    assert ((beta * moved - advantage) ** 2).mean() < (advantage**2).mean()  # the loss at the start (moved = 0)


def test_a_critic_without_replay_trains_on_the_rollouts_and_scores_every_step(phase, tmp_path, cli_env):
    """--no-critic-replay: the critic learns from the phase's own steps only (their success rate is below the
    replayed demonstrations', all successes), the actor from the same mix as before."""
    out = tmp_path / "own"
    result = webrl(
        update_env(cli_env), *update_command(phase, out, "--grad-accum", "2", "--no-critic-replay"), timeout=300
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    own, mixed = (json.loads((d / "metrics.json").read_text()) for d in (out, phase["update"]))
    assert own["critic_replay"] is False and mixed["critic_replay"] is True
    assert own["data"] == mixed["data"]
    assert own["critic"]["optimizer_steps"] == own["data"]["current_kept"]  # 2 epochs / grad_accum 2
    assert own["actor"]["optimizer_steps"] == own["data"]["trained_steps"]
    sources = [row["source"] for row in json.loads((out / "prepare.json").read_text())["mixed"]]
    values = {d: json.loads((d / "values.json").read_text())["v"] for d in (out, phase["update"])}
    assert len(values[out]) == len(sources)  # every trained step gets a value and an advantage

    def current_mean(v: list[float]) -> float:
        return sum(x for x, s in zip(v, sources, strict=True) if s == "current") / sources.count("current")

    assert current_mean(values[out]) < current_mean(values[phase["update"]]), values


def assert_same_update(out: Path, baseline: Path) -> None:
    """The update in `out` saw the data `baseline` saw and took the same steps (losses within float noise)."""
    assert (
        json.loads((out / "metrics.json").read_text())["data"]
        == json.loads((baseline / "metrics.json").read_text())["data"]
    )
    for name in ("critic", "actor"):
        assert_same_losses(out, baseline, name)


def assert_same_losses(out: Path, baseline: Path, name: str) -> None:
    mine, theirs = events(out, name), events(baseline, name)
    assert mine and len(mine) == len(theirs)
    for a, b in zip(mine, theirs, strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-3, abs=1e-5), (name, a["step"])


def test_two_processes_under_the_launcher_match_one_process(phase, tmp_path, cli_env):
    out = tmp_path / "two"
    result = webrl(update_env(cli_env), *update_command(phase, out, "--procs", "2", "--zero-stage", "2"), timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert_same_update(out, phase["update"])
    checkpoint = out / "checkpoints" / "actor" / (out / "checkpoints" / "actor" / "latest").read_text().strip()
    assert {p.name for p in checkpoint.glob("rng-rank*.pt")} == {"rng-rank0.pt", "rng-rank1.pt"}


@pytest.mark.slow  # ~1 min: two SFTs and an update
def test_two_ranks_ray_places_on_two_nodes_match_one_process(phase, ray_cluster, tmp_path, cli_env):
    """`--executor ray --nodes 2`: a rank on each of the cluster fixture's two worker nodes (gloo between them),
    for the WebRL update and for SFT, against one process with grad_accum 2."""
    on_ray = ("--executor", "ray", "--ray-address", ray_cluster.address, "--nodes", "2", "--zero-stage", "2")
    env = update_env(cli_env)
    result = webrl(env, *update_command(phase, tmp_path / "update", *on_ray), timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert_same_update(tmp_path / "update", phase["update"])
    assert "--- rank 1" in (tmp_path / "update.log").read_text()

    def sft(out: Path, *extra: str) -> None:
        args = ["--data", str(phase["demos"]), "--model", str(phase["sft"] / "actor"), "--out", str(out)]
        args += ["--lr", "1e-3", "--precision", "fp32", "--max-tokens", str(MAX_TOKENS), "--epochs", "1"]
        done = webrl(env, "sft", *args, *extra, timeout=300)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    sft(tmp_path / "sft-one", "--grad-accum", "2", "--zero-stage", "2")
    sft(tmp_path / "sft-ray", *on_ray)
    assert_same_losses(tmp_path / "sft-ray", tmp_path / "sft-one", "sft")


def test_a_killed_rl_update_resumed_ends_with_the_uninterrupted_actor(phase, tmp_path, cli_env):
    out, env = tmp_path / "killed", update_env(cli_env)
    command = [sys.executable, "-m", "webrl", *update_command(phase, out, "--grad-accum", "2", "--save-every", "1")]
    killed = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    kill_past_step(killed, lambda: events(out, "actor"), timeout=240, poll=0.01)
    assert killed.returncode == -signal.SIGKILL and not (out / "metrics.json").exists()
    cached = {name: os.stat(out / name).st_mtime_ns for name in ("prepare.json", "values.json")}

    result = webrl(env, *update_command(phase, out, "--grad-accum", "2", "--save-every", "1"), timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["actor"]["resumed_from"] >= 1  # the kill may land before step 2 is saved
    assert {name: os.stat(out / name).st_mtime_ns for name in cached} == cached  # the passes were not redone
    assert_same_weights(out / "actor", phase["update"] / "actor")
    assert [row["loss"] for row in events(out, "actor")] == pytest.approx(
        [row["loss"] for row in events(phase["update"], "actor")], rel=1e-6
    )

    # the same folder with another critic rate: its cached critic values are refused, not reused
    result = webrl(env, *update_command(phase, out, "--grad-accum", "2", "--save-every", "1", "--critic-lr", "0.5"))
    assert result.returncode == 2 and "values.json was computed from other inputs (critic_settings)" in result.stderr


def test_bad_rollouts_name_the_file_and_line(phase, tmp_path, cli_env):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(phase["rollouts"].read_text().splitlines()[0] + "\n" + '{"task_id": 1, "step": 0}\n')
    result = webrl(
        update_env(cli_env),
        "rl-update",
        "--data",
        str(bad),
        "--actor",
        str(phase["sft"] / "actor"),
        "--out",
        str(tmp_path / "out"),
    )
    assert result.returncode == 2, result.stderr
    assert f"{bad}:2: task 1: missing field 'prompt'" in result.stderr

    # a rollout without its reward is not taken for a success (SFT data may leave it out: demonstrations)
    record = json.loads(phase["rollouts"].read_text().splitlines()[0])
    del record["reward"]
    bad.write_text(json.dumps(record) + "\n")
    result = webrl(
        update_env(cli_env),
        "rl-update",
        "--data",
        str(bad),
        "--actor",
        str(phase["sft"] / "actor"),
        "--out",
        str(tmp_path / "out"),
    )
    assert result.returncode == 2, result.stderr
    assert f"{bad}:1: task {record['task_id']!r}: missing field 'reward'" in result.stderr


def test_replay_confidence_bounds_choose_the_replayed_demonstrations(phase, tmp_path, cli_env):
    """--replay-confidence LOW HIGH: a candidate is replayed when the actor's confidence exp(ℓ/n) in it lies in
    (LOW, HIGH]. The SFT actor's confidences in these demonstrations are ~0.54 (6) and ~0.78 (12): the paper's
    (0.5, 0.95] keeps all 18, (0.6, 1] the 12."""
    out = tmp_path / "sure"
    result = webrl(
        update_env(cli_env),
        *update_command(phase, out, "--replay-confidence", "0.6", "1.0", "--epochs", "1"),
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    demos = load_steps(phase["demos"])
    tokenizer = load_tokenizer(phase["sft"] / "actor")
    n_tokens = torch.tensor([encode(tokenizer, s.prompt, s.response, MAX_TOKENS).n_action for s in demos])
    confidence = (sequence_logprobs(phase["sft"] / "actor", demos, tokenizer) / n_tokens).exp().tolist()

    def replayed(folder: Path) -> set[int]:
        return {
            row["index"]
            for row in json.loads((folder / "prepare.json").read_text())["mixed"]
            if row["source"] == "replay"
        }

    assert replayed(phase["update"]) == {i for i, c in enumerate(confidence) if 0.5 < c <= 0.95}, confidence
    assert replayed(out) == {i for i, c in enumerate(confidence) if c > 0.6}, confidence
    assert 0 < len(replayed(out)) < len(replayed(phase["update"])), confidence
    assert json.loads((out / "metrics.json").read_text())["replay_confidence"] == [0.6, 1.0]
    bad = webrl(update_env(cli_env), *update_command(phase, tmp_path / "bad", "--replay-confidence", "0.9", "0.5"))
    assert bad.returncode == 2 and "--replay-confidence: expected 0 <= LOW < HIGH <= 1" in bad.stderr
