"""One WebRL phase's update from a rollout file: the critic, then the actor.

Stages, in order; each one's result is kept in `out`, so re-running the same command after a kill continues:

1. prepare: load the phase's steps and the replay sources (earlier phases' step files, the SFT demonstrations
   at phase 0). One no-grad pass of the actor as it is at the start of the phase gives every current step and
   every replay candidate its summed action log-prob ℓ and token count n. These are the reference log-probs
   (π_ref is exactly this actor, frozen), and exp(ℓ/n) is a candidate's confidence score, which selects the
   replay (replay.select_replay, between the `replay_confidence` bounds; then replay.mix). Cached in
   out/prepare.json.
2. critic: the critic from `critic_dir`, else the actor's trunk with fresh (seeded) heads; one epoch of the
   objective's critic loss over the mixed steps (s and s' in one forward pass), or over the phase's own steps
   only (`critic_replay=False`: values that say where this actor succeeds, not where the demonstrations did);
   out/critic. Then V(s) and V(s') of every mixed step under the trained critic (no grad) and the objective's
   advantages; cached in out/values.json.
3. actor: one epoch of the objective's actor loss over the mixed steps against the cached reference
   log-probs and advantages; out/actor, a Hugging Face folder with the tokenizer that from_pretrained, the
   next phase and vLLM load directly.
4. out/metrics.json: step counts, replay sizes, value and advantage statistics, both trainings' losses, grad
   norms, log-ratio / KL to the reference and tokens/s. Per-step logs: out/events.jsonl and out/tb/.

Deliberate improvement over the official trainer: it holds three DeepSpeed engines, the actor, a
second full copy of the actor as the reference (with an AdamW that is never stepped) and the critic. The
reference is frozen and the phase's data are fixed, so its log-probs are computed once here, before
training, in the training's precision: no second copy of the model exists during the update, and no
reference forward pass runs per step. The critic is released before the actor is loaded. Cost: the
reference sums are computed in batches of similar length, while training uses micro-batches; the two agree
to rounding (about 1e-6 relative in fp32).

With several processes the no-grad passes are split across them and gathered; every process trains (ZeRO).
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from webrl.errors import UsageError
from webrl.files import write_atomically
from webrl.policy.models import load_causal_lm, load_tokenizer, quiet, resolve_model
from webrl.policy.prompt import prompt_page
from webrl.rl.critic import Critic
from webrl.rl.data import (
    Batch,
    Encoded,
    TrainingStep,
    action_logprobs,
    action_token_logprobs,
    collate,
    encode_prompt,
    encode_steps,
    load_steps,
    max_tokens_for,
    pad_token_id,
)
from webrl.rl.engine import (
    ACTOR_DIR,
    Engine,
    TrainSettings,
    event_summary,
    gathered,
    init_distributed,
    is_main,
    write_metrics,
)
from webrl.rl.grpo import GroupObjective, GroupStep, clipped_loss, uniform_groups
from webrl.rl.job_spec import UpdateJob
from webrl.rl.lora import trainable_model
from webrl.rl.objective import Objective, value_from_logits
from webrl.rl.passes import batched_pass, logprob_rows, pass_device, pass_dtype, sharded_map, token_logprob_rows
from webrl.rl.replay import mix, replay_candidates, select_replay
from webrl.rl.settings import GROUP_FORMS, UpdateSettings

CRITIC_DIR, PREPARE_FILE, VALUES_FILE = "critic", "prepare.json", "values.json"
PASS_BATCH = 4  # rows per no-grad forward pass


@dataclass(frozen=True)
class Item:
    """One training step of the phase: the step, its tokens, where it came from and what the passes gave it."""

    step: TrainingStep
    encoded: Encoded
    source: str  # "current" or "replay"
    ref_logp: float
    n_tokens: int
    advantage: float = 0.0
    ref_tokens: tuple[float, ...] = ()  # per action token, under the phase-start actor (the group objectives' KL)
    old_tokens: tuple[float, ...] = ()  # per action token, as the rollout policy sampled them (their ratio)
    weight: float = 1.0  # of its loss (the group objectives' 1/k normaliser)


@dataclass(frozen=True)
class Inputs:
    """What the update reads, resolved: the actor folder, its tokenizer, the token limit and the steps."""

    actor_dir: Path
    tokenizer: Any
    max_tokens: int
    current: list[TrainingStep]
    candidates: list[TrainingStep]


# ---- inputs and caches -----------------------------------------------------------------------------------


def load_replay(files: Sequence[Path]) -> list[TrainingStep]:
    """The steps of every replay file, episode names prefixed by the file's position so that episodes of
    different files never merge (demonstrations name their episode after the task)."""
    steps = []
    for index, path in enumerate(files):
        steps += [dataclasses.replace(s, episode=f"{index}:{s.episode}") for s in load_steps(Path(path))]
    return steps


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def cache_key(
    rollouts: Path,
    inputs: Inputs,
    critic_dir: Path | None,
    replay_files: Sequence[Path],
    replay_confidence: tuple[float, float],
    settings: TrainSettings,
    objective: Objective,
) -> dict[str, Any]:
    """What the cached passes depend on; a cache made from anything else is refused."""
    return {
        "rollouts": file_digest(rollouts),
        "replay": [file_digest(p) for p in replay_files],
        "replay_confidence": list(replay_confidence),
        "actor": str(inputs.actor_dir.resolve()),
        "critic": str(Path(critic_dir).resolve()) if critic_dir else None,
        "max_tokens": inputs.max_tokens,
        "seed": settings.seed,
        "precision": settings.compute_precision(),
        "objective": dataclasses.asdict(objective),
    }


def cached(path: Path, key: dict[str, Any], compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The JSON in `path` if it was computed from `key`, else `compute()` written there atomically (rank 0).
    Every rank computes (the passes are collective) and every rank reads: one filesystem, as for checkpoints."""
    if dist.is_initialized():
        dist.barrier()
    if path.exists():
        data = json.loads(path.read_text())
        if data["key"] != key:
            changed = sorted(k for k in key if key[k] != data["key"].get(k))
            raise UsageError(
                f"{path} was computed from other inputs ({', '.join(changed)}); use another --out "
                f"or remove {path.parent}"
            )
        return data
    data = {"key": key, **compute()}
    if is_main():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(data))
    return data


