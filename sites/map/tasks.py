"""Task templates over the map (see webrl.tasks.templates). The map is read-only, so its tasks retrieve
information (routes, nearby places, place facts), navigate (url_match on a route URL) or leave the
directions panel in a state that program_html checks. Every answer is computed with the site's own
search index (`Gazetteer`), road graph (`RoadNetwork`) and formatting over the pristine data, and every
place a task names is one the site's search resolves to that very place."""

from __future__ import annotations

import random
from dataclasses import dataclass
from urllib.parse import urlencode

from webrl.sites.map.app import route_param
from webrl.sites.map.geo import ENGINE_LABELS, ENGINES, RoadNetwork, Route, format_time, haversine
from webrl.sites.map.search import Gazetteer, Place, parse_coords
from webrl.tasks.script import click, done, search, select, type_
from webrl.tasks.templates import Data, Instance, TaskTemplate, html_eval, string_eval, unachievable, url_eval

N = 8  # instances per template
HOME = "__MAP__/"
MODE_WORDS = {"fossgis_osrm_car": "driving", "fossgis_osrm_bike": "cycling", "fossgis_osrm_foot": "walking"}
ENGINE_KEYS = list(ENGINE_LABELS)  # the order of the routing-engine <select>
CAR, BIKE, FOOT = ENGINE_KEYS
# Categories for "nearest X" tasks: (what the intent calls it, what to type before " near ").
NEARBY = {
    "cafe": ("cafe", "cafe"), "hospital": ("hospital", "hospital"), "museum": ("museum", "museum"),
    "library": ("library", "library"), "pharmacy": ("pharmacy", "pharmacy"), "hotel": ("hotel", "hotel"),
    "supermarket": ("supermarket", "supermarket"), "bank": ("bank", "bank"), "school": ("school", "school"),
    "bakery": ("bakery", "bakery"), "pub": ("pub", "pub"), "fuel": ("gas station", "gas station"),
    "post_office": ("post office", "post office"), "cinema": ("cinema", "cinema"),
    "fire_station": ("fire station", "fire station"), "police": ("police station", "police"),
}  # fmt: skip
# Places well outside the mapped region (unachievable routes), and words for places that do not exist.
FAR_AWAY = ("Philadelphia City Hall", "Harrisburg Transportation Center", "Cleveland Hopkins International Airport",
            "Baltimore Penn Station", "Niagara Falls State Park", "Erie Bayfront Convention Center",
            "Gettysburg National Military Park", "Columbus Zoo", "Buffalo Niagara International Airport",
            "Scranton Electric City Trolley Museum")  # fmt: skip
FAKE_PREFIXES = ("Riverton", "Monora", "Kessler", "East Haven", "Southbank", "Duval")
FAKE_KINDS = ("Opera House", "Ice Rink", "Planetarium", "Casino", "Bowling Lanes", "Observatory", "Water Park",
              "Golf Club", "Yacht Club", "Ski Lodge")  # fmt: skip
FAKE_FACTS = ("zip code", "phone number", "street address", "opening hours")


@dataclass
class MapData:
    gazetteer: Gazetteer
    network: RoadNetwork
    places: list[Place]  # points of interest whose name the site's search and geocoder resolve to them


_cache: dict = {}


def _map(data: Data) -> MapData:
    """The site's own search index and road graph over the pristine database (built once per Data)."""
    if _cache.get("data") is not data:
        conn = data.connections["map"]
        gazetteer, network = Gazetteer(conn), RoadNetwork(conn)
        places = [p for p in gazetteer.places if p.osm_type == "node" and not p.is_street and _resolves(gazetteer, p)]
        _cache.update(data=data, map=MapData(gazetteer, network, places))
    return _cache["map"]


