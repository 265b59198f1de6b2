"""`webrl up | down | status | reset`: run the WebArena-Lite sites."""

from __future__ import annotations

import ipaddress
from contextlib import ExitStack
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from webrl.cli.console import make_console
from webrl.cli.global_options import GLOBALS
from webrl.config import MAX_INSTANCES
from webrl.errors import UsageError
from webrl.sites.backends import make_backend
from webrl.sites.base import SiteStatus
from webrl.sites.docker.backend import DockerBackend
from webrl.sites.docker.engine import connect
from webrl.sites.leases import instance_lease, known_instances

console = make_console()

SitesOption = Annotated[
    str | None,
    typer.Option("--sites", help="Comma-separated sites, e.g. shopping,shopping_admin [default: all the backend has]."),
]


def up(
    backend: Annotated[
        str | None,
        typer.Option(help="embedded (our look-alike sites) or docker (the real images) [default: embedded]."),
    ] = None,
    sites: SitesOption = None,
    instances: Annotated[
        int | None,
        typer.Option(
            help=f"Independent copies of every site, at most {MAX_INSTANCES}; "
            "instance k < 50 uses the default ports + 1000·k, later "
            "ones ports between those (docs/sites.md) "
            "[default: 1]."
        ),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(
            help="Address the sites bind to [default: 127.0.0.1]; any other than a loopback one needs --allow-remote."
        ),
    ] = None,
    public_host: Annotated[
        str | None,
        typer.Option(
            help="With --backend docker: the host name in the sites' URLs, "
            "for a browser on another machine (WebArena's "
            "<your-server-hostname>) [default: the --host address]."
        ),
    ] = None,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote", help="Let the sites listen beyond this machine (their accounts' passwords are public)."
        ),
    ] = False,
    seed: Annotated[int | None, typer.Option(help="Seed of the embedded sites' data [default: 0].")] = None,
    foreground: Annotated[
        bool, typer.Option("--foreground", help="Serve in this terminal until Ctrl-C instead of in the background.")
    ] = False,
    images: Annotated[
        str | None,
        typer.Option(
            help="With --backend docker: embedded (our image of the embedded "
            "sites) or webarena (the real WebArena images) "
            "[default: webarena]."
        ),
    ] = None,
) -> None:
    """Start the sites and wait until every one is healthy. Running it again reports what is up."""
    config = GLOBALS.config(
        **{
            "sites.backend": backend,
            "sites.sites": sites,
            "sites.instances": instances,
            "sites.host": host,
            "sites.public_host": public_host,
            "sites.seed": seed,
        }
    )
    if not allow_remote and not is_loopback(config.sites.host):
        raise UsageError(
            f"--host {config.sites.host} would let other machines reach the sites, whose accounts' "
            "passwords are public; add --allow-remote if that is what you want"
        )
    if images not in (None, "embedded", "webarena"):
        raise UsageError(f"--images {images}: choose embedded or webarena")
    site_backend = make_backend(config, images)
    if images and not isinstance(site_backend, DockerBackend):
        raise UsageError("--images applies to the docker backend; add --backend docker")
    if config.sites.public_host and not isinstance(site_backend, DockerBackend):
        raise UsageError("--public-host applies to the docker backend; add --backend docker")
    if foreground and isinstance(site_backend, DockerBackend):
        raise UsageError("--foreground applies to the embedded backend; docker sites always run in the background")
    if foreground:
        plan = site_backend.plan()
        for k in range(plan.instances):
            for site in plan.sites:
                console.print(f"{site:<15} instance {k}  {plan.site_url(site, k)}")
        console.print("serving in the foreground; Ctrl-C stops")
        site_backend.serve_foreground(on_step=lambda m: console.print(f"[dim]{m}[/dim]"))
        return
    already = site_backend.running() is not None
    with console.status("starting the sites") as spinner:
        statuses = site_backend.up(on_step=lambda m: spinner.update(m))
    _print_statuses(statuses, "already up" if already else "up")
    if not all(s.healthy for s in statuses):
        raise typer.Exit(1)


def is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name other than localhost: it may resolve anywhere
        return False


def down(
    purge: Annotated[
        bool,
        typer.Option(
            "--purge",
            help="Also remove the docker backend's snapshot images (the next `up` configures the sites from scratch).",
        ),
    ] = False,
) -> None:
    """Stop the sites. Docker sites keep their snapshot images unless --purge."""
    config = GLOBALS.config()
    if purge:
        connect()  # no engine to purge: say so before anything is stopped
    stopped = make_backend(config).down()
    console.print("stopped the sites" if stopped else "the sites were not running")
    if purge:
        removed = DockerBackend(config).purge()
        console.print(f"removed {removed} snapshot image(s)")


def status() -> None:
    """Show every site: URL, health, writes since the last reset and when that was."""
    site_backend = make_backend(GLOBALS.config())
    if site_backend.running() is None:
        console.print("the sites are not running (start them with `webrl up`)")
        return
    statuses = site_backend.status()
    _print_statuses(statuses)
    if not all(s.healthy for s in statuses):
        raise typer.Exit(1)


def reset(
    sites: Annotated[
        list[str] | None,
        typer.Argument(
            help="Sites to reset [default: all]. Sites that share a "
            "database (shopping, shopping_admin) reset together.",
            show_default=False,
        ),
    ] = None,
    instance: Annotated[int | None, typer.Option(help="Only this instance [default: all].")] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Reset even an instance that a run is using (its episodes in flight then see the reset)."
        ),
    ] = False,
) -> None:
    """Restore the sites to their pristine snapshot and print the time each took. An instance that a run (an
    eval, a training's rollouts) is using is refused unless --force."""
    config = GLOBALS.config()
    backend = make_backend(config)
    with ExitStack() as leases:
        if not force:
            for k in known_instances(config.state_dir) if instance is None else [instance]:
                leases.enter_context(instance_lease(config.state_dir, k, "webrl reset"))
        results = backend.reset(sites or None, instance)
    table = compact_table("site", "inst", "reset time")
    for r in results:
        table.add_row(r.site, str(r.instance), f"{r.ms:.1f} ms")
    console.print(table)


def _print_statuses(statuses: list[SiteStatus], state: str | None = None) -> None:
    table = compact_table(
        "site",
        "inst",
        "URL",
        "healthy",
        "writes",
        "last reset",
        "took",
        title=f"sites {state}" if state else None,
        caption="writes: database changes since the last reset",
    )
    for s in statuses:
        table.add_row(
            s.site,
            str(s.instance),
            s.url,
            "[green]✓[/green]" if s.healthy else "[red]✗[/red]",
            "–" if s.writes_since_reset is None else str(s.writes_since_reset),
            s.last_reset.astimezone().strftime("%H:%M:%S") if s.last_reset else "–",
            "–" if s.last_reset_ms is None else f"{s.last_reset_ms:,.1f} ms",
        )
    console.print(table)


def compact_table(*columns: str, **options) -> Table:
    """A borderless table whose cells never wrap, so a site table fits an 80-column terminal."""
    table = Table(box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False, **options)
    for column in columns:
        table.add_column(column, no_wrap=True)
    return table


def register(app: typer.Typer) -> None:
    for command in (up, down, status, reset):
        app.command()(command)
