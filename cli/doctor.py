"""`webrl doctor`: is this machine ready?"""

from __future__ import annotations

import typer
from rich.table import Table

from webrl.cli.cluster import RayAddressOption, cluster_flags
from webrl.cli.console import make_console
from webrl.cli.global_options import GLOBALS
from webrl.config import Config
from webrl.doctor import run_checks
from webrl.errors import UsageError
from webrl.sites.backends import make_backend

console = make_console()


def doctor(ray_address: RayAddressOption = None) -> None:
    """Check Chromium, the Docker engine, GPU/CUDA, free disk and free ports; show how to fix each ✗. With
    --ray-address, also the Ray cluster's live nodes and what each offers (CPUs, GPUs, environment slots).

    Exits 1 when a required check fails (Docker and GPU are optional)."""
    config = GLOBALS.config(**cluster_flags(None, ray_address))
    running = config.sites.backend == "embedded" and make_backend(config).running() is not None
    with console.status("checking"):
        checks = run_checks(config, running)
    table = Table("", "check", "found", "fix")
    for c in checks:
        mark = "[green]✓[/green]" if c.ok else ("[red]✗[/red]" if c.required else "[yellow]–[/yellow]")
        table.add_row(mark, c.name + ("" if c.required else " (optional)"), c.detail, c.fix)
    console.print(table)
    if ray_address is not None:
        console.print(cluster_table(config))
    if any(c.required and not c.ok for c in checks):
        raise typer.Exit(1)


def cluster_table(config: Config) -> Table:
    """The cluster's live nodes (one line each) and the environment workers it can hold."""
    try:
        from webrl.runs.ray_executor import describe_cluster
    except ImportError:
        raise UsageError("--ray-address needs Ray: pip install 'webrl[cluster]'") from None
    resource = config.cluster.env_resource
    nodes = describe_cluster(config.cluster)
    table = Table("node", "CPUs", "GPUs", resource, title=f"Ray cluster at {config.cluster.address}")
    for node in nodes:
        table.add_row(node["node"], f"{node['cpus']:g}", f"{node['gpus']:g}", f"{node['env']:g}")
    table.caption = f"{sum(n['env'] for n in nodes):g} environment worker(s) fit; {len(nodes)} node(s)"
    return table


def register(app: typer.Typer) -> None:
    app.command()(doctor)
