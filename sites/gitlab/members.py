"""Project members (/-/project_members): the members table (direct and inherited from the group),
inviting a user with a role, changing a role and removing a member.

The table keeps the DOM contract WebArena's helper relies on: one row per member, the account cell
`td[data-label='Account']` holds `span.gl-avatar-labeled-sublabel` with exactly `@username`, and the
role cell `td.col-max-role` holds exactly one `span` with the role name."""

from __future__ import annotations

import sqlite3

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.gitlab.issuables import add_event
from webrl.sites.gitlab.projects import render_subpage
from webrl.sites.gitlab.web import ROLE_LEVELS, ROLES, Gitlab, project_page
from webrl.sites.platform import flash, now, redirect, row_id


def parse_level(value) -> int | None:
    text = str(value or "").strip().lower()
    if text.isdigit() and int(text) in ROLES:
        return int(text)
    return ROLE_LEVELS.get(text)


def members(conn: sqlite3.Connection, project) -> list[dict]:
    """One entry per user: the highest of their direct and inherited roles."""
    rows: dict[int, dict] = {}
    sources = [
        (
            "SELECT u.*, m.access_level, m.created_at AS granted_at FROM project_members m JOIN users u ON u.id = "
            "m.user_id"
            " WHERE m.project_id = ?",
            (project["id"],),
            "direct",
        ),
        (
            "SELECT u.*, m.access_level, m.created_at AS granted_at FROM group_members m JOIN users u ON u.id = "
            "m.user_id"
            " WHERE m.group_id = ?",
            (project["namespace_id"],),
            "group",
        ),
    ]
    for sql, params, source in sources:
        for r in conn.execute(sql, params):
            entry = rows.get(r["id"])
            if entry is None or r["access_level"] > entry["access_level"]:
                rows[r["id"]] = dict(r, source=source, direct=(entry or {}).get("direct") or source == "direct")
            elif source == "direct":
                entry["direct"] = True
    if project["ns_kind"] == "user" and project["ns_owner_id"] not in rows:
        owner = conn.execute("SELECT * FROM users WHERE id = ?", (project["ns_owner_id"],)).fetchone()
        rows[owner["id"]] = dict(owner, access_level=50, granted_at=project["created_at"], source="direct", direct=True)
    return sorted(rows.values(), key=lambda m: (-m["access_level"], m["name"].lower()))


@project_page()
async def index(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    access = gl.access_level(user, project)
    search = request.query_params.get("search", "").strip().lower()
    rows = members(gl.conn, project)
    if search:
        rows = [m for m in rows if search in m["username"].lower() or search in m["name"].lower()]
    return render_subpage(
        request,
        project,
        "members.html",
        "Members",
        "members",
        members=rows,
        can_manage=access >= 40,
        my_level=access,
        search=search,
        page_id="projects:project_members:index",
        form=request.session.pop("invite_form", {}),
    )


def back(project) -> Response:
    return redirect(f"/{project['full_path']}/-/project_members")


@project_page(level=40)
async def invite(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    raw = str(f.get("user_ids", "") or f.get("username", "")).strip()
    level = parse_level(f.get("access_level"))
    my_level = gl.access_level(user, project)
    names = [n.strip().lstrip("@") for n in raw.replace(";", ",").split(",") if n.strip()]
    request.session["invite_form"] = {"user_ids": raw, "access_level": str(f.get("access_level", ""))}
    if not names:
        flash(request, "Please select members to invite.", "alert")
        return back(project)
    if level is None:
        flash(request, "Please select a role: Guest, Reporter, Developer, Maintainer or Owner.", "alert")
        return back(project)
    if level > my_level:
        flash(request, "Access level should not be higher than your own.", "alert")
        return back(project)
    current = {m["id"] for m in members(gl.conn, project) if m["direct"]}
    found = []
    for name in names:
        row = gl.conn.execute("SELECT * FROM users WHERE username = ? OR email = ?", (name, name)).fetchone()
        if row is None:
            flash(request, f"Members were not added: user '{name}' was not found.", "alert")
            return back(project)
        if row["id"] in current:
            flash(request, f"@{row['username']}: Member already exists", "alert")
            return back(project)
        found.append(row)
    when = now()
    with gl.ctx.db.transaction() as c:
        for row in found:
            c.execute(
                "INSERT INTO project_members (project_id, user_id, access_level, created_at) VALUES (?, ?, ?, ?)",
                (project["id"], row["id"], level, when),
            )
            add_event(c, row["id"], project["id"], "joined", "Project", None, project["name"], when)
    request.session.pop("invite_form", None)
    flash(request, "Members were successfully added")
    return back(project)


def target(request: Request, project):
    """The direct member the path's {user_id} names."""
    user_id = row_id(request.path_params["user_id"])
    if user_id is None:
        return None
    return (
        Gitlab.of(request)
        .conn.execute(
            "SELECT u.*, m.access_level FROM project_members m JOIN users u ON u.id = m.user_id"
            " WHERE m.project_id = ? AND m.user_id = ?",
            (project["id"], user_id),
        )
        .fetchone()
    )


@project_page(level=40)
async def update(request: Request, project, user) -> Response:
    member = target(request, project)
    if member is None:
        flash(request, "Only direct members can be edited here.", "alert")
        return back(project)
    gl = Gitlab.of(request)
    f = await request.form()
    level = parse_level(f.get("access_level"))
    my_level = gl.access_level(user, project)
    if level is None:
        flash(request, "Please select a valid role.", "alert")
    elif member["id"] == project["ns_owner_id"]:
        flash(request, "The project owner's role cannot be changed.", "alert")
    elif level > my_level or member["access_level"] > my_level:
        flash(request, "Access level should not be higher than your own.", "alert")
    else:
        gl.conn.execute(
            "UPDATE project_members SET access_level = ? WHERE project_id = ? AND user_id = ?",
            (level, project["id"], member["id"]),
        )
        flash(request, f"Role of @{member['username']} was updated to {ROLES[level]}.")
    return back(project)


@project_page(level=40)
async def remove(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    member = target(request, project)
    if member is None:
        flash(request, "Only direct members can be removed here.", "alert")
    elif member["id"] == project["ns_owner_id"]:
        flash(request, "The project owner cannot be removed.", "alert")
    elif member["access_level"] > gl.access_level(user, project):
        flash(request, "You cannot remove a member with a higher role than yours.", "alert")
    else:
        gl.conn.execute(
            "DELETE FROM project_members WHERE project_id = ? AND user_id = ?", (project["id"], member["id"])
        )
        flash(request, "User was successfully removed from project.")
    return back(project)


ROUTES = [
    Route("/{ns}/{project}/-/project_members", index),
    Route("/{ns}/{project}/project_members", index),
    Route("/{ns}/{project}/-/project_members", invite, methods=["POST"]),
    Route("/{ns}/{project}/-/project_members/{user_id}", update, methods=["POST"]),
    Route("/{ns}/{project}/-/project_members/{user_id}/delete", remove, methods=["POST"]),
]
