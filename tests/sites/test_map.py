"""The map (OpenStreetMap look-alike), driven through the real embedded server: search and place
pages, directions for car/bicycle/foot checked against an independent shortest path over the
database's road graph, nearby search, user-facing errors, read-only resets, and the seed."""

from __future__ import annotations

import math
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import httpx
import networkx as nx
import pytest

from webrl.sites.map import SITE
from webrl.sites.platform import content_checksum

SPEEDS = {"motorway": 90, "motorway_link": 45, "primary": 50, "secondary": 40, "residential": 25}
ENGINES = {"fossgis_osrm_car": ("car", "Car (OSRM)"), "fossgis_osrm_bike": ("bicycle", "Bicycle (OSRM)"),
           "fossgis_osrm_foot": ("foot", "Foot (OSRM)")}  # fmt: skip


@pytest.fixture
def osm(site_servers):
    backend = site_servers("map")
    return backend


@pytest.fixture
def base(osm) -> str:
    return osm.urls(0)["map"]


@pytest.fixture
def client(base):
    with httpx.Client(base_url=base, timeout=10) as c:
        yield c


def db(osm) -> sqlite3.Connection:
    (path,) = Path(osm.paths.snapshots).glob("map-*.db")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def place(osm, name: str) -> sqlite3.Row:
    with closing(db(osm)) as conn:
        return conn.execute("SELECT * FROM places WHERE name = ? AND osm_type = 'node'", (name,)).fetchone()


# ---------------------------------------------------------------------------------------------
# An independent router over the database (the rules of the three engines, written out again)


def haversine(lat1, lon1, lat2, lon2) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * 6_371_000 * math.asin(math.sqrt(a))


def graph(conn: sqlite3.Connection, mode: str) -> tuple[nx.DiGraph, dict[int, tuple[float, float]]]:
    g, coords = nx.DiGraph(), {}
    for r in conn.execute(
        "SELECT e.*, a.lat AS alat, a.lon AS alon, b.lat AS blat, b.lon AS blon FROM road_edges e"
        " JOIN nodes a ON a.id = e.from_node JOIN nodes b ON b.id = e.to_node"
    ):
        hw, length, oneway = r["highway"], r["length_m"], bool(r["oneway"])
        coords[r["from_node"]], coords[r["to_node"]] = (r["alat"], r["alon"]), (r["blat"], r["blon"])
        if mode == "car":
            if hw not in SPEEDS:
                continue
            speed, both = SPEEDS[hw], not oneway
        elif hw.startswith("motorway") or (mode == "bicycle" and hw == "footway"):
            continue
        elif mode == "bicycle":
            speed, both = 16, not oneway or hw == "cycleway"
        else:
            speed, both = 5, True
        attrs = {"time": length / (speed / 3.6), "length": length}
        g.add_edge(r["from_node"], r["to_node"], **attrs)
        if both:
            g.add_edge(r["to_node"], r["from_node"], **attrs)
    return g, coords


def expected_route(conn, mode: str, start, end) -> tuple[float, float]:
    g, coords = graph(conn, mode)
    snap = lambda p: min(g.nodes, key=lambda n: haversine(*p, *coords[n]))  # noqa: E731
    path = nx.shortest_path(g, snap(start), snap(end), weight="time")
    edges = [g.edges[u, v] for u, v in zip(path, path[1:])]
    return sum(e["length"] for e in edges), sum(e["time"] for e in edges)


def parse_summary(text: str) -> tuple[float, int]:
    """'Distance: 3.4km. Time: 0:12.' -> (metres, minutes)."""
    m = re.search(r"Distance: ([\d.]+)(k?m)\. Time: (\d+):(\d\d)\.", text)
    assert m, text
    metres = float(m.group(1)) * (1000 if m.group(2) == "km" else 1)
    return metres, int(m.group(3)) * 60 + int(m.group(4))


def route_of(url: str) -> list[tuple[float, float]]:
    route = parse_qs(urlparse(url).query)["route"][0]
    return [tuple(float(x) for x in end.split(",")) for end in route.split(";")]


# ---------------------------------------------------------------------------------------------
# In the browser


def test_home_page_has_search_and_directions(page, base):
    page.goto(base + "/")
    assert page.title() == "OpenStreetMap"
    assert page.get_by_placeholder("Search").is_visible()
    assert page.locator("#map svg .road.primary").count() > 5
    page.wait_for_function("location.hash.startsWith('#map=')")
    assert re.search(r"#map=\d+/40\.\d+/-\d+\.\d+$", page.url)
    page.click("a.switch_link")
    assert urlparse(page.url).path == "/directions"
    assert page.get_by_placeholder("From").is_visible() and page.get_by_placeholder("To").is_visible()


