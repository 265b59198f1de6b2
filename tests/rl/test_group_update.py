"""The GRPO and GiGPO updates on the tiny model with real DeepSpeed: `webrl rl-update --objective grpo` as a user runs
it, and GiGPO in this process. The data are groups of three rollouts of one task from the same start page: one group
of mixed outcomes, one whose rollouts all failed (no signal), one where two of three succeeded."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from cli_support import events, webrl
from engine_support import DIST_ENV, child_env, kill_past_step

from webrl.errors import UsageError
from webrl.policy.models import load_causal_lm
from webrl.policy.prompt import END_OF_TURN, webrl_prompt
from webrl.rl.data import action_logprobs, action_token_logprobs, collate, encode, load_steps, pad_token_id
from webrl.rl.grpo import GroupObjective
from webrl.rl.job_spec import UpdateJob
from webrl.rl.settings import UpdateSettings
from webrl.rl.update import group_loss_fn, phase_items, read_inputs, run_update, token_reference_pass

pytestmark = pytest.mark.slow  # trains under DeepSpeed

MAX_TOKENS = 256
OUTCOMES = {0: [1.0, 0.0, 0.0], 1: [0.0, 0.0, 0.0], 2: [1.0, 1.0, 0.0]}  # task -> its members' rewards
ENGINE = ["--lr", "3e-3", "--precision", "fp32", "--zero-stage", "0", "--micro-batch-size", "2", "--epochs", "4"]


def rollouts(path: Path, outcomes: dict[int, list[float]] = OUTCOMES) -> Path:
    """Two steps per member; the first page is the task's start page, the same for all its members."""
    rows = []
    for task, rewards in outcomes.items():
        for member, reward in enumerate(rewards):
            good = reward > 0
            history: list[str] = []
            for step in range(2):
                page = f'<html> <button id="{task + step}"> Go </button> <a id="{9 + member}"> page {step} </a> </html>'
                if step == 0:
                    page = f'<html> <button id="{task}"> Start task {task} </button> </html>'
                text = f'do(action="Click", element="{task + step if good else 30 + member}")'
                prompt = webrl_prompt(f"Task {task}", history, page)
                rows.append(
                    {"task_id": task, "episode": f"{task}-{member}", "step": step, "prompt": prompt, "response": text}
                    | {"reward": reward}
                )
                history.append(text)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def logprobs(model_dir: Path, steps, tokenizer) -> list[float]:
    model = load_causal_lm(model_dir)
    pad = pad_token_id(tokenizer)
    with torch.no_grad():
        return [
            float(action_logprobs(model, collate([encode(tokenizer, s.prompt, s.response, MAX_TOKENS)], pad))[0])
            for s in steps
        ]


