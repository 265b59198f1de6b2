"""What issues and merge requests share: list filtering (state tabs, label_name[], assignee_username,
author_username, search, milestone_title, sort), the pages of one item, labels, assignees, notes and the
sidebar's edit forms."""

from __future__ import annotations

import functools
import sqlite3
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from webrl.sites.gitlab.projects import breadcrumbs
from webrl.sites.gitlab.web import Gitlab, project_page, search_param
from webrl.sites.platform import int_param, row_id, set_params_only

PER_PAGE = 20
SORTS = {
    "created_date": "t.created_at DESC",
    "created_desc": "t.created_at DESC",
    "created_asc": "t.created_at ASC",
    "updated_desc": "t.updated_at DESC",
    "updated_asc": "t.updated_at ASC",
    "due_date": "t.due_date IS NULL, t.due_date ASC",
    "due_date_asc": "t.due_date IS NULL, t.due_date ASC",
    "due_date_desc": "t.due_date IS NULL, t.due_date DESC",
    "title_asc": "t.title COLLATE NOCASE ASC",
    "title_desc": "t.title COLLATE NOCASE DESC",
    "popularity": "note_count DESC",
    "popularity_desc": "note_count DESC",
    "popularity_asc": "note_count ASC",
}
SORT_LABELS = {
    "created_date": "Created date",
    "updated_desc": "Updated date",
    "due_date": "Due date",
    "title_asc": "Title",
    "popularity": "Popularity",
}


@dataclass(frozen=True)
class Kind:
    name: str  # 'Issue' or 'MergeRequest'
    table: str
    label_table: str
    label_fk: str
    states: tuple[str, ...]
    path: str  # 'issues' or 'merge_requests'
    sigil: str
    heading: str  # the list's: 'Issues' or 'Merge requests'


ISSUE = Kind("Issue", "issues", "issue_labels", "issue_id", ("opened", "closed", "all"), "issues", "#", "Issues")
MR = Kind(
    "MergeRequest",
    "merge_requests",
    "mr_labels",
    "mr_id",
    ("opened", "merged", "closed", "all"),
    "merge_requests",
    "!",
    "Merge requests",
)


def crumbs(project: sqlite3.Row, kind: Kind, *more: tuple[str, str]) -> list:
    return breadcrumbs(project, (kind.heading, f"/{project['full_path']}/-/{kind.path}"), *more)


def list_page(kind: Kind, template: str, nav: str):
    """The endpoint of a project's list of issues or merge requests (filtered, sorted, paged)."""

    @set_params_only
    @project_page()
    async def index(request: Request, project: sqlite3.Row, user: sqlite3.Row | None) -> Response:
        gl = Gitlab.of(request)
        result = search_issuables(gl.conn, kind, request, "t.project_id = ?", (project["id"],))
        return gl.render(
            request,
            template,
            {
                "title": f"{kind.heading} · {project['full_name']}",
                "project": project,
                "result": result,
                "nav": nav,
                "page_id": f"projects:{kind.path}:index",
                "breadcrumbs": crumbs(project, kind),
            },
        )

    return index


def people(conn: sqlite3.Connection, *user_ids: int | None) -> dict[int, sqlite3.Row]:
    """The users of an item's roles (author, assignee, ...) by id; an empty role (None) is left out."""
    ids = [i for i in user_ids if i is not None]
    return {r["id"]: r for r in conn.execute(f"SELECT * FROM users WHERE id IN ({', '.join('?' * len(ids))})", ids)}


def load(conn: sqlite3.Connection, kind: Kind, project: sqlite3.Row, iid: str) -> sqlite3.Row | None:
    """The project's issue or merge request numbered `iid` (as the URL gives it)."""
    number = row_id(iid)
    if number is None:
        return None
    return conn.execute(
        f"SELECT * FROM {kind.table} WHERE project_id = ? AND iid = ?", (project["id"], number)
    ).fetchone()


def item_url(project: sqlite3.Row, kind: Kind, item: sqlite3.Row) -> str:
    return f"/{project['full_path']}/-/{kind.path}/{item['iid']}"


