"""LLM task generation from the last phase's failures.

Per site (the tasks' site list), rounds of up to 10 failed seed tasks drawn with a seeded generator; each round
is one call to the generator with the in-breadth evolving prompt (`evolve_prompt`), whose reply lists new tasks
between backticks (`parse_tasks`). The rounds of all sites are interleaved, so a phase's cap of kept tasks
(500 by default, the paper's) spreads over every site. A new task is kept when nothing the run has seen has
the same normalised intent (`Seen`).

A generated task starts where its closest seed (most shared words) starts, on that seed's sites, and has no
rule evaluator: it is marked `scored_by="orm"` (`needs_orm`), and its `eval` is a placeholder that the rule
evaluators cannot pass without a judge (a fuzzy match against a note), so its reward must come from the ORM.

The generator is any text generator (`TextGenerator`): `openai:MODEL@URL` (chat completions, e.g. GPT-4o, or
`?completion` for a raw prompt), `hf:SPEC` (transformers in this process) or `vllm:SPEC` (a managed vLLM
server); local models see the prompt through their chat template when they have one.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from webrl.curriculum.seen import Seen, normalise
from webrl.errors import WebrlError, unknown_form
from webrl.policy.base import Sampling
from webrl.policy.factory import make_policy
from webrl.policy.openai import OpenAIPolicy
from webrl.tasks.model import Task

KEEP_PER_PHASE = 500  # kept tasks per phase (paper, App. A)
SEEDS_PER_ROUND = 10  # official gen_task.py: min(10, failed tasks) seeds per call
ROUNDS_PER_SITE = 2  # official gen_task.py: two generation turns per site
# official: gpt-4o-2024-05-13 at temperature 1, top_p 1; no stop string (the reply is free text)
GENERATION_SAMPLING = Sampling(temperature=1.0, top_p=1.0, max_tokens=1024, stop=())

ORM_SCORED = "orm"
ORM_NOTE = "Generated task without a rule evaluator: the outcome reward model scores it."
SITE_DESCRIPTIONS = {
    "shopping": "an online shop, where customers search and compare products and manage their cart, wish list, "
    "orders, reviews and account",
    "shopping_admin": "the admin panel of an online shop, with its orders, customers, products, reviews, "
    "promotions and sales reports",
    "reddit": "a Reddit-like discussion site, with forums, posts, comments, votes, subscriptions and profiles",
    "gitlab": "a GitLab code forge, with projects, repositories, branches, commits, issues, merge requests and members",
    "map": "an OpenStreetMap map, with place search, place details, nearby places and directions by car, "
    "bicycle or on foot",
}
MARKERS = ("#given task#", "#created task#", "given task", "created task")
BACKTICKED = re.compile(r"`([^`]+)`")
CODE_FENCE = re.compile(r"```[\w-]*")
BULLET = " -*•\t"
MIN_WORDS, MAX_CHARS = 3, 400
GENERATOR_FORMS = (
    "openai:MODEL@BASE_URL[?completion]  an OpenAI-compatible server, chat completions (key from $OPENAI_API_KEY)",
    "hf:MODEL_SPEC                       transformers in this process (tiny, smollm2-135m, ORG/NAME, a folder)",
    "vllm:MODEL_SPEC                     a vLLM server webrl starts and stops itself",
)


# -- the prompt and the reply ------------------------------------------------------------------------------


def describe_sites(sites: Sequence[str]) -> str:
    return " together with ".join(SITE_DESCRIPTIONS.get(s, f"the {s} website") for s in sites)


def evolve_prompt(sites: Sequence[str], seeds: Sequence[str]) -> str:
    """The in-breadth evolving prompt (the official prompt's structure, our wording): role, goal, the markers that must
    not leak, the guidelines (backticks, varied phrasing, the seeds' names, similar difficulty), then the seeds
    as a `#Given Task#` list and an open `#Created Task#` header."""
    given = "\n".join(f"- `{' '.join(s.replace('`', chr(39)).split())}`" for s in seeds)
    return (
        f"I want you to act as a task creator for a web assistant that works on {describe_sites(sites)}. "
        "The assistant does for people what they really do on such a site from day to day.\n"
        "Your goal is to write new tasks inspired by the tasks in #Given Task#. The new tasks must belong to the "
        "same domain, be more diverse, and be about as difficult; each must be reasonable, easy to understand "
        "and realistic for this site.\n"
        "Never write '#Given Task#', '#Created Task#', 'given task' or 'created task' in your answer.\n"
        "Guidelines:\n"
        "- Put every new task between backticks, like `this`.\n"
        "- Vary the wording from one task to the next.\n"
        "- Reuse the names that the given tasks mention (places, usernames, products, projects, forums) instead "
        "of inventing new ones.\n"
        "- A new task may be a little easier or a little harder than the given ones, but stay within their range.\n"
        "\n"
        f"#Given Task#\n{given}\n"
        "\n"
        "#Created Task#\n"
    )


@dataclass
class Parsed:
    """The tasks found in one reply, and how many backtick items were rejected, by reason."""

    tasks: list[str]
    found: int
    rejected: Counter = field(default_factory=Counter)


def _rejection(item: str) -> str | None:
    """Why a backtick item is not a task: empty, a marker leaking from the prompt, or malformed (a backtick pair
    that spans lines, too short, too long, or without letters)."""
    text = " ".join(item.split()).strip(BULLET)
    if not text:
        return "empty"
    if any(marker in text.lower() for marker in MARKERS):
        return "marker"
    if "\n" in item.strip() or len(text.split()) < MIN_WORDS or len(text) > MAX_CHARS:
        return "malformed"
    if not any(c.isalpha() for c in text):
        return "malformed"
    return None


def parse_tasks(text: str) -> Parsed:
    """The tasks between backticks in a generator's reply (the official regex), cleaned and de-duplicated within
    the reply. Code fences are dropped first: otherwise a fence's third backtick pairs with a task's opening one."""
    items = BACKTICKED.findall(CODE_FENCE.sub("\n", text))
    parsed = Parsed([], len(items))
    keys: set[str] = set()
    for item in items:
        reason = _rejection(item)
        task = " ".join(item.split()).strip(BULLET)
        if reason is None and normalise(task) in keys:
            reason = "duplicate"
        if reason:
            parsed.rejected[reason] += 1
            continue
        keys.add(normalise(task))
        parsed.tasks.append(task)
    return parsed


# -- rounds --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    """One generator call: the sites and up to SEEDS_PER_ROUND failed tasks of those sites."""

    sites: tuple[str, ...]
    seeds: tuple[Task, ...]


def group_by_sites(tasks: Iterable[Task]) -> dict[tuple[str, ...], list[Task]]:
    """Tasks by their site list (a multi-site list is a group of its own), one task per normalised intent."""
    groups: dict[tuple[str, ...], list[Task]] = {}
    keys: set[str] = set()
    for task in tasks:
        if normalise(task.intent) not in keys:
            keys.add(normalise(task.intent))
            groups.setdefault(tuple(task.sites), []).append(task)
    return dict(sorted(groups.items()))


def plan_rounds(
    failed: Iterable[Task],
    rounds_per_site: int = ROUNDS_PER_SITE,
    seeds_per_round: int = SEEDS_PER_ROUND,
    seed: int = 0,
) -> list[Round]:
    """`rounds_per_site` rounds per site group, each of min(seeds_per_round, group size) seeds drawn with a
    generator seeded by (seed, sites), interleaved across sites: round 0 of every site, then round 1, ..."""
    plans = []
    for sites, tasks in group_by_sites(failed).items():
        rng = random.Random(f"curriculum:{seed}:{'+'.join(sites)}")
        plans.append(
            [Round(sites, tuple(rng.sample(tasks, min(seeds_per_round, len(tasks))))) for _ in range(rounds_per_site)]
        )
    return [plan[k] for k in range(rounds_per_site) for plan in plans]


# -- tasks -----------------------------------------------------------------------------------------------------


def orm_eval() -> dict:
    """A placeholder eval object: valid for the Task model, never passed by the rule evaluators without a judge."""
    return {
        "eval_types": ["string_match"],
        "reference_answers": {"fuzzy_match": [ORM_NOTE]},
        "reference_url": "",
        "program_html": [],
        "string_note": ORM_NOTE,
    }


def needs_orm(task: Task) -> bool:
    """Whether the task's reward must come from the ORM (a generated task has no rule evaluator)."""
    return getattr(task, "scored_by", None) == ORM_SCORED


def closest_seed(intent: str, seeds: Sequence[Task]) -> Task:
    """The seed sharing the most words with `intent` (the first on a tie): where the new task most likely starts."""
    words = set(normalise(intent).split())
    return max(seeds, key=lambda s: len(words & set(normalise(s.intent).split())))


def generated_task(intent: str, seeds: Sequence[Task], task_id: int, generator: str, phase: int) -> Task:
    """A train task for `intent` on its closest seed's sites and start page, scored by the ORM."""
    base = closest_seed(intent, seeds)
    return Task.model_validate(
        {
            "task_id": task_id,
            "sites": list(base.sites),
            "start_url": base.start_url,
            "require_login": base.require_login,
            "storage_state": base.storage_state,
            "geolocation": base.geolocation,
            "intent": intent,
            "require_reset": False,
            "eval": orm_eval(),
            "split": "train",
            "scored_by": ORM_SCORED,
            "origin": {
                "kind": "generated",
                "generator": generator,
                "phase": phase,
                "start_from": base.task_id,
                "seeds": [s.task_id for s in seeds],
            },
        }
    )


# -- generators ----------------------------------------------------------------------------------------------


class TextGenerator(Protocol):
    name: str

    def complete(self, prompt: str, sampling: Sampling) -> str: ...


def chat_prompt(tokenizer, prompt: str) -> str:
    """`prompt` as a user turn of the model's chat template (as is without one), without the template's leading
    BOS: the tokenizer adds its own when the text is encoded."""
    if not getattr(tokenizer, "chat_template", None):
        return prompt
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
    )
    bos = tokenizer.bos_token
    return text[len(bos) :] if bos and text.startswith(bos) else text


class OpenAIGenerator:
    """An OpenAI-compatible endpoint (GPT-4o, a vLLM server of a chat model): the prompt as one user message,
    or as a raw completion prompt with `?completion`."""

    def __init__(self, policy: OpenAIPolicy):
        self.policy, self.name = policy, policy.name

    def complete(self, prompt: str, sampling: Sampling) -> str:
        message = [{"role": "user", "content": prompt}] if self.policy.chat else prompt
        return self.policy.complete_text(message, sampling)


class HFGenerator:
    """A transformers model in this process (`HFPolicy.complete`), prompted through its chat template."""

    def __init__(self, policy):
        self.policy, self.name = policy, policy.name

    def complete(self, prompt: str, sampling: Sampling) -> str:
        return self.policy.complete([chat_prompt(self.policy.tokenizer, prompt)], sampling)[0].text


class VLLMGenerator:
    """A vLLM server that webrl starts on the first call (and stops on close), prompted through the model's chat
    template as a raw completion (a model without a template has no chat endpoint there)."""

    def __init__(self, policy):
        self.policy, self.name = policy, policy.name
        self._tokenizer = None

    def complete(self, prompt: str, sampling: Sampling) -> str:
        from webrl.policy.models import load_tokenizer, model_cache, resolve_model

        self.policy.start()
        if self._tokenizer is None:
            path = resolve_model(self.policy.model_spec, self.policy.models_dir or model_cache())
            self._tokenizer = load_tokenizer(path)
        return self.policy.complete_text(chat_prompt(self._tokenizer, prompt), sampling)

    def close(self) -> None:
        self.policy.close()


GENERATORS = {"openai": OpenAIGenerator, "hf": HFGenerator, "vllm": VLLMGenerator}


def make_generator(spec: str, models_dir: Path | None = None) -> TextGenerator:
    """A text generator from its spec (GENERATOR_FORMS): the policy of the same spec (`make_policy`), used for
    free text. An `openai:` spec talks chat unless it says `?completion`."""
    kind = spec.partition(":")[0]
    if kind not in GENERATORS:
        raise unknown_form(f"task generator '{spec}'", GENERATOR_FORMS)
    if kind == "openai" and "?" not in spec:
        spec += "?chat"
    return GENERATORS[kind](make_policy(spec, models_dir))


# -- the loop --------------------------------------------------------------------------------------------------


@dataclass
class GenerationReport:
    """What one phase's generation did: calls, backtick items found, tasks kept, and rejections by reason
    (empty, marker, malformed, duplicate within a reply, seen before, over the cap)."""

    rounds: int = 0
    calls: int = 0
    errors: list[str] = field(default_factory=list)
    found: int = 0
    kept: int = 0
    rejected: Counter = field(default_factory=Counter)
    kept_by_site: Counter = field(default_factory=Counter)
    unparseable_replies: int = 0  # replies without a single usable task


def generate_tasks(
    failed: Sequence[Task],
    generator: TextGenerator,
    seen: Seen,
    *,
    first_id: int,
    keep: int = KEEP_PER_PHASE,
    rounds_per_site: int = ROUNDS_PER_SITE,
    seeds_per_round: int = SEEDS_PER_ROUND,
    seed: int = 0,
    phase: int = 0,
    sampling: Sampling = GENERATION_SAMPLING,
) -> tuple[list[Task], GenerationReport]:
    """New ORM-scored train tasks from the failed tasks, ids from `first_id` on; adds them (and the seeds) to
    `seen`. A failed call is recorded and skipped: one error does not lose the phase's other rounds."""
    for task in failed:
        seen.add(task.intent)
    rounds = plan_rounds(failed, rounds_per_site, seeds_per_round, seed)
    report, tasks = GenerationReport(rounds=len(rounds)), []
    for plan in rounds:
        if len(tasks) >= keep:
            break
        try:
            reply = generator.complete(evolve_prompt(plan.sites, [s.intent for s in plan.seeds]), sampling)
        except WebrlError as err:
            report.errors.append(str(err))
            continue
        report.calls += 1
        parsed = parse_tasks(reply)
        report.found += parsed.found
        report.rejected.update(parsed.rejected)
        report.unparseable_replies += not parsed.tasks
        for intent in parsed.tasks:
            if len(tasks) >= keep:
                report.rejected["over_cap"] += 1
            elif not seen.add(intent):
                report.rejected["seen"] += 1
            else:
                tasks.append(generated_task(intent, plan.seeds, first_id + len(tasks), generator.name, phase))
                report.kept_by_site["+".join(plan.sites)] += 1
    report.kept = len(tasks)
    return tasks, report
