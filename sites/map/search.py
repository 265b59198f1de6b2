"""Search, as the map's Nominatim: places by name, category and address; "<what> near <place>"
ordered by distance; plain coordinates; and geocoding of the directions form's From/To fields."""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from dataclasses import dataclass, field

from webrl.sites.map import seed_data as sd
from webrl.sites.map.geo import format_distance, haversine

STOPWORDS = {"the", "of", "and", "in", "at", "a", "an", "on", "for", "&"}
REGION_WORDS = {"pa", "pennsylvania", "united", "states", "usa", "us", "monora", "county"}
COORDS = re.compile(r"^\s*\(?\s*([-+]?\d+(?:\.\d+)?)\s*[,;\s]\s*([-+]?\d+(?:\.\d+)?)\s*\)?\s*$")
NEAR = re.compile(r"^(.+?)\s+(?:near|nearby|close to|around)\s+(.+)$", re.IGNORECASE)
LIMIT = 20
MIN_PREFIX = 4  # a token this long or longer also matches the words it begins


def words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    text = text.replace("'", "")
    return re.findall(r"[a-z0-9]+", text)


def _prefixes(pool: set[str]) -> set[str]:
    """Every prefix of MIN_PREFIX or more letters of the pool's words: `token in _prefixes(pool)` is
    `any(w.startswith(token) for w in pool)` for tokens that long, without a pass over the pool."""
    return {w[:k] for w in pool for k in range(MIN_PREFIX, len(w) + 1)}


@dataclass
class Place:
    id: int
    osm_type: str
    osm_id: int
    name: str
    category: str
    label: str
    housenumber: str | None
    street: str | None
    neighbourhood: str
    city: str
    state: str
    postcode: str
    lat: float
    lon: float
    display_name: str
    name_words: set[str] = field(default_factory=set)
    cat_words: set[str] = field(default_factory=set)
    addr_words: set[str] = field(default_factory=set)
    # each set's prefixes of MIN_PREFIX or more letters (a word's own included): what a search token may begin
    name_prefixes: set[str] = field(default_factory=set)
    cat_prefixes: set[str] = field(default_factory=set)
    addr_prefixes: set[str] = field(default_factory=set)

    @property
    def url(self) -> str:
        return f"/{self.osm_type}/{self.osm_id}"

    @property
    def is_street(self) -> bool:
        return self.category not in sd.CATEGORIES


@dataclass
class Hit:
    place: Place
    distance_m: float | None = None

    @property
    def distance(self) -> str:
        return format_distance(self.distance_m) if self.distance_m is not None else ""


@dataclass
class SearchResult:
    query: str
    kind: str  # places | nearby | coords | error
    hits: list[Hit] = field(default_factory=list)
    message: str = ""  # user-facing error, e.g. "Sorry, could not find 'xyz'"
    anchor: Place | None = None  # the place of "<what> near <place>"
    point: tuple[float, float] | None = None  # the coordinates of a coordinate search or the anchor
    what: str = ""


