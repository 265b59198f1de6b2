"""Deterministic seed data for the map: an OSM-style database of the fictional city of Riverton.

`seed_map(conn, seed)` builds, from `seed_data`'s vocabulary and `random.Random(seed)`:
- a street lattice (rows west-east, columns south-north) gently warped so streets curve, split by the
  Monora River (bridged at a few columns), with named avenues, residential streets named per
  neighbourhood, one-way streets downtown, some missing blocks, footpaths inside parks, a riverside
  cycle trail and two motorways with ramps;
- OSM nodes, ways and tags for all of it (`nodes`, `node_tags`, `ways`, `way_nodes`, `way_tags`),
  the routing table `road_edges` (one row per consecutive node pair of every highway way, with its
  haversine length), and the search index `places` (points of interest, parks and streets, with a
  Nominatim-style display name).
The car network is strongly connected: lattice roads outside its largest component are dropped.
"""

from __future__ import annotations

import math
import random
import sqlite3
from collections import defaultdict
from datetime import datetime, timedelta

import networkx as nx
from faker import Faker

from webrl.sites.map import seed_data as sd
from webrl.sites.map.geo import CAR_HIGHWAYS, haversine
from webrl.sites.map.pois import make_pois, nearest_street, place_row

Key = tuple  # a node's key while building: ("g", i, j) lattice, ("pk", j) parkway, ...


def river_row(col: float) -> float:
    """The river's centre line, in lattice rows, at a (fractional) column."""
    return 15.0 + 2.5 * math.sin(math.pi * (col - 4) / 22)


def latlon(row: float, col: float) -> tuple[float, float]:
    """Lattice coordinates -> (lat, lon), with a smooth warp so that streets are not ruler-straight."""
    lat = sd.LAT0 + row * sd.DLAT + 0.00035 * math.sin(0.45 * col + 0.3 * row)
    lon = sd.LON0 + col * sd.DLON + 0.00045 * math.sin(0.38 * row + 0.2 * col)
    return round(lat, 7), round(lon, 7)