def _resolves(g: Gazetteer, p: Place) -> bool:
    """Its name is safe in an action string, the search box lists it first and the directions form finds it."""
    if any(c in p.name for c in '"{}=\\'):
        return False
    result = g.search(p.name)
    found = g.find(p.name, limit=1)
    return result.kind == "places" and bool(result.hits) and result.hits[0].place is p and found[0] is p


def _tag(data: Data, node_id: int, key: str) -> str | None:
    rows = data.rows("map", "SELECT v FROM node_tags WHERE node_id = ? AND k = ?", (node_id, key))
    return rows[0]["v"] if rows else None


def _task(**fields) -> Instance:
    """An instance without sign-in: WebArena's map tasks have no storage state."""
    return Instance(login=False, **fields)


def _search(text: str) -> str:
    return search("placeholder=Search", text)


def _open_result(p: Place) -> str:
    return click(p.display_name)


def _directions(a: Place, b: Place, engine: str, opener: str = "directions") -> list[str]:
    """From the home page: open the directions form (clicking `opener`), fill From and To, choose the engine,
    press Go."""
    steps = [click(opener), type_("placeholder=From", a.name), type_("placeholder=To", b.name)]
    if engine != CAR:
        steps.append(_engine(CAR, engine))
    return steps + [click("Go")]


def _engine(current: str, wanted: str) -> str:
    return select(ENGINE_LABELS[current], ENGINE_LABELS[wanted])


def _route(m: MapData, engine: str, a: Place, b: Place) -> Route | None:
    """The route the directions page shows: between the ends as its URL carries them (4 decimals)."""
    start, end = (parse_coords(end) for end in route_param((a.lat, a.lon), (b.lat, b.lon)).split(";"))
    return m.network.route(ENGINES[engine], start, end)


def _pairs(m: MapData, key: str, n: int, engine: str, lo_m: float = 1500, hi_m: float = 1e9):
    """n deterministic (a, b, route) pairs of distinct places between lo_m and hi_m apart, with a route."""
    rng, out, seen = random.Random(key), [], set()
    for _ in range(2000):
        if len(out) == n:
            break
        a, b = rng.sample(m.places, 2)
        if (a.id, b.id) in seen or not lo_m <= haversine(a.lat, a.lon, b.lat, b.lon) <= hi_m:
            continue
        seen.add((a.id, b.id))
        route = _route(m, engine, a, b)
        if route is not None and route.duration_s >= 120:
            out.append((a, b, route))
    return out


def _nearest(m: MapData, anchor: Place, category: str) -> Place | None:
    """The nearest place of a category (straight line), when the site's "<what> near <anchor>" search
    lists it first and the runner-up is clearly farther."""
    word = NEARBY[category][1]
    ranked = sorted(
        (haversine(anchor.lat, anchor.lon, p.lat, p.lon), p.id, p)
        for p in m.gazetteer.places
        if p.category == category and p is not anchor
    )
    if len(ranked) < 2 or ranked[1][0] < 1.15 * ranked[0][0]:
        return None
    result = m.gazetteer.search(f"{word} near {anchor.name}")
    if (
        result.kind != "nearby"
        or result.anchor is not anchor
        or not result.hits
        or result.hits[0].place is not ranked[0][2]
    ):
        return None
    return ranked[0][2]


# -- routes: times and distances ---------------------------------------------------------------


def _route_fact(
    data: Data, key: str, engine: str, fact: str, *, on_directions: bool = False, **bounds: int
) -> list[Instance]:
    """Tasks asking for one route's `fact` ("time", H:MM, or "distance") as the directions panel shows it;
    `on_directions`: the task starts on the directions page, so the solution skips the click that opens it."""
    m = _map(data)
    start_url, skip = ("__MAP__/directions", 1) if on_directions else (HOME, 0)
    return [
        _task(
            values={"start": a.name, "end": b.name},
            start_url=start_url,
            eval=string_eval("must_include", [getattr(r, fact)]),
            cheat=[*_directions(a, b, engine)[skip:], done(getattr(r, fact))],
        )
        for a, b, r in _pairs(m, key, data.quota(N), engine, **bounds)
    ]


