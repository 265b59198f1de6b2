"""How fast is the training engine? Goal: actor-update tokens/s ≥ 0.9× a plain PyTorch loop.

Side by side in one run, on the same model (a fresh copy of the same weights), the same data (synthetic
steps in the WebRL prompt format), the same loss (the official actor loss of webrl.rl.update against
reference log-probs computed once beforehand, advantages +1 / −0.6), the same order and micro-batching
(micro-batch 1, 2 micro-batches per optimizer step), torch AdamW and gradient clipping at 1.0:

- "plain": a bare PyTorch loop (forward, backward, clip, step);
- "engine ZeRO-0" and "engine ZeRO-2": webrl.rl.engine.Engine with one process (DeepSpeed, gloo), its
  per-step metrics, events.jsonl and TensorBoard included.

Each configuration runs in a process of its own (a fresh process group, and the peak RSS is that
configuration's alone); the rounds alternate the configurations so that a load change hits all of them.
Throughput counts the real (non-pad) tokens of the timed optimizer steps: all but the first two (warm-up)
and the last (the engine saves a checkpoint there). It is given per wall-clock second and per CPU second
of the process (all its threads): on a machine shared with other work the wall clock also counts the time
the process waited for a core, the CPU time does not, so the CPU-time ratio is the one to trust there.

    .venv/bin/python bench/train.py [--model tiny|20m] [--steps 24] [--rounds 2] [--threads N] \
        [--json bench/results/train.json]

Helpers for bench/gpu_check.sh: `write-data DIR` (demonstration and rollout step files) and
`build-model DIR --size tiny|20m` (a random Llama with the tiny tokenizer, built offline in seconds).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from stamp import add_json_option, table_numbers, write_result  # bench/ is on sys.path when a bench runs

GOAL = 0.9
MODES = ("plain", "engine ZeRO-0", "engine ZeRO-2")
MAX_TOKENS = 1024
WARMUP = 2
# "20m": h512, 6 layers, ffn 1376, on the tiny tokenizer's vocabulary
LLAMA_20M = {
    "hidden_size": 512,
    "intermediate_size": 1376,
    "num_hidden_layers": 6,
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
}
INTENTS = [
    "Search for {item}",
    "Add {item} to the cart",
    "Find the price of {item}",
    "Review {item}",
    "Compare {item} with the cheapest alternative",
]
ITEMS = ["red shoes", "a blue mug", "the newest laptop", "a yoga mat", "garden chairs", "a phone case"]


# ---- data and models (also for gpu_check.sh) -------------------------------------------------------------


def page(rng: random.Random, elements: int) -> str:
    """A simplified-HTML page of `elements` interactive elements, WebRL-style ids."""
    parts = []
    for element in range(elements):
        kind = rng.choice(["button", "a", "input"])
        parts.append(f'<{kind} id="{element}" data-text="{rng.choice(ITEMS)}"> {rng.choice(ITEMS)} </{kind}>')
    return "<html> <body> " + " ".join(parts) + " </body> </html>"


def synthetic_episodes(tasks: int, steps: int, elements: int, seed: int) -> tuple[list[dict], list[dict]]:
    """(demonstrations, rollouts) in the step-file format: every task once as a successful demonstration and
    once as a rollout that succeeds for even tasks and fails for odd ones."""
    from webrl.policy.prompt import webrl_prompt

    rng = random.Random(seed)
    demos, rollouts = [], []
    for task in range(tasks):
        intent = rng.choice(INTENTS).format(item=rng.choice(ITEMS))
        for rows, good, fields in (
            (demos, True, {}),
            (rollouts, task % 2 == 0, {"episode": f"{task}-r", "reward": float(task % 2 == 0)}),
        ):
            history: list[str] = []
            for step in range(steps):
                target = rng.randrange(elements) if good else elements + rng.randrange(9)
                text = (
                    'exit(message="done")'
                    if step == steps - 1
                    else f'# Element: the {rng.choice(ITEMS)} link\ndo(action="Click", element="{target}")'
                )
                rows.append(
                    {
                        "task_id": task,
                        "step": step,
                        "prompt": webrl_prompt(intent, history, page(rng, elements)),
                        "response": text,
                        **fields,
                    }
                )
                history.append(text)
    return demos, rollouts


def write_data(out: Path, tasks: int, steps: int, elements: int, seed: int = 0) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in zip(("demos", "rollouts"), synthetic_episodes(tasks, steps, elements, seed), strict=True):
        (out / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


def build_model(out: Path, size: str) -> Path:
    """A random Llama (seed 0) of the tiny shape or LLAMA_20M's, with the tiny tokenizer."""
    from webrl.policy.models import TINY_SHAPE, build_tiny, load_tokenizer, write_random_llama

    tiny = build_tiny(out.parent / "model-cache")
    shape = TINY_SHAPE if size == "tiny" else {**TINY_SHAPE, **LLAMA_20M}
    write_random_llama(load_tokenizer(tiny), shape, 0, out)
    return out


