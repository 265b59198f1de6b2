-- The map (OpenStreetMap look-alike): OSM's data model (nodes, ways, tags) for the fictional city of
-- Riverton, plus two derived tables: road_edges (the routing graph, as OSRM would preprocess it) and
-- places (the search index, as Nominatim would build it). Read-only once seeded.

CREATE TABLE nodes (
    id INTEGER PRIMARY KEY,
    lat REAL NOT NULL,
    lon REAL NOT NULL,
    version INTEGER NOT NULL,
    changeset INTEGER NOT NULL,
    user TEXT NOT NULL,
    timestamp TEXT NOT NULL  -- ISO 8601, e.g. 2019-04-03T12:34:56Z
);

CREATE TABLE node_tags (
    node_id INTEGER NOT NULL REFERENCES nodes(id),
    k TEXT NOT NULL,
    v TEXT NOT NULL,
    PRIMARY KEY (node_id, k)
);

CREATE TABLE ways (
    id INTEGER PRIMARY KEY,
    version INTEGER NOT NULL,
    changeset INTEGER NOT NULL,
    user TEXT NOT NULL,
    timestamp TEXT NOT NULL
);

CREATE TABLE way_nodes (
    way_id INTEGER NOT NULL REFERENCES ways(id),
    seq INTEGER NOT NULL,
    node_id INTEGER NOT NULL REFERENCES nodes(id),
    PRIMARY KEY (way_id, seq)
);
CREATE INDEX way_nodes_node ON way_nodes(node_id);

CREATE TABLE way_tags (
    way_id INTEGER NOT NULL REFERENCES ways(id),
    k TEXT NOT NULL,
    v TEXT NOT NULL,
    PRIMARY KEY (way_id, k)
);

-- One row per consecutive node pair of every highway way. oneway = 1: only from_node -> to_node.
-- name is what directions call the road ("Monora Parkway (I 379)"); '' or NULL when unnamed.
CREATE TABLE road_edges (
    id INTEGER PRIMARY KEY,
    way_id INTEGER NOT NULL REFERENCES ways(id),
    from_node INTEGER NOT NULL REFERENCES nodes(id),
    to_node INTEGER NOT NULL REFERENCES nodes(id),
    name TEXT,
    highway TEXT NOT NULL,  -- motorway, motorway_link, primary, secondary, residential, footway, cycleway
    length_m REAL NOT NULL,  -- haversine
    oneway INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE neighbourhoods (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    postcode TEXT NOT NULL,
    lat REAL NOT NULL,
    lon REAL NOT NULL
);

-- Searchable things: points of interest (nodes), parks and streets (ways).
CREATE TABLE places (
    id INTEGER PRIMARY KEY,
    osm_type TEXT NOT NULL CHECK (osm_type IN ('node', 'way')),
    osm_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    category TEXT NOT NULL,  -- cafe, university, park, residential (a street), ...
    label TEXT NOT NULL,  -- as Nominatim labels it: "Café", "University", "Residential Road"
    housenumber TEXT,
    street TEXT,
    neighbourhood TEXT NOT NULL,
    city TEXT NOT NULL,
    state TEXT NOT NULL,
    postcode TEXT NOT NULL,
    lat REAL NOT NULL,
    lon REAL NOT NULL,
    display_name TEXT NOT NULL
);
CREATE INDEX places_osm ON places(osm_type, osm_id);
