"""`webrl tasks`: the embedded task suite — list, show, export, and demonstrations for SFT; MiniWoB++'s
environments."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from webrl.cli.console import make_console
from webrl.cli.global_options import GLOBALS
from webrl.cli.sites import compact_table
from webrl.errors import UsageError
from webrl.families.verified.tasks import verified_eval
from webrl.runs.records import EpisodeRecord

console = make_console()
app = typer.Typer(
    help="The embedded task suite: list, show, export, demonstrations; MiniWoB++'s environments.", no_args_is_help=True
)

SplitOption = Annotated[str | None, typer.Option("--split", help="train or test [default: both].")]
TasksOption = Annotated[
    str | None,
    typer.Option(
        help="Another task set or file instead of the embedded suite, e.g. webarena-verified:hard (what stats "
        "counts for it: its sites and checks)."
    ),
]


def _named(tasks: str):
    from webrl.sites.task_sets import resolve_task_set

    config = GLOBALS.config()
    return resolve_task_set(tasks, config.state_dir, config.sites.seed)


def _checks(task) -> list[str]:
    """What a task's evaluation checks, for stats: WebArena-Verified's task type and network check, else the
    eval types."""
    blocks = verified_eval(task)
    if blocks is None:
        return list(task.eval.eval_types)
    network = any(b.get("evaluator") == "NetworkEventEvaluator" for b in blocks.eval)
    return [(blocks.task_type or "?").lower(), *(["network"] if network else [])]


def _set_stats(tasks: str) -> None:
    """`stats --tasks NAME`: counts by site group and by what is checked."""
    from webrl.tasks.templates import site_group

    loaded = _named(tasks)
    counts: dict[str, Counter] = {}
    for t in loaded:
        for group in (site_group(t), "total"):
            counts.setdefault(group, Counter()).update(["tasks", *_checks(t)])
    columns = sorted({c for c in counts["total"] if c != "tasks"}) if loaded else []
    table = compact_table("site", "tasks", *columns)
    for group in sorted(counts, key=lambda g: (g == "total", g == "multi", g)):
        table.add_row(group, *(str(counts[group][c]) for c in ["tasks", *columns]), end_section=group == "multi")
    console.print(table)
    console.print(
        f"{tasks}: {len(loaded)} tasks. Checks: retrieve/mutate/navigate = WebArena-Verified's expected task type, "
        "network = a NetworkEventEvaluator on the trace; otherwise the eval types."
    )


def _suite(split: str | None = None, site: str | None = None):
    from webrl.sites.embedded.suite import cached_suite

    if split not in (None, "train", "test"):
        raise UsageError(f"--split {split}: choose train or test")
    config = GLOBALS.config()
    tasks = cached_suite(config.state_dir, config.sites.seed)
    sites = sorted({s for t in tasks for s in t.sites})
    if site is not None and site not in sites:
        raise UsageError(f"--site {site}: the suite has no such site (its sites: {', '.join(sites)})")
    return [t for t in tasks if (split is None or t.split == split) and (site is None or site in t.sites)]


@app.command("list")
def list_tasks(
    split: SplitOption = None, site: Annotated[str | None, typer.Option(help="Only tasks on this site.")] = None
) -> None:
    """One line per task (id, split, tier, sites, eval types, intent), then counts."""
    tasks = _suite(split, site)
    table = compact_table("id", "split", "tier", "sites", "eval", "intent")
    table.columns[-1].no_wrap = False  # the intent wraps; the rest stays on one line
    for t in tasks:
        table.add_row(str(t.task_id), t.split, t.tier, ",".join(t.sites), ",".join(t.eval.eval_types), t.intent)
    console.print(table)
    by = Counter((t.split, ",".join(t.sites)) for t in tasks)
    console.print(
        f"{len(tasks)} tasks, suite {tasks[0].suite_version if tasks else '–'}: "
        + ", ".join(f"{split} {sites} {n}" for (split, sites), n in sorted(by.items()))
    )


@app.command("stats")
def stats(split: SplitOption = None, tasks: TasksOption = None) -> None:
    """Task counts by site (multi = several sites): split, what the evaluator checks, and tier."""
    from webrl.sites.embedded.suite import TEST_SHARE
    from webrl.tasks.templates import eval_kind, site_group

    if tasks is not None:
        return _set_stats(tasks)
    tasks = _suite(split)
    kinds = {
        "exact_match": "exact",
        "must_include": "include",
        "fuzzy_match": "fuzzy",
        "N/A": "N/A",
        "url_match": "url",
        "program_html": "html",
    }
    columns = ["train", "test", *kinds, "easy", "medium", "hard"]
    counts: dict[str, Counter] = {group: Counter() for group in [*TEST_SHARE, "total"]}
    for t in tasks:
        for group in (site_group(t), "total"):
            counts[group].update([t.split, eval_kind(t), t.tier])
    table = compact_table("site", "tasks", *(kinds.get(c, c) for c in columns))
    for group, c in counts.items():
        total = c["train"] + c["test"]
        if total:
            table.add_row(group, str(total), *(str(c[k]) for k in columns), end_section=group == "multi")
    console.print(table)
    console.print(
        f"suite {tasks[0].suite_version if tasks else '–'}. Checks: exact/include/fuzzy = string_match "
        "with exact_match/must_include/fuzzy_match, N/A = unachievable, url = url_match, html = "
        "program_html. Tiers by the scripted solution's steps: easy ≤ 3, medium ≤ 7, hard > 7."
    )


@app.command("show")
def show(task_id: Annotated[int, typer.Argument(help="The task id.")], tasks: TasksOption = None) -> None:
    """The whole task in WebArena's JSON format, with its scripted solution (a WebArena-Verified task with its eval
    blocks whole, under `verified`)."""
    match = [t for t in (_suite() if tasks is None else _named(tasks)) if t.task_id == task_id]
    if not match:
        where = "the embedded suite (see `webrl tasks list`)" if tasks is None else tasks
        raise UsageError(f"no task {task_id} in {where}")
    console.print_json(json.dumps(match[0].to_config()))


@app.command("export")
def export(
    out: Annotated[Path, typer.Option(help="JSON file to write (WebArena's format, one list).")],
    split: SplitOption = None,
) -> None:
    """Write the suite (or one split) as a WebArena task file, usable with `webrl eval --tasks FILE`."""
    tasks = _suite(split)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([t.to_config() for t in tasks], indent=2))
    console.print(f"wrote {len(tasks)} tasks to {out}")


@app.command("demos")
def demos(
    out: Annotated[
        Path,
        typer.Option(
            help="JSONL file: one record per step, {task_id, episode, step, prompt, "
            "response, reward}; the episodes (and their report.html) go to "
            "OUT's name + '.episodes/'.",
            dir_okay=False,
        ),
    ],
    split: Annotated[str, typer.Option(help="train or test (of the embedded suite).")] = "train",
    tasks: Annotated[
        str | None,
        typer.Option(
            help="Another task set or file instead, e.g. miniwob:train; "
            "its tasks without a scripted solution are skipped."
        ),
    ] = None,
    parallel: Annotated[int, typer.Option(min=1, help="Episodes at once (needs `webrl up --instances N`).")] = 1,
    observation: Annotated[
        str,
        typer.Option(
            help="The pages in the prompts: webrl (VAB's simplified HTML) or compact (without positions and "
            "repeated text), as `webrl train --observation` makes them."
        ),
    ] = "webrl",
) -> None:
    """Run every task's scripted solution in the browser (the oracle, through `webrl eval`'s episode runner) and
    write the steps of the successful episodes as SFT records in the exact WebRL prompt format, as `webrl train`'s
    phase 0 does. Needs the sites running (`webrl up`)."""
    import shutil

    from rich.progress import Progress

    from webrl.sites.backends import make_backend
    from webrl.sites.task_sets import resolve_task_set
    from webrl.train.rewards import write_demos

    if observation not in ("webrl", "compact"):
        raise UsageError(f"--observation {observation!r}: expected webrl or compact")
    config = GLOBALS.config()
    if tasks is None:
        tasks = _suite(split)
    else:
        tasks = [t for t in resolve_task_set(tasks, config.state_dir, config.sites.seed) if t.cheat]
    backend = make_backend(config)
    if backend.running() is None:
        raise UsageError("the sites are not running; start them with `webrl up`")
    episodes = out.with_name(out.name + ".episodes")
    shutil.rmtree(episodes, ignore_errors=True)  # a fresh set of demonstrations each time
    failed = []
    with Progress(console=console) as progress:
        bar = progress.add_task("demonstrations", total=len(tasks))

        def on_episode(record: EpisodeRecord) -> None:
            progress.advance(bar)
            if record.score != 1.0:
                failed.append(record.task_id)

        kept, written = write_demos(
            tasks,
            backend,
            episodes,
            out,
            backend_name=config.sites.backend,
            parallel=parallel,
            observation=observation,
            on_episode=on_episode,
        )
    console.print(
        f"{kept}/{len(tasks)} episodes succeeded; {written} records in {out}"
        + (f"; failed: {sorted(failed, key=str)} (see {episodes / 'report.html'})" if failed else "")
    )
    if failed:
        raise typer.Exit(1)


@app.command("miniwob")
def miniwob() -> None:
    """MiniWoB++'s environments: scripted (supported, with a scripted solution the oracle runs), supported (the
    WebRL actions and observation can express it) or unsupported, with the reason; the seeds of each split."""
    from webrl.families.miniwob.tasks import TEST_SEEDS, TRAIN_SEED_START, TRAIN_SEEDS, environments

    table = compact_table("environment", "status", "why not")
    table.columns[-1].no_wrap = False
    envs = environments()
    for env in envs:
        table.add_row(env.name, env.status, env.reason)
    console.print(table)
    counts = Counter(e.status for e in envs)
    console.print(
        f"{len(envs)} environments: {counts['scripted']} scripted, {counts['supported']} supported without "
        f"a script, {counts['unsupported']} unsupported. Seeds per environment: test 0..{TEST_SEEDS - 1}, "
        f"train from {TRAIN_SEED_START} ({TRAIN_SEEDS} in `miniwob:train`); seeds whose problem no WebRL "
        "action can solve are left out."
    )


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="tasks")