def drive_time(data: Data) -> list[Instance]:
    """The driving time between two places, as the directions panel shows it (H:MM)."""
    return _route_fact(data, "map.drive_time", CAR, "time")


def walk_time(data: Data) -> list[Instance]:
    """The walking time between two places, as the directions panel shows it (H:MM)."""
    return _route_fact(data, "map.walk_time", FOOT, "time", on_directions=True, hi_m=5000)


def bike_distance(data: Data) -> list[Instance]:
    """The cycling distance between two places, as the directions panel shows it."""
    return _route_fact(data, "map.bike_distance", BIKE, "distance", hi_m=9000)


def drive_distance(data: Data) -> list[Instance]:
    """The driving distance between two places, as the directions panel shows it."""
    return _route_fact(data, "map.drive_distance", CAR, "distance", lo_m=3000)


def compare_modes(data: Data) -> list[Instance]:
    """The time of one trip by car, by bicycle and on foot (three routes, same From/To)."""
    m = _map(data)
    out = []
    for a, b, car in _pairs(m, "map.compare_modes", data.quota(N), CAR, hi_m=4000):
        bike, walk = _route(m, BIKE, a, b), _route(m, FOOT, a, b)
        if bike is None or walk is None or len({car.time, bike.time, walk.time}) < 3:
            continue
        out.append(
            _task(
                values={"start": a.name, "end": b.name},
                start_url=HOME,
                eval=string_eval("must_include", [car.time, bike.time, walk.time]),
                cheat=[
                    *_directions(a, b, CAR),
                    _engine(CAR, BIKE),
                    click("Go"),
                    _engine(BIKE, FOOT),
                    click("Go"),
                    done(f"By car {car.time}, by bicycle {bike.time}, on foot {walk.time}"),
                ],
            )
        )
    return out


def walk_then_drive(data: Data) -> list[Instance]:
    """The total time of walking from A to B and then driving from B to C (H:MM)."""
    m = _map(data)
    out = []
    for a, b, walk in _pairs(m, "map.walk_then_drive", data.quota(3 * N), FOOT, hi_m=3000):
        rng = random.Random(f"map.walk_then_drive.{a.id}.{b.id}")
        c = rng.choice([p for p in m.places if p not in (a, b) and haversine(b.lat, b.lon, p.lat, p.lon) > 2000])
        car = _route(m, CAR, b, c)
        if car is None or len(out) == data.quota(N):
            continue
        total = walk.duration_s + car.duration_s
        if round(total / 60) != round(walk.duration_s / 60) + round(car.duration_s / 60):
            continue  # the sum of the two times shown must be the total
        answer = format_time(total)
        out.append(
            _task(
                values={"a": a.name, "b": b.name, "c": c.name},
                start_url=HOME,
                eval=string_eval("must_include", [answer]),
                cheat=[
                    *_directions(a, b, FOOT),
                    type_("placeholder=From", b.name),
                    type_("placeholder=To", c.name),
                    _engine(FOOT, CAR),
                    click("Go"),
                    done(answer, f"walking {walk.time} + driving {car.time}"),
                ],
            )
        )
    return out