class Builder:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.fake = Faker("en_US")
        self.fake.seed_instance(seed)
        self.pos: dict[Key, tuple[float, float]] = {}  # key -> (row, col)
        self.edges: dict[tuple[Key, Key], dict] = {}  # (a, b) -> name, highway, oneway (+1 a->b), bridge, ref
        self.hood: dict[Key, int] = {}

    # -- the street network -------------------------------------------------------------------

    def on_land(self, i: int, j: int) -> bool:
        r = river_row(j)
        return not (r - sd.RIVER_GAP_SOUTH < i < r + sd.RIVER_GAP_NORTH)

    def neighbourhood_of(self, row: float, col: float) -> int:
        side = "N" if row > river_row(col) else "S"
        best = min(
            (((row - c[0]) ** 2 + (col - c[1]) ** 2), k)
            for k, (_, _, _, c, s) in enumerate(sd.NEIGHBOURHOODS)
            if s == side
        )
        return best[1]

    def park_of(self, i: float, j: float, strict: bool) -> int | None:
        for k, (_, (r0, c0, r1, c1)) in enumerate(sd.PARKS):
            if (r0 < i < r1 and c0 < j < c1) if strict else (r0 <= i <= r1 and c0 <= j <= c1):
                return k
        return None

    def build_lattice(self) -> None:
        for i in range(sd.ROWS):
            for j in range(sd.COLS):
                if self.on_land(i, j):
                    key = ("g", i, j)
                    self.pos[key] = (i, j)
                    self.hood[key] = self.neighbourhood_of(i, j)
        downtown = next(k for k, n in enumerate(sd.NEIGHBOURHOODS) if n[0] == sd.DOWNTOWN)
        names = self.street_names(downtown)
        for i in range(sd.ROWS):
            for j in range(sd.COLS):
                a = ("g", i, j)
                if a not in self.pos:
                    continue
                for b, row_line in ((("g", i, j + 1), True), (("g", i + 1, j), False)):
                    if b not in self.pos:
                        continue
                    line = ("row", i) if row_line else ("col", j)
                    avenue = (sd.AVENUE_ROWS if row_line else sd.AVENUE_COLS).get(line[1])
                    hood = self.hood[a]
                    edge = {"name": None, "highway": "residential", "oneway": 0, "bridge": False, "ref": None}
                    if avenue:
                        edge["name"], edge["highway"] = avenue
                    elif (
                        self.park_of(*self.pos[a], strict=True) is not None
                        or self.park_of(*self.pos[b], strict=True) is not None
                    ):
                        edge["highway"] = "footway"
                    else:
                        edge["name"] = names[(line, hood)]
                        if hood == downtown and self.hood[b] == downtown:
                            parity = line[1] % 2
                            edge["oneway"] = 1 if parity else -1
                    self.edges[(a, b)] = edge
        # bridges across the river
        for j, bridge in sd.BRIDGE_COLS.items():
            south = max(i for i in range(sd.ROWS) if ("g", i, j) in self.pos and i < river_row(j))
            north = min(i for i in range(sd.ROWS) if ("g", i, j) in self.pos and i > river_row(j))
            highway = sd.AVENUE_COLS.get(j, (None, "secondary"))[1]
            self.edges[(("g", south, j), ("g", north, j))] = {
                "name": bridge,
                "highway": highway,
                "oneway": 0,
                "bridge": True,
                "ref": None,
            }
        # missing blocks: drop some residential edges between well-connected nodes
        degree = defaultdict(int)
        for a, b in self.edges:
            degree[a] += 1
            degree[b] += 1
        for (a, b), edge in sorted(self.edges.items()):
            if (
                edge["highway"] == "residential"
                and edge["oneway"] == 0
                and self.rng.random() < 0.06
                and degree[a] >= 4
                and degree[b] >= 4
            ):
                del self.edges[(a, b)]
                degree[a] -= 1
                degree[b] -= 1

    def street_names(self, downtown: int) -> dict:
        """(line, neighbourhood) -> a residential street name, unique across the city."""
        segments = []
        for i in range(sd.ROWS):
            seen = []
            for j in range(sd.COLS):
                if ("g", i, j) in self.pos and self.hood[("g", i, j)] not in seen:
                    seen.append(self.hood[("g", i, j)])
            segments += [(("row", i), h) for h in seen]
        for j in range(sd.COLS):
            seen = []
            for i in range(sd.ROWS):
                if ("g", i, j) in self.pos and self.hood[("g", i, j)] not in seen:
                    seen.append(self.hood[("g", i, j)])
            segments += [(("col", j), h) for h in seen]
        used: set[str] = set(n for n, _ in sd.AVENUE_ROWS.values()) | set(n for n, _ in sd.AVENUE_COLS.values())
        names = {}
        downtown_rows, downtown_cols = list(sd.DOWNTOWN_ROW_NAMES), list(sd.DOWNTOWN_COL_NAMES)
        for line, hood in segments:
            pool = downtown_rows if line[0] == "row" else downtown_cols
            if hood == downtown and pool:
                name = pool.pop(0)
            else:
                suffixes = sd.ROW_SUFFIXES if line[0] == "row" else sd.COL_SUFFIXES
                while True:
                    name = f"{self.rng.choice(sd.STREET_STEMS)} {self.rng.choice(suffixes)}"
                    if name not in used:
                        break
            used.add(name)
            names[(line, hood)] = name
        return names

    def add_edge(self, a: Key, b: Key, name, highway, oneway=0, bridge=False, ref=None) -> None:
        self.edges[(a, b)] = {"name": name, "highway": highway, "oneway": oneway, "bridge": bridge, "ref": ref}

    def nearest_lattice(self, row: float, col: float, side: str | None = None, same_col: bool = False) -> Key:
        best = None
        for key, (i, j) in self.pos.items():
            if key[0] != "g" or (same_col and j != col):
                continue
            if side and (("N" if i > river_row(j) else "S") != side):
                continue
            d = (i - row) ** 2 + (j - col) ** 2
            if best is None or d < best[0]:
                best = (d, key)
        return best[1]

    def build_motorways(self) -> None:
        pk, ex = sd.PARKWAY, sd.EXPRESSWAY
        cols = sorted([float(j) for j in range(sd.COLS)] + [ex["col"]])
        for c in cols:
            self.pos[("pk", c)] = (river_row(c) + sd.PARKWAY_OFFSET, c)
        for c0, c1 in zip(cols, cols[1:]):
            self.add_edge(("pk", c0), ("pk", c1), pk["name"], "motorway", ref=pk["ref"])
        for j in sd.PARKWAY_RAMP_COLS:
            target = self.nearest_lattice(river_row(j) - 2, j, side="S", same_col=True)
            self.add_edge(("pk", float(j)), target, None, "motorway_link")
        # the expressway: south of the parkway, then across the river and north
        c = ex["col"]
        rows = [float(i) for i in range(sd.ROWS) if not (river_row(c) - 1.6 < i < river_row(c) + 0.9)]
        for i in rows:
            self.pos[("ex", i)] = (i, c)
        junction = ("pk", c)
        south = [r for r in rows if r < river_row(c)]
        north = [r for r in rows if r > river_row(c)]
        chain = [("ex", r) for r in south] + [junction] + [("ex", r) for r in north]
        for a, b in zip(chain, chain[1:]):
            bridge = a == junction
            self.add_edge(a, b, ex["name"], "motorway", bridge=bridge, ref=ex["ref"])
        for i in sd.EXPRESSWAY_RAMP_ROWS:
            for j in (6, 7):  # ramps on both sides
                if ("ex", float(i)) in self.pos and ("g", i, j) in self.pos:
                    self.add_edge(("ex", float(i)), ("g", i, j), None, "motorway_link")

    def build_trail(self) -> None:
        name = "Riverfront Trail"
        for j in range(1, sd.COLS - 1):
            self.pos[("tr", j)] = (river_row(j) + sd.TRAIL_OFFSET, j)
        for j in range(1, sd.COLS - 2):
            self.add_edge(("tr", j), ("tr", j + 1), name, "cycleway")
        for j in range(2, sd.COLS - 1, 3):
            target = self.nearest_lattice(river_row(j) + 1, j, side="N", same_col=True)
            self.add_edge(("tr", j), target, name, "cycleway")

    def keep_car_component(self) -> None:
        """Drop lattice car roads outside the largest strongly connected car component."""
        g = nx.DiGraph()
        for (a, b), e in self.edges.items():
            if e["highway"] in CAR_HIGHWAYS:
                if e["oneway"] >= 0:
                    g.add_edge(a, b)
                if e["oneway"] <= 0:
                    g.add_edge(b, a)
        main = max(nx.strongly_connected_components(g), key=len)
        for (a, b), e in list(self.edges.items()):
            if e["highway"] in CAR_HIGHWAYS and (a not in main or b not in main):
                del self.edges[(a, b)]
        used = {k for edge in self.edges for k in edge}
        self.pos = {k: v for k, v in self.pos.items() if k in used}


