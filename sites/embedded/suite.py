"""The embedded task suite: WebArena-format tasks instantiated from the embedded sites' seeded data by their
templates (webrl.tasks.templates), split into train and test with WebArena-Lite's site proportions, and
versioned by a content hash. Deterministic for a seed: same seed, same tasks, same split, same version.
The named sets `embedded`, `embedded:train` and `embedded:test` (TASK_SETS)."""

from __future__ import annotations

import hashlib
import importlib
import json
import sqlite3
from contextlib import ExitStack, closing
from pathlib import Path

import webrl.sitelist
import webrl.sites
import webrl.tasks
from webrl.files import write_atomically
from webrl.sitelist import SITE_LIST
from webrl.sites.embedded.registry import SITE_NAMES, site_spec
from webrl.sites.platform import DatabaseSpec, file_sha256
from webrl.tasks.load import NamedTaskSets
from webrl.tasks.model import Task
from webrl.tasks.templates import Data, Instance, TaskTemplate, site_group

_PARTS = sorted((site for site in SITE_LIST if site.suite), key=lambda site: site.suite.position)
# Sites whose templates make up the suite, in the suite's order (webrl.sitelist).
TEMPLATE_SITES = tuple(site.name for site in _PARTS)
# Each group's share of the test split, largest first: the sites' (WebArena-Lite's: shopping 27%,
# shopping_admin 21%, gitlab 18%, map 16%, reddit 12%), then the tasks over several sites' (6%).
TEST_SHARE = {site.name: site.suite.test_share for site in sorted(_PARTS, key=lambda site: -site.suite.test_share)}
TEST_SHARE["multi"] = 0.06
TEST_SIZE = 160
SET_NAMES = ("embedded", "embedded:train", "embedded:test")
# what the suite is made from, besides the snapshots: the sites' templates and data, their entries (the suite's
# sites, order and shares) and webrl.tasks
SUITE_SOURCES = (Path(webrl.sites.__file__).parent, Path(webrl.sitelist.__file__), Path(webrl.tasks.__file__).parent)


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


def cached_suite(state_dir: Path, seed: int = 0) -> list[Task]:
    """`build_suite` of the state dir's snapshots, kept in `<state dir>/suite/<key>.json` (~0.1 s to load
    instead of seconds to build). The key hashes what the suite is made from: the snapshot files and every
    source file of the sites, of their entries and of webrl.tasks (the templates and the code they call)."""
    snapshot_dir = Path(state_dir) / "snapshots"
    digest = hashlib.sha256(str(seed).encode())
    for db in suite_databases():
        digest.update(file_sha256(db.build_snapshot(snapshot_dir, seed)).encode())
    for root in SUITE_SOURCES:
        sources = root.rglob("*") if root.is_dir() else [root]
        for source in sorted(p for p in sources if p.suffix in (".py", ".json", ".sql")):
            digest.update(source.read_bytes())
    path = Path(state_dir) / "suite" / f"{digest.hexdigest()[:16]}.json"
    if path.exists():
        return [Task.model_validate(config) for config in json.loads(path.read_text())]
    tasks = build_suite(snapshot_dir, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps([task.to_config() for task in tasks]))
    return tasks


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
    with ExitStack() as stack:
        data = Data(
            {
                db.name: stack.enter_context(closing(_read_only(db.build_snapshot(snapshot_dir, seed))))
                for db in suite_databases()
            },
            pool=pool,
        )
        made = [(template, instance) for template in site_templates() for instance in template.instances(data)]
    return [_task(i, template, instance) for i, (template, instance) in enumerate(made)]


def suite_databases() -> list[DatabaseSpec]:
    """The databases the suite is made from, each once (the shop and its admin share the store), by name."""
    databases = {spec.database.name: spec.database for spec in map(site_spec, SITE_NAMES) if spec.database}
    return [databases[name] for name in sorted(databases)]


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
    return Task.model_validate(
        {
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
        }
    )


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
        ranked = sorted(
            members,
            key=lambda t: hashlib.sha256(
                f"{t.template}|{json.dumps(t.instantiation_dict, sort_keys=True)}".encode()
            ).hexdigest(),
        )
        for rank, task in enumerate(ranked):
            task.split = "test" if rank < min(quota, len(members) // 2) else "train"  # keep half for train


def _suite_set(name: str, cache_dir: Path, seed: int) -> list[Task]:
    split = name.partition(":")[2]
    return [t for t in cached_suite(cache_dir, seed) if not split or t.split == split]


TASK_SETS = NamedTaskSets(names="embedded[:train|:test]", owns=SET_NAMES.__contains__, load=_suite_set)
