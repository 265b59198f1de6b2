"""`webrl eval`: leaderboard numbers for a policy on a task set."""

from __future__ import annotations

import asyncio
import inspect
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from webrl.cli.cluster import ExecutorOption, RayAddressOption, cluster_flags
from webrl.cli.console import episode_progress, make_console
from webrl.cli.global_options import GLOBALS
from webrl.cli.options import config_layers, extend_command, unset_options
from webrl.cli.sites import compact_table
from webrl.errors import IncompleteRun, UsageError
from webrl.layered_settings import Layers, resolve_layers
from webrl.policy.factory import policy_builder
from webrl.policy.models import model_cache
from webrl.runs.eval_settings import EVAL_OPTIONS, FILE_FIELDS, EvalSettings, option_of
from webrl.runs.records import EpisodeRecord
from webrl.runs.summary import EvalSummary
from webrl.sites.backends import make_backend
from webrl.tasks.family import SummaryTable, family_of_mode, summary_lines, summary_tables

console = make_console()


def eval_command(
    backend: Annotated[str | None, typer.Option(help="embedded or docker [default: embedded].")] = None,
    rescore: Annotated[
        Path | None,
        typer.Option(
            help="Score a finished run folder's episodes again from their records, without the sites "
            "(--mode verified), into --out [default: RUN/rescore-<time>].",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="YAML/TOML file of these settings (its eval: section or the whole file; --print-config writes one).",
            dir_okay=False,
        ),
    ] = None,
    print_config: Annotated[
        bool,
        typer.Option("--print-config", help="Print the resolved settings as a file --config reads back, and stop."),
    ] = False,
    executor: ExecutorOption = None,
    ray_address: RayAddressOption = None,
    **options: Any,
) -> None:
    """Run a policy over a task set in real browsers; write episodes.jsonl, summary.json and report.html."""
    from webrl.evaluators.judge import parse_judge_spec  # Playwright & co. only when evaluating
    from webrl.runs.eval import incomplete
    from webrl.runs.executor_factory import executor_for
    from webrl.sites.task_sets import resolve_task_set

    site_config = GLOBALS.config(**{"sites.backend": backend}, **cluster_flags(executor, ray_address))
    given = {EVAL_OPTIONS[name]: value for name, value in options.items() if value is not None}
    layers = [*config_layers("eval", site_config.eval, config), ("options", given)]
    check_file_fields(layers)
    merged = {k: v for _, layer in layers for k, v in layer.items()}
    if rescore is not None:
        return rescore_run(rescore, merged.get("mode"), merged.get("out"))
    if "tasks" not in merged:
        raise UsageError("--tasks: give a task set or file (or --rescore RUN)")
    if merged.get("resume") and "out" not in merged:
        raise UsageError("--resume needs the --out folder of the run to continue")
    default_out = {"out": Path("runs") / f"eval-{datetime.now():%Y%m%d-%H%M%S}"}
    settings = resolve_layers(EvalSettings, [("defaults", default_out), *layers], option_of)
    if print_config:
        typer.echo(
            yaml.safe_dump(settings.model_dump(mode="json", include=set(FILE_FIELDS)), sort_keys=False), nl=False
        )
        return
    mode_family = family_of_mode(settings.mode)  # a task family's own mode, with its own checks and options
    run_options = mode_family.run_options(settings.mode, settings.tasks) if mode_family else {}
    settings = settings.model_copy(update={"backend": site_config.sites.backend, **run_options})
    policy_builder(settings.policy)  # a bad spec is refused before tasks are read or anything starts
    judge_model = parse_judge_spec(settings.judge)
    site_backend = make_backend(site_config)
    starting = lambda: console.status(f"starting {settings.policy} ({site_config.cluster.executor})")  # noqa: E731
    with executor_for(settings, site_backend, model_cache(site_config), judge_model, starting) as runner:
        plan = site_backend.running() if site_config.sites.backend == "embedded" else None
        seed = plan.seed if plan else site_config.sites.seed
        task_list = resolve_task_set(settings.tasks, site_config.state_dir, seed)[: settings.limit]
        if mode_family is not None:
            mode_family.check_run(settings.mode, task_list, settings, site_backend.urls(0))
        settings.task_suite = getattr(task_list[0], "suite_version", None) if task_list else None
        summary = run_with_progress(settings, task_list, runner, settings.repeats)
    print_summary(summary, settings.out)
    if problem := incomplete(summary):
        raise IncompleteRun(
            f"{problem}; continue with `webrl eval --resume --out {settings.out}` once the sites "
            "answer (`webrl status`)"
        )


