"""Does a model trained from scratch (`tiny`, `reader`) learn to read the instruction from the answer alone, or only
with the page as a target too?

SFT from a fresh model on a demonstrations file (`webrl tasks demos`), with the answer's loss only (WebRL's SFT)
and with `--page-loss` 1 (webrl.rl.sft), in this process: the same loss function and batches as `webrl sft`, without
the engine, so that both arms can be scored while they train. Every --every optimizer steps each arm's greedy
answer is scored teacher-forced on the held-out steps (the last --held-out fraction of each environment's seeds):
exact match of the whole answer, per environment. Prints one table row per checkpoint.

    .venv/bin/webrl tasks demos --tasks miniwob:click-tab,click-link,click-button:train:200 --observation compact \
        --out demos.jsonl
    .venv/bin/python bench/page_loss.py --demos demos.jsonl --model reader --steps 4000 [--json RESULT.json]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import defaultdict
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table
from stamp import add_json_option, table_numbers, write_result  # bench/ is on sys.path when a bench runs

from webrl.policy.models import load_causal_lm, load_tokenizer, resolve_model
from webrl.rl.data import collate, encode, load_steps, pad_token_id
from webrl.rl.sft import sft_loss_fn

MICRO_BATCH = 4


def env_and_seed(step) -> tuple[str, int]:
    """A MiniWoB++ step's environment and seed, from its task id `<env>.<seed>`."""
    env, _, seed = str(step.task_id).rpartition(".")
    return env, int(seed)


def split(steps, held_out: float):
    """(train, test): per environment, the steps of its last `held_out` fraction of seeds are the test ones."""
    seeds = defaultdict(set)
    for env, seed in map(env_and_seed, steps):
        seeds[env].add(seed)
    cut = {env: sorted(s)[int(len(s) * (1 - held_out))] for env, s in seeds.items()}
    train, test = [], []
    for step in steps:
        env, seed = env_and_seed(step)
        (test if seed >= cut[env] else train).append(step)
    return train, test


@torch.no_grad()
def exact_answers(model, encoded, envs: list[str], pad: int) -> dict[str, str]:
    """Per environment: test steps whose every answer token is the model's argmax, given the tokens before it."""
    right, total = defaultdict(int), defaultdict(int)
    for start in range(0, len(encoded), 8):
        chunk = encoded[start : start + 8]
        batch = collate(chunk, pad)
        logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
        hit = (logits.argmax(-1) == batch.input_ids[:, 1:]) | ~batch.action_mask[:, 1:]
        for row, env in enumerate(envs[start : start + 8]):
            right[env] += bool(hit[row].all())
            total[env] += 1
    return {env: f"{right[env]}/{total[env]}" for env in sorted(total)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demos", type=Path, required=True, help="step file of demonstrations (webrl tasks demos)")
    parser.add_argument("--steps", type=int, default=4000, help="optimizer steps per arm")
    parser.add_argument("--every", type=int, default=500, help="score the held-out steps every N steps")
    parser.add_argument("--lr", type=float, default=1e-3, help="AdamW learning rate (constant)")
    parser.add_argument("--held-out", type=float, default=0.2, help="fraction of each environment's seeds held out")
    parser.add_argument("--max-tokens", type=int, default=2048)
    parser.add_argument("--model", default="tiny", help="the model trained from scratch (tiny, reader)")
    add_json_option(parser)
    args = parser.parse_args()

    initial = resolve_model(args.model)
    tokenizer = load_tokenizer(initial)
    pad = pad_token_id(tokenizer)
    train, test = split(load_steps(args.demos), args.held_out)
    train_items = [encode(tokenizer, s.prompt, s.response, args.max_tokens) for s in train]
    test_items = [encode(tokenizer, s.prompt, s.response, args.max_tokens) for s in test]
    test_envs = [env_and_seed(s)[0] for s in test]
    console = Console(width=140)
    console.print(f"{len(train)} train steps, {len(test)} held-out steps; micro-batches of {MICRO_BATCH}, lr {args.lr}")
    table = Table("loss", "step", "answer loss (train)", *sorted(set(test_envs)), "s/step")
    for page_loss in (0.0, 1.0):
        torch.manual_seed(0)
        rng = random.Random(0)
        model = load_causal_lm(initial)
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
        loss_fn = sft_loss_fn(pad, page_loss)
        answer_losses, seconds = [], 0.0
        for step in range(1, args.steps + 1):
            began = time.perf_counter()
            loss, stats = loss_fn(model, rng.sample(train_items, MICRO_BATCH))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            seconds += time.perf_counter() - began
            answer_losses.append(stats.get("answer_loss", float(loss.detach())))
            if step % args.every == 0:
                scores = exact_answers(model.eval(), test_items, test_envs, pad)
                model.train()
                recent = sum(answer_losses[-args.every :]) / args.every
                row = [
                    "answer + page" if page_loss else "answer only",
                    str(step),
                    f"{recent:.3f}",
                    *scores.values(),
                    f"{seconds / step:.2f}",
                ]
                table.add_row(*row)
                console.print(" · ".join(row))
    console.print(table)
    if args.json:
        write_result(args.json, table_numbers(table))


if __name__ == "__main__":
    main()
