"""New actor weights in vLLM between RL phases: switching a LoRA adapter on the running server against restarting it.

For each model, two random rank-16 adapters on it (every Llama projection, as `lora:` trains by default). A restart
is what serving new full weights costs: stop the server, start one on the other adapter, and answer a first request.
A switch loads the other adapter into the running server, unloads the old one, and answers a first request. The
seconds are until that first answer (vLLM moves an adapter into its slots on first use). Goal: a switch >= 10x
faster than a restart.

    .venv/bin/python bench/lora_switch.py [--models tiny smollm2-135m] [--switches 5] [--restarts 2] [--json FILE]

Needs vLLM (scripts/install-vllm.sh).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table
from stamp import add_json_option, table_numbers, write_result  # bench/ is on sys.path when a bench runs

from webrl.policy.models import model_cache, resolve_model
from webrl.policy.vllm import VLLMServer
from webrl.rl.lora import random_adapter
from webrl.rl.settings import LoraSettings

GOAL = 10.0
RANK = 16


def first_answer(server: VLLMServer) -> None:
    body = {"model": server.model_name, "prompt": "Task Instruction: Click on the link.", "max_tokens": 8}
    httpx.post(f"{server.base_url}/completions", json=body, timeout=120).raise_for_status()


def measure(base: Path, folder: Path, switches: int, restarts: int) -> dict[str, list[float]]:
    lora = LoraSettings(rank=RANK, alpha=32)  # every projection, as `lora:` trains by default
    adapters = [random_adapter(base, folder / f"adapter-{seed}", lora, seed, 0.01) for seed in (1, 2)]
    server = VLLMServer(adapters[0], folder / "vllm.log")
    server.start()
    first_answer(server)
    switch, restart = [], []
    try:
        for k in range(switches):
            began = time.perf_counter()
            server.restart(adapters[(k + 1) % 2])
            first_answer(server)
            switch.append(time.perf_counter() - began)
            assert server.switch_seconds is not None  # switched in place, not restarted
        for k in range(restarts):
            began = time.perf_counter()
            server.stop()
            server.model = adapters[k % 2]
            server.start()
            first_answer(server)
            restart.append(time.perf_counter() - began)
    finally:
        server.stop()
    return {"switch_s": switch, "restart_s": restart}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["tiny", "smollm2-135m"], help="model specs (webrl models)")
    parser.add_argument("--switches", type=int, default=5, help="adapter switches timed per model")
    parser.add_argument("--restarts", type=int, default=2, help="server restarts timed per model")
    add_json_option(parser)
    args = parser.parse_args()

    table = Table(
        title=f"New LoRA weights in vLLM: restart against switch, rank {RANK} (goal: switch >= {GOAL:g}x faster)"
    )
    for column in ("model", "restart s (median)", "switch s (median)", "switch faster by"):
        table.add_column(column, justify="right")
    raw = {}
    for spec in args.models:
        base = resolve_model(spec, model_cache())
        with tempfile.TemporaryDirectory(prefix="webrl-lora-switch-") as folder:
            raw[spec] = times = measure(base, Path(folder), args.switches, args.restarts)
        restart, switch = statistics.median(times["restart_s"]), statistics.median(times["switch_s"])
        table.add_row(spec, f"{restart:.1f}", f"{switch:.2f}", f"{restart / switch:.0f}x")
    Console().print(table)
    if args.json:
        write_result(args.json, table_numbers(table, models=raw, rank=RANK))


if __name__ == "__main__":
    main()