def test_search_a_place_and_open_it(page, base, osm):
    page.goto(base + "/")
    page.fill("#query", "Kessler Institute of Technology")
    page.click("button.search-go")
    first = page.locator(".search_results_entry a.set_position").first
    assert "Kessler Institute of Technology" in first.inner_text()
    assert page.locator(".search_results_entry .result-type").first.inner_text() == "University"
    first.click()
    expected = place(osm, "Kessler Institute of Technology")
    assert urlparse(page.url).path == f"/node/{expected['osm_id']}"
    assert "Node: Kessler Institute of Technology" in page.locator("h2").first.inner_text()
    tags = dict(
        zip(
            page.locator(".browse-tag-list th").all_inner_texts(), page.locator(".browse-tag-list td").all_inner_texts()
        )
    )
    assert tags["name"] == "Kessler Institute of Technology" and tags["amenity"] == "university"
    assert tags["addr:city"] == expected["city"] and tags["addr:street"] == expected["street"]
    assert f"{expected['lat']:.7f}" in page.locator(".browse-location").inner_text()


def test_directions_for_car_bike_and_foot_match_shortest_paths(page, base, osm):
    origin, destination = "Kessler Institute of Technology", "Riverton Union Station"
    minutes = {}
    page.goto(base + "/directions")
    with closing(db(osm)) as conn:
        for engine, (mode, label) in ENGINES.items():
            page.fill("input[name=route_from]", origin)
            page.fill("input[name=route_to]", destination)
            page.select_option("#routing_engines", label=label)
            page.click("button.routing_go")
            page.wait_for_selector("#routing_summary")
            url = unquote(page.url)
            assert f"/directions?engine={engine}&route=" in url
            assert re.search(r"route=-?\d+\.\d+,-?\d+\.\d+;-?\d+\.\d+,-?\d+\.\d+", url)
            assert page.input_value("input[name=route_from]") == origin
            assert page.input_value("input[name=route_to]") == destination
            assert f"Directions from {origin} to {destination}" in page.locator(".directions-title").inner_text()
            shown_m, shown_min = parse_summary(page.locator("#routing_summary").inner_text())
            start, end = route_of(page.url)
            length, seconds = expected_route(conn, mode, start, end)
            assert abs(shown_m - length) <= (5 if length < 1000 else 50 if length < 10000 else 500)
            assert abs(shown_min - seconds / 60) <= 1
            steps = page.locator("#turnbyturn td.instruction").all_inner_texts()
            assert steps[0].startswith("1. Start on") and steps[-1].endswith("Reach destination")
            assert len(steps) >= 3
            minutes[mode] = seconds
    assert minutes["foot"] > minutes["bicycle"] > minutes["car"]


# ---------------------------------------------------------------------------------------------
# Over HTTP


def test_nearby_search_is_ordered_by_distance(client, osm):
    r = client.get("/search", params={"query": "coffee near Riverton Union Station"})
    assert r.status_code == 200
    away = [float(v) * (1000 if unit == "km" else 1) for v, unit in re.findall(r"([\d.]+)(k?m) away", r.text)]
    assert len(away) >= 5 and away == sorted(away)
    assert set(re.findall(r'<span class="result-type">([^<]+)</span>', r.text)) == {"Café"}
    station = place(osm, "Riverton Union Station")
    with closing(db(osm)) as conn:
        cafes = conn.execute("SELECT * FROM places WHERE category = 'cafe'").fetchall()
    nearest = min(cafes, key=lambda p: haversine(station["lat"], station["lon"], p["lat"], p["lon"]))
    first = re.search(r'class="set_position stretched-link" href="/node/(\d+)"', r.text).group(1)
    assert int(first) == nearest["osm_id"]


def test_coordinates_and_user_facing_errors(client):
    r = client.get("/search", params={"query": "40.44, -79.99"})
    assert r.status_code == 200 and "Go to coordinates 40.4400, -79.9900" in r.text
    r = client.get("/search", params={"query": "95, 200"})
    assert r.status_code == 200 and "not a valid location" in r.text
    r = client.get("/search", params={"query": "xyzzy plugh"})
    assert r.status_code == 200 and "Sorry, could not find &#39;xyzzy plugh&#39;" in r.text
    r = client.get("/directions", params={"route_from": "xyzzy", "route_to": "Riverton Union Station"})
    assert r.status_code == 200 and "Sorry, could not find &#39;xyzzy&#39;" in r.text
    r = client.get("/directions", params={"engine": "fossgis_osrm_car", "route": "91,0;40.44,-79.99"})
    assert r.status_code == 200 and "not a valid location" in r.text
    r = client.get("/directions", params={"engine": "fossgis_osrm_foot", "route": "0,0;1,1"})
    assert r.status_code == 200 and "Could not find a route between these points" in r.text
    r = client.get("/directions", params={"route_from": "40.44, -79.99", "route_to": "40.45, -79.95"})
    assert r.status_code == 302
    assert (
        unquote(r.headers["location"]) == "/directions?engine=fossgis_osrm_car&route=40.4400,-79.9900;40.4500,-79.9500"
    )
    for path in ("/no/such/page", "/node/1", "/way/1"):
        r = client.get(path)
        assert r.status_code == 404 and "OpenStreetMap" in r.text and "Not Found" in r.text


