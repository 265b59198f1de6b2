"""`webrl doctor`: is this machine ready?"""

from __future__ import annotations

import typer
from rich.table import Table

from webrl.cli.console import make_console
from webrl.cli.main import GLOBALS
from webrl.doctor import run_checks
from webrl.sites.backends import make_backend

console = make_console()


def doctor() -> None:
    """Check Chromium, the Docker engine, GPU/CUDA, free disk and free ports; show how to fix each ✗.

    Exits 1 when a required check fails (Docker and GPU are optional)."""
    config = GLOBALS.config()
    running = config.sites.backend == "embedded" and make_backend(config).running() is not None
    with console.status("checking"):
        checks = run_checks(config, running)
    table = Table("", "check", "found", "fix")
    for c in checks:
        mark = "[green]✓[/green]" if c.ok else ("[red]✗[/red]" if c.required else "[yellow]–[/yellow]")
        table.add_row(mark, c.name + ("" if c.required else " (optional)"), c.detail, c.fix)
    console.print(table)
    if any(c.required and not c.ok for c in checks):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(doctor)