# ---------------------------------------------------------------------------------------------
# Writing OSM rows


class Writer:
    def __init__(self, conn: sqlite3.Connection, rng: random.Random):
        self.conn, self.rng = conn, rng
        self.next_node, self.next_way, self.changeset = 105_000_000, 24_000_000, 9_000_000
        self.start = datetime(2010, 1, 1)

    def meta(self) -> tuple:
        self.changeset += self.rng.randint(1_000, 90_000)
        when = self.start + timedelta(seconds=self.rng.randrange(13 * 365 * 86400))
        return (
            self.rng.randint(1, 9),
            self.changeset,
            self.rng.choice(sd.MAPPERS),
            when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        )

    def node(self, lat: float, lon: float, tags: dict | None = None) -> int:
        self.next_node += self.rng.randint(1, 5000)
        nid = self.next_node
        self.conn.execute("INSERT INTO nodes VALUES (?,?,?,?,?,?,?)", (nid, lat, lon, *self.meta()))
        self.conn.executemany("INSERT INTO node_tags VALUES (?,?,?)", [(nid, k, v) for k, v in (tags or {}).items()])
        return nid

    def way(self, node_ids: list[int], tags: dict) -> int:
        self.next_way += self.rng.randint(1, 800)
        wid = self.next_way
        self.conn.execute("INSERT INTO ways VALUES (?,?,?,?,?)", (wid, *self.meta()))
        self.conn.executemany("INSERT INTO way_nodes VALUES (?,?,?)", [(wid, k, n) for k, n in enumerate(node_ids)])
        self.conn.executemany("INSERT INTO way_tags VALUES (?,?,?)", [(wid, k, v) for k, v in tags.items()])
        return wid