def closest_of_three(data: Data) -> list[Instance]:
    """Of three destinations, the one with the shortest (and quickest) drive from an origin."""
    m = _map(data)
    rng, out = random.Random("map.closest_of_three"), []
    for _ in range(1000):
        if len(out) == data.quota(N):
            break
        o, *dests = rng.sample(m.places, 4)
        if any(x.name in y.name for x in dests for y in dests if x is not y):
            continue
        routes = [_route(m, CAR, o, d) for d in dests]
        if any(r is None or r.distance_m < 1000 for r in routes):
            continue
        ranked = sorted(zip(routes, dests), key=lambda rd: rd[0].distance_m)
        (r0, best), (r1, _) = ranked[0], ranked[1]
        if r1.distance_m < 1.25 * r0.distance_m or min(r.duration_s for r, _ in ranked[1:]) <= r0.duration_s:
            continue
        a, b, c = dests
        steps = [*_directions(o, a, CAR)]
        for d in (b, c):
            steps += [type_("placeholder=To", d.name), click("Go")]
        note = "; ".join(f"{d.name}: {r.distance} ({r.time})" for r, d in zip(routes, dests))
        out.append(
            _task(
                values={"origin": o.name, "a": a.name, "b": b.name, "c": c.name},
                start_url=HOME,
                eval=string_eval("must_include", [best.name]),
                cheat=[*steps, done(best.name, note)],
            )
        )
    return out


def first_road(data: Data) -> list[Instance]:
    """The road a driving route starts on (the first turn-by-turn instruction)."""
    m = _map(data)
    out = []
    for a, b, r in _pairs(m, "map.first_road", data.quota(3 * N), CAR):
        first = r.steps[0].instruction
        if len(out) < data.quota(N) and first.startswith("Start on "):
            road = first.removeprefix("Start on ")
            out.append(
                _task(
                    values={"start": a.name, "end": b.name},
                    start_url=HOME,
                    eval=string_eval("must_include", [road]),
                    cheat=[*_directions(a, b, CAR), done(road)],
                )
            )
    return out


# -- nearby ------------------------------------------------------------------------------------


def nearest_category(data: Data) -> list[Instance]:
    """The name of the place of a category nearest to a given place ("<what> near <place>")."""
    m = _map(data)
    rng, out, seen = random.Random("map.nearest_category"), [], set()
    categories = sorted(NEARBY)
    for _ in range(500):
        if len(out) == data.quota(2 * N):
            break
        anchor, category = rng.choice(m.places), rng.choice(categories)
        if (anchor.id, category) in seen or anchor.category == category:
            continue
        seen.add((anchor.id, category))
        best = _nearest(m, anchor, category)
        if best is None:
            continue
        word, typed = NEARBY[category]
        out.append(
            _task(
                values={"category": word, "place": anchor.name},
                start_url=HOME,
                eval=string_eval("must_include", [best.name]),
                cheat=[_search(f"{typed} near {anchor.name}"), done(best.name)],
            )
        )
    return out


def nearest_walk_distance(data: Data) -> list[Instance]:
    """The nearest place of a category and the walking distance to it."""
    m = _map(data)
    rng, out, seen = random.Random("map.nearest_walk_distance"), [], set()
    categories = sorted(NEARBY)
    resolvable = {p.id for p in m.places}
    for _ in range(800):
        if len(out) == data.quota(N):
            break
        anchor, category = rng.choice(m.places), rng.choice(categories)
        if (anchor.id, category) in seen or anchor.category == category:
            continue
        seen.add((anchor.id, category))
        best = _nearest(m, anchor, category)
        if best is None or best.id not in resolvable:
            continue
        walk = _route(m, FOOT, anchor, best)
        if walk is None or walk.distance_m < 100:
            continue
        word, typed = NEARBY[category]
        out.append(
            _task(
                values={"category": word, "place": anchor.name},
                start_url=HOME,
                eval=string_eval("must_include", [best.name, walk.distance]),
                cheat=[
                    _search(f"{typed} near {anchor.name}"),
                    *_directions(anchor, best, FOOT, "title=Find directions between two points"),
                    done(f"{best.name}, {walk.distance} on foot"),
                ],
            )
        )
    return out


# -- place facts -------------------------------------------------------------------------------


def postcode(data: Data) -> list[Instance]:
    """A place's zip code (in its search result's address)."""
    return [
        _task(
            values={"place": p.name},
            start_url=HOME,
            eval=string_eval("exact_match", p.postcode),
            cheat=[_search(p.name), done(p.postcode)],
        )
        for p in data.sample("map.postcode", _map(data).places, N, "shuffled")
    ]


