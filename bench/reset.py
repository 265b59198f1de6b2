"""How fast is an embedded site reset? Goal (DESIGN.md): median <= 50 ms per site.

Starts the real embedded server on free ports in a temporary state directory, then repeatedly
dirties the store through the storefront (searches and cart additions, real HTTP writes), resets it
through the control API, and checks that the content checksum is the pristine one again.

    .venv/bin/python bench/reset.py [--rounds 50]

Columns: the restore time measured inside the server, the round trip of the `reset` call as a
client sees it, and the same for a reset of a clean (unwritten) store.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

from webrl.config import load_config, on_free_ports
from webrl.sites.embedded.backend import EmbeddedBackend

GOAL_MS = 50.0
OFFICIAL_FULL_RESET_MS = (120_000, 300_000)  # WebArena docs: a full container reset takes 2-5 minutes


def dirty_the_store(client: httpx.Client, round_no: int) -> None:
    for i in range(3):
        client.get("/catalogsearch/result/", params={"q": f"bench {round_no} {i}"}).raise_for_status()
    client.post("/checkout/cart/add/product/1/", data={"qty": "1"})


def measure(backend: EmbeddedBackend, rounds: int, dirty: bool) -> tuple[list[float], list[float], int]:
    server_ms, client_ms, exact = [], [], 0
    shop = backend.urls(0)["shopping"]
    with httpx.Client(base_url=shop, follow_redirects=True) as client:
        for r in range(rounds):
            if dirty:
                dirty_the_store(client, r)
                assert backend.is_dirty("shopping", 0)
            start = time.perf_counter()
            results = backend.reset(["shopping"], 0)
            client_ms.append((time.perf_counter() - start) * 1000)
            server_ms.append(results[0].ms)
            current, pristine = backend.checksums("shopping")
            exact += current == pristine
    return server_ms, client_ms, exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as state:
        backend = EmbeddedBackend(on_free_ports(load_config(flags={"state_dir": Path(state)}, environ={})))
        with console.status("starting the embedded sites"):
            backend.up()
        try:
            db_size_kb = backend.paths.live_db(0, "store").stat().st_size / 1024
            with console.status(f"{args.rounds} dirty + {args.rounds} clean resets"):
                rows = {"dirty store": measure(backend, args.rounds, dirty=True),
                        "clean store": measure(backend, args.rounds, dirty=False)}
        finally:
            backend.down()

    table = Table(title=f"embedded reset, store database ({db_size_kb:.0f} KiB), {args.rounds} rounds each")
    for column in ("case", "restore median", "restore p90", "round trip median", "round trip max",
                   "exact", f"goal ≤ {GOAL_MS:.0f} ms", "vs official full reset"):
        table.add_column(column, justify="left" if column == "case" else "right")
    for case, (server_ms, client_ms, exact) in rows.items():
        median = statistics.median(server_ms)
        p90 = statistics.quantiles(server_ms, n=10)[-1]
        trip = statistics.median(client_ms)
        table.add_row(case, f"{median:.1f} ms", f"{p90:.1f} ms", f"{trip:.1f} ms", f"{max(client_ms):.1f} ms",
                      f"{exact}/{len(server_ms)}", "✓" if trip <= GOAL_MS else "✗",
                      f"{OFFICIAL_FULL_RESET_MS[0] / trip:,.0f}–{OFFICIAL_FULL_RESET_MS[1] / trip:,.0f}× faster")
    console.print(table)
    console.print("A reset of `shopping` restores the store database, so it resets `shopping_admin` too.")


if __name__ == "__main__":
    main()
