"""Vocabulary of the map's synthetic region: Riverton, Pennsylvania, a fictional river city.

Everything here is invented. The region is a street lattice split by the Monora River (flowing west to
east), with a downtown on the north bank, a university district to the east, hills to the south, two
motorways and a riverside trail. `seed.py` turns these tables into OSM-style nodes, ways and tags.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------
# The lattice: rows run west-east (south to north), columns run south-north (west to east).

LAT0, LON0 = 40.3950, -80.0600  # south-west corner
DLAT, DLON = 0.0027, 0.0035  # ~300 m between lattice lines
ROWS, COLS = 36, 44
COUNTY, STATE, STATE_CODE, COUNTRY = "Monora County", "Pennsylvania", "PA", "United States"

RIVER_NAME = "Monora River"
# Distances from the river's centre line, in lattice rows (1 row ~ 300 m).
RIVER_HALF_WIDTH = 0.42
RIVER_GAP_NORTH = 0.78  # lattice nodes closer than this to the centre line are dropped
RIVER_GAP_SOUTH = 1.33  # wider on the south bank: room for the parkway
TRAIL_OFFSET = 0.55  # the riverside trail, north bank
PARKWAY_OFFSET = -0.9  # the east-west motorway, south bank

# Lattice lines that are main roads: (name, highway). Rows (west-east) and columns (south-north).
AVENUE_ROWS = {
    2: ("Saw Mill Run Road", "secondary"),
    4: ("Brownsville Road", "primary"),
    8: ("Carrick Avenue", "secondary"),
    12: ("Arlington Avenue", "primary"),
    19: ("Kessler Avenue", "primary"),
    21: ("Fifth Avenue", "secondary"),
    23: ("Liberty Avenue", "primary"),
    26: ("Centre Avenue", "secondary"),
    29: ("Baxter Boulevard", "primary"),
    32: ("Stanton Avenue", "secondary"),
    34: ("Highland Ridge Road", "primary"),
}
AVENUE_COLS = {
    3: ("West End Boulevard", "secondary"),
    9: ("Steuben Street", "primary"),
    13: ("Grant Street", "secondary"),
    16: ("Smithfield Street", "primary"),
    21: ("Bigelow Boulevard", "secondary"),
    25: ("Craig Street", "primary"),
    28: ("Morewood Avenue", "secondary"),
    31: ("Negley Avenue", "primary"),
    35: ("Murray Avenue", "secondary"),
    38: ("Braddock Avenue", "primary"),
    42: ("Ardmore Boulevard", "secondary"),
}
BRIDGE_COLS = {
    4: "West End Bridge",
    13: "Fort Duval Bridge",
    16: "Smithfield Street Bridge",
    21: "Tenth Street Bridge",
    25: "Hot Forge Bridge",
    31: "Glenwood Bridge",
    38: "Rankin Bridge",
}

# Motorways: the east-west parkway follows the south bank; the expressway runs north-south.
PARKWAY = {"name": "Monora Parkway", "ref": "I 379"}
EXPRESSWAY = {"name": "Northfield Expressway", "ref": "PA 29", "col": 6.5}
PARKWAY_RAMP_COLS = (2, 9, 16, 21, 25, 31, 38, 42)
EXPRESSWAY_RAMP_ROWS = (2, 8, 12, 23, 29, 34)

# Neighbourhoods: name, city, postcode, centre (row, col), side of the river ('N' or 'S').
NEIGHBOURHOODS = (
    ("Downtown", "Riverton", "15222", (21.5, 14.5), "N"),
    ("Warehouse District", "Riverton", "15222", (23.5, 19.5), "N"),
    ("Foundry Row", "Riverton", "15201", (27.5, 22.5), "N"),
    ("Northside", "Riverton", "15212", (30.5, 12.0), "N"),
    ("Manchester", "Riverton", "15233", (25.0, 5.0), "N"),
    ("Oakfield", "Riverton", "15213", (21.0, 25.5), "N"),
    ("Bellfield", "Riverton", "15224", (26.5, 28.5), "N"),
    ("Elmwood", "Riverton", "15232", (23.0, 31.0), "N"),
    ("East Haven", "Riverton", "15206", (29.0, 34.5), "N"),
    ("Highland Crest", "Riverton", "15206", (33.5, 38.0), "N"),
    ("Maple Hill", "Riverton", "15217", (20.5, 35.5), "N"),
    ("Windmere", "Riverton", "15208", (24.0, 40.5), "N"),
    ("Polish Hill", "Riverton", "15219", (32.5, 25.0), "N"),
    ("Southbank Flats", "Riverton", "15203", (11.5, 21.0), "S"),
    ("Mount Ashby", "Riverton", "15211", (11.0, 11.0), "S"),
    ("Beechview", "Riverton", "15216", (5.0, 8.0), "S"),
    ("Carrick", "Riverton", "15210", (5.0, 20.0), "S"),
    ("Greenvale", "Riverton", "15207", (10.5, 31.0), "S"),
    ("Hazelton", "Riverton", "15207", (5.5, 36.0), "S"),
    ("Crafton Heights", "Crafton", "15205", (10.0, 2.0), "S"),
    ("Homestead Park", "Homestead", "15120", (9.5, 41.0), "S"),
)
DOWNTOWN = "Downtown"

# Residential street names: a stem and a suffix, chosen per lattice line and neighbourhood.
STREET_STEMS = (
    "Oak",
    "Maple",
    "Walnut",
    "Chestnut",
    "Beech",
    "Cedar",
    "Elm",
    "Spruce",
    "Hemlock",
    "Sycamore",
    "Linden",
    "Juniper",
    "Hawthorne",
    "Willow",
    "Laurel",
    "Poplar",
    "Ash",
    "Birch",
    "Holly",
    "Alder",
    "Magnolia",
    "Ridge",
    "Summit",
    "Valley",
    "Hill",
    "Orchard",
    "Meadow",
    "Spring",
    "Brook",
    "Grove",
    "Forest",
    "Park",
    "Church",
    "Mill",
    "Market",
    "Canal",
    "Ferry",
    "Wharf",
    "Forge",
    "Furnace",
    "Foundry",
    "Coal",
    "Iron",
    "Penn",
    "Wylie",
    "Dithridge",
    "Bouquet",
    "Atwood",
    "Semple",
    "Melwood",
    "Dawson",
    "Ward",
    "Meyran",
    "Ellsworth",
    "Howe",
    "Wilkins",
    "Beacon",
    "Forward",
    "Hobart",
    "Shady",
    "Inverness",
    "Aiken",
    "Mathilda",
    "Gross",
    "Pearl",
    "Cypress",
    "Taylor",
    "Fisk",
    "Hatfield",
    "Plummer",
    "Carson",
    "Sarah",
    "Jane",
    "Josephine",
    "Mary",
    "Larkins",
    "Arch",
    "Sherman",
    "Jacksonia",
    "Buena Vista",
    "Monterey",
    "Palo Alto",
    "Eloise",
    "Tonawanda",
    "Kilbuck",
    "Rialto",
    "Herron",
    "Sylvan",
    "Blair",
    "Madison",
    "Franklin",
    "Jefferson",
    "Lincoln",
    "Grandview",
    "Bailey",
    "Boggs",
    "Kearsarge",
    "Shaler",
    "Wyoming",
    "Vodeli",
    "Merrimac",
    "Bigham",
    "Sweetbriar",
    "Marne",
    "Meridan",
    "Calera",
    "Alverado",
    "Pioneer",
    "Hampshire",
    "Fallowfield",
    "Crane",
    "Sussex",
    "Hollycrest",
    "Dunster",
    "Amanda",
    "Biddle",
    "Kenilworth",
    "Lamont",
    "Overbrook",
    "Stewart",
    "Woodruff",
    "Ormsby",
    "Berg",
    "Rochelle",
    "Becks Run",
    "Nobles",
    "Mayville",
    "Kirk",
    "Bausman",
    "Brookline",
    "Pioneer",
    "Flatbush",
    "Dellrose",
    "Glenbury",
    "Edgebrook",
    "Kenmore",
    "Bellaire",
)
ROW_SUFFIXES = ("Street", "Street", "Avenue", "Way", "Place", "Terrace")
COL_SUFFIXES = ("Street", "Street", "Road", "Drive", "Lane", "Alley")
DOWNTOWN_COL_NAMES = ("Water Street", "Market Street", "Wood Street", "Cherry Way", "Oliver Avenue")
DOWNTOWN_ROW_NAMES = ("First Avenue", "Second Avenue", "Third Avenue", "Fourth Avenue", "Sixth Avenue",
                      "Seventh Avenue", "Eighth Avenue")  # fmt: skip

# Parks: name, (row0, col0, row1, col1) in lattice cells (inclusive corner nodes).
PARKS = (
    ("Kessler Park", (17, 27, 20, 31)),
    ("Frick Woods", (14, 35, 17, 39)),
    ("Highland Reservoir Park", (31, 36, 33, 39)),
    ("Allemand Park", (27, 9, 29, 11)),
    ("Riverview Park", (32, 14, 34, 17)),
    ("Emerald View Park", (11, 8, 13, 11)),
    ("McKinley Green", (3, 14, 5, 16)),
    ("Arsenal Square", (28, 24, 29, 26)),
    ("Mellow Fields", (24, 37, 25, 39)),
    ("Southbank Riverfront Park", (12, 22, 13, 25)),
    ("Brookside Commons", (5, 28, 7, 30)),
)

MAPPERS = (
    "rivertonmapper", "kesslercartographer", "bridgecounter", "monora_surveyor", "alleycat_osm", "gpx_rider",
    "stepsandslopes", "lanes_and_lines", "tigercleanup", "addr_fixer", "bike_commuter_pa", "transit_tagger",
    "hillwalker", "node_gardener", "sidewalk_sam", "parkway_patrol",
)  # fmt: skip

# ---------------------------------------------------------------------------------------------
# Points of interest. Each category: its OSM tag, Nominatim's label, search keywords, how many,
# the neighbourhoods it prefers (None: anywhere) and how names are made (see seed.poi_name).

CATEGORIES: dict[str, dict] = {
    "restaurant": {"tag": ("amenity", "restaurant"), "label": "Restaurant", "count": 62,
                   "keywords": ("restaurant", "restaurants", "food", "dining", "dinner", "lunch")},
    "cafe": {"tag": ("amenity", "cafe"), "label": "Café", "count": 30,
             "keywords": ("cafe", "cafes", "café", "coffee", "coffee shop", "espresso")},
    "fast_food": {"tag": ("amenity", "fast_food"), "label": "Fast Food", "count": 18,
                  "keywords": ("fast food", "burger", "burgers", "takeaway")},
    "bar": {"tag": ("amenity", "bar"), "label": "Bar", "count": 14, "keywords": ("bar", "bars", "cocktails")},
    "pub": {"tag": ("amenity", "pub"), "label": "Pub", "count": 8, "keywords": ("pub", "pubs", "beer", "tavern")},
    "hotel": {"tag": ("tourism", "hotel"), "label": "Hotel", "count": 16,
              "keywords": ("hotel", "hotels", "lodging", "inn", "accommodation")},
    "museum": {"tag": ("tourism", "museum"), "label": "Museum", "count": 9, "keywords": ("museum", "museums")},
    "gallery": {"tag": ("tourism", "gallery"), "label": "Gallery", "count": 4,
                "keywords": ("gallery", "galleries", "art gallery")},
    "attraction": {"tag": ("tourism", "attraction"), "label": "Attraction", "count": 4,
                   "keywords": ("attraction", "attractions", "sightseeing")},
    "university": {"tag": ("amenity", "university"), "label": "University", "count": 0,
                   "keywords": ("university", "universities", "campus")},
    "college": {"tag": ("amenity", "college"), "label": "College", "count": 0, "keywords": ("college", "colleges")},
    "school": {"tag": ("amenity", "school"), "label": "School", "count": 12, "keywords": ("school", "schools")},
    "library": {"tag": ("amenity", "library"), "label": "Library", "count": 9, "keywords": ("library", "libraries")},
    "hospital": {"tag": ("amenity", "hospital"), "label": "Hospital", "count": 0,
                 "keywords": ("hospital", "hospitals", "emergency")},
    "clinic": {"tag": ("amenity", "clinic"), "label": "Clinic", "count": 5, "keywords": ("clinic", "clinics", "doctor")},
    "dentist": {"tag": ("amenity", "dentist"), "label": "Dentist", "count": 4, "keywords": ("dentist", "dentists")},
    "pharmacy": {"tag": ("amenity", "pharmacy"), "label": "Pharmacy", "count": 9,
                 "keywords": ("pharmacy", "pharmacies", "drugstore", "chemist")},
    "bank": {"tag": ("amenity", "bank"), "label": "Bank", "count": 10, "keywords": ("bank", "banks", "atm")},
    "post_office": {"tag": ("amenity", "post_office"), "label": "Post Office", "count": 4,
                    "keywords": ("post office", "post", "mail")},
    "police": {"tag": ("amenity", "police"), "label": "Police", "count": 4, "keywords": ("police", "police station")},
    "fire_station": {"tag": ("amenity", "fire_station"), "label": "Fire Station", "count": 5,
                     "keywords": ("fire station", "fire")},
    "fuel": {"tag": ("amenity", "fuel"), "label": "Fuel", "count": 8,
             "keywords": ("gas station", "gas", "fuel", "petrol")},
    "parking": {"tag": ("amenity", "parking"), "label": "Parking", "count": 8,
                "keywords": ("parking", "parking lot", "garage")},
    "cinema": {"tag": ("amenity", "cinema"), "label": "Cinema", "count": 4,
               "keywords": ("cinema", "movie theater", "movies")},
    "theatre": {"tag": ("amenity", "theatre"), "label": "Theatre", "count": 4, "keywords": ("theatre", "theater")},
    "place_of_worship": {"tag": ("amenity", "place_of_worship"), "label": "Place of Worship", "count": 10,
                         "keywords": ("church", "churches", "place of worship", "synagogue")},
    "supermarket": {"tag": ("shop", "supermarket"), "label": "Supermarket", "count": 10,
                    "keywords": ("supermarket", "supermarkets", "grocery", "groceries")},
    "convenience": {"tag": ("shop", "convenience"), "label": "Convenience Store", "count": 10,
                    "keywords": ("convenience store", "convenience")},
    "bakery": {"tag": ("shop", "bakery"), "label": "Bakery", "count": 7, "keywords": ("bakery", "bakeries", "bread")},
    "books": {"tag": ("shop", "books"), "label": "Books Shop", "count": 5,
              "keywords": ("bookstore", "bookshop", "books")},
    "clothes": {"tag": ("shop", "clothes"), "label": "Clothes Shop", "count": 8, "keywords": ("clothes", "clothing")},
    "train_station": {"tag": ("railway", "station"), "label": "Train Station", "count": 0,
                      "keywords": ("train station", "railway station", "station", "train", "rail")},
    "bus_station": {"tag": ("amenity", "bus_station"), "label": "Bus Station", "count": 0,
                    "keywords": ("bus station", "bus terminal", "bus")},
    "airport": {"tag": ("aeroway", "aerodrome"), "label": "Airport", "count": 0, "keywords": ("airport", "airports")},
    "stadium": {"tag": ("leisure", "stadium"), "label": "Stadium", "count": 0, "keywords": ("stadium", "arena")},
    "park": {"tag": ("leisure", "park"), "label": "Park", "count": 0, "keywords": ("park", "parks", "green")},
}  # fmt: skip

# Landmarks at fixed spots: name, category, (row, col), extra tags.
LANDMARKS = (
    ("Kessler Institute of Technology", "university", (19.6, 26.2), {"website": "https://www.kessler.example.edu"}),
    ("University of Riverton", "university", (20.4, 23.6), {"website": "https://www.riverton.example.edu"}),
    ("Monora State University", "university", (10.4, 29.3), {}),
    ("Duval College", "college", (22.6, 17.4), {}),
    ("Chatham Hill College", "college", (23.4, 33.6), {}),
    ("Riverton Union Station", "train_station", (22.3, 16.6), {"operator": "Amtrak", "public_transport": "station"}),
    ("East Haven Station", "train_station", (28.6, 34.4), {"public_transport": "station"}),
    ("Southbank Station", "train_station", (9.6, 18.4), {"public_transport": "station"}),
    ("Riverton Transit Center", "bus_station", (21.6, 12.6), {"operator": "Monora Regional Transit"}),
    ("East Haven Busway Terminal", "bus_station", (27.4, 35.6), {"operator": "Monora Regional Transit"}),
    ("Riverton International Airport", "airport", (3.2, 1.4), {"iata": "RVT", "icao": "KRVT"}),
    ("Riverton General Hospital", "hospital", (20.6, 28.4), {"emergency": "yes"}),
    ("Children's Hospital of Riverton", "hospital", (25.6, 29.6), {"emergency": "yes"}),
    ("Mercy Heights Medical Center", "hospital", (19.4, 18.4), {"emergency": "yes"}),
    ("Southbank Hospital", "hospital", (7.6, 22.4), {"emergency": "yes"}),
    ("Allemand Hospital", "hospital", (29.4, 12.4), {"emergency": "yes"}),
    ("Harbor Field", "stadium", (24.6, 11.4), {"sport": "baseball"}),
    ("Ironworks Stadium", "stadium", (24.4, 8.6), {"sport": "american_football"}),
    ("Riverton Museum of Art", "museum", (17.6, 26.4), {}),
    ("Kessler Museum of Natural History", "museum", (18.4, 26.6), {}),
    ("Harbor Science Center", "museum", (24.6, 6.6), {}),
    ("Museum of Steel and Industry", "museum", (23.6, 20.4), {}),
    ("Riverton Zoo and Aquarium", "attraction", (32.6, 37.4), {"tourism": "zoo"}),
    ("Confluence Point Fountain", "attraction", (21.4, 10.6), {}),
    ("Monora Incline", "attraction", (13.6, 13.4), {"railway": "funicular"}),
    ("Riverton Public Library - Main", "library", (18.6, 25.4), {}),
    ("Phipps-Lane Conservatory", "attraction", (16.4, 27.6), {}),
)

# Chains with several branches (so that "<chain> near <place>" has several answers).
CHAINS = {
    "cafe": ("Beanstalk Coffee", "Mocha Mill"),
    "fast_food": ("Pixel Burger", "Sub Station Deli", "Crispy Coop"),
    "pharmacy": ("CareWell Pharmacy",),
    "bank": ("Keystone Federal", "Three Bridges Bank"),
    "supermarket": ("Fresh Basket", "Giant Grocer"),
    "fuel": ("Sheetz & Sons", "Get-Go Fuel"),
    "convenience": ("Corner Mart", "QuickStop"),
}

CUISINES = (
    ("italian", ("Trattoria", "Osteria", "Cucina"), ("Bella", "Roma", "Sorrento", "Verona", "Nonna's", "Toscana")),
    ("pizza", ("Pizza", "Pizzeria"), ("Slice of", "Mario's", "Brick Oven", "Fiore's", "Angelo's", "Big Pie")),
    ("chinese", ("Garden", "Palace", "House"), ("Golden Dragon", "Jade", "Lucky Bamboo", "Sichuan", "Red Lantern")),
    ("japanese", ("Sushi", "Ramen", "Izakaya"), ("Sakura", "Umami", "Koi", "Tokyo", "Hana", "Kiku")),
    ("thai", ("Thai", "Thai Kitchen"), ("Siam", "Bangkok", "Lemongrass", "Chiang Mai", "Orchid")),
    ("indian", ("Curry House", "Tandoor", "Indian Kitchen"), ("Taj", "Masala", "Bombay", "Saffron", "Himalaya")),
    ("mexican", ("Taqueria", "Cantina", "Mexican Grill"), ("El Jefe", "Casa", "La Palma", "Agave", "Azteca")),
    ("american", ("Diner", "Grill", "Kitchen", "Tavern"), ("Liberty", "Steel City", "Union", "Ironside", "Riverfront")),
    ("burger", ("Burgers", "Burger Bar"), ("Brgr", "Stack", "Smashed", "Double Deck")),
    ("vietnamese", ("Pho", "Banh Mi"), ("Saigon", "Hanoi", "Lotus")),
    ("korean", ("BBQ", "Kitchen"), ("Seoul", "Gangnam", "Kimchi")),
    ("mediterranean", ("Grill", "Kitchen", "Mezze"), ("Olive", "Aegean", "Cedars", "Zaytoon")),
    ("seafood", ("Oyster Bar", "Fish House", "Seafood"), ("Wharf", "Anchor", "Crab Shack", "Harbor")),
    ("steak_house", ("Steakhouse", "Chophouse"), ("Prime", "Monora", "Ironwood")),
)  # fmt: skip

WORDS = ("Red", "Blue", "Golden", "Silver", "Iron", "Copper", "Little", "Old", "Corner", "River", "Bridge", "Hill",
         "Smoky", "Rusty", "Quiet", "Lucky", "Northern", "Union", "Market", "Harbor", "Summit", "Foundry", "Maple",
         "Steel", "Three Rivers", "Incline", "Crooked", "Velvet", "Brass", "Cobblestone")  # fmt: skip
NOUNS = ("Lantern", "Anchor", "Owl", "Fox", "Barrel", "Kettle", "Spoon", "Mule", "Crow", "Hammer", "Trolley",
         "Canary", "Stag", "Oak", "Pearl", "Compass", "Bell", "Heron", "Furnace", "Tugboat")  # fmt: skip
