"""No-grad forward passes over many encoded items (reference log-probs, critic values, ORM scores): in batches of
similar length, each rank its share, gathered in order on every rank."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import torch
import torch.distributed as dist

from webrl.rl.data import Batch, Encoded, action_logprobs, action_token_logprobs, collate
from webrl.rl.settings import TrainSettings

T = TypeVar("T")


def pass_dtype(settings: TrainSettings) -> torch.dtype:
    """The dtype a no-grad pass runs in: the training's, so a reference matches the trained model's numbers."""
    return torch.bfloat16 if settings.compute_precision() == "bf16" else torch.float32


def pass_device() -> torch.device:
    """This process's GPU (the launcher's LOCAL_RANK), else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def sharded_map(fn: Callable[[list[int]], list[T]], n: int) -> list[T]:
    """`fn` over this rank's share of range(n), gathered in order on every rank. Every share has the same
    length (the last index repeated), so every rank runs the same number of forward passes: ZeRO-3 gathers
    parameters collectively in each."""
    if n == 0:
        return []
    rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    share = math.ceil(n / world)
    results = fn([min(i, n - 1) for i in range(rank * share, (rank + 1) * share)])
    if world == 1:
        return results
    gathered: list[list[T]] = [[] for _ in range(world)]
    dist.all_gather_object(gathered, results)
    return [item for part in gathered for item in part][:n]


@torch.no_grad()
def batched_pass(
    fn: Callable[[Batch], list[T]], encoded: Sequence[Encoded], pad_id: int, device: torch.device, batch_size: int
) -> list[T]:
    """`fn(batch)` (one result per row) over `encoded`, in batches of similar length; results in input order."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].input_ids))
    results: list[T | None] = [None] * len(encoded)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        for index, result in zip(chunk, fn(collate([encoded[i] for i in chunk], pad_id).to(device)), strict=True):
            results[index] = result
    return results  # type: ignore[return-value]


def logprob_rows(model: torch.nn.Module) -> Callable[[Batch], list[tuple[float, int]]]:
    """A batched_pass function: per row, (Σ action-token log-probs, number of action tokens) under `model`."""

    def rows(batch: Batch) -> list[tuple[float, int]]:
        logp, n_tokens = action_logprobs(model, batch)
        return list(zip(logp.float().tolist(), n_tokens.tolist(), strict=True))

    return rows


def token_logprob_rows(model: torch.nn.Module) -> Callable[[Batch], list[list[float]]]:
    """A batched_pass function: per row, the log-prob of each action token under `model`, in order."""

    def rows(batch: Batch) -> list[list[float]]:
        logp, mask = action_token_logprobs(model, batch)
        return [row[keep].float().tolist() for row, keep in zip(logp, mask, strict=True)]

    return rows