# ---- one configuration in its own process ----------------------------------------------------------------


def training_items(model_dir: Path, count: int) -> tuple[list, int]:
    """`count` actor-update items (webrl.rl.update.Item) with reference log-probs of the initial model, and
    the tokenizer's pad id."""
    from webrl.policy.models import load_causal_lm, load_tokenizer
    from webrl.rl.data import TrainingStep, encode_steps, pad_token_id
    from webrl.rl.passes import batched_pass, logprob_rows
    from webrl.rl.update import Item

    tokenizer = load_tokenizer(model_dir)
    _, rows = synthetic_episodes(tasks=count, steps=1, elements=40, seed=1)
    steps = [
        TrainingStep(
            r["task_id"], r["episode"], r["step"], r["prompt"], r["response"], r["reward"], None, True, r["reward"]
        )
        for r in rows
    ]
    encoded, _ = encode_steps(tokenizer, steps, MAX_TOKENS)
    pad = pad_token_id(tokenizer)
    reference = batched_pass(logprob_rows(load_causal_lm(model_dir)), encoded, pad, "cpu", 4)
    items = [
        Item(step, e, "current", logp, n, 1.0 if i % 3 else -0.6)
        for i, (step, e, (logp, n)) in enumerate(zip(steps, encoded, reference, strict=True))
    ]
    return items, pad


def plain_loop(model, items: list, loss_fn, settings, on_step) -> None:
    """The reference loop: same order and micro-batches as the engine, torch AdamW, clipping."""
    import torch

    from webrl.rl.engine import rank_micro_batches, sample_order

    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.lr, betas=settings.betas, weight_decay=settings.weight_decay
    )
    order = sample_order(len(items), settings.seed, settings.epochs)
    model.train()
    for step in range(1, len(order) // settings.global_batch(1) + 1):
        for micro in rank_micro_batches(order, step, settings, 0, 1):
            loss, _ = loss_fn(model, [items[i] for i in micro])
            (loss / settings.grad_accum).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), settings.max_grad_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        on_step(step, {})


