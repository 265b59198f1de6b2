"""The map: WebArena's OpenStreetMap website, read-only, over a synthetic city (Riverton, PA).

URL shapes follow openstreetmap.org: `/` (the map, `#map=zoom/lat/lon`), `/search?query=...`,
`/directions?engine=fossgis_osrm_car&route=LAT%2CLON%3BLAT%2CLON` (the From/To form submits
`route_from`/`route_to` and is redirected there), `/node/<id>`, `/way/<id>`, `/api/0.6/node|way/<id>`.
The road graph, the search index and the base map are built once per app from the database.
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from webrl.sites.map import browse
from webrl.sites.map.geo import ENGINES
from webrl.sites.map.render import View, fit_view
from webrl.sites.map.search import invalid_coords_message, parse_coords
from webrl.sites.map.seed import seed_map
from webrl.sites.map.web import DEFAULT_ENGINE, HERE, MapSite, fmt_coord, site_of
from webrl.sites.platform import DatabaseSpec, SiteContext, SiteSpec, search_term

# Search and From/To texts are cut at 255 characters, the most an OpenStreetMap tag value (a name, a street, a city)
# may hold (API 0.6): longer text is no place, and each of its words would be scored against every place.
MAX_QUERY = 255
MAP_DB = DatabaseSpec(name="map", schema=HERE / "schema.sql", seed=seed_map, version=1, read_only=True)

INFO_PAGES = {
    "/about": ("About", [
        "OpenStreetMap is built by a community of mappers that contribute and maintain data about roads, "
        "trails, cafés, railway stations, and much more, all over the world.",
        "This copy shows the city of Riverton, Pennsylvania, and the towns around it.",
    ]),
    "/copyright": ("Copyright and License", [
        "OpenStreetMap is open data: you are free to use it for any purpose as long as you credit "
        "OpenStreetMap and its contributors.",
        "© OpenStreetMap contributors.",
    ]),
    "/help": ("Help", [
        "Search for a place with the search box, or click the directions button next to it to find a route "
        "by car, bicycle or on foot between two places or coordinates (\"lat, lon\").",
        "Search for \"cafe near Riverton Union Station\" to list places near another place, nearest first.",
    ]),
    "/edit": ("Edit", ["This copy of OpenStreetMap is read-only: editing is not available."]),
    "/history": ("Changesets", ["This copy of OpenStreetMap is read-only: there are no recent changesets."]),
    "/export": ("Export", ["Exporting map data is not available on this copy of OpenStreetMap."]),
    "/login": ("Log In", ["This copy of OpenStreetMap is read-only: logging in is not available."]),
    "/user/new": ("Sign Up", ["This copy of OpenStreetMap is read-only: signing up is not available."]),
    "/traces": ("Public GPS Traces", ["No GPS traces have been uploaded yet."]),
    "/diary": ("User Diaries", ["No diary entries yet."]),
    "/communities": ("Communities", ["Local chapters and other communities help map the world."]),
}  # fmt: skip


def route_param(a: tuple[float, float], b: tuple[float, float]) -> str:
    return f"{fmt_coord(a[0])},{fmt_coord(a[1])};{fmt_coord(b[0])},{fmt_coord(b[1])}"


async def index(request: Request) -> Response:
    q = request.query_params
    if q.get("query"):
        return RedirectResponse(f"/search?{urlencode({'query': q['query']})}", status_code=302)
    markers, view = [], None
    point = parse_coords(f"{q.get('mlat', '')},{q.get('mlon', '')}") if q.get("mlat") else None
    if isinstance(point, tuple):
        markers = [{"lat": point[0], "lon": point[1], "kind": "result", "label": "Marker"}]
        view = View(17, *point)
    return site_of(request).render(request, "index.html", view=view, markers=markers)


async def search(request: Request) -> Response:
    site = site_of(request)
    query, _ = search_term(request.query_params.get("query"), MAX_QUERY)
    if not query:
        return site.render(request, "search.html", result=None, query="", title="Search | OpenStreetMap")
    result = site.gazetteer.search(query)
    markers = [
        {"lat": h.place.lat, "lon": h.place.lon, "kind": "result", "label": h.place.name, "href": h.place.url}
        for h in result.hits
    ]
    points = [(m["lat"], m["lon"]) for m in markers]
    if result.point:
        markers.append(
            {
                "lat": result.point[0],
                "lon": result.point[1],
                "kind": "anchor",
                "label": result.anchor.name if result.anchor else query,
            }
        )
        points.append(result.point)
    view = fit_view(points) if points else None
    return site.render(
        request,
        "search.html",
        view=view,
        markers=markers,
        result=result,
        query=query,
        title=f"{query} | Search | OpenStreetMap",
    )


async def directions(request: Request) -> Response:
    site = site_of(request)
    q = request.query_params
    engine = q.get("engine") or DEFAULT_ENGINE
    ctx = {"title": "Directions | OpenStreetMap", "engine": engine if engine in ENGINES else DEFAULT_ENGINE}
    if engine not in ENGINES:
        ctx["error"] = f"Sorry, the routing engine '{engine}' is not available"
        return site.render(request, "directions.html", **ctx)
    if "route_from" in q or "route_to" in q:
        start, end = (search_term(q.get(key), MAX_QUERY)[0] for key in ("route_from", "route_to"))
        return geocode_form(request, engine, start, end, ctx)
    raw = q.get("route", "")
    if not raw:
        return site.render(request, "directions.html", **ctx)
    parts = (raw.split(";") + [""])[:2]
    ends = [parse_coords(p) if p.strip() else None for p in parts]
    labels = request.session.get("route_labels", {})
    names = []
    for part, end in zip(parts, ends):
        if isinstance(end, tuple):
            key = f"{fmt_coord(end[0])},{fmt_coord(end[1])}"
            place = site.gazetteer.at(*end)
            names.append(labels.get(key) or (place.name if place else f"{fmt_coord(end[0])}, {fmt_coord(end[1])}"))
        else:
            names.append(part.strip())
    ctx["route_from"], ctx["route_to"] = names
    if any(e == "invalid" or (e is None and p.strip()) for p, e in zip(parts, ends)):
        bad = next(p for p, e in zip(parts, ends) if e == "invalid" or (e is None and p.strip()))
        ctx["error"] = invalid_coords_message(bad.strip())
        return site.render(request, "directions.html", **ctx)
    if not all(isinstance(e, tuple) for e in ends):  # only one end chosen yet ("Directions from here")
        markers = [
            {"lat": e[0], "lon": e[1], "kind": "start" if k == 0 else "end", "label": names[k]}
            for k, e in enumerate(ends)
            if isinstance(e, tuple)
        ]
        view = View(16, markers[0]["lat"], markers[0]["lon"]) if markers else None
        return site.render(request, "directions.html", view=view, markers=markers, **ctx)
    start, end = ends
    route = site.network.route(ENGINES[engine], start, end)
    markers = [
        {"lat": start[0], "lon": start[1], "kind": "start", "label": names[0]},
        {"lat": end[0], "lon": end[1], "kind": "end", "label": names[1]},
    ]
    view = fit_view([start, end] + (route.coords if route else []))
    if route is None:
        ctx["error"] = "Could not find a route between these points"
    reverse = f"/directions?{urlencode({'engine': engine, 'route': route_param(end, start)})}"
    return site.render(
        request,
        "directions.html",
        view=view,
        markers=markers,
        route=route.coords if route else None,
        result=route,
        reverse_url=reverse,
        **ctx,
    )


def geocode_form(request: Request, engine: str, text_from: str, text_to: str, ctx: dict) -> Response:
    """The From/To form: geocode both fields and redirect to the route URL, or show what failed."""
    site = site_of(request)
    ctx["route_from"], ctx["route_to"] = text_from, text_to
    if not text_from.strip() or not text_to.strip():
        ctx["error"] = "Please enter both a start point (From) and an end point (To)"
        return site.render(request, "directions.html", **ctx)
    start, _, err_from = site.gazetteer.geocode(text_from)
    end, _, err_to = site.gazetteer.geocode(text_to)
    if err_from or err_to:
        ctx["error"] = err_from or err_to
        return site.render(request, "directions.html", **ctx)
    labels = dict(request.session.get("route_labels", {}))
    for point, text in ((start, text_from), (end, text_to)):
        labels[f"{fmt_coord(point[0])},{fmt_coord(point[1])}"] = text.strip()
    request.session["route_labels"] = dict(list(labels.items())[-20:])
    url = f"/directions?{urlencode({'engine': engine, 'route': route_param(start, end)})}"
    return RedirectResponse(url, status_code=302)


async def info(request: Request) -> Response:
    heading, paragraphs = INFO_PAGES[request.url.path]
    return site_of(request).render(
        request, "info.html", heading=heading, paragraphs=paragraphs, title=f"{heading} | OpenStreetMap"
    )


async def not_found(request: Request, exc: Exception) -> Response:
    return site_of(request).not_found(request)


ROUTES = [
    Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    Route("/", index),
    Route("/search", search),
    Route("/directions", directions),
    *browse.ROUTES,
    *[Route(path, info) for path in INFO_PAGES],
]


def make_app(ctx: SiteContext) -> Starlette:
    app = Starlette(routes=ROUTES, exception_handlers={404: not_found})
    app.state.map = MapSite(ctx)
    return app


SITE = SiteSpec(name="map", title="OpenStreetMap", database=MAP_DB, make_app=make_app)