def street_address(data: Data) -> list[Instance]:
    """A place's house number and street."""
    places = [p for p in _map(data).places if p.housenumber and p.street]
    return [
        _task(
            values={"place": p.name},
            start_url=HOME,
            eval=string_eval("must_include", [p.housenumber, p.street]),
            cheat=[_search(p.name), done(f"{p.housenumber} {p.street}")],
        )
        for p in data.sample("map.street_address", places, N, "shuffled")
    ]


def neighbourhood(data: Data) -> list[Instance]:
    """The neighbourhood a place is in."""
    return [
        _task(
            values={"place": p.name},
            start_url=HOME,
            eval=string_eval("must_include", [p.neighbourhood]),
            cheat=[_search(p.name), done(p.neighbourhood)],
        )
        for p in data.sample("map.neighbourhood", _map(data).places, N, "shuffled")
    ]


def _dd(value: float) -> str | None:
    """The coordinate to 3 decimals, when both the search list (5 decimals) and the place page (7) start so."""
    seven = f"{value:.7f}"
    short = seven[: seven.index(".") + 4]
    return short if f"{value:.5f}".startswith(short) else None


def coordinates(data: Data) -> list[Instance]:
    """A place's latitude and longitude in decimal degrees."""
    places = [p for p in _map(data).places if _dd(p.lat) and _dd(p.lon)]
    return [
        _task(
            values={"place": p.name},
            start_url=HOME,
            eval=string_eval("must_include", [_dd(p.lat), _dd(p.lon)]),
            cheat=[_search(p.name), done(f"{_dd(p.lat)}, {_dd(p.lon)}")],  # VAB: each must be a whole token
        )
        for p in data.sample("map.coordinates", places, N, "shuffled")
    ]


def last_editor(data: Data) -> list[Instance]:
    """The OSM user who made the latest version of a place's node."""
    out = []
    for p in data.sample("map.last_editor", _map(data).places, N, "shuffled"):
        user = data.one("map", "SELECT user FROM nodes WHERE id = ?", (p.osm_id,))["user"]
        out.append(
            _task(
                values={"place": p.name},
                start_url=HOME,
                eval=string_eval("must_include", [user]),
                cheat=[_search(p.name), _open_result(p), done(user)],
            )
        )
    return out


def _tag_template(key: str, tag: str, answer=lambda v: v, rule: str = "must_include"):
    def instances(data: Data) -> list[Instance]:
        m = _map(data)
        tagged = [(p, _tag(data, p.osm_id, tag)) for p in m.places]
        return [
            _task(
                values={"place": p.name},
                start_url=HOME,
                eval=string_eval(rule, [answer(v)]),
                cheat=[_search(p.name), _open_result(p), done(answer(v))],
            )
            for p, v in data.sample(key, [(p, v) for p, v in tagged if v], N, "shuffled")
        ]

    instances.__doc__ = f"A place's {tag} tag, read on its page."
    return instances


def place_at_coordinates(data: Data) -> list[Instance]:
    """The place found at given coordinates (searching the coordinates lists the nearest places)."""
    m = _map(data)
    out = []
    for p in data.sample("map.place_at_coordinates", m.places, 4 * N, "shuffled"):
        lat, lon = f"{p.lat:.5f}", f"{p.lon:.5f}"
        hits = m.gazetteer.search(f"{lat}, {lon}").hits
        if len(out) < data.quota(N) and hits and hits[0].place is p and len(hits) > 1 and hits[1].distance_m > 60:
            out.append(
                _task(
                    values={"lat": lat, "lon": lon},
                    start_url=HOME,
                    eval=string_eval("must_include", [p.name]),
                    cheat=[_search(f"{lat}, {lon}"), done(p.name)],
                )
            )
    return out


# -- navigation and the directions panel (url_match, program_html) ------------------------------


