"""What every map page needs: the road graph, search index and base map (one per server), rendering a page
around the map view, and the 404 page."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from webrl.sites.map.geo import ENGINE_LABELS, RoadNetwork
from webrl.sites.map.render import REGION_VIEW, MapRenderer, View
from webrl.sites.map.search import Gazetteer
from webrl.sites.platform import SiteContext, make_templates

HERE = Path(__file__).parent
DEFAULT_ENGINE = "fossgis_osrm_car"


def fmt_coord(value: float) -> str:
    return f"{value:.4f}"


def site_of(request: Request) -> MapSite:
    """The map of the app serving this request (make_app builds it once per app)."""
    return request.app.state.map


class MapSite:
    """The map of one instance: its context, road graph, search index, renderer and templates."""

    def __init__(self, ctx: SiteContext):
        self.ctx = ctx
        # Read-only, so the same in every instance: built once per server (~10 MiB and ~0.2 s each).
        if "data" not in ctx.shared:
            ctx.shared["data"] = RoadNetwork(ctx.db.conn), Gazetteer(ctx.db.conn), MapRenderer(ctx.db.conn)
        self.network, self.gazetteer, self.renderer = ctx.shared["data"]
        self.templates = make_templates(HERE / "templates")
        self.templates.env.globals.update(ENGINE_LABELS=ENGINE_LABELS, fmt_coord=fmt_coord)

    def render(
        self,
        request: Request,
        template: str,
        status: int = 200,
        view: View | None = None,
        markers=None,
        route=None,
        **context,
    ) -> Response:
        view = view or REGION_VIEW
        context.setdefault("title", "OpenStreetMap")
        context.setdefault("query", "")
        context.setdefault("engine", DEFAULT_ENGINE)
        context.setdefault("route_from", "")
        context.setdefault("route_to", "")
        svg = self.renderer.svg(view, markers, route)
        return self.templates.TemplateResponse(
            request, template, {"map_svg": svg, "view": view, **context}, status_code=status
        )

    def not_found(self, request: Request, message: str | None = None) -> Response:
        return self.render(
            request,
            "404.html",
            status=404,
            title="Not Found | OpenStreetMap",
            message=message or "Sorry, the page you were looking for could not be found.",
        )
