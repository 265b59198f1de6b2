"""Task templates: how a site describes the tasks its seeded data allows, for the embedded suite
(webrl.sites.embedded.suite) to instantiate.

Each site keeps its templates beside it, in `webrl.sites.<site>.tasks` (a module exporting
`TEMPLATES: list[TaskTemplate]`). A template turns the pristine data into instances: the values of
its intent template, the start URL, the evaluation (reference answers, URLs and locators computed
from the data, never typed by hand, built with the eval builders below) and a scripted solution (`cheat`)
in the WebRL action syntax, written with `webrl.tasks.script`, whose elements are named by what a person
sees (`element="{Sign In}"`, `{placeholder=Search}`; see `webrl.policy.oracle`).
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from webrl.tasks.model import Task
from webrl.tasks.script import done

POOL_QUOTA_FACTOR = 8  # pool mode: a generate-until-enough loop goes on to this many times its suite count
T = TypeVar("T")
# How `Data.sample` keeps its draw: in draw order (random.sample), the drawn rows in their original order, or
# the first k of a seeded shuffle. Each is what some templates were written with; all stay byte-identical.
SampleOrder = Literal["drawn", "kept", "shuffled"]


@dataclass
class Instance:
    """One task made from a template."""

    values: dict[str, str]  # fills the template's intent_template
    start_url: str  # with WebArena placeholders, e.g. "__SHOPPING__/customer/account/"
    eval: dict  # WebArena's eval object (placeholders allowed)
    cheat: list[str]  # the scripted solution, ending with exit(message=...)
    login: bool = True  # sign in to the task's sites first (WebArena's storage_state)


@dataclass(frozen=True)
class TaskTemplate:
    key: str  # unique and stable, e.g. "shopping.product_price"; part of the split and the version
    sites: tuple[str, ...]
    intent_template: str  # e.g. "What is the price of {product}?"
    instances: Callable[[Data], list[Instance]]
    notes: str = ""


@dataclass
class Data:
    """Read-only access to the pristine databases the templates draw from (by database name).

    Templates pick their candidates with `sample` (and stop generate-until-enough loops at `quota`), so that
    pool mode (`pool=True`, used by the curriculum's evolver) can ask the same templates for every candidate
    instead of the suite's fixed sample: other entities, with the same evaluators and scripted solutions."""

    connections: dict[str, sqlite3.Connection] = field(default_factory=dict)
    pool: bool = False

    def sample(self, rng: random.Random | str, rows: Sequence[T], k: int, order: SampleOrder = "drawn") -> list[T]:
        """The suite's k rows of `rows`, drawn with `rng` (a string seeds a fresh generator, e.g. the template
        key), kept as `order` says; in pool mode every row, in its original order."""
        if self.pool:
            return list(rows)
        rng = random.Random(rng) if isinstance(rng, str) else rng
        if order == "shuffled":
            shuffled = list(rows)
            rng.shuffle(shuffled)
            return shuffled[:k]
        drawn = rng.sample(range(len(rows)), min(k, len(rows)))  # same draws as rng.sample(rows, ...)
        return [rows[i] for i in (sorted(drawn) if order == "kept" else drawn)]

    def quota(self, n: int) -> int:
        """Where a template that draws until it has enough instances stops: n, or POOL_QUOTA_FACTOR times n in
        pool mode (bounded: some loops compute a route per draw, and every draw space is large)."""
        return POOL_QUOTA_FACTOR * n if self.pool else n

    def rows(self, database: str, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        return self.connections[database].execute(sql, params).fetchall()

    def one(self, database: str, sql: str, params: tuple = ()) -> sqlite3.Row:
        row = self.connections[database].execute(sql, params).fetchone()
        if row is None:
            raise LookupError(f"{database}: no row for {sql!r} {params}")
        return row


# WebArena eval objects, as the templates build them.


def string_eval(rule: str, value) -> dict:
    """The agent's answer against `value` by `rule`: "exact_match" (one string), "must_include" or
    "fuzzy_match" (a list of strings; fuzzy ones need an LLM judge)."""
    return {
        "eval_types": ["string_match"],
        "reference_answers": {rule: value},
        "reference_url": "",
        "program_html": [],
        "string_note": "",
    }


def url_eval(url: str) -> dict:
    return {
        "eval_types": ["url_match"],
        "reference_answers": None,
        "reference_url": url,
        "url_note": "GOLD in PRED",
        "program_html": [],
        "string_note": "",
    }


def html_eval(*targets: tuple[str, str, str, object]) -> dict:
    """program_html targets as (url, locator, rule, value), rule "exact_match" (a string) or "must_include" (a list)."""
    return {
        "eval_types": ["program_html"],
        "reference_answers": None,
        "reference_url": "",
        "program_html": [
            {"url": url, "locator": locator, "required_contents": {rule: value}}
            for url, locator, rule, value in targets
        ],
        "string_note": "",
    }


def unachievable(
    values: dict[str, str], start_url: str, reason: str, steps: Sequence[str] = (), login: bool = True
) -> Instance:
    """A task that cannot be done: the answer is "N/A" (WebArena's `string_note` holds why, for the judge), given
    after the `steps` that find it out."""
    eval = {
        "eval_types": ["string_match"],
        "reference_answers": {"fuzzy_match": "N/A"},
        "reference_url": "",
        "program_html": [],
        "string_note": reason,
    }
    return Instance(values, start_url, eval, [*steps, done("N/A")], login)


def site_group(task: Task) -> str:
    """The task's site, or "multi" for a task over several sites (WebArena-Lite's columns)."""
    return task.sites[0] if len(task.sites) == 1 else "multi"


def eval_kind(task: Task) -> str:
    """What the task's evaluator checks, in WebArena's terms: the answer rule (exact_match, must_include,
    fuzzy_match), "N/A" for an unachievable task, url_match or program_html."""
    answers = task.eval.reference_answers
    if answers is not None and answers.fuzzy_match == "N/A":
        return "N/A"
    kinds = [t for t in task.eval.eval_types if t != "string_match"]
    if answers is not None:
        kinds += [rule for rule in ("exact_match", "must_include", "fuzzy_match") if getattr(answers, rule) is not None]
    return "+".join(kinds)