def item_page(kind: Kind, login: bool = False, level: int = 0):
    """Decorate an endpoint `(request, project, user, item)` of a /{ns}/{project}/-/<kind>/{iid}... route."""

    def decorate(endpoint):
        @project_page(login=login, level=level)
        @functools.wraps(endpoint)
        async def wrapper(request: Request, project: sqlite3.Row, user: sqlite3.Row | None) -> Response:
            gl = Gitlab.of(request)
            item = load(gl.conn, kind, project, request.path_params["iid"])
            if item is None:
                return gl.not_found(request)
            return await endpoint(request, project, user, item)

        return wrapper

    return decorate


def label_filters(request: Request) -> list[str]:
    names = request.query_params.getlist("label_name[]") + request.query_params.getlist("label_name")
    return [n for n in names if n]


def search_issuables(
    conn: sqlite3.Connection,
    kind: Kind,
    request: Request,
    scope: str,
    scope_params: tuple,
    default_state: str = "opened",
) -> dict:
    """Filter `kind` rows within `scope` (an SQL condition on t / p) by the request's query parameters."""
    q = request.query_params
    where, params = [scope], list(scope_params)
    for name in label_filters(request):
        if name.lower() == "none":
            where.append(f"NOT EXISTS (SELECT 1 FROM {kind.label_table} x WHERE x.{kind.label_fk} = t.id)")
            continue
        where.append(
            f"EXISTS (SELECT 1 FROM {kind.label_table} x JOIN labels l ON l.id = x.label_id"
            f" WHERE x.{kind.label_fk} = t.id AND l.title = ? COLLATE NOCASE)"
        )
        params.append(name)
    for key, column in (
        ("assignee_username", "t.assignee_id"),
        ("author_username", "t.author_id"),
        ("reviewer_username", "t.reviewer_id"),
    ):
        value = q.get(key) or q.get(key + "[]")
        if key == "reviewer_username" and kind is ISSUE:
            continue
        if not value:
            continue
        if value.lower() == "none":
            where.append(f"{column} IS NULL")
        elif value.lower() == "any":
            where.append(f"{column} IS NOT NULL")
        else:
            where.append(f"{column} = (SELECT id FROM users WHERE username = ?)")
            params.append(value.lstrip("@"))
    if q.get("assignee_id", "").lower() == "none":
        where.append("t.assignee_id IS NULL")
    search = search_param(request)
    if search is None:
        where.append("0")  # refused: GitLab's alert, and nothing matches
    elif search:
        where.append("(t.title LIKE ? OR t.description LIKE ?)")
        params += [f"%{search}%", f"%{search}%"]
    if (milestone := q.get("milestone_title")) and kind is ISSUE:
        where.append("t.milestone_id IN (SELECT id FROM milestones WHERE title = ?)")
        params.append(milestone)
    elif milestone:
        where.append("0")  # merge requests here have no milestones
    base = (
        f" FROM {kind.table} t JOIN projects p ON p.id = t.project_id JOIN namespaces n ON n.id = p.namespace_id"
        f" WHERE {' AND '.join(where)}"
    )
    counts = {s: 0 for s in kind.states}
    for state, n in conn.execute(f"SELECT t.state, COUNT(*) {base} GROUP BY t.state", params):
        counts[state] = n
    counts["all"] = sum(v for k, v in counts.items() if k != "all")
    state = q.get("state", default_state)
    if state not in kind.states:
        state = default_state
    state_sql = "" if state == "all" else " AND t.state = ?"
    state_params = [] if state == "all" else [state]
    sort = q.get("sort", "created_date")
    order = SORTS.get(sort, SORTS["created_date"])
    page = int_param(q.get("page"), 1)
    total = counts[state]
    rows = conn.execute(
        "SELECT t.*, n.path || '/' || p.path AS full_path, p.name AS project_name,"
        " au.username AS author_username, au.name AS author_name,"
        " asg.username AS assignee_username, asg.name AS assignee_name,"
        " (SELECT COUNT(*) FROM notes nt WHERE nt.noteable_type = ? AND nt.noteable_id = t.id AND nt.system = 0) AS "
        "note_count"
        + base.replace(
            " WHERE ", " JOIN users au ON au.id = t.author_id LEFT JOIN users asg ON asg.id = t.assignee_id WHERE ", 1
        )
        + state_sql
        + f" ORDER BY {order}, t.id DESC LIMIT ? OFFSET ?",
        [kind.name, *params, *state_params, PER_PAGE, (page - 1) * PER_PAGE],
    ).fetchall()
    items = [dict(r, labels=labels_of(conn, kind, r["id"])) for r in rows]
    return {
        "rows": items,
        "counts": counts,
        "state": state,
        "sort": sort if sort in SORTS else "created_date",
        "page": page,
        "pages": max(1, -(-total // PER_PAGE)),
        "label_filters": label_filters(request),
        "search": search or "",
        "kind": kind,
        "sort_labels": SORT_LABELS,
    }


def labels_of(conn: sqlite3.Connection, kind: Kind, target_id: int) -> list[sqlite3.Row]:
    return conn.execute(
        f"SELECT l.* FROM labels l JOIN {kind.label_table} x ON x.label_id = l.id"
        f" WHERE x.{kind.label_fk} = ? ORDER BY l.title",
        (target_id,),
    ).fetchall()


def project_labels(conn: sqlite3.Connection, project_id: int) -> list[sqlite3.Row]:
    return conn.execute(
        "SELECT * FROM labels WHERE project_id = ? ORDER BY title COLLATE NOCASE", (project_id,)
    ).fetchall()


def notes_of(conn: sqlite3.Connection, kind: Kind, target_id: int) -> list[sqlite3.Row]:
    return conn.execute(
        "SELECT nt.*, u.username, u.name FROM notes nt JOIN users u ON u.id = nt.author_id"
        " WHERE nt.noteable_type = ? AND nt.noteable_id = ? ORDER BY nt.created_at, nt.id",
        (kind.name, target_id),
    ).fetchall()


def assignable_users(conn: sqlite3.Connection, project: sqlite3.Row) -> list[sqlite3.Row]:
    """Members of the project (direct, via its group, or the personal namespace's owner)."""
    return conn.execute(
        "SELECT * FROM users WHERE id IN (SELECT user_id FROM project_members WHERE project_id = ?"
        " UNION SELECT user_id FROM group_members WHERE group_id = ? UNION SELECT owner_id FROM namespaces WHERE id "
        "= ?)"
        " ORDER BY name COLLATE NOCASE",
        (project["id"], project["namespace_id"], project["namespace_id"]),
    ).fetchall()


def form_assignee(
    conn: sqlite3.Connection, project: sqlite3.Row, username: str, errors: list[str]
) -> sqlite3.Row | None:
    """The member a new issue or merge request form names as assignee; an error when it names someone else."""
    members = {u["username"].lower(): u for u in assignable_users(conn, project)}
    assignee = members.get(username.lower()) if username else None
    if username and assignee is None:
        errors.append(f"Assignee '{username}' is not a member of this project")
    return assignee


def add_note(
    conn: sqlite3.Connection, kind: Kind, target_id: int, user_id: int, body: str, when: str, system: bool = False
) -> None:
    conn.execute(
        "INSERT INTO notes (noteable_type, noteable_id, author_id, body, system, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (kind.name, target_id, user_id, body, int(system), when),
    )
    conn.execute(f"UPDATE {kind.table} SET updated_at = ? WHERE id = ?", (when, target_id))


def next_iid(conn: sqlite3.Connection, kind: Kind, project: sqlite3.Row) -> int:
    """The number the project's next issue or merge request gets (#1, #2, ... per project and kind)."""
    sql = f"SELECT COALESCE(MAX(iid), 0) + 1 FROM {kind.table} WHERE project_id = ?"
    return conn.execute(sql, (project["id"],)).fetchone()[0]


def close(conn: sqlite3.Connection, kind: Kind, item: sqlite3.Row, user_id: int, when: str) -> None:
    conn.execute(
        f"UPDATE {kind.table} SET state = 'closed', closed_at = ?, updated_at = ? WHERE id = ?",
        (when, when, item["id"]),
    )
    add_note(conn, kind, item["id"], user_id, "closed", when, system=True)


def reopen(conn: sqlite3.Connection, kind: Kind, item: sqlite3.Row, user_id: int, when: str) -> None:
    conn.execute(
        f"UPDATE {kind.table} SET state = 'opened', closed_at = NULL, updated_at = ? WHERE id = ?", (when, item["id"])
    )
    add_note(conn, kind, item["id"], user_id, "reopened", when, system=True)


def add_event(
    conn: sqlite3.Connection,
    user_id: int,
    project_id: int | None,
    action: str,
    target_type: str = "",
    iid: int | None = None,
    title: str = "",
    when: str = "",
) -> None:
    conn.execute(
        "INSERT INTO events (user_id, project_id, action, target_type, target_iid, target_title, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (user_id, project_id, action, target_type, iid, title, when),
    )
    if project_id is not None:
        conn.execute("UPDATE projects SET last_activity_at = ? WHERE id = ?", (when, project_id))


def apply_sidebar_update(
    conn: sqlite3.Connection, kind: Kind, target: sqlite3.Row, project: sqlite3.Row, user: sqlite3.Row, form, when: str
) -> list[str]:
    """Apply the sidebar form (labels, assignee, milestone, due date); return system note texts."""
    notes = []
    if "label_ids_submitted" in form:
        wanted = {row_id(v) for v in form.getlist("label_ids[]")} - {None}
        valid = {r["id"]: r["title"] for r in project_labels(conn, project["id"])}
        wanted &= set(valid)
        current = {r["id"] for r in labels_of(conn, kind, target["id"])}
        added, removed = wanted - current, current - wanted
        for lid in added:
            conn.execute(
                f"INSERT INTO {kind.label_table} ({kind.label_fk}, label_id) VALUES (?, ?)", (target["id"], lid)
            )
        for lid in removed:
            conn.execute(
                f"DELETE FROM {kind.label_table} WHERE {kind.label_fk} = ? AND label_id = ?", (target["id"], lid)
            )
        parts = []
        if added:
            parts.append(
                "added "
                + " ".join(f"~{valid[i]}" for i in sorted(added))
                + (" label" if len(added) == 1 else " labels")
            )
        if removed:
            parts.append(
                "removed "
                + " ".join(f"~{valid[i]}" for i in sorted(removed))
                + (" label" if len(removed) == 1 else " labels")
            )
        if parts:
            notes.append(" and ".join(parts))
    if "assignee_username" in form:
        name = str(form.get("assignee_username", "")).strip().lstrip("@")
        new = None
        if name:
            members = {u["username"].lower(): u for u in assignable_users(conn, project)}
            new = members.get(name.lower())
            if new is None:
                raise ValueError(f"Assignee '{name}' is not a member of this project")
        if (new["id"] if new else None) != target["assignee_id"]:
            conn.execute(
                f"UPDATE {kind.table} SET assignee_id = ? WHERE id = ?", (new["id"] if new else None, target["id"])
            )
            notes.append(f"assigned to @{new['username']}" if new else "removed assignee")
    if kind is ISSUE and "due_date" in form:
        due = str(form.get("due_date", "")).strip() or None
        if due is not None and not _is_date(due):
            raise ValueError("Due date is invalid")
        if due != target["due_date"]:
            conn.execute("UPDATE issues SET due_date = ? WHERE id = ?", (due, target["id"]))
            notes.append(f"changed due date to {due}" if due else "removed due date")
    if kind is ISSUE and "milestone_id" in form:
        raw = str(form.get("milestone_id", ""))
        ms = (
            conn.execute("SELECT * FROM milestones WHERE id = ? AND project_id = ?", (raw, project["id"])).fetchone()
            if raw
            else None
        )
        if (ms["id"] if ms else None) != target["milestone_id"]:
            conn.execute("UPDATE issues SET milestone_id = ? WHERE id = ?", (ms["id"] if ms else None, target["id"]))
            notes.append(f"changed milestone to %{ms['title']}" if ms else "removed milestone")
    for text in notes:
        add_note(conn, kind, target["id"], user["id"], text, when, system=True)
    if notes:
        conn.execute(f"UPDATE {kind.table} SET updated_at = ? WHERE id = ?", (when, target["id"]))
    return notes


def _is_date(value: str) -> bool:
    from datetime import date

    try:
        date.fromisoformat(value)
        return True
    except ValueError:
        return False
