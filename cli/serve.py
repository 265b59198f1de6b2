"""`webrl serve`: the sites and the WebRL harness as an OpenEnv environment server (docs/serving.md)."""

from __future__ import annotations

import asyncio
import inspect
import os
import secrets
import signal
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from webrl.cli.console import make_console
from webrl.cli.global_options import GLOBALS
from webrl.cli.options import extend_command, unset_options
from webrl.cli.sites import is_loopback
from webrl.errors import PortTaken, UsageError
from webrl.layered_settings import resolve_layers
from webrl.netutil import port_free, port_owner
from webrl.runs.eval_settings import EVAL_OPTIONS, EvalSettings, option_of
from webrl.sites.backends import make_backend
from webrl.tasks.family import family_of_mode, family_options

console = make_console()

# webrl eval's settings that decide what an episode is and records; the policy is the client
SERVED_FIELDS = (
    "tasks",
    "limit",
    "max_steps",
    "mode",
    "judge",
    "observation",
    "action_space",
    "escape_text",
    "click_at",
    "screenshots",
    "record_network",
    *family_options(),
)
TOKEN_VARIABLE = "WEBRL_SERVE_TOKEN"


def serve_command(
    instances: Annotated[
        int | None,
        typer.Option(help="Sessions at once, one site instance each (0..N-1) [default: every running instance]."),
    ] = None,
    host: Annotated[
        str, typer.Option(help="Address to listen on; any other than a loopback one needs --allow-remote.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8600,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help=f"Listen beyond this machine; every request then needs the token ({TOKEN_VARIABLE}, else a new one, "
            "printed) as the first part of its path: http://HOST:PORT/TOKEN.",
        ),
    ] = False,
    idle_timeout: Annotated[
        float, typer.Option(help="Seconds a session may stay idle before it is ended and its instance freed.")
    ] = 600.0,
    out: Annotated[
        Path | None, typer.Option(help="Run folder of the episodes' records [default: runs/serve-<time>].")
    ] = None,
    **options: Any,
) -> None:
    """Serve the sites and the WebRL harness as an OpenEnv environment: each WebSocket session holds one site
    instance and browser context; reset(task_id | seed) -> observation, step(action text) -> observation, reward,
    done. Every episode is recorded in --out as `webrl eval` records it. Runs until Ctrl-C."""
    from webrl.evaluators.judge import parse_judge_spec  # Playwright, FastAPI & co. only when serving
    from webrl.sites.task_sets import resolve_task_set

    try:
        from webrl.runs.serve import Listen, serve_forever
    except ModuleNotFoundError as err:
        raise UsageError(f"webrl serve needs openenv-core ({err}); install it with `pip install -e '.[env]'`") from None

    if not allow_remote and not is_loopback(host):
        raise UsageError(f"--host {host} would let other machines reach the server; add --allow-remote for that")
    if not port_free(host, port):
        raise PortTaken(f"--port {port} is already in use by {port_owner(port) or 'another process'}")
    site_config = GLOBALS.config()
    given = {EVAL_OPTIONS[name]: value for name, value in options.items() if value is not None}
    defaults = {"policy": "openenv client", "out": out or Path("runs") / f"serve-{datetime.now():%Y%m%d-%H%M%S}"}
    settings = resolve_layers(EvalSettings, [("defaults", defaults), ("options", given)], option_of)
    mode_family = family_of_mode(settings.mode)  # a task family's own mode, with its own checks and options
    run_options = mode_family.run_options(settings.mode, settings.tasks) if mode_family else {}
    settings = settings.model_copy(update={"backend": site_config.sites.backend, **run_options})
    site_backend = make_backend(site_config)
    plan = site_backend.running()
    if plan is None:
        raise UsageError("the sites are not running; start them with `webrl up`")
    if instances is not None and instances > plan.instances:
        raise UsageError(
            f"--instances {instances}: {plan.instances} site instance(s) running; "
            f"start more with `webrl up --instances {instances}`"
        )
    tasks = resolve_task_set(settings.tasks, site_config.state_dir, plan.seed)[: settings.limit]
    if not tasks:
        raise UsageError(f"--tasks {settings.tasks}: no tasks")
    if mode_family is not None:
        mode_family.check_run(settings.mode, tasks, settings, site_backend.urls(0))
    settings.task_suite = getattr(tasks[0], "suite_version", None)
    token = (os.environ.get(TOKEN_VARIABLE) or secrets.token_urlsafe(24)) if allow_remote else None
    listen = Listen(host, port, instances or plan.instances, idle_timeout, token)
    url = f"http://{host}:{port}" + (f"/{token}" if token else "")

    def ready() -> None:
        console.print(f"serving {len(tasks)} tasks of {settings.tasks} on {listen.instances} site instance(s)")
        console.print(f"OpenEnv base URL: {url}  ·  records: {settings.out}  ·  Ctrl-C stops")

    # uvicorn stops on SIGTERM and SIGINT, then raises the signal again: both then end the run as Ctrl-C does, with
    # its summary written
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        asyncio.run(serve_forever(settings, tasks, site_backend, listen, parse_judge_spec(settings.judge), ready))
    except KeyboardInterrupt:  # the way to stop it: uvicorn has shut down and the summary is written
        pass
    console.print(f"stopped; summary and report: {settings.out}")


def serve_parameters() -> list[inspect.Parameter]:
    """`webrl eval`'s options for the settings a served episode uses."""
    fields = {}
    for option, name in EVAL_OPTIONS.items():
        if name in SERVED_FIELDS:
            field = EvalSettings.model_fields[name]
            fields[option] = (field, None if field.is_required() else field.get_default(), "")
    return unset_options(fields)


def register(app: typer.Typer) -> None:
    command = extend_command(serve_command, serve_parameters(), lambda kwargs: serve_command(**kwargs), "options", True)
    app.command("serve")(command)