@pytest.fixture(scope="module")
def grpo_run(tiny, tmp_path_factory):
    root = tmp_path_factory.mktemp("grpo")
    data = rollouts(root / "rollouts.jsonl")
    env = {k: v for k, v in child_env().items() if k not in DIST_ENV} | {"OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    env["WEBRL_STATE_DIR"] = str(root / "state")
    out = root / "update"
    result = webrl(env, *grpo_command(data, tiny, out), timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return {"tiny": tiny, "data": data, "out": out, "root": root, "env": env}


def grpo_command(data: Path, actor: Path, out: Path, *extra: str) -> list[str]:
    args = ["--data", str(data), "--actor", str(actor), "--out", str(out), "--max-tokens", str(MAX_TOKENS)]
    return ["rl-update", *args, "--objective", "grpo", *ENGINE, *extra]


def test_grpo_drops_the_group_without_signal_and_counts_it(grpo_run):
    summary = json.loads((grpo_run["out"] / "metrics.json").read_text())
    counts = {"groups": 3, "groups_uniform": 1, "groups_dropped": 1, "trained_steps": 12}
    assert summary["data"].items() >= counts.items()
    # the groups' advantages by hand: rewards (1, 0, 0) give √2 and −1/√2, (1, 1, 0) give 1/√2 and −√2
    assert summary["advantage"]["max"] == pytest.approx(math.sqrt(2), rel=1e-4)
    assert summary["advantage"]["min"] == pytest.approx(-math.sqrt(2), rel=1e-4)
    assert summary["actor"]["optimizer_steps"] == 12 * 4 // 2
    assert not (grpo_run["out"] / "critic").exists()  # no critic


def test_the_rollout_log_probs_are_the_phase_start_actors(grpo_run, tokenizer):
    steps = load_steps(grpo_run["data"])
    prepared = json.loads((grpo_run["out"] / "prepare.json").read_text())["mixed"]
    expected = logprobs(grpo_run["tiny"], steps, tokenizer)
    for row in prepared:
        assert sum(row["ref_tokens"]) == pytest.approx(expected[row["index"]], abs=1e-4)
        assert len(row["ref_tokens"]) == row["n_tokens"]


def test_the_ratio_is_against_the_sampler_s_recorded_log_probs_and_the_kl_against_the_phase_start_actor(
    grpo_run, tokenizer
):
    """Steps that recorded what the sampler drew are trained on those tokens, with its log-probs as ℓ_old: step 0
    an answer cut at its token limit (recorded: the true values − 0.1, as an engine with other numerics might
    report; training appends the end-of-turn token, which keeps the phase-start actor's value), step 2 an answer
    drawn one character a token (not how the tokenizer splits it). Step 1 recorded nothing: ℓ_old is recomputed.
    The first loss sees ratio e^0.1 on step 0's recorded tokens, 1 elsewhere, and no KL."""
    rows = [json.loads(line) for line in grpo_run["data"].read_text().splitlines()]
    model = load_causal_lm(grpo_run["tiny"])
    pad = pad_token_id(tokenizer)
    end = tokenizer(END_OF_TURN, add_special_tokens=False).input_ids
    encoded = encode(tokenizer, rows[0]["prompt"], rows[0]["response"], MAX_TOKENS)
    with torch.no_grad():
        logp, mask = action_token_logprobs(model, collate([encoded], pad))
    cut = encoded.n_action - len(end)
    rows[0]["sampled_ids"] = encoded.input_ids[-encoded.n_action :][:cut]
    rows[0]["sampled_logprobs"] = [x - 0.1 for x in logp[mask].tolist()[:cut]]
    chars = [tokenizer(c, add_special_tokens=False).input_ids for c in rows[2]["response"]]
    assert all(len(c) == 1 for c in chars)
    rows[2]["sampled_ids"] = [c[0] for c in chars] + end
    rows[2]["sampled_logprobs"] = [-1.0] * len(rows[2]["sampled_ids"])
    data = grpo_run["root"] / "sampled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    inputs = read_inputs(data, str(grpo_run["tiny"]), [], MAX_TOKENS, None)
    prepared = token_reference_pass(inputs, UpdateSettings(precision="fp32").train_settings())
    assert (prepared["counts"]["old_recorded"], prepared["counts"]["old_recomputed"]) == (2, len(rows) - 2)
    first, second, third = prepared["mixed"][:3]
    assert first["n_tokens"] == encoded.n_action and first["old_tokens"][cut:] == first["ref_tokens"][cut:]
    assert "old_tokens" not in second
    assert (
        third["n_tokens"]
        == len(rows[2]["sampled_ids"])
        > encode(tokenizer, rows[2]["prompt"], rows[2]["response"], MAX_TOKENS).n_action
    )
    assert third["old_tokens"] == rows[2]["sampled_logprobs"]
    items = phase_items(inputs, prepared, as_sampled=True)
    assert items[2].encoded.input_ids[-items[2].encoded.n_action :] == rows[2]["sampled_ids"]
    loss = group_loss_fn(GroupObjective("grpo", clip=10.0, kl_coef=0.1), pad)
    with torch.no_grad():
        _, recorded = loss(model, [items[0]])
        _, recomputed = loss(model, [items[1]])
    assert recorded["ratio"] == pytest.approx((cut * math.exp(0.1) + len(end)) / encoded.n_action, abs=1e-3)
    assert recomputed["ratio"] == pytest.approx(1.0, abs=1e-4)
    assert recorded["kl_ref"] == pytest.approx(0.0, abs=1e-6)


def test_a_step_file_s_sampled_log_probs_need_one_per_token(tmp_path):
    row = {"task_id": 1, "step": 0, "prompt": "p", "response": "r", "reward": 1.0}
    path = tmp_path / "steps.jsonl"
    path.write_text(json.dumps(row | {"sampled_ids": [1, 2], "sampled_logprobs": [-0.5]}) + "\n")
    with pytest.raises(UsageError, match=r"steps.jsonl:1: task 1: field 'sampled_logprobs' needs one log-prob per"):
        load_steps(path)


def test_grpo_raises_the_successes_against_the_failures_of_their_group(grpo_run, tokenizer):
    steps = load_steps(grpo_run["data"])
    before = logprobs(grpo_run["tiny"], steps, tokenizer)
    after = logprobs(grpo_run["out"] / "actor", steps, tokenizer)
    moved = {(s.reward > 0, s.task_id): [] for s in steps}
    for s, b, a in zip(steps, before, after, strict=True):
        moved[s.reward > 0, s.task_id].append(a - b)
    for task in (0, 2):
        success, failure = moved[True, task], moved[False, task]
        assert sum(success) / len(success) > sum(failure) / len(failure) + 0.5, (task, success, failure)


def test_gigpo_trains_with_its_step_advantage(grpo_run):
    out = grpo_run["root"] / "gigpo"
    settings = UpdateSettings(
        objective="gigpo",
        step_advantage_weight=1.0,
        step_gamma=0.5,
        trajectory_normaliser=False,
        dynamic_sampling=False,
        **{"lr": 3e-3, "precision": "fp32", "zero_stage": 0, "micro_batch_size": 2},
    )
    job = UpdateJob(
        data=grpo_run["data"], model=str(grpo_run["tiny"]), out=out, max_tokens=MAX_TOKENS, settings=settings
    )
    summary = run_update(job)
    # task 2's failure: A^E = −√2 at both steps; its start page is an anchor of returns 0.5, 0.5, 0 (γ^1·R):
    # A^S = −√2 there, so the least advantage is −2√2; without dynamic sampling task 1 trains with A = 0
    assert summary["advantage"]["min"] == pytest.approx(-2 * math.sqrt(2), rel=1e-4)
    assert summary["data"]["trained_steps"] == 18
    assert (out / "actor" / "config.json").exists()


def test_a_group_without_signal_leaves_the_actor_as_the_update_without_it(grpo_run):
    # Task 1's rollouts all failed: A = 0, no gradient. Dropped (the default), it changes nothing; kept, its optimizer
    # steps still move the actor (Adam's steps do not shrink with the gradient).
    without = rollouts(grpo_run["root"] / "without-1.jsonl", {0: OUTCOMES[0], 2: OUTCOMES[2]})
    engine = {"lr": 3e-3, "precision": "fp32", "zero_stage": 0, "micro_batch_size": 2}

    def actor(data: Path, name: str, **objective) -> dict:
        settings = UpdateSettings(objective="grpo", **objective, **engine)
        out = grpo_run["root"] / name
        run_update(UpdateJob(data=data, model=str(grpo_run["tiny"]), out=out, max_tokens=MAX_TOKENS, settings=settings))
        return load_causal_lm(out / "actor").state_dict()

    reference = actor(without, "without-1")
    dropped, kept = actor(grpo_run["data"], "dropped"), actor(grpo_run["data"], "kept", dynamic_sampling=False)
    assert all(torch.equal(dropped[name], reference[name]) for name in reference)
    assert not all(torch.equal(kept[name], reference[name]) for name in reference)


def test_a_killed_grpo_update_resumed_ends_with_the_uninterrupted_actor(grpo_run):
    out = grpo_run["root"] / "killed"
    command = [
        sys.executable,
        "-m",
        "webrl",
        *grpo_command(grpo_run["data"], grpo_run["tiny"], out, "--save-every", "1"),
    ]
    killed = subprocess.Popen(command, env=grpo_run["env"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    kill_past_step(killed, lambda: events(out, "actor"), timeout=240, poll=0.01)
    assert killed.returncode == -signal.SIGKILL and not (out / "metrics.json").exists()
    result = webrl(grpo_run["env"], *grpo_command(grpo_run["data"], grpo_run["tiny"], out, "--save-every", "1"))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert json.loads((out / "metrics.json").read_text())["actor"]["resumed_from"] >= 1
    left, right = load_causal_lm(out / "actor").state_dict(), load_causal_lm(grpo_run["out"] / "actor").state_dict()
    assert all(torch.equal(left[name], right[name]) for name in right)


def test_a_critic_or_replay_given_to_grpo_is_refused_in_one_line(grpo_run):
    for extra, named in (
        (["--critic", str(grpo_run["root"])], "--critic"),
        (["--replay-steps", str(grpo_run["data"])], "--replay-steps"),
    ):
        command = grpo_command(grpo_run["data"], grpo_run["tiny"], grpo_run["root"] / "refused", *extra)
        result = webrl(grpo_run["env"], *command)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert (
            result.stderr.strip()
            == f"error: {named}: grpo trains on the phase's own rollouts, with no critic and no replay"
        )


def test_a_phase_whose_groups_all_lack_signal_keeps_its_actor(grpo_run):
    data = rollouts(grpo_run["root"] / "uniform.jsonl", {0: [0.0, 0.0], 1: [1.0, 1.0]})
    out = grpo_run["root"] / "uniform"
    result = webrl(grpo_run["env"], *grpo_command(data, grpo_run["tiny"], out))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads((out / "metrics.json").read_text())
    assert summary["data"]["groups_dropped"] == 2 and summary["data"]["trained_steps"] == 0
    assert summary["actor"] == {"skipped": "every group's rollouts got the same reward"}
    assert not (out / "actor").exists()
