"""A bench's result file: its numbers with their provenance (webrl.provenance: the commit they measured, the date,
the machine, its load and the command), so that the docs quote a file (scripts/docs_tables.py), never a number typed
by hand."""

from __future__ import annotations

import json
from pathlib import Path

from webrl.provenance import provenance


def stamp() -> dict:
    """The provenance of the checkout this bench runs from."""
    return provenance(Path(__file__).resolve().parent.parent)


def write_result(path: Path, numbers: dict) -> None:
    """Write `numbers` with their stamp to `path` as JSON."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**stamp(), **numbers}, indent=2) + "\n")
