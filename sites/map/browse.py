"""Browsing OSM elements: `/node/<id>` and `/way/<id>` (tags, location, version, the ways a node is
part of, a way's nodes) and their XML at `/api/0.6/node/<id>` and `/api/0.6/way/<id>`."""

from __future__ import annotations

from html import escape

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.map.render import View, fit_view


def element_title(tags: dict[str, str], kind: str, osm_id: int) -> str:
    name = tags.get("name") or (f"{tags['addr:housenumber']} {tags.get('addr:street', '')}".strip()
                                if "addr:housenumber" in tags else "")
    return f"{name} ({osm_id})" if name else str(osm_id)


def routes(site) -> list[Route]:
    conn = site.ctx.db.conn

    def tags_of(table: str, column: str, osm_id: int) -> dict[str, str]:
        rows = conn.execute(f"SELECT k, v FROM {table} WHERE {column} = ? ORDER BY k", (osm_id,)).fetchall()
        return {r["k"]: r["v"] for r in rows}

    async def node(request: Request) -> Response:
        osm_id = request.path_params["id"]
        row = conn.execute("SELECT * FROM nodes WHERE id = ?", (osm_id,)).fetchone()
        if row is None:
            return site.not_found(request, f"Sorry, node #{osm_id} could not be found.")
        tags = tags_of("node_tags", "node_id", osm_id)
        ways = conn.execute(
            "SELECT DISTINCT wn.way_id AS id, (SELECT v FROM way_tags t WHERE t.way_id = wn.way_id AND k = 'name')"
            " AS name FROM way_nodes wn WHERE wn.node_id = ? ORDER BY wn.way_id", (osm_id,)).fetchall()
        title = element_title(tags, "node", osm_id)
        marker = {"lat": row["lat"], "lon": row["lon"], "kind": "result", "label": tags.get("name", title)}
        return site.render(request, "element.html", view=View(17, row["lat"], row["lon"]), markers=[marker],
                           kind="node", element=row, tags=tags, heading=f"Node: {title}", ways=ways, nodes=None,
                           location=(row["lat"], row["lon"]), title=f"Node: {title} | OpenStreetMap")

    async def way(request: Request) -> Response:
        osm_id = request.path_params["id"]
        row = conn.execute("SELECT * FROM ways WHERE id = ?", (osm_id,)).fetchone()
        if row is None:
            return site.not_found(request, f"Sorry, way #{osm_id} could not be found.")
        tags = tags_of("way_tags", "way_id", osm_id)
        nodes = conn.execute(
            "SELECT n.id, n.lat, n.lon, (SELECT v FROM node_tags t WHERE t.node_id = n.id AND k = 'name') AS name"
            " FROM way_nodes wn JOIN nodes n ON n.id = wn.node_id WHERE wn.way_id = ? ORDER BY wn.seq",
            (osm_id,)).fetchall()
        coords = [(n["lat"], n["lon"]) for n in nodes]
        title = element_title(tags, "way", osm_id)
        view = fit_view(coords) if coords else None
        centre = (view.lat, view.lon) if view else None
        return site.render(request, "element.html", view=view, route=coords, kind="way", element=row, tags=tags,
                           heading=f"Way: {title}", ways=None, nodes=nodes, location=centre,
                           title=f"Way: {title} | OpenStreetMap")

    async def api_element(request: Request) -> Response:
        kind, osm_id = request.path_params["kind"], request.path_params["id"]
        if kind not in ("node", "way"):
            return Response("Not Found", status_code=404, media_type="text/plain")
        table = "nodes" if kind == "node" else "ways"
        row = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (osm_id,)).fetchone()
        if row is None:
            return Response("Not Found", status_code=404, media_type="text/plain")
        attrs = f'id="{row["id"]}" visible="true" version="{row["version"]}" changeset="{row["changeset"]}" ' \
                f'timestamp="{row["timestamp"]}" user="{escape(row["user"])}"'
        lines = ['<?xml version="1.0" encoding="UTF-8"?>',
                 '<osm version="0.6" generator="openstreetmap-website" copyright="OpenStreetMap and contributors">']
        if kind == "node":
            tags = tags_of("node_tags", "node_id", osm_id)
            lines.append(f'  <node {attrs} lat="{row["lat"]:.7f}" lon="{row["lon"]:.7f}">')
        else:
            tags = tags_of("way_tags", "way_id", osm_id)
            lines.append(f"  <way {attrs}>")
            for (node_id,) in conn.execute("SELECT node_id FROM way_nodes WHERE way_id = ? ORDER BY seq", (osm_id,)):
                lines.append(f'    <nd ref="{node_id}"/>')
        lines += [f'    <tag k="{escape(k)}" v="{escape(v)}"/>' for k, v in tags.items()]
        lines += [f"  </{kind}>", "</osm>"]
        return Response("\n".join(lines) + "\n", media_type="application/xml")

    return [
        Route("/node/{id:int}", node),
        Route("/way/{id:int}", way),
        Route("/api/0.6/{kind:str}/{id:int}", api_element),
    ]
