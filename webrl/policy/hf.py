"""`hf:MODEL`: a causal LM run in this process with transformers, on the WebRL completion prompt.

No server to start, so tests, smoke runs and small RL loops can use a real model (`tiny`, `smollm2-135m`).
Responses carry the model's own log-probs of the generated tokens (before temperature and top-p), taken
during generation, which is what a policy-gradient update compares against.

Parallel episodes call `act` from their own threads. The model generates for one batch at a time; the calls
that arrive while it is busy wait, and the next of them to run answers all the waiting ones with the same
settings in one batch. Each answer samples from its own generator (seeded by its `Sampling.seed`, else drawn
from torch's global one), so a seeded answer is the same whichever batch it lands in.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import (
    GenerationConfig,
    LogitsProcessor,
    LogitsProcessorList,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    StoppingCriteria,
    StoppingCriteriaList,
    TemperatureLogitsWarper,
    TopPLogitsWarper,
)

from webrl.policy.base import Policy, PolicyInput, Response, Sampling
from webrl.policy.models import load_causal_lm, load_tokenizer, model_cache, resolve_model
from webrl.policy.prompt import prompt_token_ids, webrl_prompt


class HFPolicy(Policy):
    """A transformers model that answers batches of WebRL prompts (left-padded, KV-cached `generate`)."""

    def __init__(
        self,
        model: str,
        cache_dir: Path | None = None,
        batch_size: int = 8,
        device: str | None = None,
        context: int | None = None,
    ):
        path = resolve_model(model, cache_dir or model_cache())
        self.name = f"hf:{model}"
        self.batch_size = batch_size
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.tokenizer = load_tokenizer(path)
        self.tokenizer.padding_side = "left"  # generation continues every row from the same last column
        # fp32 on CPU: no faster in bf16 there at batch 1, and log-probs stay exact
        self.model = load_causal_lm(path, torch.float32 if self.device.type == "cpu" else torch.bfloat16)
        self.model.to(self.device)
        # prompt + answer tokens: the model's context, or less (a training's budget, so that its rollouts see
        # the prompts cut where its trainings cut them)
        self.context = min(_context_length(self.model), context or _context_length(self.model))
        self.eos_ids = _eos_ids(self.model, self.tokenizer)
        pad = self.tokenizer.pad_token_id
        self.pad_id = self.eos_ids[0] if pad is None else pad
        # token ids only: a checkpoint's own sampling defaults (temperature, top_k...) must not override Sampling
        self.model.generation_config = GenerationConfig(
            bos_token_id=self.tokenizer.bos_token_id, eos_token_id=self.eos_ids, pad_token_id=self.pad_id
        )
        self._generating = threading.Lock()  # one generation at a time
        self._waiting: list[_Call] = []  # act() calls not answered yet, oldest first
        self._queue = threading.Lock()  # guards _waiting

    def act(self, inputs: list[PolicyInput], sampling: Sampling) -> list[Response]:
        return self.complete([webrl_prompt(x.task.intent, x.history, x.observation.text) for x in inputs], sampling)

    def complete(self, prompts: list[str], sampling: Sampling) -> list[Response]:
        """Continue each prompt (see the module docstring for batching; a seeded call's k-th prompt samples
        with seed + k)."""
        call = _Call(prompts, sampling)
        with self._queue:
            self._waiting.append(call)
        with self._generating:
            if call.responses is None and call.error is None:  # else a batch that ran while this one waited had it
                self._answer(self._take_batch(call))
        if call.error is not None:
            raise call.error
        return call.responses

    def _take_batch(self, call: _Call) -> list[_Call]:
        """`call` and the waiting calls that decode with the same settings, oldest first, up to batch_size
        prompts in all (at least `call`), removed from the waiting list."""
        settings = dataclasses.replace(call.sampling, seed=None)
        with self._queue:
            batch, size = [call], len(call.prompts)
            for other in self._waiting:
                if (
                    other is not call
                    and dataclasses.replace(other.sampling, seed=None) == settings
                    and size + len(other.prompts) <= self.batch_size
                ):
                    batch.append(other)
                    size += len(other.prompts)
            self._waiting = [c for c in self._waiting if c not in batch]
        return batch

    def _answer(self, batch: list[_Call]) -> None:
        """Generate for every prompt of `batch` (in chunks of batch_size) and give each call its responses."""
        try:
            rows = [
                (prompt, _row_seed(call.sampling.seed, j)) for call in batch for j, prompt in enumerate(call.prompts)
            ]
            responses = [
                response
                for start in range(0, len(rows), self.batch_size)
                for response in self._generate(rows[start : start + self.batch_size], batch[0].sampling)
            ]
        except BaseException as error:
            for call in batch:
                call.error = error
            raise
        for call in batch:
            call.responses, responses = responses[: len(call.prompts)], responses[len(call.prompts) :]

    def _generate(self, rows: list[tuple[str, int | None]], sampling: Sampling) -> list[Response]:
        """Continue each prompt, as one batch; a row's seed (None: drawn from torch's global generator) seeds
        its sampling. Prompt + answer must fit the context, so the answer gets at most half of it, and a prompt
        longer than the rest loses the end of its page (prompt_token_ids, as in training). `sampling.seed` is
        not read."""
        if not rows:
            return []
        start = time.perf_counter()
        max_new = max(1, min(sampling.max_tokens, self.context // 2))
        fitted = [prompt_token_ids(self.tokenizer, prompt, self.context - max_new) for prompt, _ in rows]
        kept = [row for row, _ in fitted]
        batch = self.tokenizer.pad({"input_ids": kept}, return_tensors="pt").to(self.device)
        width = batch["input_ids"].shape[1]
        raw = _RawLogprobs()
        tracker = _StopTracker(raw, self.tokenizer, sampling.stop, width)
        processors = [raw]
        if sampling.temperature > 0:
            processors += [*_warpers(sampling), _RowSampler([seed for _, seed in rows], self.device)]
        with torch.inference_mode():
            # greedy over the processed scores: with sampling, _RowSampler leaves one token per row
            out = self.model.generate(
                **batch,
                generation_config=self._generation_config(max_new),
                logits_processor=LogitsProcessorList(processors),
                stopping_criteria=StoppingCriteriaList([tracker]),
            )
        logprobs = torch.stack(tracker.logprobs, dim=1)
        latency = round(time.perf_counter() - start, 3)
        responses = []
        for i, row in enumerate(kept):
            generated = out[i, width:].tolist()
            text, n, reason = self._finish(generated, sampling.stop)
            # the sampled ids themselves: re-tokenizing the text need not give them back
            meta = {
                "prompt_tokens": len(row),
                "completion_tokens": n,
                "token_ids": generated[:n],
                "finish_reason": reason,
                "latency_s": latency,
                "batch_size": len(rows),
            }
            if fitted[i][1]:
                meta["truncated_prompt_tokens"] = fitted[i][1]
            responses.append(Response(text, token_logprobs=logprobs[i, :n].tolist(), meta=meta))
        return responses

    def _generation_config(self, max_new: int) -> GenerationConfig:
        return GenerationConfig(
            max_new_tokens=max_new, do_sample=False, eos_token_id=self.eos_ids, pad_token_id=self.pad_id
        )

    def _finish(self, generated: list[int], stops: tuple[str, ...]) -> tuple[str, int, str]:
        """The answer text (cut before the first end-of-sequence token or stop string), how many generated
        tokens produced it (the stopping token included), and why generation ended."""
        end = next((i for i, token in enumerate(generated) if token in self.eos_ids), None)
        body = generated if end is None else generated[:end]
        text = self._decode(body)
        found = [p for p in (text.find(s) for s in stops if s) if p >= 0]
        if found:
            return (
                text[: min(found)],
                _shortest_prefix(len(body), lambda k: _has_stop(self._decode(body[:k]), stops)),
                "stop",
            )
        if end is not None:
            return text, end + 1, "stop"
        return text, len(generated), "length"

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


@dataclass(eq=False)
class _Call:
    """One act() call waiting for its answers."""

    prompts: list[str]
    sampling: Sampling
    responses: list[Response] | None = None
    error: BaseException | None = None


def _row_seed(seed: int | None, row: int) -> int | None:
    """The sampling seed of a call's `row`-th prompt: its own for every prompt of a seeded call."""
    return None if seed is None else seed + row