def read_inputs(
    rollouts: Path, actor_spec: str, replay_files: Sequence[Path], max_tokens: int | None, cache_dir: Path | None
) -> Inputs:
    actor_dir = resolve_model(actor_spec, cache_dir)
    current = load_steps(Path(rollouts), reward_required=True)
    if not current:
        raise UsageError(f"{rollouts}: no steps")
    return Inputs(
        actor_dir,
        load_tokenizer(actor_dir),
        max_tokens_for(actor_dir, max_tokens),
        current,
        replay_candidates(load_replay(replay_files)),
    )


# ---- stage 1: reference log-probs and the replay ---------------------------------------------------------


def reference_pass(inputs: Inputs, settings: TrainSettings, replay_confidence: tuple[float, float]) -> dict[str, Any]:
    """ℓ and n under the phase-start actor for every current step and replay candidate that fits, then the
    replay selection (confidence exp(ℓ/n) in `replay_confidence`); the result lists the phase's training steps
    in their mixed order."""
    steps = inputs.current + inputs.candidates
    encoded, _ = encode_steps(inputs.tokenizer, steps, inputs.max_tokens)
    fits = [i for i, e in enumerate(encoded) if e is not None]
    model = load_causal_lm(inputs.actor_dir).to(pass_device(), pass_dtype(settings))
    rows = logprob_rows(model)
    pad = pad_token_id(inputs.tokenizer)
    scored = sharded_map(
        lambda share: batched_pass(rows, [encoded[fits[i]] for i in share], pad, pass_device(), PASS_BATCH), len(fits)
    )
    logprobs: dict[int, tuple[float, int]] = dict(zip(fits, scored, strict=True))
    n_current = len(inputs.current)
    current = [("current", i) for i in range(n_current) if i in logprobs]
    if not current:
        raise UsageError(f"no rollout step fits in --max-tokens {inputs.max_tokens}")
    scores = [
        math.exp(logprobs[n_current + i][0] / logprobs[n_current + i][1]) if n_current + i in logprobs else None
        for i in range(len(inputs.candidates))
    ]
    labelled = [("replay", i) for i in range(len(inputs.candidates))]
    replay = select_replay(labelled, scores, len(current), settings.seed, replay_confidence)
    order = mix(replay, current, settings.seed)
    offset = {"current": 0, "replay": n_current}
    mixed = [
        {
            "source": source,
            "index": i,
            "ref_logp": logprobs[offset[source] + i][0],
            "n_tokens": logprobs[offset[source] + i][1],
        }
        for source, i in order
    ]
    counts = {
        "current_steps": n_current,
        "current_kept": len(current),
        "current_skipped_too_long": n_current - len(current),
        "replay_candidates": len(inputs.candidates),
        "replay_scored": sum(s is not None for s in scores),
        "replay_selected": len(replay),
        "trained_steps": len(mixed),
    }
    return {"mixed": mixed, "counts": counts}


