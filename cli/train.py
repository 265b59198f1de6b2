"""`webrl sft` and `webrl rl-update`: supervised fine-tuning and one WebRL phase's update.

The training options come from webrl.rl.settings.TrainSettings (its field descriptions are the help texts).
`--procs N` / `--hostfile F` run the same command again under the DeepSpeed launcher: N processes here (GPUs,
or CPU processes over gloo), or N on every host of the hostfile.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from webrl.errors import UsageError

console = Console()

MaxTokensOption = Annotated[int | None, typer.Option(
    help="Token limit of prompt + response; longer prompts lose tokens from the left, steps whose response "
         "does not fit are skipped and counted [default: 16384, capped by the model's context length].")]
ProcsOption = Annotated[int, typer.Option(
    min=1, help="Processes per machine, run under the DeepSpeed launcher (GPUs, or CPU processes over gloo).")]
HostfileOption = Annotated[Path | None, typer.Option(
    help="DeepSpeed hostfile ('host slots=N' lines): --procs processes on every host listed (passwordless ssh, "
         "the same paths everywhere).", dir_okay=False)]
OutOption = Annotated[Path, typer.Option(help="Output folder: actor/ (Hugging Face folder), metrics.json, "
                                              "events.jsonl, tb/, checkpoints/. Re-run the same command to resume.",
                                         file_okay=False)]


# ---- TrainSettings as options ----------------------------------------------------------------------------


def settings_parameters(defaults: dict[str, Any]) -> list[inspect.Parameter]:
    """One keyword option per TrainSettings field, its description as the help."""
    from webrl.rl.settings import TrainSettings

    params = []
    for name, field in TrainSettings.model_fields.items():
        option = typer.Option(help=field.description)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                        default=defaults.get(name, field.default),
                                        annotation=Annotated[field.annotation, option]))
    return params


def extend_command(command: Callable, extra: list[inspect.Parameter], call: Callable[[dict[str, Any]], Any],
                   drop: str | None = None) -> Callable:
    """`command` with the keyword options `extra` added to its signature (and `drop` removed), so that typer
    shows them; `call(kwargs)` gets every option's value and calls `command`."""
    params = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.name != drop] + extra

    @functools.wraps(command)
    def run(**kwargs: Any) -> Any:
        return call(kwargs)

    run.__signature__ = inspect.Signature(params)
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run


def with_train_settings(**defaults: Any) -> Callable[[Callable], Callable]:
    """Give a command the TrainSettings options (with these defaults); it receives them as `settings`."""
    from webrl.rl.settings import TrainSettings

    def settings_from(fields: dict[str, Any]) -> TrainSettings:
        try:
            return TrainSettings(**fields)
        except ValidationError as err:
            problem = err.errors()[0]
            where = "--" + "-".join(str(p) for p in problem["loc"]).replace("_", "-") if problem["loc"] else ""
            raise UsageError(f"{where}: {problem['msg']}".lstrip(": ")) from None

    def wrap(command: Callable) -> Callable:
        def call(kwargs: dict[str, Any]) -> Any:
            fields = {name: kwargs.pop(name) for name in TrainSettings.model_fields}
            return command(settings=settings_from(fields), **kwargs)

        return extend_command(command, settings_parameters(defaults), call, drop="settings")

    return wrap


def launchable(command: Callable) -> Callable:
    """Give a command --procs and --hostfile: with several processes or a hostfile, the same command line runs
    again under the DeepSpeed launcher (`relaunch`), and this process only waits for it."""

    def call(kwargs: dict[str, Any]) -> Any:
        code = relaunch(kwargs.pop("procs"), kwargs.pop("hostfile"))
        if code is not None:
            raise typer.Exit(code)
        return command(**kwargs)

    keyword = inspect.Parameter.KEYWORD_ONLY
    return extend_command(command, [inspect.Parameter("procs", keyword, default=1, annotation=ProcsOption),
                                    inspect.Parameter("hostfile", keyword, default=None, annotation=HostfileOption)],
                          call)


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


def quiet_deepspeed() -> None:
    """DeepSpeed logs its configuration at INFO on every rank; we log per step ourselves."""
    from deepspeed.utils import logger

    logger.setLevel(logging.WARNING)


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
    from webrl.rl.sft import is_main

    if not is_main():
        return
    table = Table("metric", "value", title=title)
    for key, value in flatten({k: v for k, v in summary.items() if k not in ("settings", "objective")}).items():
        table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    console.print(table)


def model_cache_dir() -> Path:
    """<state dir>/models of the global options (imported here: cli.main imports this module at startup)."""
    from webrl.cli.main import GLOBALS
    from webrl.models import model_cache

    return model_cache(GLOBALS.config())


# ---- commands --------------------------------------------------------------------------------------------


@launchable
@with_train_settings(lr=1e-5)
def sft(
    data: Annotated[Path, typer.Option(help="Step JSONL: {task_id, step, prompt, response, [episode], [reward]} "
                                            "per line (`webrl tasks demos` writes one).", dir_okay=False)],
    model: Annotated[str, typer.Option(help="Model spec to fine-tune: tiny, smollm2-135m, ORG/NAME or a folder "
                                            "(`webrl models list`).")],
    out: OutOption,
    max_tokens: MaxTokensOption = None,
    *,
    settings: Any = None,
) -> None:
    """Supervised fine-tuning on demonstrations: token-mean NLL of the response tokens only. Writes OUT/actor
    for `webrl rl-update --actor OUT/actor`. Constant learning rate (the official SFT used cosine)."""
    from webrl.rl.sft import run_sft

    quiet_deepspeed()
    summary = run_sft(data, model, out, settings, max_tokens, model_cache_dir())
    print_summary(f"sft → {out}", summary)


@launchable
@with_train_settings()
def rl_update(
    data: Annotated[Path, typer.Option(help="The phase's rollouts as step JSONL (reward = the episode's outcome "
                                            "0/1 on each step).", dir_okay=False)],
    actor: Annotated[str, typer.Option(help="The actor at the start of the phase (also the frozen reference): a "
                                            "model spec or folder, e.g. the previous OUT/actor.")],
    out: OutOption,
    critic: Annotated[Path | None, typer.Option(help="The previous phase's OUT/critic [default: a fresh critic "
                                                     "from the actor's weights].", file_okay=False)] = None,
    replay: Annotated[list[Path] | None, typer.Option(
        metavar="FILE", help="Step files of earlier phases (the SFT demonstrations at phase 0) for the replay "
                             "buffer; repeat the option for several.", dir_okay=False)] = None,
    objective: Annotated[Literal["official", "paper"], typer.Option(
        help="official: the released code's losses and binarised advantage (the published numbers); paper: "
             "Eq. 8, Eq. 9 and the squared KL-regularised loss.")] = "official",
    beta: Annotated[float, typer.Option(min=0.0, help="The paper objective's KL weight β (the paper does not "
                                                     "state its value; the official form adapts its own).")] = 1.0,
    max_tokens: MaxTokensOption = None,
    *,
    settings: Any = None,
) -> None:
    """One WebRL phase: reference log-probs and replay selection, critic update, advantages, actor update.
    Writes OUT/actor, OUT/critic and OUT/metrics.json."""
    from webrl.rl.objective import Objective
    from webrl.rl.update import run_update

    quiet_deepspeed()
    summary = run_update(data, actor, critic, replay or [], out, settings, Objective(objective, beta=beta),
                         max_tokens, model_cache_dir())
    print_summary(f"rl-update ({objective}) → {out}", summary)


def register(app: typer.Typer) -> None:
    app.command("sft")(sft)
    app.command("rl-update")(rl_update)
