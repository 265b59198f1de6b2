"""What every forum page needs: the signed-in user, rendering with the layout's data, login-required
redirects, the 404 page, text helpers (slugs, relative dates, a little Markdown), submission
listings and votes."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from webrl.sites.markdown import postmill_markdown
from webrl.sites.platform import (
    SiteContext,
    SiteWithUsers,
    here,
    int_param,
    login_redirect,
    now,
    redirect,
)
from webrl.sites.reddit.seed import HOT_BONUS

TEMPLATES_DIR = Path(__file__).with_name("templates")
PER_PAGE = 25
SORTS = {
    "hot": "Hot",
    "new": "New",
    "active": "Active",
    "top": "Top",
    "controversial": "Controversial",
    "most_commented": "Most commented",
}
TIMES = {"day": "Day", "week": "Week", "month": "Month", "year": "Year", "all": "All time"}
TIME_SPANS = {"day": 1, "week": 7, "month": 31, "year": 366}
ORDER = {
    "hot": "s.ranking DESC, s.id DESC",
    "new": "s.id DESC",
    "active": (
        "COALESCE((SELECT MAX(c.created_at) FROM comments c WHERE c.submission_id = s.id), s.created_at) DESC,"
        " s.id DESC"
    ),
    "top": "s.net_score DESC, s.id DESC",
    "controversial": "MIN(s.upvotes, s.downvotes) DESC, s.upvotes + s.downvotes DESC, s.id DESC",
    "most_commented": "s.comment_count DESC, s.id DESC",
}
NAME_RE = re.compile(r"^[A-Za-z0-9_]+$")


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60].strip("-")
    return slug or "-"


def ago(value: str | None) -> str:
    """'2022-05-01 10:00:00' -> '2 years ago' (relative to now, as Postmill shows dates)."""
    if not value:
        return ""
    then = datetime.strptime(value, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    seconds = max(0, int((datetime.now(UTC) - then).total_seconds()))
    for unit, size in (
        ("year", 365 * 86400),
        ("month", 30 * 86400),
        ("week", 7 * 86400),
        ("day", 86400),
        ("hour", 3600),
        ("minute", 60),
    ):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n > 1 else ''} ago"
    return "just now"


def long_date(value: str | None) -> str:
    if not value:
        return ""
    return datetime.strptime(value, "%Y-%m-%d %H:%M:%S").strftime("%B %-d, %Y at %-I:%M %p")


def domain(url: str | None) -> str:
    host = urlsplit(url or "").hostname or ""
    return host.removeprefix("www.")


def markdown(text: str | None) -> Markup:
    return Markup(postmill_markdown(text))


def timestamp(value: str) -> int:
    return int(datetime.strptime(value, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp())


class Postmill(SiteWithUsers):
    """The forum of one instance: its context and templates."""

    USER_SQL = "SELECT * FROM users WHERE id = ? AND deleted = 0"  # a deleted account is signed out

    def __init__(self, ctx: SiteContext):
        super().__init__(ctx, TEMPLATES_DIR)
        env = self.templates.env
        env.filters.update(slugify=slugify, ago=ago, long_date=long_date, domain=domain, markdown=markdown)
        env.globals.update(SORTS=SORTS, TIMES=TIMES, submission_path=submission_path, page_url=page_url)

    # -- the signed-in user ------------------------------------------------------------------

    def login_redirect(self, request: Request, back: str | None = None) -> Response:
        return login_redirect(request, "/login", back)

    # -- rendering -----------------------------------------------------------------------------

    def render(
        self, request: Request, template: str, context: dict[str, Any] | None = None, status_code: int = 200
    ) -> HTMLResponse:
        data = {"user": self.user(request), "search_query": request.query_params.get("q", ""), "here": here(request)}
        data.update(context or {})
        return self.templates.TemplateResponse(request, template, data, status_code=status_code)

    def not_found(self, request: Request) -> HTMLResponse:
        return self.render(request, "404.html", {"title": "Page not found"}, status_code=404)

    def bad_request(self, request: Request, status_code: int = 400) -> HTMLResponse:
        return self.render(request, "404.html", {"title": "Bad request", "bad_request": True}, status_code=status_code)

    def forbidden(self, request: Request) -> HTMLResponse:
        return self.render(request, "404.html", {"title": "Access denied", "forbidden": True}, status_code=403)

    # -- lookups -------------------------------------------------------------------------------

    def forum(self, name: str) -> sqlite3.Row | None:
        return self.conn.execute(
            "SELECT f.*, (SELECT COUNT(*) FROM subscriptions s WHERE s.forum_id = f.id) AS subscribers"
            " FROM forums f WHERE f.name = ?",
            (name,),
        ).fetchone()

    def is_subscribed(self, forum_id: int, user) -> bool:
        return (
            bool(user)
            and self.conn.execute(
                "SELECT 1 FROM subscriptions WHERE forum_id = ? AND user_id = ?", (forum_id, user["id"])
            ).fetchone()
            is not None
        )

    def is_moderator(self, forum_id: int, user) -> bool:
        return bool(user) and (
            bool(user["admin"])
            or self.conn.execute(
                "SELECT 1 FROM moderators WHERE forum_id = ? AND user_id = ?", (forum_id, user["id"])
            ).fetchone()
            is not None
        )

    def submission(self, forum: str, submission_id: int, user=None) -> sqlite3.Row | None:
        return self.conn.execute(
            SUBMISSION_SELECT + " WHERE s.id = ? AND f.name = ?", (user["id"] if user else None, submission_id, forum)
        ).fetchone()

    def listing(self, request: Request, where: str, params: tuple, sort: str, user) -> dict[str, Any]:
        """One page of submissions: rows, sort, time filter and the pagination state."""
        clauses = [where] if where else []
        args = list(params)
        t = request.query_params.get("t", "all")
        if t not in TIMES:
            t = "all"
        if sort in ("top", "controversial") and t != "all":
            since = datetime.now(UTC) - timedelta(days=TIME_SPANS[t])
            clauses.append("s.created_at >= ?")
            args.append(since.strftime("%Y-%m-%d %H:%M:%S"))
        page = int_param(request.query_params.get("page"), 1)
        sql = SUBMISSION_SELECT + (" WHERE " + " AND ".join(clauses) if clauses else "")
        sql += f" ORDER BY {ORDER[sort]} LIMIT ? OFFSET ?"
        rows = self.conn.execute(
            sql, (user["id"] if user else None, *args, PER_PAGE + 1, (page - 1) * PER_PAGE)
        ).fetchall()
        return {
            "submissions": rows[:PER_PAGE],
            "sort": sort,
            "t": t,
            "page": page,
            "has_next": len(rows) > PER_PAGE,
            "has_prev": page > 1,
        }

    # -- votes ---------------------------------------------------------------------------------

    def vote(self, kind: str, item_id: int, user_id: int, choice: int) -> None:
        """Cast, change or retract (choice 0) a vote, and re-derive the item's score from its votes."""
        table, key, items = (
            ("submission_votes", "submission_id", "submissions")
            if kind == "submission"
            else ("comment_votes", "comment_id", "comments")
        )
        with self.ctx.db.transaction() as conn:
            if choice == 0:
                conn.execute(f"DELETE FROM {table} WHERE {key} = ? AND user_id = ?", (item_id, user_id))
            else:
                conn.execute(
                    f"INSERT INTO {table} ({key}, user_id, choice, created_at) VALUES (?, ?, ?, ?)"
                    f" ON CONFLICT ({key}, user_id) DO UPDATE SET choice = excluded.choice, created_at = "
                    "excluded.created_at"
                    f" WHERE choice != excluded.choice",
                    (item_id, user_id, choice, now()),
                )
            conn.execute(
                f"UPDATE {items} SET"
                f" upvotes = (SELECT COUNT(*) FROM {table} WHERE {key} = ? AND choice = 1),"
                f" downvotes = (SELECT COUNT(*) FROM {table} WHERE {key} = ? AND choice = -1) WHERE id = ?",
                (item_id, item_id, item_id),
            )
            conn.execute(f"UPDATE {items} SET net_score = upvotes - downvotes WHERE id = ?", (item_id,))
            if kind == "submission":
                update_ranking(conn, item_id)