def worker(mode: str, model_dir: Path, steps: int, threads: int | None) -> dict:
    """Train `steps` optimizer steps in this process; tokens/s over the timed steps and the peak RSS."""
    import torch

    from webrl.policy.models import load_causal_lm
    from webrl.rl.engine import Engine, TrainSettings, rank_micro_batches, sample_order
    from webrl.rl.objective import Objective
    from webrl.rl.update import actor_loss_fn

    if threads:
        torch.set_num_threads(threads)
    settings = TrainSettings(zero_stage=2 if mode.endswith("2") else 0, grad_accum=2, precision="fp32")
    items, pad = training_items(model_dir, steps * settings.global_batch(1))
    order = sample_order(len(items), settings.seed, settings.epochs)
    tokens = {
        s: sum(len(items[i].encoded.input_ids) for micro in rank_micro_batches(order, s, settings, 0, 1) for i in micro)
        for s in range(1, steps + 1)
    }
    ends: dict[int, tuple[float, float]] = {}
    loss_fn = actor_loss_fn(Objective(), pad)
    model = load_causal_lm(model_dir)

    def on_step(step: int, metrics: dict) -> None:
        ends[step] = (time.perf_counter(), time.process_time())

    if mode == "plain":
        plain_loop(model, items, loss_fn, settings, on_step)
    else:
        with tempfile.TemporaryDirectory() as run_dir:
            Engine(model, settings, Path(run_dir), "actor").train(items, loss_fn, on_step=on_step)
    timed = range(WARMUP + 1, steps)  # steps whose start and end are both past the warm-up, last one excluded
    wall, cpu = (ends[steps - 1][k] - ends[WARMUP][k] for k in (0, 1))
    count = sum(tokens[s] for s in timed)
    return {
        "mode": mode,
        "tokens_per_s": count / wall,
        "tokens_per_cpu_s": count / cpu,
        "tokens_per_step": statistics.mean(tokens.values()),
        "threads": torch.get_num_threads(),
        "params": sum(p.numel() for p in model.parameters()),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


# ---- the side-by-side run --------------------------------------------------------------------------------


def run_worker(mode: str, model_dir: Path, steps: int, threads: int | None) -> dict:
    command = [sys.executable, __file__, "worker", mode, str(model_dir), "--steps", str(steps)]
    command += ["--threads", str(threads)] if threads else []
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main_run(args: argparse.Namespace) -> None:
    console = Console()
    results: dict[str, list[dict]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_model(Path(tmp) / args.model, args.model)
        for round_no in range(args.rounds):
            for mode in MODES if round_no % 2 == 0 else MODES[::-1]:
                with console.status(f"round {round_no + 1}/{args.rounds}: {mode}"):
                    results[mode].append(run_worker(mode, model_dir, args.steps, args.threads))
    first = results["plain"][0]
    table = Table(
        title=f"actor update, {args.model} ({first['params'] / 1e6:.1f}M params), {args.steps} optimizer "
        f"steps x 2 micro-batches of 1, ~{first['tokens_per_step'] / 2:.0f} tokens each, "
        f"{first['threads']} thread(s), median of {args.rounds} rounds"
    )
    for column in ("loop", "tokens/s", "vs plain", "tokens/CPU-s", "vs plain", f"≥ {GOAL}× wall / CPU", "peak RSS"):
        table.add_column(column, justify="left" if column == "loop" else "right")
    median = {
        mode: {
            key: statistics.median(r[key] for r in rows) for key in ("tokens_per_s", "tokens_per_cpu_s", "peak_rss_mb")
        }
        for mode, rows in results.items()
    }
    for mode, row in median.items():
        wall, cpu = (row[key] / median["plain"][key] for key in ("tokens_per_s", "tokens_per_cpu_s"))
        table.add_row(
            mode,
            f"{row['tokens_per_s']:,.0f}",
            f"{wall:.2f}×",
            f"{row['tokens_per_cpu_s']:,.0f}",
            f"{cpu:.2f}×",
            "–" if mode == "plain" else " / ".join("✓" if r >= GOAL else "✗" for r in (wall, cpu)),
            f"{row['peak_rss_mb']:,.0f} MB",
        )
    console.print(table)
    if args.json:
        write_result(args.json, table_numbers(table, medians=median))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("run", help="the side-by-side benchmark (the default)")
    for target in (parser, run):
        target.add_argument("--model", choices=("tiny", "20m"), default="tiny")
        target.add_argument("--steps", type=int, default=24, help="optimizer steps per configuration")
        target.add_argument("--rounds", type=int, default=2)
        target.add_argument("--threads", type=int, help="torch threads [default: torch's]")
        add_json_option(target)
    one = commands.add_parser("worker", help="one configuration (internal)")
    one.add_argument("mode", choices=MODES)
    one.add_argument("model_dir", type=Path)
    one.add_argument("--steps", type=int, required=True)
    one.add_argument("--threads", type=int)
    data = commands.add_parser("write-data", help="demos.jsonl and rollouts.jsonl of synthetic episodes")
    data.add_argument("out", type=Path)
    data.add_argument("--tasks", type=int, default=8)
    data.add_argument("--steps", type=int, default=3)
    data.add_argument("--elements", type=int, default=30, help="page elements (prompt length)")
    model = commands.add_parser("build-model", help="a random Llama with the tiny tokenizer")
    model.add_argument("out", type=Path)
    model.add_argument("--size", choices=("tiny", "20m"), default="tiny")
    args = parser.parse_args()
    if args.command == "worker":
        print(json.dumps(worker(args.mode, args.model_dir, args.steps, args.threads)))
    elif args.command == "write-data":
        write_data(args.out, args.tasks, args.steps, args.elements)
    elif args.command == "build-model":
        print(build_model(args.out, args.size))
    else:
        main_run(args)


if __name__ == "__main__":
    main()