def phase_items(inputs: Inputs, prepared: dict[str, Any], as_sampled: bool = False) -> list[Item]:
    """The mixed training steps of the cached preparation, with their tokens (`as_sampled`: encode_steps')."""
    items = []
    for row in prepared["mixed"]:
        step = (inputs.current if row["source"] == "current" else inputs.candidates)[row["index"]]
        encoded, _ = encode_steps(inputs.tokenizer, [step], inputs.max_tokens, as_sampled)
        ref, old = tuple(row.get("ref_tokens", ())), tuple(row.get("old_tokens", row.get("ref_tokens", ())))
        items.append(
            Item(step, encoded[0], row["source"], row["ref_logp"], row["n_tokens"], ref_tokens=ref, old_tokens=old)
        )
    return items


# ---- stage 2: critic and advantages ----------------------------------------------------------------------


@dataclass(frozen=True)
class CriticInput:
    """A critic training example: the observation s, the next observation s', and the step's targets."""

    state: Encoded
    next_state: Encoded
    reward: float
    mc_return: float


def critic_inputs(items: Sequence[Item], tokenizer, max_tokens: int) -> list[CriticInput]:
    """Observations only (V(s): the official critic ignores the action), cut as the actor's prompts are (the
    page's end)."""
    return [
        CriticInput(
            Encoded(encode_prompt(tokenizer, item.step.prompt, max_tokens), 0),
            Encoded(encode_prompt(tokenizer, item.step.next_observation, max_tokens), 0),
            item.step.reward,
            item.step.mc_return,
        )
        for item in items
    ]


def critic_loss_fn(objective: Objective, pad_id: int) -> Callable:
    """The engine's loss function for the critic. The official loss needs s and s' (one forward pass over
    both); the paper's needs s only."""
    with_next = objective.form == "official"

    def loss(model, micro: list[CriticInput]) -> tuple[torch.Tensor, dict[str, float]]:
        rows = [m.state for m in micro] + ([m.next_state for m in micro] if with_next else [])
        batch = collate(rows, pad_id).to(model.device)
        logits = model(batch.input_ids, batch.attention_mask).float()
        k = len(micro)
        logits_s, logits_next = logits[:k], logits[k:] if with_next else logits[:k]
        reward = torch.tensor([m.reward for m in micro], device=logits.device)
        mc_return = torch.tensor([m.mc_return for m in micro], device=logits.device)
        value = value_from_logits(logits_s.detach())
        return objective.critic_loss(logits_s, logits_next, reward, mc_return), {
            "tokens": float(batch.attention_mask.sum()),
            "value": float(value.mean()),
        }

    return loss


