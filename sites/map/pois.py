"""Points of interest for the map's seed: landmarks at fixed spots, then shops, restaurants and
services spread along the streets (busier neighbourhoods and main roads get more), with their
addresses (the nearest street, a house number) and Nominatim-style display names."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

from webrl.sites.map import seed_data as sd

BUSY = {"Downtown": 4, "Oakfield": 4, "Southbank Flats": 3, "Foundry Row": 3, "Warehouse District": 3,
        "East Haven": 3, "Elmwood": 3, "Maple Hill": 2, "Bellfield": 2}  # fmt: skip
COMMERCIAL = {"restaurant", "cafe", "fast_food", "bar", "pub", "hotel", "bank", "pharmacy", "clothes",
              "books", "bakery", "gallery", "cinema", "theatre", "convenience"}  # fmt: skip
MUSEUM_TOPICS = ("Glass and Ceramics", "Riverboats", "Local History", "Photography", "Toys and Games",
                 "Railroading", "Industrial Design", "Folk Music")  # fmt: skip
SAINTS = ("Paul", "Stanislaus", "Mary", "Patrick", "Anne", "Joseph", "Benedict", "Andrew", "Brigid", "Nicholas")
# Categories whose places are named by a single pattern (no random choice among patterns).
NAME_PATTERNS = {
    "library": "Riverton Public Library - {hood}", "dentist": "{last} Family Dentistry", "pharmacy": "{hood} Pharmacy",
    "bank": "{last} Savings Bank", "police": "Riverton Police Zone {n}", "fuel": "{last} Gas & Service",
    "cinema": "{word} Cinemas", "supermarket": "{last}'s Market", "convenience": "{hood} Mini Mart",
}  # fmt: skip
HOURS = ("Mo-Fr 07:00-19:00; Sa-Su 08:00-17:00", "Mo-Su 11:00-22:00", "Mo-Th 11:00-21:00; Fr-Sa 11:00-23:00",
         "Mo-Sa 09:00-21:00; Su 10:00-18:00", "24/7", "Tu-Su 10:00-17:00", "Mo-Fr 08:00-17:00")  # fmt: skip


def make_pois(b, rng: random.Random) -> Iterator[tuple]:
    """Yield (name, category, (row, col), extra tags, street, house number)."""
    for name, category, (row, col), tags in sd.LANDMARKS:
        street, number = nearest_street(b, row, col)
        yield name, category, (row, col), dict(tags), street, number

    used = {name for name, *_ in sd.LANDMARKS}
    # candidate street edges with their weight per kind of place
    edges = []
    for (x, y), e in sorted(b.edges.items(), key=lambda item: (b.pos[item[0][0]], b.pos[item[0][1]])):
        if e["highway"] in ("primary", "secondary", "residential") and e["name"] and not e["bridge"]:
            (r1, c1), (r2, c2) = b.pos[x], b.pos[y]
            hood = sd.NEIGHBOURHOODS[b.neighbourhood_of((r1 + r2) / 2, (c1 + c2) / 2)][0]
            edges.append(((r1, c1), (r2, c2), e, hood))
    weights = {
        True: [BUSY.get(hood, 1) * (2 if e["highway"] != "residential" else 1) for _, _, e, hood in edges],
        False: [1 + (e["highway"] == "residential") for _, _, e, hood in edges],
    }
    counters: dict[str, int] = {}
    taken: set[tuple[int, int]] = set()
    for category, spec in sd.CATEGORIES.items():
        for _ in range(spec["count"]):
            for _attempt in range(30):
                (r1, c1), (r2, c2), e, hood = rng.choices(edges, weights[category in COMMERCIAL])[0]
                t = rng.uniform(0.15, 0.85)
                side = rng.choice((-1, 1)) * rng.uniform(0.06, 0.1)
                row, col = r1 + (r2 - r1) * t, c1 + (c2 - c1) * t
                if r1 == r2:
                    row += side
                else:
                    col += side
                slot = (round(row * 20), round(col * 20))
                if slot not in taken:
                    break
            taken.add(slot)
            counters[category] = counters.get(category, 0) + 1
            name, tags = poi_name(category, hood, rng, b.fake, counters[category], used)
            used.add(name)
            number = house_number(row, col, r1 == r2)
            if rng.random() < 0.6 and category not in ("parking", "police", "fire_station"):
                tags["opening_hours"] = rng.choice(HOURS)
            if rng.random() < 0.5:
                tags["phone"] = f"+1 412-555-{rng.randint(100, 9999):04d}"
            yield name, category, (round(row, 4), round(col, 4)), tags, e["name"], number


def poi_name(category: str, hood: str, rng: random.Random, fake, n: int, used: set[str]) -> tuple[str, dict]:
    """A name and extra tags for a place of `category` in neighbourhood `hood`."""
    for attempt in range(40):
        tags: dict[str, str] = {}
        chains = sd.CHAINS.get(category)
        word, noun, last = rng.choice(sd.WORDS), rng.choice(sd.NOUNS), fake.last_name()
        if chains and rng.random() < 0.55:
            name = rng.choice(chains)
            tags["brand"] = name
            return name, tags  # chains repeat on purpose
        if category in NAME_PATTERNS:
            name = NAME_PATTERNS[category].format(hood=hood, last=last, word=word, n=n)
        elif category == "restaurant":
            cuisine, suffixes, prefixes = rng.choice(sd.CUISINES)
            tags["cuisine"] = cuisine
            name = rng.choice((f"{rng.choice(prefixes)} {rng.choice(suffixes)}", f"{last}'s {rng.choice(suffixes)}"))
        elif category == "cafe":
            name = rng.choice(
                (f"{word} {noun} Coffee", f"{last} Coffee Roasters", f"Café {noun}", f"The {noun} Espresso Bar")
            )
            tags["cuisine"] = "coffee_shop"
        elif category == "fast_food":
            name = rng.choice((f"{word} {noun} Grill", f"{last}'s Hot Dogs", f"{word} Fries"))
            tags["cuisine"] = rng.choice(("burger", "sandwich", "hot_dog", "chicken"))
        elif category == "bar":
            name = rng.choice((f"The {word} {noun}", f"{noun} Bar", f"{word} Lounge"))
        elif category == "pub":
            name = rng.choice(
                (f"The {word} {noun} Pub", f"{last}'s Tavern", f"{noun} & {rng.choice(sd.NOUNS)} Alehouse")
            )
        elif category == "hotel":
            name = rng.choice((f"Hotel {word}", f"The {last} Hotel", f"{hood} Inn & Suites", f"Riverton {noun} Hotel"))
            tags["stars"] = str(rng.randint(2, 4))
        elif category == "museum":
            name = rng.choice((f"Museum of {rng.choice(MUSEUM_TOPICS)}", f"{hood} Historical Society Museum"))
        elif category == "gallery":
            name = rng.choice((f"{last} Gallery", f"{word} Gallery of Contemporary Art"))
        elif category == "attraction":
            name = rng.choice((f"{word} {noun} Overlook", f"Old {last} Mill", f"{hood} Steps"))
        elif category == "school":
            name = rng.choice((f"{last} Elementary School", f"{hood} High School", f"{last} Middle School"))
        elif category == "clinic":
            name = rng.choice((f"{hood} Family Health Center", f"{last} Medical Clinic"))
        elif category == "post_office":
            name = f"{hood} Post Office"
            tags["operator"] = "United States Postal Service"
        elif category == "fire_station":
            name = f"Riverton Fire Station {n * 3 + 1}"
        elif category == "parking":
            name = rng.choice((f"{hood} Garage", f"{hood} Park & Ride", f"{word} Street Lot"))
            tags["parking"] = "multi-storey" if "Garage" in name else "surface"
        elif category == "theatre":
            name = rng.choice((f"The {last} Theater", f"{word} Playhouse"))
        elif category == "place_of_worship":
            name, religion = rng.choice(
                (
                    (f"St. {rng.choice(SAINTS)} Church", "christian"),
                    (f"{hood} Presbyterian Church", "christian"),
                    (f"Temple {fake.last_name()}", "jewish"),
                    (f"{hood} Islamic Center", "muslim"),
                )
            )
            tags["religion"] = religion
        elif category == "bakery":
            name = rng.choice((f"{last}'s Bakery", f"{word} Loaf Bakery"))
        elif category == "books":
            name = rng.choice((f"{word} {noun} Books", f"{last} Booksellers"))
        elif category == "clothes":
            name = rng.choice((f"{last} & Co.", f"{word} Threads", f"{hood} Outfitters"))
        else:
            name = f"{word} {noun}"
        name = re.sub(r"s's\b", "s'", name)  # Summers' Kitchen, not Summers's
        if name not in used:
            return name, tags
        if attempt > 30:
            return f"{name} ({hood})", tags
    raise AssertionError("unreachable")


def nearest_street(b, row: float, col: float) -> tuple[str, str]:
    """The named street (not a motorway) closest to a point, and a house number on it."""
    best = None
    for (x, y), e in b.edges.items():
        if not e["name"] or e["highway"] not in ("primary", "secondary", "residential") or e["bridge"]:
            continue
        (r1, c1), (r2, c2) = b.pos[x], b.pos[y]
        mr, mc = (r1 + r2) / 2, (c1 + c2) / 2
        d = (mr - row) ** 2 + (mc - col) ** 2
        if best is None or d < best[0]:
            best = (d, e["name"], r1 == r2, (r1, c1))
    _, name, along_row, _ = best
    return name, house_number(row, col, along_row)


def house_number(row: float, col: float, along_row: bool) -> str:
    """Numbers grow along the street (100 per block); odd on one side, even on the other."""
    if along_row:
        base, side = int(col * 100), row % 1 < 0.5 or row % 1 == 0
    else:
        base, side = int(row * 100), col % 1 < 0.5
    base = max(base, 100)
    return str(base - base % 2 + (1 if side else 0))


def place_row(osm_type, osm_id, name, category, latlon_, number, street, hood, label=None) -> tuple:
    label = label or sd.CATEGORIES[category]["label"]
    parts = (
        [name]
        + ([number] if number else [])
        + ([street] if street else [])
        + [hood["name"], hood["city"], sd.COUNTY, sd.STATE, hood["postcode"], sd.COUNTRY]
    )
    return (
        osm_type,
        osm_id,
        name,
        category,
        label,
        number,
        street,
        hood["name"],
        hood["city"],
        sd.STATE_CODE,
        hood["postcode"],
        latlon_[0],
        latlon_[1],
        ", ".join(parts),
    )
