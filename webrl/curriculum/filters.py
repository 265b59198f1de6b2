"""The curriculum's two filters.

Critic filter: a task is kept when the critic's value of its first observation lies in a band, [0.05, 0.75] by
default: neither hopeless nor already mastered. The observation is the phase-0 prompt, `webrl_prompt(intent, [],
html)`, on the task's start page as the environment shows it (`BrowserEnv.reset` on the running backend: one
observation per distinct start page, cached), encoded as the trainer encodes critic inputs (`encode_prompt`).
The value is V(s) = min over the two heads of softmax(logits)[1] (`value_from_logits`, what the trainer uses);
rule "either" applies the official code's test instead (kept when either head's probability is in the band).

Feasibility filter: the official code's per-site rules of what the sites cannot do, asked of an LLM judge (the
`evaluators.judge.Judge` plumbing: `complete(messages) -> str`), answer "[YES]" or "[NO]" after a reason.
Without a judge only tasks with rule evaluators pass (the procedural ones, feasible by construction); with one,
those still pass unasked and the generated tasks are judged.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from webrl.curriculum.generate import describe_sites, needs_orm
from webrl.errors import WebrlError
from webrl.evaluators.judge import Judge
from webrl.files import write_atomically
from webrl.policy.prompt import webrl_prompt
from webrl.rl.critic import Critic
from webrl.rl.data import Encoded, collate, encode_prompt, pad_token_id
from webrl.rl.objective import value_from_logits
from webrl.runs.episodes import EvalSettings
from webrl.runs.executor import EnvSlot, Executor, Work, dispatch
from webrl.runs.executor_factory import executor_for
from webrl.sites.base import SiteBackend
from webrl.tasks.family import family_of
from webrl.tasks.model import Task

DEFAULT_BAND = (0.05, 0.75)
MAX_PROMPT_TOKENS = 16384  # the official trainer's length, capped by the critic's context
BandRule = Literal["value", "either"]
PageKey = tuple[str, tuple[str, ...], bool, str]


# -- start pages -----------------------------------------------------------------------------------------------


def page_key(task: Task) -> PageKey:
    """What decides the first observation: the start URL, the sites (the environment resets and allows them),
    whether the task signs in first, and what else its family says decides it (a MiniWoB++ task's seed)."""
    return task.start_url, tuple(task.sites), task.storage_state is not None, family_of(task).start_key(task)


async def observe_start(slot: EnvSlot, task: Task) -> str:
    """A job for an executor's slot (webrl.runs.executor): the observation text of `task`'s start page."""
    observation, _ = await slot.env.reset(task)
    return observation.text


def start_pages(
    tasks: Sequence[Task], backend: SiteBackend, cache: dict[PageKey, str] | None = None, observation: str = "webrl"
) -> dict[PageKey, str]:
    """The start page's observation text (of the `observation` kind) for every distinct `page_key` of `tasks`, from
    real browsers on the executor the backend's configuration names (locally: the running sites' instance 0); keys
    already in `cache` are not observed again (the cache is filled in)."""
    pages = {} if cache is None else cache
    todo = list({page_key(t): t for t in tasks if page_key(t) not in pages}.values())
    if todo:
        settings = EvalSettings(tasks="start pages", observation=observation, out=Path())
        with executor_for(settings, backend) as executor:
            asyncio.run(_observe(executor, executor.check(settings, todo), todo, pages))
    return pages


async def _observe(executor: Executor, settings: EvalSettings, tasks: list[Task], pages: dict[PageKey, str]) -> None:
    def observed(work: Work, text: str) -> None:
        pages[page_key(work.args[0])] = text

    def lost(work: Work, error: str) -> None:
        raise WebrlError(f"the start page of task {work.args[0].task_id} could not be observed: {error}")

    async with executor.slots(settings, tasks) as slots:
        queue = deque(Work((task,)) for task in tasks)
        await dispatch(slots, queue, observe_start, observed, lost)
        if queue:
            raise WebrlError(f"{len(queue)} start pages could not be observed: no environment worker is left")


def stored_start_pages(
    tasks: Sequence[Task], backend: SiteBackend, path: Path, observation: str = "webrl"
) -> dict[PageKey, str]:
    """`start_pages` with a JSON file as the cache, so that a page is observed once per run (and a resumed run
    scores its tasks on the very pages it saw before)."""
    try:
        cache = {
            (url, tuple(sites), signed_in, episode): text
            for url, sites, signed_in, episode, text in json.loads(path.read_text())
        }
    except (OSError, ValueError, TypeError):  # none yet, or unreadable: it is only a cache, observe again
        cache = {}
    pages = start_pages(tasks, backend, cache, observation)
    write_atomically(
        path,
        json.dumps(
            [[url, list(sites), signed_in, episode, text] for (url, sites, signed_in, episode), text in pages.items()]
        ),
    )
    return pages


# -- critic filter ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CriticScore:
    value: float  # V(s): the smaller head probability
    heads: tuple[float, float]  # each head's softmax(logits)[1]


def critic_scores(
    critic: Critic, tokenizer, prompts: Sequence[str], *, batch_size: int = 8, max_tokens: int | None = None
) -> list[CriticScore]:
    """The critic's scores of `prompts`, in batches (right-padded: the critic reads each row's last real token)."""
    limit = max_tokens or min(MAX_PROMPT_TOKENS, critic.trunk.config.max_position_embeddings)
    device = next(critic.parameters()).device
    pad = pad_token_id(tokenizer)
    scores = []
    with torch.inference_mode():
        for start in range(0, len(prompts), batch_size):
            rows = [Encoded(encode_prompt(tokenizer, p, limit), 0) for p in prompts[start : start + batch_size]]
            batch = collate(rows, pad).to(device)
            logits = critic(batch.input_ids, batch.attention_mask).float()
            heads = logits.softmax(dim=-1)[..., 1].tolist()
            values = value_from_logits(logits).tolist()
            scores += [CriticScore(v, (h[0], h[1])) for v, h in zip(values, heads)]
    return scores


def in_band(score: CriticScore, band: tuple[float, float] = DEFAULT_BAND, rule: BandRule = "value") -> bool:
    low, high = band
    checked = (score.value,) if rule == "value" else score.heads
    return any(low <= p <= high for p in checked)


def critic_filter(
    tasks: Sequence[Task],
    pages: Mapping[PageKey, str],
    critic: Critic,
    tokenizer,
    *,
    band: tuple[float, float] = DEFAULT_BAND,
    rule: BandRule = "value",
    batch_size: int = 8,
    max_tokens: int | None = None,
) -> tuple[list[Task], list[CriticScore]]:
    """The tasks whose phase-0 observation the critic scores inside `band`, and every task's score (in order).
    `pages` holds each task's start page (`start_pages`)."""
    prompts = [webrl_prompt(t.intent, [], pages[page_key(t)]) for t in tasks]
    scores = critic_scores(critic, tokenizer, prompts, batch_size=batch_size, max_tokens=max_tokens)
    return [t for t, s in zip(tasks, scores) if in_band(s, band, rule)], scores


# -- feasibility filter -----------------------------------------------------------------------------------------

FEASIBILITY_RULES = {
    "map": "These are not possible there: traffic or accidents, the weather, saving favourite places, the "
    "user's live location, bookings or reservations, flights or trains, and events.",
    "reddit": "Anything the site itself offers is possible.",
    "gitlab": "Anything the site itself offers is possible.",
    "shopping_admin": "These are not possible there: emailing order information, electronic invoices, returns "
    "and refunds, updating the admin's own profile, and recommendations.",
    "shopping": "These are not possible there: filtering products by discount, changing the delivery address of "
    "an order, adding payment methods, showing an order's status or tracking it live, customer "
    "service, and after-sales service.",
}
FEASIBILITY_SYSTEM = "You review tasks for a web assistant and decide whether each can be done on its website."


def feasibility_messages(task: Task) -> list[dict]:
    """Site, per-site rules, task; answer format: a reason, then [YES] (feasible) or [NO]."""
    rules = "\n".join(
        f"- {site}: {FEASIBILITY_RULES.get(site, 'Anything the site itself offers is possible.')}"
        for site in task.sites
    )
    user = (
        f"Website: {describe_sites(task.sites)}.\n"
        "A task is feasible when the website offers what it asks for, it is clear what to do, and it is realistic. "
        f"Rules for this website:\n{rules}\n"
        f"Task: {task.intent}\n"
        "First give your reason in one or two sentences. Then write 'Answer: [YES]' if the task is feasible, or "
        "'Answer: [NO]' if it is not."
    )
    return [{"role": "system", "content": FEASIBILITY_SYSTEM}, {"role": "user", "content": user}]


def decide_feasible(reply: str) -> bool | None:
    """The last [YES] or [NO] in the reply decides; None when it has neither."""
    text = reply.upper()
    yes, no = text.rfind("[YES]"), text.rfind("[NO]")
    return None if yes == no == -1 else yes > no


def feasibility_filter(tasks: Sequence[Task], judge: Judge | None, *, workers: int = 8) -> tuple[list[Task], Counter]:
    """The feasible tasks and the count of each outcome: "procedural" (rule evaluator: kept unasked), "no judge"
    (a generated task without a judge: dropped), "yes", "no", "unparsable" and "judge error" (dropped)."""
    outcome: list[str] = ["procedural" if not needs_orm(t) else "no judge" for t in tasks]
    asked = [i for i, t in enumerate(tasks) if needs_orm(t)] if judge is not None else []

    def ask(index: int) -> str:
        try:
            verdict = decide_feasible(judge.complete(feasibility_messages(tasks[index])))
        except WebrlError:
            return "judge error"
        return "unparsable" if verdict is None else "yes" if verdict else "no"

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(asked)))) as pool:
        for index, result in zip(asked, pool.map(ask, asked)):
            outcome[index] = result
    kept = [t for t, o in zip(tasks, outcome) if o in ("procedural", "yes")]
    return kept, Counter(outcome)
