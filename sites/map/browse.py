"""Browsing OSM elements: `/node/<id>` and `/way/<id>` (tags, location, version, the ways a node is
part of, a way's nodes) and their XML at `/api/0.6/node/<id>` and `/api/0.6/way/<id>`."""

from __future__ import annotations

import functools
import sqlite3
from html import escape

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.map.render import View, fit_view
from webrl.sites.map.web import MapSite, site_of
from webrl.sites.platform import RowIdConvertor  # noqa: F401  (registers {name:id})


def element_title(tags: dict[str, str], kind: str, osm_id: int) -> str:
    name = tags.get("name") or (
        f"{tags['addr:housenumber']} {tags.get('addr:street', '')}".strip() if "addr:housenumber" in tags else ""
    )
    return f"{name} ({osm_id})" if name else str(osm_id)


# kind -> (table, tag table, its element column)
TABLES = {"node": ("nodes", "node_tags", "node_id"), "way": ("ways", "way_tags", "way_id")}


def load_element(conn: sqlite3.Connection, kind: str, osm_id: int) -> tuple[sqlite3.Row, dict[str, str]] | None:
    """The node's or way's row and its tags; None when there is no such element."""
    table, tag_table, column = TABLES[kind]
    row = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (osm_id,)).fetchone()
    if row is None:
        return None
    tags = conn.execute(f"SELECT k, v FROM {tag_table} WHERE {column} = ? ORDER BY k", (osm_id,)).fetchall()
    return row, {r["k"]: r["v"] for r in tags}


def element_page(kind: str):
    """The page of one node or way: the endpoint gets the map, the element's id, row and tags;
    a missing element shows the 404 page."""

    def decorate(endpoint):
        @functools.wraps(endpoint)
        async def wrapper(request: Request) -> Response:
            site = site_of(request)
            osm_id = request.path_params["id"]
            found = load_element(site.ctx.db.conn, kind, osm_id)
            if found is None:
                return site.not_found(request, f"Sorry, {kind} #{osm_id} could not be found.")
            return endpoint(request, site, osm_id, *found)

        return wrapper

    return decorate


@element_page("node")
def node(request: Request, site: MapSite, osm_id: int, row: sqlite3.Row, tags: dict[str, str]) -> Response:
    ways = site.ctx.db.conn.execute(
        "SELECT DISTINCT wn.way_id AS id, (SELECT v FROM way_tags t WHERE t.way_id = wn.way_id AND k = 'name')"
        " AS name FROM way_nodes wn WHERE wn.node_id = ? ORDER BY wn.way_id",
        (osm_id,),
    ).fetchall()
    title = element_title(tags, "node", osm_id)
    marker = {"lat": row["lat"], "lon": row["lon"], "kind": "result", "label": tags.get("name", title)}
    return site.render(
        request,
        "element.html",
        view=View(17, row["lat"], row["lon"]),
        markers=[marker],
        kind="node",
        element=row,
        tags=tags,
        heading=f"Node: {title}",
        ways=ways,
        nodes=None,
        location=(row["lat"], row["lon"]),
        title=f"Node: {title} | OpenStreetMap",
    )


@element_page("way")
def way(request: Request, site: MapSite, osm_id: int, row: sqlite3.Row, tags: dict[str, str]) -> Response:
    nodes = site.ctx.db.conn.execute(
        "SELECT n.id, n.lat, n.lon, (SELECT v FROM node_tags t WHERE t.node_id = n.id AND k = 'name') AS name"
        " FROM way_nodes wn JOIN nodes n ON n.id = wn.node_id WHERE wn.way_id = ? ORDER BY wn.seq",
        (osm_id,),
    ).fetchall()
    coords = [(n["lat"], n["lon"]) for n in nodes]
    title = element_title(tags, "way", osm_id)
    view = fit_view(coords) if coords else None
    centre = (view.lat, view.lon) if view else None
    return site.render(
        request,
        "element.html",
        view=view,
        route=coords,
        kind="way",
        element=row,
        tags=tags,
        heading=f"Way: {title}",
        ways=None,
        nodes=nodes,
        location=centre,
        title=f"Way: {title} | OpenStreetMap",
    )


async def api_element(request: Request) -> Response:
    conn = site_of(request).ctx.db.conn
    kind, osm_id = request.path_params["kind"], request.path_params["id"]
    found = load_element(conn, kind, osm_id) if kind in TABLES else None
    if found is None:
        return Response("Not Found", status_code=404, media_type="text/plain")
    row, tags = found
    attrs = (
        f'id="{row["id"]}" visible="true" version="{row["version"]}" changeset="{row["changeset"]}" '
        f'timestamp="{row["timestamp"]}" user="{escape(row["user"])}"'
    )
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<osm version="0.6" generator="openstreetmap-website" copyright="OpenStreetMap and contributors">',
    ]
    if kind == "node":
        lines.append(f'  <node {attrs} lat="{row["lat"]:.7f}" lon="{row["lon"]:.7f}">')
    else:
        lines.append(f"  <way {attrs}>")
        for (node_id,) in conn.execute("SELECT node_id FROM way_nodes WHERE way_id = ? ORDER BY seq", (osm_id,)):
            lines.append(f'    <nd ref="{node_id}"/>')
    lines += [f'    <tag k="{escape(k)}" v="{escape(v)}"/>' for k, v in tags.items()]
    lines += [f"  </{kind}>", "</osm>"]
    return Response("\n".join(lines) + "\n", media_type="application/xml")


ROUTES = [
    Route("/node/{id:id}", node),
    Route("/way/{id:id}", way),
    Route("/api/0.6/{kind:str}/{id:id}", api_element),
]