def test_way_page_and_api(client, osm):
    with closing(db(osm)) as conn:
        way = conn.execute("SELECT way_id FROM way_tags WHERE k = 'name' AND v = 'Craig Street'").fetchone()[0]
    r = client.get(f"/way/{way}")
    assert r.status_code == 200 and "Way: Craig Street" in r.text and "highway" in r.text
    r = client.get(f"/api/0.6/way/{way}")
    assert r.status_code == 200 and '<tag k="name" v="Craig Street"/>' in r.text and "<nd ref=" in r.text


def test_map_is_read_only(client, osm):
    for path in ("/", "/search?query=hotel", "/directions?engine=fossgis_osrm_bike&route=40.44,-79.99;40.45,-79.95"):
        assert client.get(path).status_code == 200
    (status,) = [s for s in osm.status() if s.site == "map"]
    assert status.writes_since_reset == 0
    osm.reset(["map"])
    current, pristine = osm.checksums("map")
    assert current == pristine


# ---------------------------------------------------------------------------------------------
# The seed


def test_seed_is_deterministic_and_connected(tmp_path):
    def build(seed: int, where: str) -> sqlite3.Connection:
        return sqlite3.connect(SITE.database.build_snapshot(tmp_path / where, seed))

    a, b, c = build(0, "a"), build(0, "b"), build(1, "c")
    assert content_checksum(a) == content_checksum(b) != content_checksum(c)
    count = lambda table, where="1": a.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}").fetchone()[0]  # noqa: E731
    assert 250 <= count("places", "osm_type = 'node'") <= 600
    assert 1500 <= count("nodes") <= 5000 and 300 <= count("ways") <= 2000
    assert count("places", "category = 'park'") >= 8 and count("places", "category = 'university'") >= 2
    for hw in ("motorway", "primary", "secondary", "residential", "footway", "cycleway"):
        assert count("road_edges", f"highway = '{hw}'") > 0
    assert count("road_edges", "oneway = 1") > 20
    a.row_factory = sqlite3.Row
    car, _ = graph(a, "car")
    assert nx.is_strongly_connected(car)
    foot, _ = graph(a, "foot")
    assert nx.is_strongly_connected(foot)
    for conn in (a, b, c):
        conn.close()


def test_leaving_a_ramp_is_never_a_u_turn(osm):
    """Car routes that leave the motorway by an exit turn onto the road; a ramp whose last stretch points back
    along that road used to be announced as a U-turn (92 of 800 random routes)."""
    import random

    from webrl.sites.map.geo import RoadNetwork

    with closing(db(osm)) as conn:
        network = RoadNetwork(conn)
    rng = random.Random(0)
    points = list(network.coords.values())
    routes = [network.route("car", *rng.sample(points, 2)) for _ in range(300)]
    steps = [[s.kind for s in r.steps] for r in routes if r is not None]
    assert sum("ramp" in kinds for kinds in steps) > 20  # the sample does leave the motorway
    assert not any("uturn" in kinds for kinds in steps)


def test_snapping_and_matching_equal_their_plain_definitions(osm):
    """The road graph's snap (a loop over precomputed terms, remembered) is the first sorted node at the least
    haversine distance, and the search's prefix match (precomputed prefixes) is `any(w.startswith(token))`:
    both must pick exactly what the plain forms pick, or the suite's tasks would change."""
    import random

    from webrl.sites.map.geo import RoadNetwork
    from webrl.sites.map.geo import haversine as site_haversine
    from webrl.sites.map.search import MIN_PREFIX, Gazetteer, words

    with closing(db(osm)) as conn:
        network, gazetteer = RoadNetwork(conn), Gazetteer(conn)
    rng = random.Random(0)
    points = [(p.lat, p.lon) for p in gazetteer.places[:40]]
    points += [(lat + rng.uniform(-0.01, 0.01), lon + rng.uniform(-0.01, 0.01)) for lat, lon in points]
    for mode, nodes in network.mode_nodes.items():
        for lat, lon in points:
            best = min(nodes, key=lambda n: site_haversine(lat, lon, *network.coords[n]))
            expected = best, site_haversine(lat, lon, *network.coords[best])
            assert network.snap(mode, lat, lon) == expected == network.snap(mode, lat, lon), (mode, lat, lon)
    tokens = {w[:k] for p in gazetteer.places[:60] for w in words(p.display_name) for k in (3, 4, 5, len(w))}
    for p in gazetteer.places[:60]:
        for pool, prefixes in (
            (p.name_words, p.name_prefixes),
            (p.cat_words, p.cat_prefixes),
            (p.addr_words, p.addr_prefixes),
        ):
            for token in tokens:
                plain = len(token) >= MIN_PREFIX and any(w.startswith(token) for w in pool)
                assert (len(token) >= MIN_PREFIX and token in prefixes) == plain, (token, pool)