def build_critic(inputs: Inputs, critic_dir: Path | None, settings: TrainSettings) -> Critic:
    """The previous phase's critic, else the actor's trunk with fresh heads (seeded: a resumed run that was
    killed before its first checkpoint starts from the same heads), its trunk trained in full or through an adapter
    (`settings.lora`, the update's critic_lora): the previous critic's, else a new one on the actor's weights (an
    actor's adapter merged; the critic's adapter then names the actor's folder as its base). The engine's
    gradient-checkpointing switch is the trunk's (the official critic trains with it)."""
    if critic_dir is not None and not (Path(critic_dir) / "heads.pt").is_file():
        raise UsageError(
            f"--critic {critic_dir}: not a critic folder (no heads.pt); give the critic/ folder "
            "of an earlier rl-update, or leave --critic out for a fresh one"
        )
    torch.manual_seed(settings.seed)
    with quiet():  # a fresh critic's adapter starts anew on the actor's weights
        trunk = trainable_model(
            Path(critic_dir or inputs.actor_dir), settings.lora, settings.seed, "critic_lora", critic_dir is not None
        )
        critic = Critic(trunk)
    if critic_dir is not None:
        critic.with_heads_of(critic_dir)
    critic.gradient_checkpointing_enable = critic.trunk.gradient_checkpointing_enable
    return critic


def save_critic(engine: Engine, out: Path, tokenizer) -> None:
    """out/critic from every rank (ZeRO-3 gathers the trained parameters first: every one, or an adapter's and the
    heads); rank 0 writes."""
    trained = [p for p in engine.module.parameters() if p.requires_grad]
    with gathered(trained, engine.settings.zero_stage), quiet():
        if is_main():
            engine.module.save(out, tokenizer)
    dist.barrier()


def value_rows(engine: Engine) -> Callable[[Batch], list[float]]:
    """A batched_pass function: V(s) per row under the trained critic (through the engine: ZeRO-3 hooks)."""

    def rows(batch: Batch) -> list[float]:
        return value_from_logits(engine.engine(batch.input_ids, batch.attention_mask).float()).tolist()

    return rows


def critic_stage(
    inputs: Inputs,
    items: Sequence[Item],
    critic_dir: Path | None,
    out: Path,
    settings: TrainSettings,
    objective: Objective,
    replay: bool = True,
) -> dict[str, Any]:
    """Train the critic (on the replayed items too, or not), save it, and return V(s), V(s') and the advantage
    of every item."""
    examples = critic_inputs(items, inputs.tokenizer, inputs.max_tokens)
    pad = pad_token_id(inputs.tokenizer)
    engine = Engine(build_critic(inputs, critic_dir, settings), settings, out, "critic")
    trained = [e for e, item in zip(examples, items, strict=True) if replay or item.source == "current"]
    result = engine.train(trained, critic_loss_fn(objective, pad))
    save_critic(engine, out / CRITIC_DIR, inputs.tokenizer)
    engine.engine.eval()
    observations = [e.state for e in examples] + [e.next_state for e in examples]
    values = sharded_map(
        lambda share: batched_pass(
            value_rows(engine), [observations[i] for i in share], pad, engine.engine.device, PASS_BATCH
        ),
        len(observations),
    )
    v, v_next = values[: len(items)], values[len(items) :]
    steps = [item.step for item in items]
    advantage = objective.advantage(
        torch.tensor(v),
        torch.tensor(v_next),
        torch.tensor([s.reward for s in steps]),
        torch.tensor([s.mc_return for s in steps]),
        torch.tensor([s.done for s in steps]),
    ).tolist()
    release(engine)
    return {"v": v, "v_next": v_next, "advantage": advantage, "critic_resumed_from": result["resumed_from"]}


def release(engine: Engine) -> None:
    """Free a finished engine's model and optimizer before the next one is built."""
    engine.engine.destroy()
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


# ---- stage 3: actor --------------------------------------------------------------------------------------


def actor_loss_fn(objective: Objective, pad_id: int) -> Callable:
    """The engine's loss function for the actor: the objective's loss against the cached reference, plus
    kl_ref = Σ(ℓ_ref − ℓ) / Σn, the per-token sample estimate of KL(π_ref ‖ π_θ) on steps sampled from π_ref."""

    def loss(model, micro: list[Item]) -> tuple[torch.Tensor, dict[str, float]]:
        batch = collate([m.encoded for m in micro], pad_id).to(model.device)
        logp, n_tokens = action_logprobs(model, batch)
        ref = torch.tensor([m.ref_logp for m in micro], dtype=logp.dtype, device=logp.device)
        advantage = torch.tensor([m.advantage for m in micro], dtype=logp.dtype, device=logp.device)
        value, stats = objective.actor_loss(logp, ref, n_tokens, advantage)
        kl = float((ref - logp.detach()).sum() / n_tokens.sum().clamp(min=1))
        return value, {"tokens": float(batch.attention_mask.sum()), **stats, "kl_ref": kl}

    return loss


