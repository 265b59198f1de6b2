"""How fast is an embedded site reset? Goal: median <= 50 ms per site.

Starts the real embedded server (all sites, free ports, a temporary state directory), then for each
site repeatedly dirties its database, resets the site through the control API, and checks that the
content checksum is the pristine one again.

- "store via HTTP": the store is dirtied through the storefront (searches and a cart addition).
- "<site>": the site's live database is dirtied directly (rows deleted from every table through a
  second SQLite connection), which works for any site; a restore copies the whole database either
  way, so its time depends on the database size, not on what was written.
- read-only (map) and data-less (homepage) sites have nothing to restore: their reset is a no-op.

    .venv/bin/python bench/reset.py [--rounds 30] [--json bench/results/reset.json]

Columns: the restore time measured inside the server, the round trip of the reset call as a client
sees it, and whether the checksum was pristine after every reset.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table
from stamp import add_json_option, write_result  # bench/ is on sys.path when a bench runs

from webrl.config import load_config
from webrl.sites.embedded.backend import EmbeddedBackend, up_on_free_ports
from webrl.sites.embedded.registry import SITE_NAMES, site_spec

GOAL_MS = 50.0
OFFICIAL_FULL_RESET_S = (120, 300)  # WebArena docs: a full container reset takes 2-5 minutes


def dirty_store_via_http(backend: EmbeddedBackend, round_no: int) -> None:
    with httpx.Client(base_url=backend.urls(0)["shopping"], follow_redirects=True) as client:
        for i in range(3):
            client.get("/catalogsearch/result/", params={"q": f"bench {round_no} {i}"}).raise_for_status()
        client.post("/checkout/cart/add/product/1/", data={"qty": "1"})


def dirty_database_file(path: Path) -> Callable[[EmbeddedBackend, int], None]:
    def dirty(backend: EmbeddedBackend, round_no: int) -> None:
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA foreign_keys = OFF")
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                )
            ]
            for table in tables:
                conn.execute(f'DELETE FROM "{table}" WHERE rowid IN (SELECT rowid FROM "{table}" LIMIT 3)')

    return dirty


def measure(backend: EmbeddedBackend, site: str, rounds: int, dirty) -> tuple[list[float], list[float], int]:
    server_ms, client_ms, exact = [], [], 0
    for r in range(rounds):
        if dirty is not None:
            dirty(backend, r)
            current, pristine = backend.checksums(site)
            assert current != pristine, f"{site}: the write changed nothing"
        start = time.perf_counter()
        results = backend.reset([site], 0)
        client_ms.append((time.perf_counter() - start) * 1000)
        server_ms.append(next(x.ms for x in results if x.site == site))
        current, pristine = backend.checksums(site)
        exact += current == pristine
    return server_ms, client_ms, exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    add_json_option(parser)
    args = parser.parse_args()
    console = Console()
    rows = {}
    with tempfile.TemporaryDirectory() as state:
        with console.status("starting the embedded sites"):
            backend = up_on_free_ports(load_config(flags={"state_dir": Path(state)}, environ={}))
        try:
            cases = [("store via HTTP", "shopping", dirty_store_via_http)]
            seen = set()
            for site in SITE_NAMES:
                db = site_spec(site).database
                if db is None or db.read_only:
                    cases.append((site, site, None))
                elif db.name not in seen:
                    seen.add(db.name)
                    cases.append((site, site, dirty_database_file(backend.paths.live_db(0, db.name))))
            for label, site, dirty in cases:
                with console.status(f"{label}: {args.rounds} resets"):
                    db = site_spec(site).database
                    size = backend.paths.live_db(0, db.name) if db and not db.read_only else None
                    rows[label] = (
                        *measure(backend, site, args.rounds, dirty),
                        size.stat().st_size / 1024 if size else None,
                        dirty is None,
                    )
        finally:
            backend.down()

    table = Table(title=f"embedded site reset, {args.rounds} rounds per site")
    for column in (
        "site",
        "database",
        "restore median",
        "restore p90",
        "round trip median",
        "round trip max",
        "exact",
        f"goal ≤ {GOAL_MS:.0f} ms",
        "vs official full reset (2–5 min)",
    ):
        table.add_column(column, justify="left" if column == "site" else "right")
    for label, (server_ms, client_ms, exact, size_kb, noop) in rows.items():
        trip = statistics.median(client_ms)
        table.add_row(
            label,
            "no-op" if noop else f"{size_kb:,.0f} KiB",
            f"{statistics.median(server_ms):.1f} ms",
            f"{statistics.quantiles(server_ms, n=10)[-1]:.1f} ms",
            f"{trip:.1f} ms",
            f"{max(client_ms):.1f} ms",
            f"{exact}/{len(server_ms)}",
            "✓" if statistics.median(server_ms) <= GOAL_MS else "✗",
            f"{OFFICIAL_FULL_RESET_S[0] * 1000 / trip:,.0f}–{OFFICIAL_FULL_RESET_S[1] * 1000 / trip:,.0f}× faster",
        )
    console.print(table)
    console.print("shopping and shopping_admin share the store database: one restore resets both.")
    if args.json:
        numbers = {
            label: {
                "database_kib": None if noop else size_kb,
                "restore_median_ms": statistics.median(server_ms),
                "restore_p90_ms": statistics.quantiles(server_ms, n=10)[-1],
                "round_trip_median_ms": statistics.median(client_ms),
                "round_trip_max_ms": max(client_ms),
                "exact": exact,
                "rounds": len(server_ms),
            }
            for label, (server_ms, client_ms, exact, size_kb, noop) in rows.items()
        }
        write_result(args.json, {"bench": "reset", "goal_ms": GOAL_MS, "sites": numbers})


if __name__ == "__main__":
    main()
