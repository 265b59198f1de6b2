"""Placeholder until the Postmill look-alike lands."""

from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from webrl.sites.embedded.platform import SiteContext, SiteSpec


def make_app(ctx: SiteContext) -> Starlette:
    async def home(request):
        return HTMLResponse("<title>Postmill</title><h1>Postmill</h1>")

    return Starlette(routes=[Route("/", home)])


SITE = SiteSpec(name="reddit", title="Postmill", database=None, make_app=make_app)