def actor_stage(
    inputs: Inputs, items: Sequence[Item], out: Path, settings: TrainSettings, loss: Callable
) -> dict[str, Any]:
    """Train the phase-start actor on `items` with the engine's loss function `loss`; save out/actor."""
    engine = Engine(trainable_model(inputs.actor_dir, settings.lora, settings.seed), settings, out, "actor")
    result = engine.train(list(items), loss)
    with quiet():
        engine.save_pretrained(out / ACTOR_DIR, inputs.tokenizer)
    release(engine)
    return result


# ---- the phase -------------------------------------------------------------------------------------------


def advantage_stats(items: Sequence[Item]) -> dict[str, float]:
    advantage = torch.tensor([item.advantage for item in items])
    success = torch.tensor([item.step.reward >= 0.5 for item in items])
    return {
        "mean": float(advantage.mean()),
        "positive_fraction": float((advantage > 0).float().mean()),
        "min": float(advantage.min()),
        "max": float(advantage.max()),
        "positive_fraction_successful": float((advantage[success] > 0).float().mean()) if success.any() else 0.0,
        "positive_fraction_failed": float((advantage[~success] > 0).float().mean()) if (~success).any() else 0.0,
    }


def objective_of(settings: UpdateSettings) -> Objective | GroupObjective:
    """The objective the settings choose, with their parameters."""
    if settings.objective in GROUP_FORMS:
        return GroupObjective(
            settings.objective,
            clip=settings.clip_ratio,
            kl_coef=settings.kl_coef,
            trajectory_normaliser=settings.trajectory_normaliser,
            omega=settings.step_advantage_weight,
            gamma=settings.step_gamma,
            dynamic_sampling=settings.dynamic_sampling,
        )
    return Objective(settings.objective, beta=settings.beta, lam=settings.lam, awr_temperature=settings.awr_temperature)


def run_update(job: UpdateJob) -> dict[str, Any]:
    """One phase's critic and actor update (module docstring); returns the summary in out/metrics.json. The
    critic trains at `critic_lr` where given, else at the actor's `lr` (the official default.yaml sets both to
    1e-6), on the replayed steps too unless `critic_replay` is off. Earlier successful steps are replayed (unless
    `replay` is off) where the actor's confidence in them lies in `replay_confidence` (low, high]."""
    settings, out, seconds = job.settings, Path(job.out), {}
    objective = objective_of(settings)
    if isinstance(objective, GroupObjective):
        return run_group_update(job, objective)
    replay_files = job.replay if settings.replay else []
    began = time.perf_counter()
    # bad input is refused first
    inputs = read_inputs(Path(job.data), job.model, replay_files, job.max_tokens, job.models_dir)
    init_distributed()
    key = cache_key(Path(job.data), inputs, job.critic, replay_files, settings.replay_confidence, settings, objective)
    prepared = cached(out / PREPARE_FILE, key, lambda: reference_pass(inputs, settings, settings.replay_confidence))
    items = phase_items(inputs, prepared)
    seconds["prepare"] = time.perf_counter() - began
    critic_settings = settings.critic_settings()
    # V(s) also depends on how the critic trained: another --critic-lr or critic data must not reuse these values
    values = cached(
        out / VALUES_FILE,
        {**key, "critic_settings": critic_settings.model_dump(mode="json"), "critic_replay": settings.critic_replay},
        lambda: critic_stage(inputs, items, job.critic, out, critic_settings, objective, settings.critic_replay),
    )
    items = [dataclasses.replace(item, advantage=a) for item, a in zip(items, values["advantage"], strict=True)]
    seconds["critic"] = time.perf_counter() - began - seconds["prepare"]
    actor = actor_stage(
        inputs, items, out, settings.train_settings(), actor_loss_fn(objective, pad_token_id(inputs.tokenizer))
    )
    seconds["actor"] = time.perf_counter() - began - seconds["prepare"] - seconds["critic"]
    summary = {
        "data": prepared["counts"],
        "advantage": {**advantage_stats(items), "value_mean": sum(values["v"]) / len(values["v"])},
        "critic": {**event_summary(out, "critic"), "resumed_from": values["critic_resumed_from"]},
        "actor": {**event_summary(out, "actor"), "resumed_from": actor["resumed_from"]},
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "actor_in": str(inputs.actor_dir),
        "actor_out": str(out / ACTOR_DIR),
        "critic_out": str(out / CRITIC_DIR),
        "objective": dataclasses.asdict(objective),
        "settings": settings.model_dump(mode="json"),
        "critic_lr": critic_settings.lr,
        "critic_replay": settings.critic_replay,
        "replay_confidence": list(settings.replay_confidence),
    }
    write_metrics(out, summary)
    return summary


