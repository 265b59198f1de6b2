"""`webrl images list | pull | load`: the Docker images the docker backend runs."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Annotated, BinaryIO

import typer
from docker.errors import ImageNotFound
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from webrl.cli.console import make_console
from webrl.cli.global_options import GLOBALS
from webrl.cli.sites import compact_table
from webrl.errors import UsageError, WebrlError
from webrl.sites.docker.backend import LABEL_OWNER, DockerBackend
from webrl.sites.docker.engine import LONG_TIMEOUT_S, connect, pull
from webrl.sites.docker.engine import load as load_image
from webrl.sites.docker.images import EMBEDDED_BUILD, EMBEDDED_IMAGE, WEBARENA, webarena_image

app = typer.Typer(
    help="The Docker images of the docker backend: list them, pull the real sites, load a WebArena tarball.",
    no_args_is_help=True,
)
console = make_console()


@app.command("list")
def list_images() -> None:
    """Every image the docker backend can run, whether the engine has it, and this state directory's snapshots."""
    client = connect()
    table = compact_table("site", "source", "size", "image")
    for column, width in zip(table.columns, (14, 8, 7), strict=False):  # a long image name gives way first
        column.min_width = width
    rows = [("all", "webrl", EMBEDDED_IMAGE)]
    for image in WEBARENA.values():
        rows.append((image.site, "verified", image.verified))
        if image.original:
            rows.append((image.site, "original", image.original))
    for site, source, name in rows:
        local = _local(client, name)
        size = f"{local.attrs['Size'] / 1e9:.1f} GB" if local else "[dim]missing[/dim]"
        table.add_row(site, source, size, name + (_digest(local, name) if local else ""))
    owner = DockerBackend(GLOBALS.config()).owner
    for snapshot in client.images.list(filters={"label": f"{LABEL_OWNER}={owner}"}):
        for tag in snapshot.tags or [snapshot.short_id]:
            table.add_row(
                tag.rpartition(":")[2].split("-")[0], "snapshot", f"{snapshot.attrs['Size'] / 1e9:.1f} GB", tag
            )
    console.print(table)
    console.print(
        f"missing: `docker pull IMAGE` (verified), `webrl images load IMAGE.tar` (original tarballs), "
        f"`{EMBEDDED_BUILD}` ({EMBEDDED_IMAGE})",
        highlight=False,
    )


@app.command("pull")
def pull_images(
    sites: Annotated[
        list[str] | None,
        typer.Argument(
            help="Sites whose WebArena-Verified image to pull [default: every site `webrl up --backend docker` runs].",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Pull the real sites' images from the registry, with progress (13-32 GB each; the map needs its volumes)."""
    images = [webarena_image(site) for site in sites] if sites else [i for i in WEBARENA.values() if not i.volumes]
    client = connect()
    failed = []
    with Progress(
        TextColumn("pulling {task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=console
    ) as progress:
        for image in images:
            bar = progress.add_task(image.verified, total=None)
            try:
                pull(
                    client,
                    image.verified,
                    lambda done, total, bar=bar: progress.update(bar, completed=done, total=total or None),
                )
            except WebrlError as err:
                failed.append(f"{err}; instead: {image.tarball_route}" if image.tarball_route else str(err))
                continue
            progress.update(bar, total=1, completed=1)
    for line in failed:
        console.print(f"[red]✗[/red] {line}", highlight=False)
    if failed:
        raise typer.Exit(1)


@app.command("load")
def load(
    file: Annotated[
        Path,
        typer.Argument(
            help="An image tarball made by `docker save`, e.g. WebArena's shopping_final_0712.tar.", show_default=False
        ),
    ],
) -> None:
    """Load an image tarball into the engine (`docker load`, with progress)."""
    if not file.is_file():
        raise UsageError(f"{file}: no such file")
    if not tarfile.is_tarfile(file):
        raise UsageError(
            f"{file}: not a tar archive; expected an image saved with `docker save`, e.g. shopping_final_0712.tar"
        )
    client = connect(LONG_TIMEOUT_S)
    size = file.stat().st_size
    with (
        file.open("rb") as raw,
        Progress(
            TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=console
        ) as progress,
    ):
        sent = progress.add_task(f"sending {file.name}", total=size)
        unpacked = progress.add_task("unpacking its layers", total=None)
        try:
            loaded = load_image(
                client,
                _Reader(raw, size, lambda n: progress.advance(sent, n)),
                lambda done, total: progress.update(unpacked, completed=done, total=total),
            )
        except WebrlError as err:
            raise WebrlError(f"{file}: {err}") from None
        progress.update(unpacked, total=1, completed=1)
    originals = {image.original: image.site for image in WEBARENA.values() if image.original}
    for name in loaded:
        site = originals.get(name.removesuffix(":latest"))
        console.print(f"loaded {name}" + (f" (the original {site} image)" if site else ""))


class _Reader:
    """A file that reports how much was read, for the engine's upload. Its length lets requests send it with a
    Content-Length instead of chunked."""

    def __init__(self, raw: BinaryIO, size: int, on_read):
        self.raw, self.size, self.on_read = raw, size, on_read

    def __len__(self) -> int:
        return self.size

    def read(self, n: int = -1) -> bytes:
        chunk = self.raw.read(n)
        self.on_read(len(chunk))
        return chunk


def _local(client, name: str):
    try:
        return client.images.get(name)
    except ImageNotFound:
        return None


def _digest(image, name: str) -> str:
    """`@sha256:…` (12 hex digits) of the registry manifest a pulled image came from; "" for one built or loaded
    here (which has none), so a run can say which published image it used."""
    repository = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    for entry in image.attrs.get("RepoDigests") or []:
        repo, _, digest = entry.partition("@")
        if repo.removeprefix("docker.io/") == repository and digest:
            return f"@{digest[:19]}…"
    return ""


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="images")
