"""MiniWoB++ (port 7790): the pages of Farama's `miniwob` distribution (MIT), served read-only from the installed
package, never copied into this repository. `/` lists the environments; `/miniwob/<env>.html` is an environment,
its scripts under `/core/` and `/common/` as the package lays them out. It keeps no data: a reset costs nothing
(every episode starts from a fresh page load and a seed, see `webrl.families.miniwob.page`).

`scripts/install.sh` installs the distribution without its dependencies (gymnasium, selenium): webrl drives the
pages itself and only reads the files.
"""

from __future__ import annotations

import importlib.metadata
from functools import cache
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from webrl.errors import UsageError
from webrl.sites.platform import SiteContext, SiteSpec

DISTRIBUTION = "miniwob==1.1.0"
# the scripted solutions (common.js, the helpers, and one file per group of environments): webrl.families.miniwob.tasks
SOLUTIONS = Path(__file__).with_name("solutions")


@cache
def html_dir() -> Path:
    """The installed package's `html/` folder (read through the distribution's files: importing `miniwob` would
    need gymnasium)."""
    try:
        folder = Path(importlib.metadata.distribution("miniwob").locate_file("miniwob/html"))
    except importlib.metadata.PackageNotFoundError:
        folder = None
    if folder is None or not (folder / "core" / "core.js").is_file():
        raise UsageError(
            f"MiniWoB++ is not installed: pip install --no-deps {DISTRIBUTION} "
            "(scripts/install.sh does), or leave the site out with --sites"
        )
    return folder


def environment_names() -> list[str]:
    """Every environment the package ships (`miniwob/<name>.html`), sorted."""
    return sorted(p.stem for p in (html_dir() / "miniwob").glob("*.html"))


def make_app(ctx: SiteContext) -> Starlette:
    folder = html_dir()

    async def index(request: Request):
        links = "".join(f'<li><a href="/miniwob/{name}.html">{name}</a></li>' for name in environment_names())
        return HTMLResponse(
            f"<!DOCTYPE html><html><head><title>MiniWoB++</title></head><body>"
            f"<h1>MiniWoB++ environments</h1><ul>{links}</ul></body></html>"
        )

    return Starlette(routes=[Route("/", index), Mount("/", StaticFiles(directory=folder))])


SITE = SiteSpec(name="miniwob", title="MiniWoB++", database=None, make_app=make_app, check=html_dir)