def place_page(data: Data) -> list[Instance]:
    """The agent ends on the place's own page (its heading names it, with its node id)."""
    return [
        _task(
            values={"place": p.name},
            start_url=HOME,
            eval=html_eval(
                (
                    "last",
                    "document.querySelector('#sidebar_content h2').outerText",
                    "must_include",
                    [f"{p.name} ({p.osm_id})"],
                )
            ),
            cheat=[_search(p.name), _open_result(p), done("")],
        )
        for p in data.sample("map.place_page", _map(data).places, N, "shuffled")
    ]


def directions_form(data: Data) -> list[Instance]:
    """The directions panel ends showing the route from A to B with the right engine (From/To/engine/summary)."""
    m = _map(data)
    out = []
    for k, engine in enumerate(ENGINE_KEYS * 3):
        pairs = _pairs(m, f"map.directions_form.{k}", 1, engine, hi_m=6000 if engine == FOOT else 1e9)
        if not pairs or len(out) == data.quota(N):
            continue
        a, b, r = pairs[0]
        out.append(
            _task(
                values={"start": a.name, "end": b.name, "mode": MODE_WORDS[engine]},
                start_url=HOME,
                eval=html_eval(
                    (
                        "last",
                        'document.querySelector("div#content select.routing_engines").selectedIndex',
                        "exact_match",
                        str(ENGINE_KEYS.index(engine)),
                    ),
                    ("last", "document.querySelector('[name=\"route_from\"]').value", "must_include", [a.name]),
                    ("last", "document.querySelector('[name=\"route_to\"]').value", "must_include", [b.name]),
                    (
                        "last",
                        "document.querySelector('#routing_summary').outerText",
                        "must_include",
                        [f"Distance: {r.distance}"],
                    ),
                ),
                cheat=[*_directions(a, b, engine), done("")],
            )
        )
    return out


def directions_url(data: Data) -> list[Instance]:
    """From a place's page, the agent ends on the route URL to another place (engine and both ends)."""
    m = _map(data)
    out = []
    here = [p for p in m.places if m.gazetteer.at(p.lat, p.lon) is p]
    for k, engine in enumerate(ENGINE_KEYS * 4):
        rng = random.Random(f"map.directions_url.{k}")
        a = rng.choice(here)
        b = rng.choice([p for p in m.places if p is not a and 1500 <= haversine(a.lat, a.lon, p.lat, p.lon) <= 6000])
        if len(out) == data.quota(N) or _route(m, engine, a, b) is None:
            continue
        url = (
            f"__MAP__/directions?{urlencode({'engine': engine, 'route': route_param((a.lat, a.lon), (b.lat, b.lon))})}"
        )
        steps = [click("Directions from here"), type_("placeholder=To", b.name)]
        if engine != CAR:
            steps.append(_engine(CAR, engine))
        out.append(
            _task(
                values={"start": a.name, "end": b.name, "mode": MODE_WORDS[engine]},
                start_url=f"__MAP__/node/{a.osm_id}",
                eval=url_eval(url),
                cheat=[*steps, click("Go"), done("")],
            )
        )
    return out


# -- unachievable ------------------------------------------------------------------------------


def far_route(data: Data) -> list[Instance]:
    """A route to a place outside the mapped region: the map cannot find it, the answer is N/A."""
    m = _map(data)
    far = [f for f in FAR_AWAY if m.gazetteer.search(f).kind == "error"]
    starts = data.sample("map.far_route", m.places, len(far), "shuffled")
    return [
        unachievable(
            {"start": p.name, "end": f},
            HOME,
            f"{f} is outside the mapped region: the map has no such place, so no route",
            [_search(f)],
            login=False,
        )
        for p, f in zip(starts, far)
    ]


