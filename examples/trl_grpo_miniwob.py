"""Train a causal LM with TRL's GRPO on MiniWoB++ episodes that `webrl serve` plays, through openenv-core's client.

    .venv/bin/pip install -e ".[env,trl]"       # or: bash scripts/install.sh
    .venv/bin/webrl up
    .venv/bin/webrl serve --tasks miniwob:click-button,click-link:train --max-steps 1 &
    .venv/bin/webrl models prepare reader       # prints the model's folder
    .venv/bin/python examples/trl_grpo_miniwob.py --url http://127.0.0.1:8600 --model FOLDER --steps 20

Every GRPO sample is one episode of one response: the server runs with `--max-steps 1` (MiniWoB++'s one-action
tasks), so what the model is trained on is exactly the prompt the server showed it and the action it answered, and
its reward is the server's evaluation of that episode. A dataset row is a seed: TRL repeats it once per generation,
and each repeat resets the server's task of that seed, so that a GRPO group compares answers to the same task.

Nothing of webrl is imported here: a trainer needs only TRL, openenv-core's client and the server's URL. The
trainer prints its log as it goes, and writes it to OUT/log.jsonl (one JSON line per step) at the end.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from datasets import Dataset
from openenv.core.generic_client import GenericEnvClient
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer


def rollout(url: str):
    """TRL's rollout function: one served episode per prompt (a seed), the model answering the server's prompt."""

    def play(prompts: list[str], trainer: GRPOTrainer) -> dict[str, list]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        tokenizer = trainer.processing_class
        prompt_ids, completion_ids, rewards = [], [], []
        with GenericEnvClient(base_url=url).sync() as env, torch.no_grad():
            for seed in prompts:
                shown = env.reset(seed=int(seed)).observation["prompt"]
                ids = tokenizer(shown, return_tensors="pt").input_ids
                generated = model.generate(ids, generation_config=trainer.generation_config)[0, ids.shape[1] :]
                answer = generated.tolist()
                if tokenizer.eos_token_id in answer:  # up to its end of turn, as TRL's own generation cuts it
                    answer = answer[: answer.index(tokenizer.eos_token_id) + 1]
                result = env.step({"text": tokenizer.decode(answer, skip_special_tokens=True)})
                if not result.done:
                    raise RuntimeError("the episode went on after one response: start the server with --max-steps 1")
                prompt_ids.append(ids[0].tolist())
                completion_ids.append(answer)
                rewards.append(result.reward)
        # logprobs: none, as TRL's own generation with transformers gives none; the trainer computes them
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": None, "served": rewards}

    return play


def served_reward(completions: list, served: list[float], **_) -> list[float]:
    """The reward: the server's score of each episode (passed on from the rollout)."""
    return served


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8600", help="the server's OpenEnv base URL")
    parser.add_argument("--model", required=True, help="a Hugging Face model folder or Hub id")
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps")
    parser.add_argument("--generations", type=int, default=4, help="episodes per seed: a GRPO group")
    parser.add_argument("--seeds", type=int, default=64, help="seeds to draw tasks from (modulo the served set)")
    parser.add_argument("--out", default="runs/trl-grpo", help="TRL's output folder (its log: log.jsonl)")
    args = parser.parse_args()

    config = GRPOConfig(
        output_dir=args.out,
        max_steps=args.steps,
        per_device_train_batch_size=args.generations,  # one group per step
        num_generations=args.generations,
        max_completion_length=32,
        learning_rate=1e-4,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=not torch.cuda.is_available(),
        disable_tqdm=True,
    )
    trainer = GRPOTrainer(
        model=args.model,
        reward_funcs=served_reward,
        args=config,
        train_dataset=Dataset.from_dict({"prompt": [str(seed) for seed in range(args.seeds)]}),
        processing_class=AutoTokenizer.from_pretrained(args.model, padding_side="left"),
        rollout_func=rollout(args.url),
    )
    trainer.train()
    log = "".join(json.dumps(entry) + "\n" for entry in trainer.state.log_history)
    (Path(args.out) / "log.jsonl").write_text(log)


if __name__ == "__main__":
    main()