class Gazetteer:
    """All searchable places, loaded once per server (the database is read-only)."""

    def __init__(self, conn: sqlite3.Connection):
        extra: dict[int, list[str]] = {}
        for node_id, v in conn.execute("SELECT node_id, v FROM node_tags WHERE k IN ('cuisine', 'religion', 'sport')"):
            extra.setdefault(node_id, []).append(v.replace("_", " "))
        self.places: list[Place] = []
        for row in conn.execute("SELECT * FROM places ORDER BY id"):
            p = Place(*row)
            p.name_words = set(words(p.name))
            keywords = sd.CATEGORIES.get(p.category, {}).get("keywords", ("street", "road"))
            p.cat_words = set(
                words(
                    " ".join(
                        [
                            p.label,
                            p.category.replace("_", " "),
                            *keywords,
                            *(extra.get(p.osm_id, []) if p.osm_type == "node" else []),
                        ]
                    )
                )
            )
            p.addr_words = (
                set(words(" ".join(filter(None, [p.housenumber, p.street, p.neighbourhood, p.city, p.postcode]))))
                | REGION_WORDS
            )
            p.name_prefixes, p.cat_prefixes, p.addr_prefixes = map(_prefixes, (p.name_words, p.cat_words, p.addr_words))
            self.places.append(p)
        self.by_osm = {(p.osm_type, p.osm_id): p for p in self.places}

    # -- matching ------------------------------------------------------------------------------

    @staticmethod
    def _match(token: str, pool: set[str], prefixes: set[str]) -> bool:
        """The token is a word of the pool, its plural, or (MIN_PREFIX letters or more) the beginning of one."""
        if token in pool:
            return True
        if token.endswith("s") and token[:-1] in pool:
            return True
        if token.endswith("es") and token[:-2] in pool:
            return True
        return len(token) >= MIN_PREFIX and token in prefixes

    def _score(self, p: Place, tokens: list[str], phrase: str, address: bool = True) -> float | None:
        score = 0.0
        for t in tokens:
            if self._match(t, p.name_words, p.name_prefixes):
                score += 3
            elif self._match(t, p.cat_words, p.cat_prefixes):
                score += 2
            elif address and self._match(t, p.addr_words, p.addr_prefixes):
                score += 1
            else:
                return None
        name = " ".join(words(p.name))
        if name == phrase:
            score += 20
        elif name.startswith(phrase):
            score += 6
        if p.category in ("university", "airport", "train_station", "hospital", "museum", "stadium", "park"):
            score += 1.5
        if not p.is_street:
            score += 1
        return score

    def find(self, text: str, address: bool = True, limit: int = LIMIT) -> list[Place]:
        all_tokens = words(text)
        tokens = [t for t in all_tokens if t not in STOPWORDS] or all_tokens
        if not tokens:
            return []
        phrase = " ".join(all_tokens)
        scored = []
        for p in self.places:
            s = self._score(p, tokens, phrase, address)
            if s is not None:
                scored.append((-s, p.name, p.id, p))
        scored.sort(key=lambda item: item[:3])
        return [item[3] for item in scored[:limit]]

    # -- the search box ------------------------------------------------------------------------

    def search(self, query: str) -> SearchResult:
        query = query.strip()
        result = SearchResult(query=query, kind="places")
        coords = parse_coords(query)
        if coords == "invalid":
            result.kind, result.message = "error", invalid_coords_message(query)
            return result
        if coords:
            result.kind, result.point = "coords", coords
            result.hits = self.nearest(*coords, limit=5)
            return result
        near = NEAR.match(query)
        if near:
            what, where = near.group(1).strip(), near.group(2).strip()
            point = parse_coords(where)
            anchor = None
            if point == "invalid":
                result.kind, result.message = "error", invalid_coords_message(where)
                return result
            if not point:
                found = self.find(where, limit=1)
                if not found:
                    result.kind, result.message = "error", f"Sorry, could not find '{where}'"
                    return result
                anchor = found[0]
                point = (anchor.lat, anchor.lon)
            result.kind, result.anchor, result.point, result.what = "nearby", anchor, point, what
            candidates = [p for p in self.find(what, address=False, limit=len(self.places)) if p is not anchor]
            hits = [Hit(p, haversine(*point, p.lat, p.lon)) for p in candidates if not p.is_street]
            hits.sort(key=lambda h: (h.distance_m, h.place.name))
            result.hits = hits[:LIMIT]
            if not result.hits:
                result.kind, result.message = (
                    "error",
                    f"Sorry, could not find '{what}' near {anchor.name if anchor else where}",
                )
            return result
        result.hits = [Hit(p) for p in self.find(query)]
        if not result.hits:
            result.kind, result.message = "error", f"Sorry, could not find '{query}'"
        return result

    def nearest(self, lat: float, lon: float, limit: int = 5) -> list[Hit]:
        hits = [Hit(p, haversine(lat, lon, p.lat, p.lon)) for p in self.places if not p.is_street]
        hits.sort(key=lambda h: (h.distance_m, h.place.id))
        return hits[:limit]

    def at(self, lat: float, lon: float) -> Place | None:
        """A place whose coordinates, to 4 decimals (as route URLs carry them), are exactly these."""
        key = (round(lat, 4), round(lon, 4))
        for p in self.places:
            if (round(p.lat, 4), round(p.lon, 4)) == key and not p.is_street:
                return p
        return None

    def geocode(self, text: str) -> tuple[tuple[float, float] | None, str, str]:
        """A From/To field -> ((lat, lon), label, error message). Accepts place names and 'lat, lon'."""
        text = text.strip()
        if not text:
            return None, "", "Please enter a start and an end point"
        coords = parse_coords(text)
        if coords == "invalid":
            return None, "", invalid_coords_message(text)
        if coords:
            return coords, text, ""
        found = self.find(text, limit=1)
        if not found:
            return None, "", f"Sorry, could not find '{text}'"
        return (found[0].lat, found[0].lon), found[0].name, ""


def parse_coords(text: str) -> tuple[float, float] | str | None:
    """'40.44, -79.99' -> (40.44, -79.99); out of range -> 'invalid'; not coordinates -> None."""
    m = COORDS.match(text)
    if not m:
        return None
    lat, lon = float(m.group(1)), float(m.group(2))
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        return "invalid"
    return lat, lon


def invalid_coords_message(text: str) -> str:
    return (
        f"Sorry, '{text}' is not a valid location: latitude must be between -90 and 90"
        " and longitude between -180 and 180"
    )