# ---- the group objectives (GRPO, GiGPO) ------------------------------------------------------------------


def token_reference_pass(inputs: Inputs, settings: TrainSettings) -> dict[str, Any]:
    """Per-token log-probs of every current step that fits, under the phase-start actor: ℓ_ref. That actor also
    sampled the rollouts; the steps are trained on the tokens it drew, the prompt cut as it cut it, where it
    recorded them (an hf or vllm actor), so that ℓ_old is what it recorded (`sampled_logprobs`); elsewhere the
    recomputed ℓ_ref (counted: `old_recomputed`). Where both exist, `sampler_gap` is their mean
    absolute difference per token: how far the sampling engine's numbers are from the trainer's (5e-4 for the hf
    sampler in the recipe's test; more for vLLM's kernels and precision)."""
    encoded, skipped = encode_steps(inputs.tokenizer, inputs.current, inputs.max_tokens, as_sampled=True)
    fits = [i for i, e in enumerate(encoded) if e is not None]
    if not fits:
        raise UsageError(f"no rollout step fits in --max-tokens {inputs.max_tokens}")
    model = load_causal_lm(inputs.actor_dir).to(pass_device(), pass_dtype(settings))
    rows = token_logprob_rows(model)
    pad = pad_token_id(inputs.tokenizer)
    scored = sharded_map(
        lambda share: batched_pass(rows, [encoded[fits[i]] for i in share], pad, pass_device(), PASS_BATCH), len(fits)
    )
    mixed, gaps = [], []
    for i, tokens in zip(fits, scored, strict=True):
        row = {"source": "current", "index": i, "ref_logp": sum(tokens), "n_tokens": len(tokens), "ref_tokens": tokens}
        if (old := sampled_logprobs(inputs.current[i], tokens)) is not None:
            row["old_tokens"] = old
            drawn = inputs.current[i].sampled_logprobs
            gaps += [abs(a - b) for a, b in zip(drawn, tokens[: len(drawn)], strict=True)]
        mixed.append(row)
    recorded = sum("old_tokens" in row for row in mixed)
    counts = {
        "current_steps": len(inputs.current),
        "current_kept": len(fits),
        "current_skipped_too_long": skipped,
        "old_recorded": recorded,
        "old_recomputed": len(mixed) - recorded,
        "sampler_gap": sum(gaps) / len(gaps) if gaps else None,
    }
    return {"mixed": mixed, "counts": counts}


def sampled_logprobs(step: TrainingStep, ref: list[float]) -> list[float] | None:
    """ℓ_old of the step's action tokens (encoded as sampled) where the sampler recorded its log-probs: its own,
    and `ref`'s for the end-of-turn tokens that training appends to an answer cut at its token limit."""
    recorded = list(step.sampled_logprobs)
    return recorded + ref[len(recorded) :] if recorded else None


def group_steps(items: Sequence[Item], lengths: dict[str, int]) -> list[GroupStep]:
    """The items as the group advantages see them: the task is the group, the page the anchor."""
    return [
        GroupStep(
            item.step.task_id,
            item.step.episode,
            item.step.step,
            lengths[item.step.episode],
            item.step.reward,
            prompt_page(item.step.prompt),
        )
        for item in items
    ]


