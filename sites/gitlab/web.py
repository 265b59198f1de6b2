"""What every page of the forge needs: templates and filters, the signed-in user, project lookup
with visibility and role checks, the decorators of sign-in-only and project pages, and the 404 page."""

from __future__ import annotations

import functools
import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from webrl.sites.markdown import gitlab_markdown
from webrl.sites.platform import (
    SiteContext,
    SiteWithUsers,
    flash,
    login_redirect,
    search_term,
)

TEMPLATES_DIR = Path(__file__).with_name("templates")

ROLES = {10: "Guest", 20: "Reporter", 30: "Developer", 40: "Maintainer", 50: "Owner"}
ROLE_LEVELS = {name.lower(): level for level, name in ROLES.items()}
VISIBILITIES = ("private", "internal", "public")
NAME_RE = re.compile(r"[\w\u00C0-\u024F][\w\u00C0-\u024F .+\-]*\Z")
PATH_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
RESERVED = {
    "dashboard",
    "explore",
    "users",
    "groups",
    "projects",
    "-",
    "help",
    "admin",
    "assets",
    "search",
    "api",
    "profile",
    "snippets",
    "static",
    "u",
}
AVATAR_COLORS = ("#e7e4f2", "#e1e7f4", "#dff0e5", "#f4e7dd", "#f3dde2", "#e2ecf0", "#ececec")
# Gitlab::Search::Params: a search of more characters or terms is refused with an alert (SearchController)
SEARCH_CHAR_LIMIT = 4096
SEARCH_TERM_LIMIT = 64
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def search_param(request: Request, name: str = "search") -> str | None:
    """The search term in the query parameter `name` ("" for none), or None when it is over GitLab's limits: the
    page then shows GitLab's alert and matches nothing."""
    term, cut = search_term(request.query_params.get(name), SEARCH_CHAR_LIMIT)
    if cut:
        flash(request, f"Search query is too long (maximum is {SEARCH_CHAR_LIMIT} characters).", "alert")
    elif len(term.split()) > SEARCH_TERM_LIMIT:
        flash(request, f"Search query is too long (maximum is {SEARCH_TERM_LIMIT} terms).", "alert")
    else:
        return term
    return None


def parse_time(value: str) -> datetime:
    return datetime.strptime(value[:19], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)


def time_ago(value: str | None) -> str:
    if not value:
        return ""
    seconds = (datetime.now(UTC) - parse_time(value)).total_seconds()
    for unit, size in (
        ("year", 31_536_000),
        ("month", 2_592_000),
        ("week", 604_800),
        ("day", 86_400),
        ("hour", 3600),
        ("minute", 60),
    ):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n > 1 else ''} ago"
    return "just now"


def long_date(value: str | None) -> str:
    """'2023-05-17 10:00:00' -> 'May 17, 2023'."""
    if not value:
        return ""
    y, m, d = value[:10].split("-")
    return f"{MONTHS[int(m) - 1]} {int(d)}, {y}"


def time_tag(value: str | None) -> Markup:
    if not value:
        return Markup("")
    return Markup('<time class="js-timeago" datetime="{0}" title="{1}">{2}</time>').format(
        value.replace(" ", "T") + "Z", long_date(value) + " " + value[11:16], time_ago(value)
    )


def avatar(name: str, size: int = 32, kind: str = "user") -> Markup:
    color = AVATAR_COLORS[sum(map(ord, name or "?")) % len(AVATAR_COLORS)]
    shape = "rect-avatar" if kind != "user" else ""
    return Markup(
        '<span class="avatar identicon s{0} {1}" style="background-color:{2}" aria-hidden="true">{3}</span>'
    ).format(size, shape, color, (name or "?")[0].upper())


