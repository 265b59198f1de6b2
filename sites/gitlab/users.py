"""Signing in and out, the profile settings, user pages, groups, the dashboard's issue and merge
request lists, and search."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from webrl.sites.gitlab import issuables
from webrl.sites.gitlab.issuables import ISSUE, MR
from webrl.sites.gitlab.project_admin import NAME_ERROR, PATH_ERROR, named_form
from webrl.sites.gitlab.web import NAME_RE, PATH_RE, Gitlab, login_required, search_param
from webrl.sites.platform import check_password, flash, now, redirect, set_params_only

USER_TABS = {
    "overview": "Overview",
    "activity": "Activity",
    "groups": "Groups",
    "contributed": "Contributed projects",
    "projects": "Personal projects",
    "starred": "Starred projects",
}
URL_RE = re.compile(r"(https?://\S+)?\Z")


async def sign_in(request: Request) -> Response:
    gl = Gitlab.of(request)
    if gl.user(request) is not None:
        return RedirectResponse("/", status_code=302)
    return gl.render(request, "sign_in.html", {"title": "Sign in", "login": request.session.pop("login_name", "")})


async def sign_in_post(request: Request) -> Response:
    gl = Gitlab.of(request)
    form = await request.form()
    login = str(form.get("user[login]", "")).strip()
    password = str(form.get("user[password]", ""))
    row = gl.conn.execute("SELECT * FROM users WHERE username = ? OR email = ?", (login, login)).fetchone()
    if row is None or not check_password(password, row["password_hash"]):
        flash(request, "Invalid login or password.", "alert")
        request.session["login_name"] = login
        return redirect("/users/sign_in")
    request.session["user_id"] = row["id"]
    return redirect(request.session.pop("after_login", None) or "/")


async def sign_out(request: Request) -> Response:
    request.session.pop("user_id", None)
    request.session.pop("after_login", None)
    return redirect("/users/sign_in")


async def root(request: Request) -> Response:
    gl = Gitlab.of(request)
    if gl.user(request) is None:
        return RedirectResponse("/users/sign_in", status_code=302)
    return RedirectResponse("/dashboard/projects", status_code=302)


@login_required
async def profile(request: Request, user) -> Response:
    gl = Gitlab.of(request)
    return gl.render(
        request,
        "profile.html",
        {
            "title": "Profile · User Settings",
            "page_id": "profile",
            "form": request.session.pop("profile_form", None) or dict(user),
            "errors": request.session.pop("profile_errors", []),
        },
    )


@login_required
async def profile_update(request: Request, user) -> Response:
    gl = Gitlab.of(request)
    form = await request.form()
    data = {
        k: str(form.get(f"user[{k}]", user[k])).strip()
        for k in ("name", "email", "website", "location", "bio", "organization")
    }
    errors = []
    if not data["name"]:
        errors.append("Name can't be blank")
    elif len(data["name"]) > 255:
        errors.append("Name is too long (maximum is 255 characters)")
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", data["email"]):
        errors.append("Email is invalid")
    elif gl.conn.execute("SELECT 1 FROM users WHERE email = ? AND id != ?", (data["email"], user["id"])).fetchone():
        errors.append("Email has already been taken")
    if not URL_RE.match(data["website"]):
        errors.append("Website url is not a valid URL")
    if errors:
        request.session["profile_form"], request.session["profile_errors"] = data, errors
        return redirect("/-/profile")
    gl.conn.execute(
        "UPDATE users SET name = ?, email = ?, website = ?, location = ?, bio = ?, organization = ? WHERE id = ?",
        (*data.values(), user["id"]),
    )
    gl.conn.execute("UPDATE namespaces SET name = ? WHERE owner_id = ? AND kind = 'user'", (data["name"], user["id"]))
    flash(request, "Profile was successfully updated")
    return redirect("/-/profile")


# -- users and groups --------------------------------------------------------------------------


def projects_of(gl: Gitlab, where: str, params: tuple, viewer, order: str = "p.last_activity_at DESC") -> list:
    vis, vparams = gl.visible_clause(viewer)
    return gl.conn.execute(
        gl.PROJECT_SQL + f" WHERE {where} AND {vis} ORDER BY {order}", (*params, *vparams)
    ).fetchall()


async def user_page(request: Request, username: str, tab: str) -> Response:
    gl = Gitlab.of(request)
    viewer = gl.user(request)
    user = gl.user_by_name(username)
    if user is None:
        return await group_page(request, username)
    ctx = {"title": user["name"], "user": user, "tab": tab, "tabs": USER_TABS, "page_id": "users:show"}
    if tab in ("overview", "activity"):
        vis, vparams = gl.visible_clause(viewer)
        ctx["events"] = gl.conn.execute(
            "SELECT e.*, n.path || '/' || p.path AS full_path, p.name AS project_name, n.name AS ns_name"
            f" FROM events e JOIN projects p ON p.id = e.project_id JOIN namespaces n ON n.id = p.namespace_id"
            f" WHERE e.user_id = ? AND {vis} ORDER BY e.created_at DESC, e.id DESC LIMIT ?",
            (user["id"], *vparams, 20 if tab == "overview" else 60),
        ).fetchall()
    if tab in ("overview", "projects"):
        ctx["projects"] = projects_of(gl, "n.owner_id = ?", (user["id"],), viewer)
    elif tab == "contributed":
        ctx["projects"] = projects_of(
            gl,
            "p.id IN (SELECT project_id FROM events WHERE user_id = ?) AND n.owner_id IS NOT ?",
            (user["id"], user["id"]),
            viewer,
        )
    elif tab == "starred":
        ctx["projects"] = projects_of(
            gl, "p.id IN (SELECT project_id FROM stars WHERE user_id = ?)", (user["id"],), viewer
        )
    elif tab == "groups":
        ctx["groups"] = gl.conn.execute(
            "SELECT n.* FROM namespaces n JOIN group_members m ON m.group_id = n.id"
            " WHERE m.user_id = ? ORDER BY n.name",
            (user["id"],),
        ).fetchall()
    return gl.render(request, "user_show.html", ctx)


async def user_show(request: Request) -> Response:
    return await user_page(request, request.path_params["name"], "overview")


async def user_tab(request: Request) -> Response:
    gl = Gitlab.of(request)
    tab = request.path_params["tab"]
    if tab not in USER_TABS or gl.user_by_name(request.path_params["name"]) is None:
        return gl.not_found(request)
    return await user_page(request, request.path_params["name"], tab)


def group_row(gl: Gitlab, path: str):
    return gl.conn.execute("SELECT * FROM namespaces WHERE path = ? AND kind = 'group'", (path,)).fetchone()


async def group_page(request: Request, path: str | None = None) -> Response:
    gl = Gitlab.of(request)
    group = group_row(gl, path or request.path_params["name"])
    if group is None:
        return gl.not_found(request)
    viewer = gl.user(request)
    projects = projects_of(gl, "p.namespace_id = ?", (group["id"],), viewer, "p.name COLLATE NOCASE")
    return gl.render(
        request,
        "group_show.html",
        {
            "title": group["name"],
            "group": group,
            "nav": "group_overview",
            "projects": projects,
            "breadcrumbs": [(group["name"], f"/{group['path']}")],
            "page_id": "groups:show",
        },
    )


def group_members_rows(gl: Gitlab, group_id: int) -> list:
    return gl.conn.execute(
        "SELECT u.*, m.access_level, m.created_at AS member_since FROM group_members m JOIN users u"
        " ON u.id = m.user_id WHERE m.group_id = ? ORDER BY u.name COLLATE NOCASE",
        (group_id,),
    ).fetchall()


async def group_members(request: Request) -> Response:
    gl = Gitlab.of(request)
    group = group_row(gl, request.path_params["name"])
    if group is None:
        return gl.not_found(request)
    return gl.render(
        request,
        "group_members.html",
        {
            "title": f"Members · {group['name']}",
            "group": group,
            "nav": "group_members",
            "members": group_members_rows(gl, group["id"]),
            "breadcrumbs": [(group["name"], f"/{group['path']}"), ("Members", request.url.path)],
        },
    )


@set_params_only
async def group_issuables(request: Request) -> Response:
    gl = Gitlab.of(request)
    group = group_row(gl, request.path_params["name"])
    if group is None:
        return gl.not_found(request)
    if request.path_params["kind"] not in ("issues", "merge_requests"):
        return gl.not_found(request)
    kind = ISSUE if request.path_params["kind"] == "issues" else MR
    vis, vparams = gl.visible_clause(gl.user(request))
    result = issuables.search_issuables(
        gl.conn, kind, request, f"p.namespace_id = ? AND {vis}", (group["id"], *vparams)
    )
    heading = "Issues" if kind is ISSUE else "Merge requests"
    return gl.render(
        request,
        "dashboard_issuables.html",
        {
            "title": f"{heading} · {group['name']}",
            "group": group,
            "heading": heading,
            "result": result,
            "nav": "group_issues" if kind is ISSUE else "group_mrs",
            "needs_filter": False,
            "breadcrumbs": [(group["name"], f"/{group['path']}"), (heading, request.url.path)],
        },
    )


@login_required
async def dashboard_groups(request: Request, user) -> Response:
    gl = Gitlab.of(request)
    groups = gl.conn.execute(
        "SELECT n.*, m.access_level, (SELECT COUNT(*) FROM projects p WHERE p.namespace_id = n.id) AS project_count,"
        " (SELECT COUNT(*) FROM group_members g WHERE g.group_id = n.id) AS member_count FROM namespaces n"
        " JOIN group_members m ON m.group_id = n.id WHERE m.user_id = ? ORDER BY n.name",
        (user["id"],),
    ).fetchall()
    return gl.render(request, "groups_list.html", {"title": "Groups · Dashboard", "groups": groups, "tab": "your"})


# first path segments that are pages of the site, not users or groups (/{name} resolves users and groups)
RESERVED_PATHS = {
    "-",
    "admin",
    "api",
    "dashboard",
    "explore",
    "groups",
    "help",
    "profile",
    "projects",
    "search",
    "users",
}


@login_required
async def group_new(request: Request, user) -> Response:
    gl = Gitlab.of(request)
    return gl.render(
        request,
        "group_new.html",
        {
            "title": "New group",
            "page_id": "groups:new",
            "errors": request.session.pop("group_errors", []),
            "form": request.session.pop("group_form", None) or {"visibility": "private"},
            "breadcrumbs": [("Groups", "/dashboard/groups"), ("New group", "/groups/new")],
        },
    )


@login_required
async def group_create(request: Request, user) -> Response:
    """A new group, owned by its creator (access level 50), at /<path>."""
    gl = Gitlab.of(request)
    name, path, description, visibility = named_form(await request.form(), "group")
    errors = []
    if not name:
        errors.append("Name can't be blank")
    elif not NAME_RE.match(name) or len(name) > 255:
        errors.append(NAME_ERROR if len(name) <= 255 else "Name is too long (maximum is 255 characters)")
    if not path:
        errors.append("Group URL can't be blank")
    elif not PATH_RE.match(path) or path.endswith((".git", ".atom")):
        errors.append(PATH_ERROR.replace("Path", "Group URL"))
    elif path.lower() in RESERVED_PATHS:
        errors.append(f"Group URL {path} is a reserved name")
    elif gl.conn.execute("SELECT 1 FROM namespaces WHERE path = ?", (path,)).fetchone():
        errors.append("Group URL has already been taken")
    if errors:
        request.session["group_form"] = {
            "name": name,
            "path": path,
            "description": description,
            "visibility": visibility,
        }
        request.session["group_errors"] = errors
        return redirect("/groups/new")
    when = now()
    with gl.ctx.db.transaction() as c:
        group_id = c.execute(
            "INSERT INTO namespaces (path, name, kind, owner_id, description, visibility, created_at)"
            " VALUES (?, ?, 'group', ?, ?, ?, ?)",
            (path, name, user["id"], description, visibility, when),
        ).lastrowid
        c.execute("INSERT INTO group_members VALUES (?, ?, 50, ?)", (group_id, user["id"], when))
    flash(request, f"Group '{name}' was successfully created.")
    return redirect(f"/{path}")


@login_required
async def preferences(request: Request, user) -> Response:
    return Gitlab.of(request).render(
        request, "preferences.html", {"title": "Preferences · User Settings", "page_id": "profiles:preferences:show"}
    )


async def explore_groups(request: Request) -> Response:
    gl = Gitlab.of(request)
    groups = gl.conn.execute(
        "SELECT n.*, NULL AS access_level, (SELECT COUNT(*) FROM projects p WHERE p.namespace_id = n.id) AS "
        "project_count,"
        " (SELECT COUNT(*) FROM group_members g WHERE g.group_id = n.id) AS member_count FROM namespaces n"
        " WHERE n.kind = 'group' ORDER BY n.name"
    ).fetchall()
    return gl.render(request, "groups_list.html", {"title": "Groups · Explore", "groups": groups, "tab": "explore"})


@set_params_only
@login_required
async def dashboard_issuables(request: Request, user) -> Response:
    gl = Gitlab.of(request)
    kind = ISSUE if request.url.path.endswith("issues") else MR
    heading = "Issues" if kind is ISSUE else "Merge requests"
    filters = ("assignee_username", "author_username", "reviewer_username", "label_name[]", "search", "milestone_title")
    needs_filter = not any(request.query_params.get(k) for k in filters)
    vis, vparams = gl.visible_clause(user)
    result = issuables.search_issuables(
        gl.conn, kind, request, "0" if needs_filter else vis, () if needs_filter else vparams
    )
    return gl.render(
        request,
        "dashboard_issuables.html",
        {"title": f"{heading} · Dashboard", "heading": heading, "result": result, "needs_filter": needs_filter},
    )


async def search(request: Request) -> Response:
    gl = Gitlab.of(request)
    viewer = gl.user(request)
    term = search_param(request) or ""  # refused: GitLab's alert and no results
    scope = request.query_params.get("scope", "projects")
    vis, vparams = gl.visible_clause(viewer)
    results, counts = [], {}
    if term:
        like = f"%{term}%"
        counts["projects"] = gl.conn.execute(
            "SELECT COUNT(*) FROM projects p JOIN namespaces n ON n.id = p.namespace_id"
            f" WHERE (p.name LIKE ? OR p.description LIKE ?) AND {vis}",
            (like, like, *vparams),
        ).fetchone()[0]
        for key, table in (("issues", "issues"), ("merge_requests", "merge_requests")):
            counts[key] = gl.conn.execute(
                f"SELECT COUNT(*) FROM {table} t JOIN projects p ON p.id = t.project_id WHERE t.title LIKE ? AND {vis}",
                (like, *vparams),
            ).fetchone()[0]
        counts["users"] = gl.conn.execute(
            "SELECT COUNT(*) FROM users WHERE username LIKE ? OR name LIKE ?", (like, like)
        ).fetchone()[0]
        if scope == "projects":
            results = projects_of(gl, "(p.name LIKE ? OR p.description LIKE ?)", (like, like), viewer)[:50]
        elif scope in ("issues", "merge_requests"):
            results = gl.conn.execute(
                f"SELECT t.*, n.path || '/' || p.path AS full_path FROM {scope} t JOIN projects p ON p.id = "
                "t.project_id"
                f" JOIN namespaces n ON n.id = p.namespace_id WHERE t.title LIKE ? AND {vis} ORDER BY t.updated_at "
                "DESC LIMIT 50",
                (like, *vparams),
            ).fetchall()
        elif scope == "users":
            results = gl.conn.execute(
                "SELECT * FROM users WHERE username LIKE ? OR name LIKE ? ORDER BY name LIMIT 50", (like, like)
            ).fetchall()
    return gl.render(
        request,
        "search.html",
        {"title": "Search", "term": term, "scope": scope, "results": results, "counts": counts, "page_id": "search"},
    )


async def user_or_group(request: Request) -> Response:
    return await user_page(request, request.path_params["name"], "overview")


ROUTES = [
    Route("/", root),
    Route("/users/sign_in", sign_in),
    Route("/users/sign_in", sign_in_post, methods=["POST"]),
    Route("/users/sign_out", sign_out, methods=["GET", "POST"]),
    Route("/-/profile", profile),
    Route("/-/profile", profile_update, methods=["POST"]),
    Route("/-/profile/preferences", preferences),
    Route("/profile", profile),
    Route("/dashboard/groups", dashboard_groups),
    Route("/explore/groups", explore_groups),
    Route("/dashboard/issues", dashboard_issuables),
    Route("/dashboard/merge_requests", dashboard_issuables),
    Route("/search", search),
    Route("/users/{name}/{tab}", user_tab),
    Route("/users/{name}", user_show),
    Route("/groups/new", group_new),
    Route("/groups", group_create, methods=["POST"]),
    Route("/groups/{name}", group_page),
    Route("/groups/{name}/-/group_members", group_members),
    Route("/groups/{name}/-/{kind:str}", group_issuables),
]


CATCH_ALL = [Route("/{name}", user_or_group)]  # goes last: it catches any one-segment path
