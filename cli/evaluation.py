"""`webrl eval`: leaderboard numbers for a policy on a task set."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from webrl.cli.cluster import ExecutorOption, RayAddressOption, cluster_flags
from webrl.cli.console import episode_progress, make_console
from webrl.cli.global_options import GLOBALS
from webrl.cli.sites import compact_table
from webrl.env.miniwob import DEFAULT_TIME_LIMIT_S
from webrl.errors import IncompleteRun, UsageError
from webrl.policy.factory import POLICY_FORMS, policy_builder
from webrl.policy.models import model_cache
from webrl.runs.records import EpisodeRecord
from webrl.sites.backends import make_backend
from webrl.tasks.family import SummaryTable, summary_tables

console = make_console()


def eval_command(
    tasks: Annotated[
        str | None,
        typer.Option(
            help="A task set (webarena-lite, webarena, webarena-verified[:hard], embedded[:train|:test], "
            "miniwob[:ENV,...][:train|:test]) or a task file/folder."
        ),
    ] = None,
    policy: Annotated[
        str, typer.Option(help="Who acts: " + "; ".join(f.split("  ")[0] for f in POLICY_FORMS) + ".")
    ] = "oracle",
    backend: Annotated[str | None, typer.Option(help="embedded or docker [default: embedded].")] = None,
    parallel: Annotated[
        int,
        typer.Option(
            help="Episodes at once; slot k uses site instance k. With --executor ray: per environment worker."
        ),
    ] = 1,
    repeats: Annotated[int, typer.Option(help="Runs of every task (mean ± std over repeats).")] = 1,
    max_steps: Annotated[int, typer.Option(help="Step limit per episode (WebRL: 30).")] = 30,
    mode: Annotated[
        str,
        typer.Option(
            help="Evaluator semantics: webarena (original), vab (WebRL's numbers), browsergym, strict (WebArena's "
            "rules and a guard against dumped answers and URLs: webrl train's reward), or verified "
            "(WebArena-Verified's evaluator: a structured answer and the network trace)."
        ),
    ] = "webarena",
    record_network: Annotated[
        bool | None,
        typer.Option(
            "--record-network/--no-record-network",
            help="Keep each episode's network trace as HAR beside its record (network/) [default: in --mode "
            "verified only].",
        ),
    ] = None,
    rescore: Annotated[
        Path | None,
        typer.Option(
            help="Score a finished run folder's episodes again from their records, without the sites "
            "(--mode verified), into --out [default: RUN/rescore-<time>].",
        ),
    ] = None,
    judge: Annotated[
        str,
        typer.Option(
            help="LLM judge for fuzzy and N/A answers: none, or openai:MODEL@URL. "
            "Without one those tasks are reported unjudged."
        ),
    ] = "none",
    observation: Annotated[
        str,
        typer.Option(
            help="webrl (VAB's simplified HTML), compact (the same without positions and repeated text: for small "
            "models, not VAB's) or axtree."
        ),
    ] = "webrl",
    actions: Annotated[str, typer.Option(help="Action syntax: webrl or webarena.")] = "webrl",
    click_at: Annotated[
        str,
        typer.Option(
            help="Where element actions land: box (VAB: Click and Select at the "
            "centre of the element's bounding box, Type, Search and Hover at "
            "its data-bbox's) or line (webrl's: every action at the centre "
            "of the element's first line box, better for wrapped links)."
        ),
    ] = "box",
    escape_text: Annotated[
        bool,
        typer.Option(
            "--escape-text", help='Print ", < and > in the simplified HTML as &quot; &lt; &gt; (VAB prints them raw).'
        ),
    ] = False,
    temperature: Annotated[float, typer.Option(help="Sampling temperature (WebRL evaluates at 0).")] = 0.0,
    max_tokens: Annotated[int, typer.Option(help="Token limit of each answer (WebRL: 2048).")] = 2048,
    seed: Annotated[
        int | None,
        typer.Option(
            help="With --temperature above 0: each answer samples with a seed from (this, task, repeat, step), so "
            "a run gives the same answers again, on any executor and in any order [default: unseeded]."
        ),
    ] = None,
    context: Annotated[
        int | None,
        typer.Option(
            min=2,
            help="Tokens of prompt plus answer an hf: model may use "
            "(a longer prompt loses the end of its page) "
            "[default: the model's context]. Give a trained "
            "actor its training's --max-tokens to show it prompts "
            "cut as in training.",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Only the first N tasks of the set (a MiniWoB++ set is ordered seed by seed across its environments).",
        ),
    ] = None,
    miniwob_time_limit: Annotated[
        float,
        typer.Option(
            min=1,
            help="Seconds a MiniWoB++ page gives an episode before "
            "it ends it with reward -1 (the package's own "
            "limits of 10-30 s are for scripted agents).",
        ),
    ] = DEFAULT_TIME_LIMIT_S,
    out: Annotated[Path | None, typer.Option(help="Run folder [default: runs/eval-<time>].")] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the run in --out, skipping finished episodes.")
    ] = False,
    executor: ExecutorOption = None,
    ray_address: RayAddressOption = None,
) -> None:
    """Run a policy over a task set in real browsers; write episodes.jsonl, summary.json and report.html."""
    from webrl.evaluators.judge import parse_judge_spec  # Playwright & co. only when evaluating
    from webrl.runs.eval import EvalSettings, incomplete
    from webrl.runs.executor_factory import executor_for
    from webrl.sites.task_sets import resolve_task_set

    config = GLOBALS.config(**{"sites.backend": backend}, **cluster_flags(executor, ray_address))
    if rescore is not None:
        return rescore_run(rescore, mode, out)
    if tasks is None:
        raise UsageError("--tasks: give a task set or file (or --rescore RUN)")
    if resume and out is None:
        raise UsageError("--resume needs the --out folder of the run to continue")
    try:
        settings = EvalSettings(
            tasks=tasks,
            policy=policy,
            backend=config.sites.backend,
            parallel=parallel,
            repeats=repeats,
            max_steps=max_steps,
            mode=mode,
            judge=judge,
            observation=observation,
            action_space=actions,
            click_at=click_at,
            escape_text=escape_text,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            context=context,
            resume=resume,
            limit=limit,
            miniwob_time_limit_s=miniwob_time_limit,
            record_network=record_network,
            verified_dataset=verified_file(tasks, mode),
            out=out or Path("runs") / f"eval-{datetime.now():%Y%m%d-%H%M%S}",
        )
    except ValidationError as err:
        first = err.errors()[0]
        option = {"action_space": "actions"}.get(str(first["loc"][0]), str(first["loc"][0])).replace("_", "-")
        raise UsageError(f"--{option}: {first['msg']}") from None
    policy_builder(policy)  # a bad spec is refused before tasks are read or anything starts
    judge_model = parse_judge_spec(judge)
    site_backend = make_backend(config)
    starting = lambda: console.status(f"starting {policy} ({config.cluster.executor})")  # noqa: E731
    with executor_for(settings, site_backend, model_cache(config), judge_model, starting) as runner:
        plan = site_backend.running() if config.sites.backend == "embedded" else None
        task_list = resolve_task_set(tasks, config.state_dir, plan.seed if plan else config.sites.seed)[:limit]
        if settings.mode == "verified":
            check_verified(task_list, settings, site_backend)
        settings.task_suite = getattr(task_list[0], "suite_version", None) if task_list else None
        summary = run_with_progress(settings, task_list, runner, repeats)
    print_summary(summary, settings.out)
    if problem := incomplete(summary):
        raise IncompleteRun(
            f"{problem}; continue with `webrl eval --resume --out {settings.out}` once the sites "
            "answer (`webrl status`)"
        )


def print_summary(summary: dict, out: Path) -> None:
    """The run's headline, its task families' tables, a line per evaluation error, the verified mode's facts and the
    episode counts."""
    from webrl.runs.report import headline

    console.print(headline(summary))
    for extra in summary_tables(summary):  # the tables of the run's task families (MiniWoB++: one per environment)
        console.print(summary_table(extra))
    mode = summary["settings"]["mode"]
    for error in summary["evaluator_errors"]:  # each task's own line: which field, and how the rate counted it
        where = f" ({error['field']})" if error["field"] else ""
        console.print(
            f"task {error['task_id']}, repeat {error['repeat']}: evaluation error{where}: {error['error']}"
            f" (in the {mode} success rate: {error['counts_as']})"
        )
    if summary.get("dump_suspect"):
        console.print(
            f"dump_suspect: {summary['dump_suspect']} of the successes would fail the strict mode's guard (an answer "
            "or URL that lists more than the task asked, or a last page that did not answer 2xx); see the report"
        )
    print_verified(summary)
    counts = ", ".join(f"{n} {what}" for what, n in summary["episodes"].items() if n or what == "planned")
    console.print(f"episodes: {counts}  ·  report: {out / 'report.html'}")


def verified_file(tasks: str, mode: str) -> Path | None:
    """The verified mode's dataset: a task file in WebArena-Verified's format that --tasks names (its evaluator reads
    the whole file), else None: the installed package's."""
    from webrl.tasks.model import is_verified_config

    path = Path(tasks)
    if mode != "verified" or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # reading the tasks reports it, with the line
    first = data[0] if isinstance(data, list) and data else data
    return path if is_verified_config(first) else None