ICONS = {  # 16x16 outline icons, drawn here (no icon font or emoji needed)
    "folder": '<path d="M1.5 3.5h5l1.5 2h6.5v8h-13z" fill="none" stroke="currentColor" stroke-width="1.3"/>',
    "file": '<path d="M3.5 1.5h6l3 3v10h-9z M9.5 1.5v3h3" fill="none" stroke="currentColor" stroke-width="1.3"/>',
    "lock": '<rect x="3" y="7" width="10" height="7.5" rx="1" fill="none" stroke="currentColor" stroke-width="1.3"/><path d="M5 7V5a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" stroke-width="1.3"/>',
    "earth": '<circle cx="8" cy="8" r="6.3" fill="none" stroke="currentColor" stroke-width="1.3"/><path d="M1.7 8h12.6M8 1.7c-2.5 3-2.5 9.6 0 12.6M8 1.7c2.5 3 2.5 9.6 0 12.6" fill="none" stroke="currentColor" stroke-width="1.1"/>',
    "shield": '<path d="M8 1.5l5.5 2v4c0 3.5-2.5 6-5.5 7-3-1-5.5-3.5-5.5-7v-4z" fill="none" stroke="currentColor" stroke-width="1.3"/>',
    "star": '<path d="M8 1.8l1.9 3.9 4.3.6-3.1 3 .7 4.3L8 11.6l-3.8 2 .7-4.3-3.1-3 4.3-.6z" fill="none" stroke="currentColor" stroke-width="1.2"/>',
    "star-filled": '<path d="M8 1.8l1.9 3.9 4.3.6-3.1 3 .7 4.3L8 11.6l-3.8 2 .7-4.3-3.1-3 4.3-.6z" fill="currentColor"/>',
    "fork": '<circle cx="4" cy="3" r="1.6" fill="none" stroke="currentColor" stroke-width="1.2"/><circle cx="12" cy="3" r="1.6" fill="none" stroke="currentColor" stroke-width="1.2"/><circle cx="8" cy="13" r="1.6" fill="none" stroke="currentColor" stroke-width="1.2"/><path d="M4 4.6v1.9c0 1.5 4 1.5 4 3.5v1.4M12 4.6v1.9c0 1.5-4 1.5-4 3.5" fill="none" stroke="currentColor" stroke-width="1.2"/>',
    "merge-request": '<circle cx="4" cy="3" r="1.6" fill="none" stroke="currentColor" stroke-width="1.2"/><circle cx="4" cy="13" r="1.6" fill="none" stroke="currentColor" stroke-width="1.2"/><circle cx="12" cy="13" r="1.6" fill="none" stroke="currentColor" stroke-width="1.2"/><path d="M4 4.6v6.8M12 11.4V6c0-1.5-1-2.5-2.5-2.5H7" fill="none" stroke="currentColor" stroke-width="1.2"/>',
    "issues": '<circle cx="8" cy="8" r="6.3" fill="none" stroke="currentColor" stroke-width="1.3"/><circle cx="8" cy="8" r="1.4" fill="currentColor"/>',
    "comment": '<path d="M2 2.5h12v8.5H7l-3.5 3v-3H2z" fill="none" stroke="currentColor" stroke-width="1.3"/>',
}


def icon(name: str, size: int = 16) -> Markup:
    return Markup(
        '<svg class="s{0} gl-icon" width="{0}" height="{0}" viewBox="0 0 16 16" aria-hidden="true" data-testid="{1}-icon">'.format(
            size, name
        )
        + ICONS.get(name, "")
        + "</svg>"
    )


def label_text_color(color: str) -> str:
    try:
        r, g, b = (int(color.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4))
    except ValueError:
        return "#333"
    return "#333238" if (r * 299 + g * 587 + b * 114) / 1000 > 150 else "#ffffff"


def query_with(request: Request, **changes: Any) -> str:
    """The current query string with some parameters changed (None removes one), for tabs and sorting."""
    items = [(k, v) for k, v in request.query_params.multi_items() if k not in changes and k != "page"]
    for key, value in changes.items():
        if value is not None:
            items.append((key, str(value)))
    return "?" + urlencode(items) if items else request.url.path


