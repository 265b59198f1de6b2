"""The map view: an inline SVG of the whole region (roads by class, parks, the river, points of
interest and labels) in metres around the region's centre, plus per-page overlays (markers, the
route). The base layer is rendered once per app; static/map.js pans and zooms it by `#map=z/lat/lon`.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from html import escape

from webrl.sites.map import seed_data as sd

M_PER_DEG_LAT = 110_540.0
ROAD_WIDTH_M = {"motorway": 26, "motorway_link": 14, "primary": 20, "secondary": 16, "residential": 11,
                "footway": 3, "cycleway": 4}  # fmt: skip
ROAD_ORDER = ("footway", "cycleway", "residential", "secondary", "primary", "motorway_link", "motorway")
LABELLED = {"primary": "label-major", "secondary": "label-major", "motorway": "label-major",
            "residential": "label-minor", "cycleway": "label-minor"}  # fmt: skip
WIDTH_PX, HEIGHT_PX = 1000, 700  # the nominal map size the server assumes before map.js knows better


@dataclass(frozen=True)
class Projection:
    lat0: float
    lon0: float

    @property
    def m_per_deg_lon(self) -> float:
        return 111_320.0 * math.cos(math.radians(self.lat0))

    def xy(self, lat: float, lon: float) -> tuple[float, float]:
        return (lon - self.lon0) * self.m_per_deg_lon, (self.lat0 - lat) * M_PER_DEG_LAT

    def path(self, coords) -> str:
        pts = [self.xy(lat, lon) for lat, lon in coords]
        return "M" + " L".join(f"{x:.0f} {y:.0f}" for x, y in pts)


def metres_per_pixel(lat: float, zoom: float) -> float:
    return 156_543.03392 * math.cos(math.radians(lat)) / 2**zoom


@dataclass
class View:
    zoom: int
    lat: float
    lon: float

    @property
    def hash(self) -> str:
        return f"map={self.zoom}/{self.lat:.4f}/{self.lon:.4f}"


def fit_view(points: list[tuple[float, float]], max_zoom: int = 17) -> View:
    """The view that shows every point (with a margin) on a nominal map."""
    if not points:
        return REGION_VIEW
    lats, lons = [p[0] for p in points], [p[1] for p in points]
    lat, lon = (min(lats) + max(lats)) / 2, (min(lons) + max(lons)) / 2
    span_x = (max(lons) - min(lons)) * 111_320 * math.cos(math.radians(lat))
    span_y = (max(lats) - min(lats)) * M_PER_DEG_LAT
    zoom = max_zoom
    while zoom > 3 and (
        span_x > 0.75 * WIDTH_PX * metres_per_pixel(lat, zoom)
        or span_y > 0.75 * HEIGHT_PX * metres_per_pixel(lat, zoom)
    ):
        zoom -= 1
    return View(zoom, lat, lon)


CENTER = (sd.LAT0 + sd.ROWS * sd.DLAT / 2, sd.LON0 + sd.COLS * sd.DLON / 2)
REGION_VIEW = View(13, CENTER[0], CENTER[1])


class MapRenderer:
    """Renders the base layer once from the database; `svg()` adds a page's overlays."""

    def __init__(self, conn: sqlite3.Connection):
        self.proj = Projection(*CENTER)
        self.base = self._base(conn)

    def _base(self, conn: sqlite3.Connection) -> str:
        coords = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, lat, lon FROM nodes")}
        way_nodes: dict[int, list[int]] = {}
        for way_id, node_id in conn.execute("SELECT way_id, node_id FROM way_nodes ORDER BY way_id, seq"):
            way_nodes.setdefault(way_id, []).append(node_id)
        tags: dict[int, dict[str, str]] = {}
        for way_id, k, v in conn.execute("SELECT way_id, k, v FROM way_tags"):
            tags.setdefault(way_id, {})[k] = v
        parks, river, roads = [], [], {h: [] for h in ROAD_ORDER}
        for way_id, t in sorted(tags.items()):
            d = self.proj.path(coords[n] for n in way_nodes[way_id])
            if t.get("leisure") == "park":
                parks.append(
                    f'<a href="/way/{way_id}"><path class="park" d="{d} '
                    f'Z"><title>{escape(t["name"])}</title></path></a>'
                )
            elif t.get("waterway") == "river":
                river.append(f'<path id="river" class="river" d="{d}"/>')
            elif t.get("highway") in roads:
                roads[t["highway"]].append((way_id, t, d))
        out = ['<g class="parks">', *parks, "</g>", '<g class="water">', *river, "</g>"]
        defs = []
        casings, fills, labels = [], [], []
        for highway in ROAD_ORDER:
            for way_id, t, d in roads[highway]:
                bridge = " bridge" if t.get("bridge") else ""
                defs.append(f'<path id="w{way_id}" d="{d}"/>')
                if highway not in ("footway", "cycleway"):
                    casings.append(f'<use href="#w{way_id}" class="casing {highway}{bridge}"/>')
                fills.append(f'<use href="#w{way_id}" class="road {highway}{bridge}"/>')
                if t.get("name") and highway in LABELLED:
                    labels.append(
                        f'<text class="{LABELLED[highway]}" dy="0.35em"><textPath href="#w{way_id}" '
                        f'startOffset="50%" text-anchor="middle">{escape(t["name"])}</textPath></text>'
                    )
        out = ["<defs>", *defs, "</defs>", *out, '<g class="roads">', *casings, *fills, "</g>"]
        out += [
            '<g class="labels">',
            *labels,
            '<text class="label-water" dy="0.35em"><textPath href="#river" '
            f'startOffset="30%">{sd.RIVER_NAME}</textPath></text>',
            "</g>",
        ]
        hoods = []
        for name, lat, lon in conn.execute("SELECT name, lat, lon FROM neighbourhoods ORDER BY id"):
            x, y = self.proj.xy(lat, lon)
            hoods.append(f'<text class="label-place" x="{x:.0f}" y="{y:.0f}">{escape(name)}</text>')
        pois = []
        for osm_id, name, category, lat, lon in conn.execute(
            "SELECT osm_id, name, category, lat, lon FROM places WHERE osm_type = 'node' ORDER BY id"
        ):
            x, y = self.proj.xy(lat, lon)
            pois.append(
                f'<a href="/node/{osm_id}" class="poi {category}"><circle cx="{x:.0f}" cy="{y:.0f}"/>'
                f'<text x="{x:.0f}" y="{y:.0f}" dx="0.7em" dy="0.35em">{escape(name)}</text>'
                f"<title>{escape(name)}</title></a>"
            )
        out += ['<g class="pois">', *pois, "</g>", '<g class="places">', *hoods, "</g>"]
        return "\n".join(out)

    def svg(self, view: View, markers: list[dict] | None = None, route: list[tuple[float, float]] | None = None) -> str:
        """The map: base layer, the route polyline and markers ({lat, lon, kind, label, href})."""
        mpp = metres_per_pixel(view.lat, view.zoom)
        cx, cy = self.proj.xy(view.lat, view.lon)
        w, h = WIDTH_PX * mpp, HEIGHT_PX * mpp
        overlay = []
        if route:
            overlay.append(f'<path class="route" d="{self.proj.path(route)}"/>')
        for k, m in enumerate(markers or []):
            x, y = self.proj.xy(m["lat"], m["lon"])
            label = escape(m.get("label", ""))
            body = (
                f'<g class="marker {m.get("kind", "result")}" transform="translate({x:.1f} {y:.1f})">'
                f'<path class="pin" d="M0 0 L-7 -15 A 9 9 0 1 1 7 -15 Z"/><circle class="dot" cy="-20" r="3.5"/>'
                f"<title>{label}</title></g>"
            )
            overlay.append(f'<a href="{escape(m["href"])}">{body}</a>' if m.get("href") else body)
        return (
            f'<svg id="map-svg" class="map-svg" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="{cx - w / 2:.0f} {cy - h / 2:.0f} {w:.0f} {h:.0f}" preserveAspectRatio="xMidYMid slice" '
            f'data-lat0="{self.proj.lat0}" data-lon0="{self.proj.lon0}" '
            f'data-view="{view.zoom}/{view.lat:.5f}/{view.lon:.5f}" '
            f'style="--u: {mpp:.3f}" role="img" aria-label="Map">'
            f'{self.base}<g class="overlay">{"".join(overlay)}</g></svg>'
        )
