"""`webrl sft` and `webrl rl-update`: supervised fine-tuning and one WebRL phase's update (each a
webrl.rl.job job, as `webrl train` runs them); `webrl train`: the whole run (webrl.train.recipe).

The options come from the settings models (webrl.rl.settings, webrl.train.settings): their field descriptions are
the help texts and their validators the checks, so a new setting is one field.
`--procs N` / `--hostfile F` run the same command again under the DeepSpeed launcher: N processes here (GPUs,
or CPU processes over gloo), or N on every host of the hostfile.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from rich.table import Table

from webrl.cli.cluster import ExecutorOption, RayAddressOption, cluster_flags
from webrl.cli.console import episode_progress, make_console
from webrl.cli.global_options import GLOBALS
from webrl.cli.options import config_layers, extend_command, field_option, unset_options
from webrl.config import ClusterConfig
from webrl.errors import UsageError, field_problem
from webrl.layered_settings import Layers
from webrl.policy.models import model_config
from webrl.rl.settings import LoraSettings, SftSettings, UpdateSettings
from webrl.runs.train_metrics import PhaseMetrics
from webrl.train.settings import RunSettings, options_layer, preset, resolve_run_settings, settings_yaml

console = make_console()

MaxTokensOption = Annotated[
    int | None,
    typer.Option(
        help="Token limit of prompt + response; a longer prompt loses the end of its page (the task and history "
        "stay), steps whose response does not fit are skipped and counted [default: 16384, capped by the model's "
        "context length]."
    ),
]
ProcsOption = Annotated[
    int,
    typer.Option(
        min=1, help="Processes per machine, run under the DeepSpeed launcher (GPUs, or CPU processes over gloo)."
    ),
]
NodesOption = Annotated[
    int, typer.Option(min=1, help="Machines the training spans, --procs processes on each (needs --executor ray).")
]
HostfileOption = Annotated[
    Path | None,
    typer.Option(
        help="DeepSpeed hostfile ('host slots=N' lines): --procs processes on every host listed (passwordless ssh, "
        "the same paths everywhere).",
        dir_okay=False,
    ),
]
OutOption = Annotated[
    Path,
    typer.Option(
        help="Output folder: actor/ (Hugging Face folder), metrics.json, "
        "events.jsonl, tb/, checkpoints/. Re-run the same command to resume.",
        file_okay=False,
    ),
]


# ---- settings models as options ---------------------------------------------------------------------------


def settings_options(model: type[BaseModel]) -> dict[str, tuple[tuple[str, ...], FieldInfo]]:
    """The options a settings model gives, by name: each field's, and one per field of a nested block (lora.rank:
    --lora-rank), with the field's path in the model."""
    options = {}
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            for inner, nested in field.annotation.model_fields.items():
                options[f"{name}_{inner}"] = ((name, inner), nested)
        else:
            options[name] = ((name,), field)
    return options


def settings_parameters(model: type[BaseModel], defaults: dict[str, Any]) -> list[inspect.Parameter]:
    """One keyword option per option of `model` (TrainSettings or a training's settings built on it)."""
    return [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=defaults.get(name, field.default),
            annotation=Annotated[field.annotation, field_option(field)],
        )
        for name, (_, field) in settings_options(model).items()
    ]


