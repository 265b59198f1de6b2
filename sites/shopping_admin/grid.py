"""Server-rendered admin grids: keyword search, filters, sorting and paging from GET parameters.

A grid is a SELECT whose result columns carry stable aliases; filters, search and sorting apply to
those aliases (the SELECT is wrapped as a subquery), so computed columns (names joined from JSON
addresses, counts) filter and sort like stored ones. Parameter names are bookmarkable:
`search`, `sort`, `dir`, `limit`, `page`, and per filter `<name>` or `<name>_from` / `<name>_to`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup, escape

from webrl.sites.platform import search_term
from webrl.sites.store.store import MAX_QUERY_LENGTH

LIMITS = (20, 30, 50, 100, 200)


@dataclass(frozen=True)
class Column:
    key: str  # result column alias (also the `sort=` value)
    label: str
    render: Callable[[Any], Any] | None = None  # row -> str or Markup
    sortable: bool = True
    cls: str = ""


def datetime_column(key: str, label: str) -> Column:
    return Column(key, label, render=lambda r: fmt_datetime(r[key]))


def money_column(key: str, label: str) -> Column:
    return Column(key, label, render=lambda r: f"${r[key]:,.2f}", cls="num")


def action_column(text: str, href: Callable[[Any], str]) -> Column:
    """The last column: a link per row, e.g. to the row's edit page."""
    return Column("action", "Action", render=lambda r: link(href(r), text), sortable=False)


@dataclass(frozen=True)
class Filter:
    name: str  # result column alias it applies to
    label: str
    kind: str = "text"  # text (contains), eq, select, range (numbers), date (date range)
    options: tuple[tuple[str, str], ...] = ()  # select: (value, label)


@dataclass
class GridResult:
    rows: list[Any]
    total: int
    page: int
    pages: int
    limit: int
    sort: str
    dir: str
    search: str
    values: dict[str, str]  # current filter values by parameter name
    active: list[tuple[str, str, str]] = field(default_factory=list)  # (param names joined by ',', label, shown value)
    base_query: dict[str, str] = field(default_factory=dict)  # every current parameter


def parse_date(text: str) -> str | None:
    """Accept 'YYYY-MM-DD', 'MM/DD/YYYY', 'M/D/YY' (Magento's admin date inputs); return 'YYYY-MM-DD'."""
    text = (text or "").strip()
    if not text:
        return None
    for fmt in ("%Y-%m-%d", "%m/%d/%Y", "%m/%d/%y", "%Y-%m-%d %H:%M:%S", "%b %d, %Y"):
        try:
            return datetime.strptime(text, fmt).strftime("%Y-%m-%d")
        except ValueError:
            continue
    return None


def parse_number(text: str) -> float | None:
    """A finite number from an admin input ('$1,234.5'), else None: 'inf', 'nan' and '1e999' are no amount."""
    text = (text or "").strip().replace("$", "").replace(",", "")
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


class Grid:
    def __init__(
        self,
        select_sql: str,
        columns: list[Column],
        *,
        search: tuple[str, ...] = (),
        filters: tuple[Filter, ...] = (),
        default_sort: str,
        default_dir: str = "asc",
        tiebreak: str = "id",
    ):
        self.select_sql = select_sql
        self.columns = columns
        self.search_cols = search
        self.filters = filters
        self.default_sort = default_sort
        self.default_dir = default_dir
        self.tiebreak = tiebreak
        self.sortable = {c.key for c in columns if c.sortable}

    def run(self, conn, query, extra_where: str = "", extra_params: tuple = ()) -> GridResult:
        where: list[str] = []
        params: list[Any] = []
        if extra_where:
            where.append(extra_where)
            params.extend(extra_params)
        values: dict[str, str] = {}
        active: list[tuple[str, str, str]] = []
        search, _ = search_term(query.get("search"), MAX_QUERY_LENGTH)
        if search and self.search_cols:
            for word in search.split():
                where.append("(" + " OR ".join(f"CAST(g.{c} AS TEXT) LIKE ?" for c in self.search_cols) + ")")
                params.extend([f"%{word}%"] * len(self.search_cols))
        for f in self.filters:
            if f.kind in ("range", "date"):
                lo_raw, hi_raw = query.get(f"{f.name}_from", ""), query.get(f"{f.name}_to", "")
                values[f"{f.name}_from"], values[f"{f.name}_to"] = lo_raw, hi_raw
                if f.kind == "range":
                    lo, hi = parse_number(lo_raw), parse_number(hi_raw)
                    if lo is not None:
                        where.append(f"g.{f.name} >= ?")
                        params.append(lo)
                    if hi is not None:
                        where.append(f"g.{f.name} <= ?")
                        params.append(hi)
                else:
                    lo, hi = parse_date(lo_raw), parse_date(hi_raw)
                    if lo:
                        where.append(f"substr(g.{f.name}, 1, 10) >= ?")
                        params.append(lo)
                    if hi:
                        where.append(f"substr(g.{f.name}, 1, 10) <= ?")
                        params.append(hi)
                if lo is not None or hi is not None:
                    shown = f"{lo_raw.strip() or '…'} - {hi_raw.strip() or '…'}"
                    active.append((f"{f.name}_from,{f.name}_to", f.label, shown))
            else:
                raw, _ = search_term(query.get(f.name), MAX_QUERY_LENGTH)
                values[f.name] = raw
                if not raw:
                    continue
                if f.kind == "text":
                    where.append(f"CAST(g.{f.name} AS TEXT) LIKE ?")
                    params.append(f"%{raw}%")
                    shown = raw
                else:
                    where.append(f"CAST(g.{f.name} AS TEXT) = ?")
                    params.append(raw)
                    shown = dict(f.options).get(raw, raw)
                active.append((f.name, f.label, shown))
        where_sql = (" WHERE " + " AND ".join(where)) if where else ""
        inner = f"SELECT * FROM ({self.select_sql}) AS g{where_sql}"
        total = conn.execute(f"SELECT COUNT(*) FROM ({inner})", params).fetchone()[0]

        sort = query.get("sort") or self.default_sort
        if sort not in self.sortable:
            sort = self.default_sort
        direction = (query.get("dir") or "").lower()
        if direction not in ("asc", "desc"):
            direction = self.default_dir if sort == self.default_sort else "asc"
        try:
            limit = int(query.get("limit") or LIMITS[0])
        except ValueError:
            limit = LIMITS[0]
        limit = min(max(limit, 1), 200)
        pages = max(1, math.ceil(total / limit))
        try:
            page = int(query.get("page") or 1)
        except ValueError:
            page = 1
        page = min(max(page, 1), pages)
        order = f"g.{sort} COLLATE NOCASE {direction}"  # numbers still compare as numbers
        if sort != self.tiebreak:
            order += f", g.{self.tiebreak} {direction}"
        rows = conn.execute(
            f"{inner} ORDER BY {order} LIMIT ? OFFSET ?", [*params, limit, (page - 1) * limit]
        ).fetchall()
        base = {k: v for k, v in query.items() if v not in ("", None)}
        return GridResult(rows, total, page, pages, limit, sort, direction, search, values, active, base)


