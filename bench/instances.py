"""Instances per host: what one embedded server process costs per site instance, and how long `webrl up` takes.

For each N, starts the real embedded server with N instances of every site (free ports, a temporary state
directory, the backend's up(), which `webrl up` calls: it returns once every site of every instance answers),
reads the server's memory, threads and open files from /proc, times requests to the first and the last instance,
and stops the server (down()). A first untimed up builds the snapshots.

    COLUMNS=200 .venv/bin/python bench/instances.py [--instances 1 10 50 100 200] [--requests 20] \
        [--json bench/results/instances.json]

Stops early, saying why, when the next N would leave less than --reserve-gib of the machine's available memory
(the slope measured so far times N) or when a start fails. RSS counts pages shared with other processes in full;
PSS shares them out, USS counts only the server's own pages. The live databases are files (the page cache holds
them, not the server): their size is shown apart.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table
from stamp import add_json_option, table_numbers, write_result  # bench/ is on sys.path when a bench runs

from webrl.config import load_config
from webrl.errors import WebrlError
from webrl.sites.embedded.backend import up_on_free_ports

GIB = 1 << 30


def proc_numbers(pid: int) -> dict[str, float]:
    """Memory in bytes (RSS, PSS, USS), threads and open file descriptors of a process."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    rollup = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:])

    def kib(table: dict, key: str) -> float:
        return int(table[key].split()[0]) * 1024

    return {
        "rss": kib(status, "VmRSS"),
        "pss": kib(rollup, "Pss"),
        "uss": kib(rollup, "Private_Clean") + kib(rollup, "Private_Dirty"),
        "threads": int(status["Threads"]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
    }


def available_memory() -> float:
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return int(meminfo["MemAvailable"].split()[0]) * 1024


def latency_ms(url: str, requests: int) -> float:
    """Median of `requests` GETs of a page over one kept-alive connection."""
    times = []
    with httpx.Client() as client:
        for _ in range(requests):
            start = time.perf_counter()
            assert client.get(url).status_code == 200, url
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def directory_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure(state: Path, instances: int, requests: int) -> dict:
    start = time.perf_counter()
    # on free ports: instances from 25 on listen in the kernel's range for outgoing connections (32768-60999),
    # where any client may take a port before the server binds it (then up_on_free_ports starts over)
    backend = up_on_free_ports(load_config(flags={"state_dir": state, "sites.instances": instances}, environ={}))
    row = {"up": time.perf_counter() - start}
    try:
        start = time.perf_counter()
        statuses = backend.status()
        row["probe"] = time.perf_counter() - start  # what up() did last: ask every site of every instance
        row |= {"healthy": sum(s.healthy for s in statuses), "sites": len(statuses)}
        row |= proc_numbers(json.loads(backend.paths.server.read_text())["pid"])
        row["first_ms"] = latency_ms(backend.urls(0)["shopping"], requests)
        row["last_ms"] = latency_ms(backend.urls(instances - 1)["shopping"], requests)
        row["disk"] = directory_size(backend.paths.root / "instances")
    finally:
        start = time.perf_counter()
        backend.down()
        row["down"] = time.perf_counter() - start
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, nargs="+", default=[1, 10, 50, 100, 200])
    parser.add_argument("--requests", type=int, default=20, help="GETs of the shop's home page per latency")
    parser.add_argument("--reserve-gib", type=float, default=4.0, help="memory to leave to everything else")
    add_json_option(parser)
    args = parser.parse_args()
    console = Console()
    rows: dict[int, dict] = {}
    stopped = None
    with tempfile.TemporaryDirectory(prefix="webrl-instances-") as tmp:
        with console.status("first up: building the snapshots"):
            measure(Path(tmp) / "warm-up", 1, 1)
        for n in args.instances:
            slope = per_instance(rows) or 0.0
            need = slope * n + (rows[min(rows)]["rss"] if rows else 0)
            if need > available_memory() - args.reserve_gib * GIB:
                stopped = (
                    f"stopped before {n} instances: about {need / GIB:.1f} GiB needed, "
                    f"{available_memory() / GIB:.1f} GiB available, {args.reserve_gib} GiB kept in reserve"
                )
                break
            with console.status(f"{n} instances"):
                try:
                    rows[n] = measure(Path(tmp) / str(n), n, args.requests)
                except WebrlError as err:
                    stopped = f"stopped at {n} instances: {err}"
                    break
            console.print(f"{n} instances: up {rows[n]['up']:.1f} s, RSS {rows[n]['rss'] / GIB:.2f} GiB")
    table = report(console, rows)
    if stopped:
        console.print(stopped)
    if args.json:
        write_result(args.json, table_numbers(table, stopped=stopped))


def per_instance(rows: dict[int, dict], key: str = "rss") -> float | None:
    """Bytes per instance: the slope between the smallest and the largest N measured."""
    if len(rows) < 2:
        return None
    lo, hi = min(rows), max(rows)
    return (rows[hi][key] - rows[lo][key]) / (hi - lo)


def report(console: Console, rows: dict[int, dict]) -> Table:
    mib = 1 << 20
    table = Table(title="one embedded server, N instances of all sites")
    for column in (
        "N",
        "healthy",
        "up",
        "health check of every site (again)",
        "RSS",
        "PSS",
        "USS",
        "RSS per instance (slope)",
        "threads",
        "open fds",
        "live databases (disk)",
        "GET shop: first / last instance",
        "down",
    ):
        table.add_column(column, justify="right")
    first = min(rows, default=None)
    for n, r in rows.items():
        slope = per_instance({k: rows[k] for k in (first, n)})
        table.add_row(
            str(n),
            f"{r['healthy']}/{r['sites']}",
            f"{r['up']:.1f} s",
            f"{r['probe']:.1f} s",
            *(f"{r[key] / mib:,.0f} MiB" for key in ("rss", "pss", "uss")),
            "–" if slope is None else f"{slope / mib:.1f} MiB",
            str(r["threads"]),
            str(r["fds"]),
            f"{r['disk'] / mib:,.0f} MiB",
            f"{r['first_ms']:.1f} / {r['last_ms']:.1f} ms",
            f"{r['down']:.1f} s",
        )
    console.print(table)
    if (uss := per_instance(rows, "uss")) is not None:
        console.print(
            f"per instance (slope {first}→{max(rows)}): RSS {per_instance(rows) / mib:.1f} MiB, USS {uss / mib:.1f} MiB"
        )
    return table


if __name__ == "__main__":
    main()