MAXSPEED = {"motorway": "55 mph", "motorway_link": "35 mph", "primary": "35 mph", "secondary": "30 mph",
            "residential": "25 mph"}  # fmt: skip


def seed_map(conn: sqlite3.Connection, seed: int) -> None:
    b = Builder(seed)
    b.build_lattice()
    b.build_motorways()
    b.build_trail()
    b.keep_car_component()
    rng = random.Random(seed * 7919 + 1)
    w = Writer(conn, rng)
    hoods = [{"name": n, "city": c, "postcode": p} for n, c, p, _, _ in sd.NEIGHBOURHOODS]
    for k, h in enumerate(hoods):
        r, c = sd.NEIGHBOURHOODS[k][3]
        lat, lon = latlon(r, c)
        conn.execute(
            "INSERT INTO neighbourhoods VALUES (?,?,?,?,?,?)", (k + 1, h["name"], h["city"], h["postcode"], lat, lon)
        )

    # nodes of the street network, west to east then south to north (so ids grow across the city)
    ids: dict[Key, int] = {}
    signals = {("g", i, j) for i in sd.AVENUE_ROWS for j in sd.AVENUE_COLS}
    for key in sorted(b.pos, key=lambda k: (b.pos[k][1], b.pos[k][0])):
        tags = {"highway": "traffic_signals"} if key in signals else None
        ids[key] = w.node(*latlon(*b.pos[key]), tags)

    # ways: maximal runs of edges along one line with the same tags
    ways = chain_ways(b)
    edge_rows = []
    street_ways: dict[tuple[str, int], list] = defaultdict(list)  # (name, hood) -> [(length, way id, mid)]
    for keys, e in ways:
        tags = {"highway": e["highway"]}
        if e["name"]:
            tags["name"] = e["name"]
        if e["ref"]:
            tags["ref"] = e["ref"]
        if e["oneway"]:
            tags["oneway"] = "yes"
        if e["bridge"]:
            tags.update({"bridge": "yes", "layer": "1"})
        if e["highway"] in MAXSPEED:
            tags["maxspeed"] = MAXSPEED[e["highway"]]
        if e["highway"] == "cycleway":
            tags.update({"surface": "asphalt", "foot": "designated"})
        if e["highway"] == "footway":
            tags["surface"] = "gravel"
        if e["highway"] in ("primary", "secondary", "residential"):
            tags["surface"] = "asphalt"
            tags["lanes"] = {"primary": "4", "secondary": "2", "residential": "2"}[e["highway"]]
            if e["oneway"]:
                tags["lanes"] = "1"
        node_ids = [ids[k] for k in keys]
        wid = w.way(node_ids, tags)
        label = f"{e['name']} ({e['ref']})" if e["name"] and e["ref"] else e["name"]
        total = 0.0
        for x, y in zip(keys, keys[1:]):
            length = haversine(*latlon(*b.pos[x]), *latlon(*b.pos[y]))
            total += length
            edge_rows.append((wid, ids[x], ids[y], label, e["highway"], round(length, 2), 1 if e["oneway"] else 0))
        if e["name"]:
            mid = keys[len(keys) // 2]
            street_ways[(e["name"], b.neighbourhood_of(*b.pos[mid]))].append((total, wid, mid, e["highway"]))
    conn.executemany(
        "INSERT INTO road_edges (way_id, from_node, to_node, name, highway, length_m, oneway) VALUES (?,?,?,?,?,?,?)",
        edge_rows,
    )

    # the river, as a waterway line along its centre
    river_nodes = [w.node(*latlon(river_row(c / 2), c / 2)) for c in range(-2, sd.COLS * 2 + 1)]
    w.way(river_nodes, {"waterway": "river", "name": sd.RIVER_NAME, "width": "240"})

    places = []
    # parks: closed ways inset into their lattice rectangle
    for name, (r0, c0, r1, c1) in sd.PARKS:
        corners = [(r0 + 0.12, c0 + 0.12), (r0 + 0.12, c1 - 0.12), (r1 - 0.12, c1 - 0.12), (r1 - 0.12, c0 + 0.12)]
        nodes = [w.node(*latlon(*c)) for c in corners]
        wid = w.way(nodes + nodes[:1], {"leisure": "park", "name": name, "access": "yes"})
        centre = ((r0 + r1) / 2, (c0 + c1) / 2)
        street, number = nearest_street(b, *centre)
        places.append(
            place_row("way", wid, name, "park", latlon(*centre), number, street, hoods[b.neighbourhood_of(*centre)])
        )

    for name, category, (row, col), tags, street, number in make_pois(b, rng):
        hood = hoods[b.neighbourhood_of(row, col)]
        lat, lon = latlon(row, col)
        all_tags = {
            "name": name,
            **dict([sd.CATEGORIES[category]["tag"]]),
            **tags,
            "addr:housenumber": number,
            "addr:street": street,
            "addr:city": hood["city"],
            "addr:state": sd.STATE_CODE,
            "addr:postcode": hood["postcode"],
        }
        nid = w.node(lat, lon, all_tags)
        places.append(place_row("node", nid, name, category, (lat, lon), number, street, hood))

    # streets, as Nominatim lists them: one entry per name and neighbourhood (the longest way)
    labels = {
        "motorway": "Motorway",
        "primary": "Primary Road",
        "secondary": "Secondary Road",
        "residential": "Residential Road",
        "cycleway": "Cycle Path",
    }
    for (name, hood), found in sorted(street_ways.items()):
        _, wid, mid, highway = max(found)
        if highway in labels:
            places.append(
                place_row(
                    "way", wid, name, highway, latlon(*b.pos[mid]), None, None, hoods[hood], label=labels[highway]
                )
            )
    conn.executemany(
        "INSERT INTO places (osm_type, osm_id, name, category, label, housenumber, street,"
        " neighbourhood, city, state, postcode, lat, lon, display_name) VALUES"
        " (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        places,
    )


def chain_ways(b: Builder) -> list[tuple[list[Key], dict]]:
    """Group edges into ways: chains of consecutive edges (in their stored direction) with equal tags,
    going straight on where a chain could go several ways (the footpath grids in parks)."""
    tags = lambda e: (e["name"] or "", e["highway"], e["oneway"], e["bridge"], e["ref"] or "")  # noqa: E731
    groups: dict[tuple, list[tuple[Key, Key]]] = defaultdict(list)
    for pair, e in b.edges.items():
        groups[tags(e)].append(pair)
    ways = []
    order = lambda pair: (b.pos[pair[0]][1], b.pos[pair[0]][0], b.pos[pair[1]][1], b.pos[pair[1]][0])  # noqa: E731
    for key in sorted(groups):
        pairs = sorted(groups[key], key=order)
        out: dict[Key, list[Key]] = defaultdict(list)
        has_in = set()
        for x, y in pairs:
            out[x].append(y)
            has_in.add(y)
        left = set(pairs)
        starts = [p for p in pairs if p[0] not in has_in] + pairs
        for first in starts:
            if first not in left:
                continue
            keys = list(first)
            left.discard(first)
            while True:
                (r0, c0), (r1, c1) = b.pos[keys[-2]], b.pos[keys[-1]]
                options = [n for n in out[keys[-1]] if (keys[-1], n) in left]
                if not options:
                    break
                straight = lambda n: abs((b.pos[n][0] - r1) - (r1 - r0)) + abs((b.pos[n][1] - c1) - (c1 - c0))  # noqa: E731
                nxt = min(options, key=straight)
                left.discard((keys[-1], nxt))
                keys.append(nxt)
            e = b.edges[first]
            if e["oneway"] == -1:
                keys.reverse()
            ways.append((keys, {**e, "oneway": 1 if e["oneway"] else 0}))
    ways.sort(key=lambda w: (b.pos[w[0][0]][1], b.pos[w[0][0]][0]))
    return ways
