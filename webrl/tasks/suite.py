"""The embedded task suite: WebArena-format tasks instantiated from the embedded sites' seeded data.

Each site keeps its templates beside it, in `webrl.sites.<site>.tasks` (a module exporting
`TEMPLATES: list[TaskTemplate]`). A template turns the pristine data into instances: the values of
its intent template, the start URL, the evaluation (reference answers, URLs and locators computed
from the data, never typed by hand, built with the eval builders below) and a scripted solution (`cheat`)
in the WebRL action syntax, written with `webrl.tasks.script`, whose elements are named by what a person
sees (`element="{Sign In}"`, `{placeholder=Search}`; see `webrl.policy.oracle`). The suite is
deterministic for a seed: same seed, same tasks, same split, same version.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import random
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from webrl.tasks.model import Task

# Sites whose templates make up the suite, and each one's share of the test split (WebArena-Lite's:
# shopping 27%, shopping_admin 21%, gitlab 18%, map 16%, reddit 12%, multi-site 6%).
TEST_SHARE = {"shopping": 0.27, "shopping_admin": 0.21, "gitlab": 0.18, "map": 0.16, "reddit": 0.12, "multi": 0.06}
TEST_SIZE = 160
TEMPLATE_SITES = ("shopping", "shopping_admin", "gitlab", "reddit", "map")

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
    return {"eval_types": ["string_match"], "reference_answers": {rule: value}, "reference_url": "",
            "program_html": [], "string_note": ""}


def url_eval(url: str) -> dict:
    return {"eval_types": ["url_match"], "reference_answers": None, "reference_url": url,
            "url_note": "GOLD in PRED", "program_html": [], "string_note": ""}


def html_eval(*targets: tuple[str, str, str, object]) -> dict:
    """program_html targets as (url, locator, rule, value), rule "exact_match" (a string) or "must_include" (a list)."""
    return {"eval_types": ["program_html"], "reference_answers": None, "reference_url": "", "program_html": [
        {"url": url, "locator": locator, "required_contents": {rule: value}} for url, locator, rule, value in targets
    ], "string_note": ""}


def unachievable_eval(note: str) -> dict:
    return {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"}, "reference_url": "",
            "program_html": [], "string_note": note}


def site_templates() -> list[TaskTemplate]:
    templates = []
    for site in TEMPLATE_SITES:
        try:
            module = importlib.import_module(f"webrl.sites.{site}.tasks")
        except ModuleNotFoundError as err:
            if err.name != f"webrl.sites.{site}.tasks":
                raise
            continue  # a site without templates yet
        templates += module.TEMPLATES
    keys = [t.key for t in templates]
    duplicates = {k for k in keys if keys.count(k) > 1}
    if duplicates:
        raise ValueError(f"duplicate template keys: {sorted(duplicates)}")
    return templates


def build_suite(snapshot_dir: Path, seed: int = 0) -> list[Task]:
    """Every task of the suite for `seed`, numbered from 0, with `split`, `tier` and the suite version."""
    tasks = template_tasks(snapshot_dir, seed)
    _split(tasks)
    version = suite_version(tasks)
    for task in tasks:
        task.suite_version = version
    return tasks


def template_tasks(snapshot_dir: Path, seed: int = 0, pool: bool = False) -> list[Task]:
    """Every template's instances as tasks numbered from 0 (no split, no version): the suite's fixed sample,
    or with `pool` every candidate the templates know (see `Data`)."""
    from webrl.sites.embedded.registry import SITE_NAMES, site_spec

    databases = {spec.database.name: spec.database for spec in map(site_spec, SITE_NAMES) if spec.database}
    with ExitStack() as stack:
        data = Data({
            name: stack.enter_context(closing(_read_only(db.build_snapshot(snapshot_dir, seed))))
            for name, db in databases.items()
        }, pool=pool)
        made = [(template, instance) for template in site_templates() for instance in template.instances(data)]
    return [_task(i, template, instance) for i, (template, instance) in enumerate(made)]


def suite_version(tasks: list[Task]) -> str:
    """A content hash of the whole suite: any change to a template or to the seed data changes it."""
    digest = hashlib.sha256()
    for task in tasks:
        config = task.to_config()
        config.pop("suite_version", None)
        digest.update(json.dumps(config, sort_keys=True).encode())
    return f"embedded-{digest.hexdigest()[:12]}"


def _read_only(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def _task(task_id: int, template: TaskTemplate, instance: Instance) -> Task:
    sites = list(template.sites)
    return Task.model_validate({
        "task_id": task_id,
        "sites": sites,
        "start_url": instance.start_url,
        "require_login": instance.login,
        "storage_state": f"./.auth/{'.'.join(sites)}_state.json" if instance.login else None,
        "geolocation": None,
        "intent_template": template.intent_template,
        "instantiation_dict": instance.values,
        "intent": template.intent_template.format(**instance.values),
        "intent_template_id": int(hashlib.sha256(template.key.encode()).hexdigest()[:6], 16),
        "require_reset": False,
        "eval": instance.eval,
        "cheat": instance.cheat,
        "tier": _tier(len(instance.cheat)),
        "template": template.key,
    })


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


def _tier(steps: int) -> str:
    return "easy" if steps <= 3 else "medium" if steps <= 7 else "hard"


def _split(tasks: list[Task]) -> None:
    """Deterministic train/test split with WebArena-Lite's site proportions in test: within each site
    group, the tasks whose hash of (template, values) is smallest go to test."""
    groups: dict[str, list[Task]] = {}
    for task in tasks:
        groups.setdefault(site_group(task), []).append(task)
    for group, members in groups.items():
        quota = round(TEST_SHARE.get(group, 0.0) * TEST_SIZE)
        ranked = sorted(members, key=lambda t: hashlib.sha256(
            f"{t.template}|{json.dumps(t.instantiation_dict, sort_keys=True)}".encode()).hexdigest())
        for rank, task in enumerate(ranked):
            task.split = "test" if rank < min(quota, len(members) // 2) else "train"  # keep half for train
