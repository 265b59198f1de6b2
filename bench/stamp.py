"""A bench's result file: its numbers with their provenance (webrl.provenance: the commit they measured, the date,
the machine, its load and the command), so that the docs quote a file (scripts/docs_tables.py), never a number typed
by hand."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from webrl.provenance import provenance

CHECKOUT = Path(__file__).resolve().parent.parent
# The checkout's commit when the bench started: a long bench over a checkout that moves on is stamped with the code
# it began on (with "+dirty" if that had uncommitted changes), not with whatever is checked out when it writes.
STARTED = provenance(CHECKOUT)


def stamp(checkout: Path | None = None) -> dict:
    """The provenance of `checkout` (default: the one this bench runs from, with its commit at the start)."""
    if checkout is not None:
        return provenance(checkout)
    return {**provenance(CHECKOUT), "commit": STARTED["commit"]}


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """Every bench's `--json RESULT.json`."""
    parser.add_argument(
        "--json",
        type=Path,
        metavar="RESULT.json",
        help="also write the numbers, stamped (bench/stamp.py), to this file (bench/results/ holds the docs' ones)",
    )


def write_result(path: Path, numbers: dict) -> None:
    """Write `numbers` with their stamp to `path` as JSON."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**stamp(), **numbers}, indent=2) + "\n")


def table_numbers(table: Table, **more) -> dict:
    """A bench's printed table as its result (`"bench": "table"`): title, headings and cells as printed, so the docs
    show what the bench showed; `more`: raw numbers kept beside it."""
    cells = [[str(cell) for cell in column.cells] for column in table.columns]
    return {
        "bench": "table",
        "title": str(table.title or ""),
        "columns": [str(column.header) for column in table.columns],
        "rows": [list(row) for row in zip(*cells, strict=True)],
        **more,
    }