def check_verified(tasks: list, settings, backend) -> None:
    """Before any episode: every task is a WebArena-Verified one, and the package's evaluator takes the dataset."""
    from webrl.evaluators.verified import verified_scorer

    plain = next((t for t in tasks if t.verified is None), None)
    if plain is not None:
        raise UsageError(
            f"{settings.tasks}: task {plain.task_id}: field 'eval': --mode verified scores WebArena-Verified tasks "
            "only (webarena-verified[:hard], or a file in its format)"
        )
    verified_scorer(settings.verified_dataset, backend.urls(0))


def print_verified(summary: dict) -> None:
    if "verified" in summary:
        facts = summary["verified"]
        traces = facts["network_trace_bytes"]
        console.print(
            f"verified: {facts['answers_unparsed']} answers were not the structured response (scored by the "
            f"package as given); network traces: {traces['episodes']}, mean {traces['mean']} bytes"
        )


def rescore_run(run: Path, mode: str, out: Path | None) -> None:
    """`--rescore RUN`: the run's episodes scored again offline (the verified mode only)."""
    from webrl.runs.rescore import rescore

    if mode != "verified":
        raise UsageError(f"--rescore with --mode {mode}: not yet: only --mode verified scores a run offline")
    if not (run / "episodes.jsonl").is_file():
        raise UsageError(f"--rescore {run}: no episodes.jsonl in this folder")
    out = out or run / f"rescore-{datetime.now():%Y%m%d-%H%M%S}"
    summary = rescore(run, out)
    console.print("re-scored offline:")
    print_summary(summary, out)


def run_with_progress(settings, tasks: list, runner, repeats: int) -> dict:
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
    app.command("eval")(eval_command)