def _has_stop(text: str, stops: tuple[str, ...]) -> bool:
    return any(s and s in text for s in stops)


def _shortest_prefix(n: int, holds: Callable[[int], bool]) -> int:
    """The least k in 1..n with holds(k), for a property that stays true once true (binary search)."""
    low, high = 1, n
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if holds(mid) else (mid + 1, high)
    return low


def _context_length(model: PreTrainedModel) -> int:
    config = model.config.get_text_config()
    return getattr(config, "max_position_embeddings", None) or 2048


def _eos_ids(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> list[int]:
    """Every token that ends a turn: the checkpoint's generation eos ids (Llama-3 has two) and the tokenizer's."""
    found = model.generation_config.eos_token_id
    ids = list(found) if isinstance(found, list) else [] if found is None else [found]
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    return ids


def _warpers(sampling: Sampling) -> list[LogitsProcessor]:
    if sampling.temperature <= 0:
        return []
    return [TemperatureLogitsWarper(sampling.temperature)] + (
        [TopPLogitsWarper(sampling.top_p)] if sampling.top_p < 1 else []
    )


class _RawLogprobs(LogitsProcessor):
    """First in the processor list: keeps this step's log-probs of the model itself, before any warping."""

    latest: torch.Tensor

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        self.latest = torch.log_softmax(scores.float(), dim=-1)
        return scores


class _RowSampler(LogitsProcessor):
    """Last in the processor list: draws each row's next token from that row's own generator and leaves only
    it finite, for greedy selection. A row's draws do not depend on the other rows of its batch."""

    def __init__(self, seeds: list[int | None], device: torch.device):
        self.generators = [
            torch.Generator(device).manual_seed(seed if seed is not None else int(torch.randint(2**62, (1,))))
            for seed in seeds
        ]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        probs = torch.softmax(scores.float(), dim=-1)
        chosen = torch.cat([torch.multinomial(row, 1, generator=g) for row, g in zip(probs, self.generators)])
        return torch.full_like(scores, float("-inf")).scatter(1, chosen[:, None], 0.0)


class _StopTracker(StoppingCriteria):
    """Runs after each new token: records its log-prob, and ends the rows whose newest text holds a stop
    string (only the last few tokens are decoded: a stop string of n characters spans at most n tokens)."""

    def __init__(self, raw: _RawLogprobs, tokenizer: PreTrainedTokenizerBase, stops: tuple[str, ...], start: int):
        self.raw, self.tokenizer, self.start = raw, tokenizer, start
        self.stops = tuple(s for s in stops if s)
        self.window = max((len(s) for s in self.stops), default=0) + 1
        self.logprobs: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs) -> torch.BoolTensor:
        self.logprobs.append(self.raw.latest.gather(1, input_ids[:, -1:]).squeeze(1).cpu())
        if not self.stops:
            return torch.zeros(len(input_ids), dtype=torch.bool, device=input_ids.device)
        tails = input_ids[:, max(self.start, input_ids.shape[1] - self.window) :]
        texts = self.tokenizer.batch_decode(tails, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        return torch.tensor([_has_stop(t, self.stops) for t in texts], device=input_ids.device)
