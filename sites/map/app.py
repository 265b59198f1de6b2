"""Placeholder until the OpenStreetMap look-alike lands."""

from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from webrl.sites.embedded.platform import SiteContext, SiteSpec


def make_app(ctx: SiteContext) -> Starlette:
    async def home(request):
        return HTMLResponse("<title>OpenStreetMap</title><h1>OpenStreetMap</h1>")

    return Starlette(routes=[Route("/", home)])


SITE = SiteSpec(name="map", title="OpenStreetMap", database=None, make_app=make_app)
