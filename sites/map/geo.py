"""Geometry and routing: distances, the road graph per travel mode, snapping, shortest routes and
OSRM-style turn-by-turn instructions, and OSM's distance/time formatting.

Mode rules (what the directions engines do here):
- car (fossgis_osrm_car): motorways, links, primary, secondary and residential roads; respects
  one-way streets; speed by road class (SPEEDS_KMH); fastest route.
- bicycle (fossgis_osrm_bike): every road and cycleway except motorways, links and footways; respects
  one-way streets except on cycleways; 16 km/h.
- foot (fossgis_osrm_foot): everything except motorways and links; ignores one-way; 5 km/h.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass, field

import networkx as nx

EARTH_RADIUS_M = 6_371_000.0
CAR_HIGHWAYS = frozenset({"motorway", "motorway_link", "primary", "secondary", "tertiary", "residential"})
SPEEDS_KMH = {"motorway": 90, "motorway_link": 45, "primary": 50, "secondary": 40, "tertiary": 35, "residential": 25}
BIKE_KMH, FOOT_KMH = 16, 5

ENGINES = {"fossgis_osrm_car": "car", "fossgis_osrm_bike": "bicycle", "fossgis_osrm_foot": "foot"}
ENGINE_LABELS = {"fossgis_osrm_car": "Car (OSRM)", "fossgis_osrm_bike": "Bicycle (OSRM)",
                 "fossgis_osrm_foot": "Foot (OSRM)"}  # fmt: skip
MAX_SNAP_M = 3000  # a point further than this from any usable road is off the map
SNAP_MEMORY = 100_000  # snapped points remembered per road network


def haversine(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in metres."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(a))


def bearing(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Initial compass bearing in degrees (0 = north, 90 = east)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return math.degrees(math.atan2(y, x)) % 360


def edge_cost(mode: str, highway: str, length_m: float, oneway: bool) -> tuple[float | None, bool]:
    """(seconds to travel the edge, whether it may be used backwards) for a mode, or (None, _) if barred."""
    if mode == "car":
        if highway not in CAR_HIGHWAYS:
            return None, False
        return length_m / (SPEEDS_KMH[highway] / 3.6), not oneway
    if highway in ("motorway", "motorway_link"):
        return None, False
    if mode == "bicycle":
        if highway == "footway":
            return None, False
        return length_m / (BIKE_KMH / 3.6), not oneway or highway == "cycleway"
    return length_m / (FOOT_KMH / 3.6), True


def format_distance(m: float) -> str:
    """As openstreetmap.org shows distances: '850m', '3.4km', '12km'."""
    if m < 1000:
        return f"{round(m)}m"
    if m < 10000:
        return f"{m / 1000:.1f}km"
    return f"{round(m / 1000)}km"


def format_time(s: float) -> str:
    """Seconds as H:MM (rounded to the minute), as openstreetmap.org shows durations."""
    minutes = round(s / 60)
    return f"{minutes // 60}:{minutes % 60:02d}"


@dataclass
class RouteStep:
    instruction: str
    distance_m: float
    lat: float
    lon: float
    kind: str  # icon class: start, straight, slight-left, left, sharp-left, uturn, ramp, merge, destination

    @property
    def distance(self) -> str:
        return format_distance(self.distance_m) if self.distance_m else ""


@dataclass
class Route:
    mode: str
    nodes: list[int]
    coords: list[tuple[float, float]]
    distance_m: float
    duration_s: float
    steps: list[RouteStep] = field(default_factory=list)

    @property
    def distance(self) -> str:
        return format_distance(self.distance_m)

    @property
    def time(self) -> str:
        return format_time(self.duration_s)


class RoadNetwork:
    """The road graph of the map's database, one directed networkx graph per mode. Built once per server."""

    def __init__(self, conn: sqlite3.Connection):
        rows = conn.execute(
            "SELECT e.from_node, e.to_node, e.name, e.highway, e.length_m, e.oneway, e.way_id,"
            " a.lat, a.lon, b.lat, b.lon FROM road_edges e JOIN nodes a ON a.id = e.from_node"
            " JOIN nodes b ON b.id = e.to_node ORDER BY e.id"
        ).fetchall()
        self.coords: dict[int, tuple[float, float]] = {}
        self.graphs = {mode: nx.DiGraph() for mode in ("car", "bicycle", "foot")}
        for u, v, name, highway, length, oneway, way_id, ulat, ulon, vlat, vlon in rows:
            self.coords[u], self.coords[v] = (ulat, ulon), (vlat, vlon)
            for mode, g in self.graphs.items():
                seconds, backwards = edge_cost(mode, highway, length, bool(oneway))
                if seconds is None:
                    continue
                attrs = {"time": seconds, "length": length, "name": name or "", "highway": highway, "way": way_id}
                g.add_edge(u, v, **attrs)
                if backwards:
                    g.add_edge(v, u, **attrs)
        self.mode_nodes = {mode: sorted(g.nodes) for mode, g in self.graphs.items()}
        # per mode, each node's latitude in radians and its cosine, and its longitude: haversine's per-node terms
        self._snap_table = {
            mode: [
                (n, math.radians(self.coords[n][0]), math.cos(math.radians(self.coords[n][0])), self.coords[n][1])
                for n in nodes
            ]
            for mode, nodes in self.mode_nodes.items()
        }
        self._snapped: dict[tuple[str, float, float], tuple[int, float]] = {}

    def snap(self, mode: str, lat: float, lon: float) -> tuple[int, float]:
        """The nearest node usable by `mode` and its distance in metres: the first of the sorted nodes at the least
        haversine distance, computed as haversine() does (the same float operations, so the same node), and
        remembered (the task templates snap the same places again and again)."""
        key = (mode, lat, lon)
        found = self._snapped.get(key)
        if found is not None:
            return found
        p1 = math.radians(lat)
        c1, best, best_m = math.cos(p1), -1, math.inf
        sin, asin, sqrt, radians = math.sin, math.asin, math.sqrt, math.radians
        for node, p2, c2, node_lon in self._snap_table[mode]:
            a = sin((p2 - p1) / 2) ** 2 + c1 * c2 * sin(radians(node_lon - lon) / 2) ** 2
            metres = 2 * EARTH_RADIUS_M * asin(sqrt(a))
            if metres < best_m:
                best, best_m = node, metres
        if len(self._snapped) >= SNAP_MEMORY:  # the directions page snaps what users type: keep it bounded
            self._snapped.clear()
        self._snapped[key] = found = best, best_m
        return found

    def route(self, mode: str, start: tuple[float, float], end: tuple[float, float]) -> Route | None:
        """The fastest route between two points, or None when either is too far from a road or no path exists."""
        a, da = self.snap(mode, *start)
        b, db = self.snap(mode, *end)
        if da > MAX_SNAP_M or db > MAX_SNAP_M:
            return None
        g = self.graphs[mode]
        if a == b:
            path = [a]
        else:
            try:
                _, path = nx.bidirectional_dijkstra(g, a, b, weight="time")
            except nx.NetworkXNoPath:
                return None
        edges = [g.edges[u, v] for u, v in zip(path, path[1:])]
        route = Route(
            mode, path, [self.coords[n] for n in path], sum(e["length"] for e in edges), sum(e["time"] for e in edges)
        )
        route.steps = self.instructions(path, edges)
        return route

    def instructions(self, path: list[int], edges: list[dict]) -> list[RouteStep]:
        """Turn-by-turn steps: one per stretch of the route along one named road."""
        steps: list[RouteStep] = []
        if not edges:
            lat, lon = self.coords[path[0]]
            return [RouteStep("Reach destination", 0, lat, lon, "destination")]
        groups: list[list[int]] = []  # indices into edges
        for k, e in enumerate(edges):
            prev = edges[k - 1] if k else None
            same = (
                prev is not None
                and prev["name"] == e["name"]
                and (prev["highway"] == "motorway_link") == (e["highway"] == "motorway_link")
            )
            if same and not e["name"]:
                same = abs(turn_angle(self._bearing(path, k - 1), self._bearing(path, k))) < 30
            if same:
                groups[-1].append(k)
            else:
                groups.append([k])
        for n, group in enumerate(groups):
            first = edges[group[0]]
            lat, lon = self.coords[path[group[0]]]
            length = sum(edges[k]["length"] for k in group)
            name = first["name"]
            if n == 0:
                text, kind = (f"Start on {name}" if name else "Start"), "start"
            else:
                angle = turn_angle(self._bearing(path, groups[n - 1][-1]), self._bearing(path, group[0]))
                side = "right" if angle > 0 else "left"
                if first["highway"] == "motorway_link" and edges[group[0] - 1]["highway"] != "motorway":
                    text, kind = f"Take the ramp on the {side}", "ramp"
                elif first["highway"] == "motorway_link":
                    text, kind = f"Take the exit on the {side}", "ramp"
                elif first["highway"] == "motorway" and edges[group[0] - 1]["highway"] == "motorway_link":
                    text, kind = f"Merge {side} onto {name}", "merge"
                elif edges[group[0] - 1]["highway"] == "motorway_link":
                    # off a ramp onto a road: a turn at most, however the ramp's last stretch points
                    limit = SHARP_FROM - 1
                    text, kind = turn_text(max(-limit, min(limit, angle)), name)
                else:
                    text, kind = turn_text(angle, name)
            steps.append(RouteStep(text, length, lat, lon, kind))
        lat, lon = self.coords[path[-1]]
        steps.append(RouteStep("Reach destination", 0, lat, lon, "destination"))
        return steps

    def _bearing(self, path: list[int], k: int) -> float:
        return bearing(*self.coords[path[k]], *self.coords[path[k + 1]])


def turn_angle(before: float, after: float) -> float:
    """Signed change of heading in degrees: positive turns right, negative left, in (-180, 180]."""
    d = (after - before + 180) % 360 - 180
    return 180.0 if d == -180 else d


SHARP_FROM = 135.0  # degrees: a change of heading from here on is a sharp turn (from 170 a U-turn)


def turn_text(angle: float, name: str) -> tuple[str, str]:
    onto = f" onto {name}" if name else ""
    side = "right" if angle > 0 else "left"
    a = abs(angle)
    if a < 20:
        return (f"Continue on {name}" if name else "Continue"), "straight"
    if a < 60:
        return f"Slight {side}{onto}", f"slight-{side}"
    if a < SHARP_FROM:
        return f"Turn {side}{onto}", side
    if a < 170:
        return f"Sharp {side}{onto}", f"sharp-{side}"
    return (f"U-turn along {name}" if name else "Make a U-turn"), "uturn"
