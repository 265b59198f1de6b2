"""How fast is a reset on the docker backend (embedded image)? Container recreation vs database restore.

For each site, starts the embedded-sites image serving only that site (free ports, a temporary state directory),
then repeatedly dirties the site's database (rows deleted inside the container) and resets it both ways:
- recreate: the container is removed and started again from its snapshot image, until the site answers (the
  default reset, and the only one the real WebArena images have);
- restore: the in-container database restore through the control API (milliseconds; the embedded image only).
After every reset the database's content checksum must be the pristine one. "all sites" is the default setup:
one container serving all six sites, so one recreation resets all of them.

Also timed: `up` the first time (the image seeds every database, then the container is committed as the
snapshot) and `up` again from the snapshot.

    .venv/bin/python bench/docker_reset.py [--recreate-rounds 10] [--restore-rounds 30] \
        [--json bench/results/docker-reset.json]

Needs a Docker engine and the image: `sudo scripts/install-docker.sh`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from stamp import add_json_option, table_numbers, write_result  # bench/ is on sys.path when a bench runs

from webrl.config import load_config
from webrl.sites.docker.backend import LABEL_OWNER, DockerBackend
from webrl.sites.embedded.backend import up_on_free_ports
from webrl.sites.embedded.registry import WEBARENA_SITES, site_spec

OFFICIAL_FULL_RESET_S = (120, 300)  # WebArena docs: a full container reset takes 2-5 minutes
LIVE_DB = "/var/lib/webrl/embedded/instances/0/{name}.db"
DIRTY = """import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("PRAGMA foreign_keys = OFF")
tables = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
for (table,) in conn.execute(tables).fetchall():
    conn.execute(f'DELETE FROM "{table}" WHERE rowid IN (SELECT rowid FROM "{table}" LIMIT 3)')
conn.commit()
"""


def dirty(backend: DockerBackend, site: str) -> None:
    """Delete rows of every table of the site's live database, inside its container."""
    db = site_spec(site).database
    if db is None or db.read_only:
        return
    [box] = backend.client.containers.list(filters={"label": f"{LABEL_OWNER}={backend.owner}"})
    code, output = box.exec_run(["python", "-c", DIRTY, LIVE_DB.format(name=db.name)])
    assert code == 0, output
    current, pristine = backend.checksums(site)
    assert current != pristine, f"{site}: the write changed nothing"


def measure(backend: DockerBackend, site: str, rounds: int, how: str) -> tuple[list[float], list[float], int]:
    """(reset ms as the backend reports it, round trip ms, exact resets) over `rounds` dirty-then-reset rounds."""
    reported, trip, exact = [], [], 0
    for _ in range(rounds):
        dirty(backend, site)
        start = time.perf_counter()
        results = backend.reset([site], 0, how=how)
        trip.append((time.perf_counter() - start) * 1000)
        reported.append(next(r.ms for r in results if r.site == site))
        current, pristine = backend.checksums(site)
        exact += current == pristine
    return reported, trip, exact


def bench_case(sites: list[str], args, console: Console) -> dict:
    label = "all sites" if len(sites) > 1 else sites[0]
    with tempfile.TemporaryDirectory() as state:
        config = load_config(flags={"state_dir": Path(state), "sites.sites": sites}, environ={})
        backend = DockerBackend(config, "embedded")  # down and purge find its containers by state dir, on any ports
        try:
            with console.status(f"{label}: up (seeding, then the snapshot)"):
                start = time.perf_counter()
                backend = up_on_free_ports(config, lambda moved: DockerBackend(moved, "embedded"))
                first_up = time.perf_counter() - start
                backend.down()
                snapshot_up = timed(backend.up)
            site = sites[0]
            with console.status(f"{label}: {args.recreate_rounds} recreations"):
                recreate = measure(backend, site, args.recreate_rounds, "recreate")
            with console.status(f"{label}: {args.restore_rounds} restores"):
                restore = measure(backend, site, args.restore_rounds, "restore")
        finally:
            backend.down()
            backend.purge()
    return {"label": label, "first_up": first_up, "snapshot_up": snapshot_up, "recreate": recreate, "restore": restore}


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recreate-rounds", type=int, default=10)
    parser.add_argument("--restore-rounds", type=int, default=30)
    add_json_option(parser)
    args = parser.parse_args()
    console = Console(width=max(Console().width, 130))
    # shopping_admin shares the store with shopping, so the shopping row covers both.
    cases = [[site] for site in WEBARENA_SITES if site != "shopping_admin"] + [list(WEBARENA_SITES)]
    rows = [bench_case(sites, args, console) for sites in cases]

    table = Table(
        title=f"docker backend (embedded image) reset: {args.recreate_rounds} recreations and "
        f"{args.restore_rounds} restores per row, medians"
    )
    for column in (
        "sites",
        "up s",
        "up from snapshot s",
        "recreate ms",
        "recreate p90 ms",
        "restore ms",
        "restore trip ms",
        "exact",
        "recreate vs 2–5 min",
    ):
        table.add_column(column, justify="left" if column == "sites" else "right")
    for row in rows:
        (rec, rec_trip, rec_exact), (res, res_trip, res_exact) = row["recreate"], row["restore"]
        trip = statistics.median(rec_trip)
        table.add_row(
            row["label"],
            f"{row['first_up']:.1f}",
            f"{row['snapshot_up']:.1f}",
            f"{statistics.median(rec):,.0f}",
            f"{statistics.quantiles(rec, n=10)[-1]:,.0f}",
            f"{statistics.median(res):.1f}",
            f"{statistics.median(res_trip):.1f}",
            f"{rec_exact + res_exact}/{len(rec) + len(res)}",
            f"{OFFICIAL_FULL_RESET_S[0] * 1000 / trip:,.0f}–{OFFICIAL_FULL_RESET_S[1] * 1000 / trip:,.0f}×",
        )
    console.print(table)
    console.print(
        "recreate: remove the container, start it from its snapshot image, wait until the site answers "
        "(as the backend reports it). restore: the database copy inside the running container."
    )
    if args.json:
        write_result(args.json, table_numbers(table))


if __name__ == "__main__":
    main()