def url_with(base_path: str, query: dict[str, str], **changes) -> str:
    """The grid URL with some parameters changed (None removes one)."""
    merged = dict(query)
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = str(value)
    return base_path + ("?" + urlencode(merged) if merged else "")


def view(grid: Grid, result: GridResult, base_path: str) -> dict[str, Any]:
    """Everything grid.html needs: headers with sort links, rendered cells, pager links."""
    headers = []
    for col in grid.columns:
        href = None
        state = ""
        if col.sortable:
            new_dir = "desc" if (result.sort == col.key and result.dir == "asc") else "asc"
            href = url_with(base_path, result.base_query, sort=col.key, dir=new_dir, page=None)
            if result.sort == col.key:
                state = "sort-" + result.dir
        headers.append({"label": col.label, "href": href, "state": state, "cls": col.cls})
    rows = []
    for row in result.rows:
        cells = []
        for col in grid.columns:
            value = col.render(row) if col.render else row[col.key]
            cells.append({"value": "" if value is None else value, "cls": col.cls})
        rows.append({"row": row, "cells": cells})
    q = result.base_query
    active = []
    for names, label, shown in result.active:
        remove = {n: None for n in names.split(",")}
        active.append({"label": label, "value": shown, "href": url_with(base_path, q, page=None, **remove)})
    clear = {
        f"{f.name}{s}": None for f in grid.filters for s in (("_from", "_to") if f.kind in ("range", "date") else ("",))
    }
    filter_params = set(clear)
    keep = {k: v for k, v in q.items() if k not in filter_params and k != "page"}
    return {
        "headers": headers,
        "rows": rows,
        "result": result,
        "filters": grid.filters,
        "has_search": bool(grid.search_cols),
        "active": active,
        "clear_href": url_with(base_path, q, page=None, **clear),
        "prev_href": url_with(base_path, q, page=result.page - 1) if result.page > 1 else None,
        "next_href": url_with(base_path, q, page=result.page + 1) if result.page < result.pages else None,
        "base_path": base_path,
        "keep_for_filters": keep,
        "limits": LIMITS,
        "filters_open": bool(result.active),
    }


def link(href: str, text: Any) -> Markup:
    return Markup('<a href="{}">{}</a>').format(href, text)


def fmt_datetime(value: str | None) -> str:
    """'2023-03-11 19:54:03' -> 'Mar 11, 2023 7:54:03 PM' (Magento's admin grid format)."""
    if not value:
        return ""
    try:
        dt = datetime.strptime(value[:19], "%Y-%m-%d %H:%M:%S")
    except ValueError:
        try:
            dt = datetime.strptime(value[:10], "%Y-%m-%d")
            return f"{dt:%b} {dt.day}, {dt.year}"
        except ValueError:
            return value
    hour = dt.hour % 12 or 12
    return f"{dt:%b} {dt.day}, {dt.year} {hour}:{dt:%M:%S} {'AM' if dt.hour < 12 else 'PM'}"


def fmt_date(value: str | None) -> str:
    if not value:
        return ""
    try:
        dt = datetime.strptime(value[:10], "%Y-%m-%d")
    except ValueError:
        return value
    return f"{dt:%b} {dt.day}, {dt.year}"


def nl2br(text: str) -> Markup:
    return Markup("<br>").join(escape(text or "").split("\n"))


SLUG_RE = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    return SLUG_RE.sub("-", text.lower()).strip("-") or "product"