def group_loss_fn(objective: GroupObjective, pad_id: int) -> Callable:
    """The engine's loss function for GRPO and GiGPO: the clipped surrogate with the k3 KL (webrl.rl.grpo), the
    rollout policy's log-probs in the ratio and the phase-start actor's in the KL (token_reference_pass)."""

    def loss(model, micro: list[Item]) -> tuple[torch.Tensor, dict[str, float]]:
        batch = collate([m.encoded for m in micro], pad_id).to(model.device)
        logp, mask = action_token_logprobs(model, batch)

        def per_token(values: list[float]) -> torch.Tensor:
            placed = torch.zeros_like(logp)
            placed[mask] = torch.tensor(values, dtype=logp.dtype, device=logp.device)
            return placed

        old = per_token([x for m in micro for x in m.old_tokens])
        ref = per_token([x for m in micro for x in m.ref_tokens])
        advantage = torch.tensor([m.advantage for m in micro], dtype=logp.dtype, device=logp.device)
        weight = torch.tensor([m.weight for m in micro], dtype=logp.dtype, device=logp.device)
        value, stats = clipped_loss(logp, old, ref, mask, advantage, weight, objective.clip, objective.kl_coef)
        return value, {"tokens": float(batch.attention_mask.sum()), **stats}

    return loss


def run_group_update(job: UpdateJob, objective: GroupObjective) -> dict[str, Any]:
    """One phase's GRPO or GiGPO update: no critic, no replay. The phase-start actor's per-token log-probs, the
    group advantages of the phase's rollouts (a group: the rollouts of one task), the groups without signal
    dropped where `dynamic_sampling` says, then the actor; returns the summary in out/metrics.json (without an
    actor/ when every group was dropped: the phase keeps the actor it started with)."""
    settings, out, seconds = job.settings, Path(job.out), {}
    if job.critic is not None or job.replay:
        given = "--critic" if job.critic is not None else "--replay-steps"
        raise UsageError(f"{given}: {objective.form} trains on the phase's own rollouts, with no critic and no replay")
    began = time.perf_counter()
    inputs = read_inputs(Path(job.data), job.model, [], job.max_tokens, job.models_dir)
    init_distributed()
    key = cache_key(Path(job.data), inputs, None, [], settings.replay_confidence, settings, objective)
    prepared = cached(out / PREPARE_FILE, key, lambda: token_reference_pass(inputs, settings))
    items = phase_items(inputs, prepared, as_sampled=True)
    lengths = Counter(step.episode for step in inputs.current)
    steps = group_steps(items, lengths)
    uniform = uniform_groups(steps)
    if objective.dynamic_sampling:
        kept = [i for i, s in enumerate(steps) if s.group not in uniform]
        items, steps = [items[i] for i in kept], [steps[i] for i in kept]
    groups = {s.group for s in steps} | uniform
    data = {
        **prepared["counts"],
        "groups": len(groups),
        "groups_uniform": len(uniform),
        "groups_dropped": len(uniform) if objective.dynamic_sampling else 0,
        "trained_steps": len(items),
    }
    summary: dict[str, Any] = {
        "data": data,
        "objective": dataclasses.asdict(objective),
        "settings": settings.model_dump(mode="json"),
    }
    if not items:
        summary["actor"] = {"skipped": "every group's rollouts got the same reward"}
        write_metrics(out, summary)
        return summary
    items = [
        dataclasses.replace(item, advantage=a, weight=w)
        for item, a, w in zip(items, objective.advantages(steps), objective.weights(steps), strict=True)
    ]
    seconds["prepare"] = time.perf_counter() - began
    loss = group_loss_fn(objective, pad_token_id(inputs.tokenizer))
    result = actor_stage(inputs, items, out, settings.train_settings(), loss)
    seconds["actor"] = time.perf_counter() - began - seconds["prepare"]
    summary |= {
        "advantage": advantage_stats(items),
        "actor": {**event_summary(out, "actor"), "resumed_from": result["resumed_from"]},
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "actor_in": str(inputs.actor_dir),
        "actor_out": str(out / ACTOR_DIR),
    }
    write_metrics(out, summary)
    return summary