SUBMISSION_SELECT = (
    "SELECT s.*, f.name AS forum_name, u.username, v.choice AS my_vote FROM submissions s"
    " JOIN forums f ON f.id = s.forum_id JOIN users u ON u.id = s.user_id"
    " LEFT JOIN submission_votes v ON v.submission_id = s.id AND v.user_id = ?"
)


def update_ranking(conn: sqlite3.Connection, submission_id: int) -> None:
    row = conn.execute("SELECT created_at, net_score FROM submissions WHERE id = ?", (submission_id,)).fetchone()
    if row:
        conn.execute(
            "UPDATE submissions SET ranking = ? WHERE id = ?",
            (timestamp(row["created_at"]) + row["net_score"] * HOT_BONUS, submission_id),
        )


def submission_path(s) -> str:
    forum = s["forum_name"] if "forum_name" in s.keys() else s["forum"]
    return f"/f/{forum}/{s['id']}/{slugify(s['title'])}"


def page_url(request: Request, page: int) -> str:
    params = dict(request.query_params)
    params["page"] = str(page)
    if page == 1:
        params.pop("page")
    return request.url.path + ("?" + urlencode(params) if params else "")


def safe_next(value: str | None, default: str = "/") -> str:
    """A local path to go back to (never another host)."""
    if value and value.startswith("/") and not value.startswith("//"):
        return value
    return default


def length_error(value: str, lo: int, hi: int) -> str | None:
    """Symfony's messages for blank, too short and too long values."""
    if not value.strip():
        return "This value should not be blank."
    if len(value) < lo:
        return f"This value is too short. It should have {lo} characters or more."
    if len(value) > hi:
        return f"This value is too long. It should have {hi} characters or less."
    return None


VOTABLE = {
    "submission": "SELECT id FROM submissions WHERE id = ?",
    "comment": "SELECT id FROM comments WHERE id = ? AND soft_deleted = 0",
}


async def vote_form(request: Request, kind: str) -> Response:
    """A vote button's form POST on a submission or a comment (`kind`): `choice` 1, -1 or 0 (retract),
    then back to `next`."""
    form = await request.form()
    back = safe_next(form.get("next"), "/")
    site = Postmill.of(request)
    user = site.user(request)
    if user is None:
        return site.login_redirect(request, back)
    row = site.conn.execute(VOTABLE[kind], (request.path_params["id"],)).fetchone()
    if row is None:
        return site.not_found(request)
    try:
        choice = int(form.get("choice", ""))
    except ValueError:
        choice = None
    if choice not in (-1, 0, 1):
        return site.bad_request(request)
    site.vote(kind, row["id"], user["id"], choice)
    return redirect(back)


async def not_found(request: Request, exc: Exception) -> HTMLResponse:
    """The app's 404 handler."""
    return Postmill.of(request).not_found(request)


async def not_allowed(request: Request, exc: Exception) -> HTMLResponse:
    """The app's 405 handler."""
    return Postmill.of(request).bad_request(request, status_code=405)