def check_file_fields(layers: Layers) -> None:
    """A settings file (or the configuration's eval section) holds eval settings only: a misspelt or unknown key is
    an error naming it, not a setting silently ignored."""
    for source, layer in layers[:-1]:
        unknown = sorted(set(layer) - set(FILE_FIELDS))
        if unknown:
            raise UsageError(f"{source}: unknown setting '{unknown[0]}' (eval settings: {', '.join(FILE_FIELDS)})")


def eval_parameters() -> list[inspect.Parameter]:
    """One option per EvalSettings field a user sets, defaulting to "not given" so that the settings files apply."""
    fields = {}
    for option, name in EVAL_OPTIONS.items():
        field = EvalSettings.model_fields[name]
        fields[option] = (field, None if field.is_required() else field.get_default(), "")
    return unset_options(fields)


def print_summary(summary: EvalSummary, out: Path) -> None:
    """The run's headline, its task families' tables, a line per evaluation error, the families' lines (the verified
    mode's facts) and the episode counts."""
    from webrl.runs.report import headline

    console.print(headline(summary))
    for extra in summary_tables(summary):  # the tables of the run's task families (MiniWoB++: one per environment)
        console.print(summary_table(extra))
    mode = summary.settings.mode
    for error in summary.evaluator_errors:  # each task's own line: which field, and how the rate counted it
        where = f" ({error.field})" if error.field else ""
        console.print(
            f"task {error.task_id}, repeat {error.repeat}: evaluation error{where}: {error.error}"
            f" (in the {mode} success rate: {error.counts_as})"
        )
    if summary.dump_suspect:
        console.print(
            f"dump_suspect: {summary.dump_suspect} of the successes would fail the strict mode's guard (an answer "
            "or URL that lists more than the task asked, or a last page that did not answer 2xx); see the report"
        )
    for line in summary_lines(summary):
        console.print(line)
    counts = ", ".join(f"{n} {what}" for what, n in summary.episodes.model_dump().items() if n or what == "planned")
    console.print(f"episodes: {counts}  ·  report: {out / 'report.html'}")


def rescore_run(run: Path, mode: str | None, out: Path | None) -> None:
    """`--rescore RUN`: the run's episodes scored again offline in `mode` (None: the run's own), a task family's mode
    that can."""
    from webrl.runs.rescore import rescore, rescoring_family

    if mode is not None:
        rescoring_family(mode)
    if not (run / "episodes.jsonl").is_file():
        raise UsageError(f"--rescore {run}: no episodes.jsonl in this folder")
    out = out or run / f"rescore-{datetime.now():%Y%m%d-%H%M%S}"
    summary = rescore(run, out, mode)
    console.print("re-scored offline:")
    print_summary(summary, out)


def run_with_progress(settings, tasks: list, runner, repeats: int) -> EvalSummary:
    """`run_eval` with a progress bar of episodes and successes; Ctrl-C says how to continue."""
    from webrl.runs.eval import run_eval

    with episode_progress(console) as progress:
        bar = progress.add_task("episodes", total=len(tasks) * repeats, rate="")
        successes = []

        def on_episode(record: EpisodeRecord) -> None:
            successes.append(record.score == 1.0)
            progress.update(bar, advance=1, rate=f"{sum(successes)}/{len(successes)} succeeded")

        try:
            return asyncio.run(run_eval(settings, tasks, runner, on_episode))
        except KeyboardInterrupt:
            console.print(
                f"interrupted: {len(successes)} episodes are recorded in {settings.out}; continue with "
                f"--resume --out {settings.out}"
            )
            raise typer.Exit(130) from None


def summary_table(extra: SummaryTable):
    table = compact_table(*extra.columns, title=extra.title)
    for row in extra.rows:
        table.add_row(*row)
    if extra.total is not None:
        table.add_row(*extra.total, style="bold")
    return table


def register(app: typer.Typer) -> None:
    command = extend_command(eval_command, eval_parameters(), lambda kwargs: eval_command(**kwargs), "options", True)
    app.command("eval")(command)
