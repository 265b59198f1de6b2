"""The homepage (port 4399): an index of the instance's sites, /scratchpad.html, /calculator.html and
/password.html (the accounts page the WebArena agent prompt points to). It keeps no data."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from webrl.sitelist import SITE_LIST
from webrl.sites.base import ACCOUNTS
from webrl.sites.platform import SiteContext, SiteSpec, make_templates

HERE = Path(__file__).parent
templates = make_templates(HERE / "templates")

# (site, card title, what it is, path appended to the site URL), as on WebArena's homepage (webrl.sitelist).
CARDS = [(site.name, site.card.title, site.card.about, site.card.path) for site in SITE_LIST if site.card]


def site_urls(request: Request) -> dict[str, str]:
    """The URLs of the instance's sites, from the context make_app keeps on the app."""
    return request.app.state.ctx.urls


async def index(request: Request):
    urls = site_urls(request)
    cards = [(urls[site].rstrip("/") + path, title, about) for site, title, about, path in CARDS if site in urls]
    return templates.TemplateResponse(request, "index.html", {"cards": cards})


async def scratchpad(request: Request):
    return templates.TemplateResponse(request, "scratchpad.html", {})


async def calculator(request: Request):
    return templates.TemplateResponse(request, "calculator.html", {})


async def password(request: Request):
    urls = site_urls(request)
    accounts = [
        (urls[site], title, *ACCOUNTS[site]) for site, title, _, _ in CARDS if site in ACCOUNTS and site in urls
    ]
    return templates.TemplateResponse(request, "password.html", {"accounts": accounts})


ROUTES = [
    Route("/", index),
    Route("/scratchpad.html", scratchpad),
    Route("/calculator.html", calculator),
    Route("/password.html", password),
    Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
]


def make_app(ctx: SiteContext) -> Starlette:
    app = Starlette(routes=ROUTES)
    app.state.ctx = ctx
    return app


SITE = SiteSpec(name="homepage", title="Homepage", database=None, make_app=make_app)