def with_train_settings(model: type[BaseModel], **defaults: Any) -> Callable[[Callable], Callable]:
    """Give a command one option per field of the settings `model` (with these defaults); it receives them as
    `settings`, validated: a bad value is a usage error naming its option."""

    def settings_from(fields: dict[str, Any]) -> BaseModel:
        try:
            return model(**fields)
        except ValidationError as err:
            problem = field_problem(err)
            where = "--" + problem.field.replace(".", "-").replace("_", "-") if problem.loc else ""
            raise UsageError(f"{where}: {problem.message}{problem.got}".lstrip(": ")) from None

    def wrap(command: Callable) -> Callable:
        def call(kwargs: dict[str, Any]) -> Any:
            # only the options given (and this command's own defaults) are set: a validator may refuse a setting
            # given where it does not apply (--beta with the official objective), never its default
            source = kwargs.pop("settings_context").get_parameter_source
            fields: dict[str, Any] = {}
            for name, (path, _) in settings_options(model).items():
                value = kwargs.pop(name)
                if name in defaults or source(name).name != "DEFAULT":
                    set_path(fields, path, value)
            return command(settings=settings_from(fields), **kwargs)

        context = inspect.Parameter("settings_context", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
        return extend_command(command, [*settings_parameters(model, defaults), context], call, drop="settings")

    return wrap


def set_path(fields: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set fields[path[0]][path[1]]... = value, making the sections on the way."""
    *sections, last = path
    for section in sections:
        fields = fields.setdefault(section, {})
    fields[last] = value


def launchable(command: Callable) -> Callable:
    """Give a command --procs, --nodes, --hostfile, --executor and --ray-address: with several processes, nodes or
    a hostfile, the same command line runs again as those processes (under the DeepSpeed launcher, `relaunch`, or
    as ranks a Ray cluster places, `--executor ray`), and this process only waits for them."""

    def call(kwargs: dict[str, Any]) -> Any:
        procs, nodes, hostfile = kwargs.pop("procs"), kwargs.pop("nodes"), kwargs.pop("hostfile")
        cluster = GLOBALS.config(**cluster_flags(kwargs.pop("executor"), kwargs.pop("ray_address"))).cluster
        if launched():  # one of the processes the launcher or Ray started: train
            return command(**kwargs)
        if cluster.executor == "ray":
            if hostfile is not None:
                raise UsageError("--hostfile is for the DeepSpeed launcher; with --executor ray, Ray places the ranks")
            raise typer.Exit(relaunch_on_ray(nodes, procs, cluster, kwargs["out"]))
        if nodes > 1:
            raise UsageError(f"--nodes {nodes} needs --executor ray (or the DeepSpeed launcher's --hostfile)")
        code = relaunch(procs, hostfile)
        if code is not None:
            raise typer.Exit(code)
        return command(**kwargs)

    keyword = inspect.Parameter.KEYWORD_ONLY
    return extend_command(
        command,
        [
            inspect.Parameter("procs", keyword, default=1, annotation=ProcsOption),
            inspect.Parameter("nodes", keyword, default=1, annotation=NodesOption),
            inspect.Parameter("hostfile", keyword, default=None, annotation=HostfileOption),
            inspect.Parameter("executor", keyword, default=None, annotation=ExecutorOption),
            inspect.Parameter("ray_address", keyword, default=None, annotation=RayAddressOption),
        ],
        call,
    )


# ---- running ---------------------------------------------------------------------------------------------


def launched() -> bool:
    """True in a process the DeepSpeed launcher started (it sets RANK for each)."""
    return "RANK" in os.environ


def relaunch(procs: int, hostfile: Path | None) -> int | None:
    """Run this very command under the DeepSpeed launcher when asked for several processes or hosts; its exit
    code, or None to run here."""
    if launched() or (procs == 1 and hostfile is None):
        return None
    from webrl.rl.engine import launch_command

    if hostfile is not None and not hostfile.is_file():
        raise UsageError(f"--hostfile {hostfile}: no such file")
    command = [*launch_command(procs, hostfile), "--module", "webrl", *sys.argv[1:]]
    return subprocess.run(command, check=False).returncode


def relaunch_on_ray(nodes: int, procs: int, cluster: ClusterConfig, out: Path) -> int:
    """Run this very command as `nodes` × `procs` ranks a Ray cluster places (webrl.rl.ranks), every rank's output
    in OUT.log; print rank 0's (the summary), or the failed rank's; its exit code."""
    from webrl.rl.ranks import run_ranks

    log = out.parent / f"{out.name}.log"
    command = [sys.executable, "-m", "webrl", *sys.argv[1:]]
    settings = {k: v for k, v in os.environ.items() if k.startswith("WEBRL_")}  # as the launcher's children have
    code, output = run_ranks(command, out, nodes, procs, cluster, log, settings)
    (sys.stdout if code == 0 else sys.stderr).write(output)
    return code


def flatten(metrics: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    rows = {}
    for key, value in metrics.items():
        if isinstance(value, dict):
            rows.update(flatten(value, f"{prefix}{key}."))
        elif key != "settings":
            rows[f"{prefix}{key}"] = value
    return rows


def print_summary(title: str, summary: dict[str, Any]) -> None:
    """The summary as a two-column table (rank 0 only)."""
    from webrl.rl.engine import is_main

    if not is_main():
        return
    table = Table("metric", "value", title=title)
    for key, value in flatten({k: v for k, v in summary.items() if k not in ("settings", "objective")}).items():
        table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    console.print(table)


def model_cache_dir() -> Path:
    """<state dir>/models of the global options."""
    from webrl.policy.models import model_cache

    return model_cache(GLOBALS.config())


# ---- commands --------------------------------------------------------------------------------------------


@launchable
@with_train_settings(SftSettings)
def sft(
    data: Annotated[
        Path,
        typer.Option(
            help="Step JSONL: {task_id, step, prompt, response, [episode], [reward]} "
            "per line (`webrl tasks demos` writes one).",
            dir_okay=False,
        ),
    ],
    model: Annotated[
        str,
        typer.Option(help="Model spec to fine-tune: tiny, smollm2-135m, ORG/NAME or a folder (`webrl models list`)."),
    ],
    out: OutOption,
    max_tokens: MaxTokensOption = None,
    *,
    settings: Any = None,
) -> None:
    """Supervised fine-tuning on demonstrations: token-mean NLL of the response tokens (and, with --page-loss,
    of the prompt's). Writes OUT/actor for `webrl rl-update --actor OUT/actor`."""
    from webrl.rl.job import run_job
    from webrl.rl.job_spec import SftJob

    summary = run_job(
        SftJob(data=data, model=model, out=out, settings=settings, max_tokens=max_tokens, models_dir=model_cache_dir())
    )
    print_summary(f"sft → {out}", summary)


@launchable
@with_train_settings(UpdateSettings)
def rl_update(
    data: Annotated[
        Path,
        typer.Option(
            help="The phase's rollouts as step JSONL (reward, required: the episode's outcome 0/1 on each step).",
            dir_okay=False,
        ),
    ],
    actor: Annotated[
        str,
        typer.Option(
            help="The actor at the start of the phase (also the frozen reference): a "
            "model spec or folder, e.g. the previous OUT/actor."
        ),
    ],
    out: OutOption,
    critic: Annotated[
        Path | None,
        typer.Option(
            help="The previous phase's OUT/critic [default: a fresh critic from the actor's weights].", file_okay=False
        ),
    ] = None,
    replay_steps: Annotated[
        list[Path] | None,
        typer.Option(
            metavar="FILE",
            help="Step files of earlier phases (the SFT demonstrations at phase 0) for the replay "
            "buffer; repeat the option for several.",
            dir_okay=False,
        ),
    ] = None,
    max_tokens: MaxTokensOption = None,
    *,
    settings: Any = None,
) -> None:
    """One WebRL phase: reference log-probs and replay selection, critic update, advantages, actor update.
    Writes OUT/actor, OUT/critic and OUT/metrics.json."""
    from webrl.rl.job import run_job
    from webrl.rl.job_spec import UpdateJob

    summary = run_job(
        UpdateJob(
            data=data,
            model=actor,
            out=out,
            settings=settings,
            max_tokens=max_tokens,
            models_dir=model_cache_dir(),
            critic=critic,
            replay=replay_steps or [],
        )
    )
    print_summary(f"rl-update ({settings.objective}) → {out}", summary)


# ---- webrl train -----------------------------------------------------------------------------------------

SECTION_LABELS = {"sft": "phase 0's SFT", "update": "every phase's update"}


def run_parameters() -> list[inspect.Parameter]:
    """One option per scalar RunSettings field and per NESTED_OPTIONS entry, defaulting to "not given" so that
    the preset and the files apply; the fields' descriptions are the help."""
    from webrl.train.settings import NESTED_OPTIONS, RunSettings

    fields = {
        name: (field, field.get_default(call_default_factory=True), "")
        for name, field in RunSettings.model_fields.items()
        if not isinstance(field.get_default(call_default_factory=True), BaseModel)
    }
    for option, (section, name) in NESTED_OPTIONS.items():
        owner = RunSettings.model_fields[section]
        fields[option] = (
            owner.annotation.model_fields[name],
            getattr(owner.get_default(call_default_factory=True), name),
            f"[{SECTION_LABELS[section]}] ",
        )
    return unset_options(fields)


def settings_layers(
    preset_name: str | None, config_file: Path | None, defaults: dict[str, Any], options: dict[str, Any]
) -> Layers:
    """The settings of a run by rising precedence, each named for its errors: the preset, the configuration's
    `train` section, the --config file (its `train:` section, or the whole file), the options."""
    layers = [(f"--preset {preset_name}", preset(preset_name))] if preset_name is not None else []
    return [*layers, *config_layers("train", defaults, config_file), ("options", options_layer(options))]


class LiveView:
    """The run as it goes: phase, stage, episodes done and their successes; a line per finished phase."""

    def __init__(self, progress, phases: int):
        self.progress, self.phases = progress, phases
        self.bar = progress.add_task("starting", total=None, rate="")
        self.successes: list[bool] = []

    def stage(self, phase: int, name: str) -> None:
        self.successes = []
        self.progress.reset(self.bar, total=None, description=f"phase {phase}/{self.phases} · {name}", rate="")

    def episodes(self, total: int) -> None:
        self.progress.update(self.bar, total=total)

    def episode(self, success: bool | None) -> None:
        if success is not None:
            self.successes.append(success)
        self.progress.update(self.bar, advance=1, rate=f"{sum(self.successes)}/{len(self.successes)} succeeded")

    def phase_done(self, metrics: PhaseMetrics) -> None:
        from webrl.runs.train_report import eval_rate, rollout_rate

        rollouts = rollout_rate(metrics)
        self.progress.console.print(
            f"phase {metrics.phase}: eval {eval_rate(metrics)}%"
            + (f" · rollouts {rollouts}%" if rollouts is not None else "")
            + f" · valid actions {metrics.eval.valid_actions}%"
            + f" · {sum(metrics.seconds.values()) / 60:.1f} min"
        )


def phase_table(phases: list[PhaseMetrics]) -> Table:
    from webrl.runs.train_report import eval_columns, eval_rate, rollout_rate, valid_actions

    columns = eval_columns(phases)
    table = Table("phase", *columns, "rollouts", "valid actions", title="success rate (%) on the evaluation tasks")
    for m in phases:
        cells = [*(eval_rate(m, c) for c in columns), rollout_rate(m), valid_actions(m)]
        table.add_row(str(m.phase), *("–" if c is None else str(c) for c in cells))
    return table


PLAN_LORA = LoraSettings(rank=16)  # the LoRA the plan shows when the settings train fully


def memory_table(settings: RunSettings, cache_dir: Path) -> Table:
    """GiB per GPU of the update's trainings (webrl.rl.memory) for the run's model, fully and with LoRA (the run's,
    else rank 16), under every ZeRO stage."""
    from webrl.rl.data import MAX_TOKENS
    from webrl.rl.memory import PUBLISHED_SHAPES, ZERO_STAGES, Shape, plan

    spec = settings.init or settings.model
    config = {} if spec in PUBLISHED_SHAPES else model_config(spec, cache_dir)
    shape = PUBLISHED_SHAPES.get(spec) or Shape.from_config(config)
    update, gpus = settings.update, settings.procs * settings.nodes
    lora = update.lora if update.lora.enabled else PLAN_LORA
    limit = settings.max_tokens or min(MAX_TOKENS, config.get("max_position_embeddings") or MAX_TOKENS)
    table = Table(
        "training",
        "ZeRO",
        "actor weights",
        "gradients",
        "optimizer",
        "activations",
        "actor",
        "critic",
        "peak",
        title=f"GiB per GPU: {settings.init or settings.model} ({shape.params() / 1e6:,.1f}M parameters) on {gpus} "
        f"GPU(s), micro-batches of {update.micro_batch_size} x {limit} tokens"
        f"{', optimizer offloaded (ZeRO 1-3)' if update.offload else ''}; the reference needs no copy",
    )
    for method, chosen in (("full", LoraSettings()), (f"LoRA r={lora.rank}", lora)):
        for stage in ZERO_STAGES:
            offload = update.offload and stage > 0
            tokens = update.micro_batch_size * limit
            parts = plan(shape, chosen, stage, gpus, tokens, update.gradient_checkpointing, offload)
            actor, critic = parts["actor"], parts["critic"]
            cells = [actor.weights, actor.gradients, actor.optimizer, actor.activations, actor.total, critic.total]
            table.add_row(method, str(stage), *(f"{b / 2**30:.2f}" for b in [*cells, max(actor.total, critic.total)]))
    return table


def train_command(
    preset: Annotated[
        str | None,
        typer.Option(
            help="Start from a preset, a settings file shipped with webrl "
            "(configs/NAME.yaml: its header says how long it takes and what "
            "to expect): cpu-demo (WebRL learning MiniWoB++ on 2 CPU cores, "
            "tiny model), embedded-demo (the whole loop on the WebArena-Lite "
            "look-alikes, tiny model), ci (two tiny phases, the test "
            "suite's), paper (the paper's hyperparameters, GPUs)."
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="YAML/TOML file of these settings (its train: "
            "section or the whole file; --print-config writes one); sft: and "
            "update: hold the settings of `webrl sft` / `webrl rl-update`.",
            dir_okay=False,
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Run folder [default: runs/train-<time>].", file_okay=False)] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume", help="Continue the run in --out from its last finished stage, with its saved settings."
        ),
    ] = False,
    print_config: Annotated[
        bool,
        typer.Option("--print-config", help="Print the resolved settings as a file --config reads back, and stop."),
    ] = False,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Print the memory each GPU needs for the update's actor and critic (procs x nodes GPUs), fully "
            "and with LoRA, under each ZeRO stage, from the model's config alone, and stop.",
        ),
    ] = False,
    executor: ExecutorOption = None,
    ray_address: RayAddressOption = None,
    **options: Any,
) -> None:
    """The whole WebRL run: SFT (phase 0), then per phase: tasks from the last phase's failures, critic filter,
    rollouts, rewards (rules or ORM), critic and actor update with replay, evaluation. Needs `webrl up`."""
    from webrl.sites.backends import make_backend
    from webrl.train.recipe import TrainRun

    if resume and out is None:
        raise UsageError("--resume needs the --out folder of the run to continue")
    site_config = GLOBALS.config(**cluster_flags(executor, ray_address))
    settings = resolve_run_settings(settings_layers(preset, config, site_config.train, options))
    if print_config:
        typer.echo(settings_yaml(settings), nl=False)
        return
    if plan:
        console.print(memory_table(settings, model_cache_dir()))
        return
    out = out or Path("runs") / f"train-{datetime.now():%Y%m%d-%H%M%S}"
    with episode_progress(console) as progress:
        run = TrainRun.start(settings, out, site_config, make_backend(site_config), None, resume)
        run.progress = LiveView(progress, run.phases)
        try:
            phases = run.run()
        except KeyboardInterrupt:
            console.print(f"interrupted; continue with: webrl train --resume --out {out}")
            raise typer.Exit(130) from None
    console.print(phase_table(phases))
    console.print(f"report: {out / 'report.html'}  ·  curve: {out / 'curve.png'}")


def register(app: typer.Typer) -> None:
    app.command("sft")(sft)
    app.command("rl-update")(rl_update)
    app.command("train")(
        extend_command(train_command, run_parameters(), lambda kwargs: train_command(**kwargs), drop="options")
    )