def missing_place(data: Data) -> list[Instance]:
    """A fact about a place that does not exist on the map: the answer is N/A."""
    m = _map(data)
    rng = random.Random("map.missing_place")
    names = [f"{a} {b}" for a in FAKE_PREFIXES for b in FAKE_KINDS]
    rng.shuffle(names)
    fakes = [n for n in names if m.gazetteer.search(n).kind == "error"][: data.quota(N)]
    return [
        unachievable(
            {"fact": FAKE_FACTS[k % len(FAKE_FACTS)], "place": name},
            HOME,
            f"There is no {name} on the map",
            [_search(name)],
            login=False,
        )
        for k, name in enumerate(fakes)
    ]


TEMPLATES = [
    TaskTemplate("map.drive_time", ("map",), "How long does it take to drive from {start} to {end}?", drive_time),
    TaskTemplate("map.walk_time", ("map",), "How long does it take to walk from {start} to {end}?", walk_time),
    TaskTemplate("map.bike_distance", ("map",), "What is the cycling distance from {start} to {end}?", bike_distance),
    TaskTemplate("map.drive_distance", ("map",), "How far is {end} from {start} by car?", drive_distance),
    TaskTemplate(
        "map.compare_modes",
        ("map",),
        "How long does it take to get from {start} to {end} by car, by bicycle and on foot?",
        compare_modes,
    ),
    TaskTemplate(
        "map.walk_then_drive",
        ("map",),
        "What is the total time needed to first walk from {a} to {b} and then drive to {c}? Answer in H:MM.",
        walk_then_drive,
    ),
    TaskTemplate(
        "map.closest_of_three",
        ("map",),
        "Which is the shortest drive from {origin}: {a}, {b} or {c}?",
        closest_of_three,
    ),
    TaskTemplate(
        "map.first_road",
        ("map",),
        "When driving from {start} to {end}, which road does the route start on?",
        first_road,
    ),
    TaskTemplate("map.nearest_category", ("map",), "What is the closest {category} to {place}?", nearest_category),
    TaskTemplate(
        "map.nearest_walk_distance",
        ("map",),
        "Where is the nearest {category} to {place}, and what is the walking distance to it?",
        nearest_walk_distance,
    ),
    TaskTemplate("map.postcode", ("map",), "What is the zip code of {place}?", postcode),
    TaskTemplate("map.street_address", ("map",), "What is the street address of {place}?", street_address),
    TaskTemplate("map.neighbourhood", ("map",), "In which neighbourhood is {place}?", neighbourhood),
    TaskTemplate("map.coordinates", ("map",), "Tell me the coordinates of {place} in DD format.", coordinates),
    TaskTemplate("map.last_editor", ("map",), "Which OpenStreetMap user last edited {place}?", last_editor),
    TaskTemplate(
        "map.phone",
        ("map",),
        "What is the phone number of {place}?",
        _tag_template("map.phone", "phone", lambda v: v.removeprefix("+1 ")),
    ),
    TaskTemplate(
        "map.opening_hours",
        ("map",),
        "What are the opening hours of {place}?",
        _tag_template("map.opening_hours", "opening_hours", rule="fuzzy_match"),
    ),
    TaskTemplate(
        "map.cuisine",
        ("map",),
        "What kind of cuisine does {place} serve?",
        _tag_template("map.cuisine", "cuisine", lambda v: v.replace("_", " ")),
    ),
    TaskTemplate(
        "map.place_at_coordinates", ("map",), "What place is at latitude {lat}, longitude {lon}?", place_at_coordinates
    ),
    TaskTemplate("map.place_page", ("map",), "Pull up the description page of {place} on the map.", place_page),
    TaskTemplate("map.directions_form", ("map",), "Get directions from {start} to {end} for {mode}.", directions_form),
    TaskTemplate("map.directions_url", ("map",), "Show me the {mode} route from {start} to {end}.", directions_url),
    TaskTemplate("map.far_route", ("map",), "How long does it take to drive from {start} to {end}?", far_route),
    TaskTemplate("map.missing_place", ("map",), "What is the {fact} of {place}?", missing_place),
]