class Gitlab(SiteWithUsers):
    """The forge of one instance: its context, templates and shared lookups."""

    def __init__(self, ctx: SiteContext):
        super().__init__(ctx, TEMPLATES_DIR)
        env = self.templates.env
        env.filters.update(
            time_ago=time_ago,
            long_date=long_date,
            time_tag=time_tag,
            markdown=lambda text, base=None: Markup(gitlab_markdown(text, base)),
            label_fg=label_text_color,
        )
        env.globals.update(avatar=avatar, icon=icon, ROLES=ROLES, query_with=query_with)

    # -- users -----------------------------------------------------------------------------------

    def user_by_name(self, username: str) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM users WHERE username = ?", (username.lstrip("@"),)).fetchone()

    def login_redirect(self, request: Request) -> Response:
        flash(request, "You need to sign in or sign up before continuing.", "alert")
        return login_redirect(request, "/users/sign_in")

    # -- projects --------------------------------------------------------------------------------

    PROJECT_SQL = (
        "SELECT p.*, n.path AS ns_path, n.name AS ns_name, n.kind AS ns_kind, n.owner_id AS ns_owner_id,"
        " n.path || '/' || p.path AS full_path, n.name || ' / ' || p.name AS full_name,"
        " (SELECT COUNT(*) FROM stars s WHERE s.project_id = p.id) AS star_count,"
        " (SELECT COUNT(*) FROM projects f WHERE f.forked_from_id = p.id) AS forks_count,"
        " (SELECT COUNT(*) FROM issues i WHERE i.project_id = p.id AND i.state = 'opened') AS open_issues_count,"
        " (SELECT COUNT(*) FROM merge_requests m WHERE m.project_id = p.id AND m.state = 'opened') AS open_mrs_count"
        " FROM projects p JOIN namespaces n ON n.id = p.namespace_id"
    )

    def access_level(self, user: sqlite3.Row | None, project: sqlite3.Row) -> int:
        if user is None:
            return 0
        levels = [
            r[0]
            for r in self.conn.execute(
                "SELECT access_level FROM project_members WHERE project_id = ? AND user_id = ? UNION ALL"
                " SELECT access_level FROM group_members WHERE group_id = ? AND user_id = ?",
                (project["id"], user["id"], project["namespace_id"], user["id"]),
            )
        ]
        if project["ns_owner_id"] == user["id"]:
            levels.append(50)
        if user["is_admin"]:
            levels.append(50)
        return max(levels, default=0)

    def can_see(self, user: sqlite3.Row | None, project: sqlite3.Row) -> bool:
        if project["visibility"] == "public":
            return True
        if project["visibility"] == "internal":
            return user is not None
        return self.access_level(user, project) > 0

    def project(self, ns: str, path: str) -> sqlite3.Row | None:
        return self.conn.execute(self.PROJECT_SQL + " WHERE n.path = ? AND p.path = ?", (ns, path)).fetchone()

    def project_by_id(self, pid: int) -> sqlite3.Row | None:
        return self.conn.execute(self.PROJECT_SQL + " WHERE p.id = ?", (pid,)).fetchone()

    def visible_clause(self, user: sqlite3.Row | None, alias: str = "p") -> tuple[str, tuple]:
        """SQL condition (and parameters) for the projects `user` may see."""
        if user is None:
            return f"{alias}.visibility = 'public'", ()
        if user["is_admin"]:
            return "1 = 1", ()
        return (
            f"({alias}.visibility IN ('public', 'internal') OR {alias}.id IN (SELECT project_id FROM project_members"
            f" WHERE user_id = ?) OR {alias}.namespace_id IN (SELECT group_id FROM group_members WHERE user_id = ?)"
            f" OR {alias}.namespace_id IN (SELECT id FROM namespaces WHERE owner_id = ?))",
            (user["id"],) * 3,
        )

    # -- rendering -------------------------------------------------------------------------------

    def render(
        self, request: Request, template: str, context: dict[str, Any] | None = None, status_code: int = 200
    ) -> HTMLResponse:
        user = self.user(request)
        data: dict[str, Any] = {"current_user": user, "urls": self.ctx.urls, "project": None, "nav": ""}
        if user is not None:
            data["todo_issues"] = self.conn.execute(
                "SELECT COUNT(*) FROM issues WHERE assignee_id = ? AND state = 'opened'", (user["id"],)
            ).fetchone()[0]
            data["todo_mrs"] = self.conn.execute(
                "SELECT COUNT(*) FROM merge_requests WHERE (assignee_id = ? OR reviewer_id = ?) AND state = 'opened'",
                (user["id"], user["id"]),
            ).fetchone()[0]
        project = (context or {}).get("project")
        if project is not None:
            data["access"] = self.access_level(user, project)
            data["starred"] = (
                user is not None
                and self.conn.execute(
                    "SELECT 1 FROM stars WHERE user_id = ? AND project_id = ?", (user["id"], project["id"])
                ).fetchone()
                is not None
            )
        data.update(context or {})
        return self.templates.TemplateResponse(request, template, data, status_code=status_code)

    def not_found(self, request: Request) -> HTMLResponse:
        return self.render(request, "404.html", {"title": "Not Found"}, status_code=404)


def login_required(endpoint):
    """Decorate an endpoint `(request, user)` that only a signed-in user may see."""

    @functools.wraps(endpoint)
    async def wrapper(request: Request) -> Response:
        gl = Gitlab.of(request)
        user = gl.user(request)
        if user is None:
            return gl.login_redirect(request)
        return await endpoint(request, user)

    return wrapper


def project_page(login: bool = False, level: int = 0):
    """Decorate an endpoint `(request, project, user)` of a /{ns}/{project}/... route."""

    def decorate(endpoint):
        @functools.wraps(endpoint)
        async def wrapper(request: Request) -> Response:
            gl = Gitlab.of(request)
            user = gl.user(request)
            project = gl.project(request.path_params["ns"], request.path_params["project"])
            if project is None or not gl.can_see(user, project):
                if user is None and project is not None:
                    return gl.login_redirect(request)
                return gl.not_found(request)
            if (login or level) and user is None:
                return gl.login_redirect(request)
            if level and gl.access_level(user, project) < level:
                return gl.not_found(request)
            request.state.project = project
            return await endpoint(request, project, user)

        return wrapper

    return decorate


async def not_found(request: Request, exc: Exception) -> HTMLResponse:
    """The app's 404 handler."""
    return Gitlab.of(request).not_found(request)
