"""Project lists (dashboard, explore), the project overview, stars and starrers, activity, labels
and milestones."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from webrl.sites.gitlab import gitstore
from webrl.sites.gitlab.web import Gitlab, login_required, project_page, search_param
from webrl.sites.markdown import gitlab_markdown
from webrl.sites.platform import flash, int_param, now, redirect

PROJECT_SORTS = {
    "latest_activity_desc": ("Last updated", "p.last_activity_at DESC"),
    "created_desc": ("Last created", "p.created_at DESC"),
    "created_asc": ("Oldest created", "p.created_at ASC"),
    "name_asc": ("Name", "p.name COLLATE NOCASE ASC"),
    "name_desc": ("Name, descending", "p.name COLLATE NOCASE DESC"),
    "stars_desc": ("Most stars", "star_count DESC"),
    "latest_activity_asc": ("Oldest updated", "p.last_activity_at ASC"),
}
PER_PAGE = 20


def breadcrumbs(project, *more: tuple[str, str]) -> list[tuple[str, str]]:
    return [(project["ns_name"], f"/{project['ns_path']}"), (project["name"], f"/{project['full_path']}"), *more]


def render_subpage(request: Request, project, template: str, heading: str, nav: str, **data) -> Response:
    """A page of the project titled "<heading> · <project>", with the heading as its last breadcrumb."""
    return Gitlab.of(request).render(
        request,
        template,
        {
            "title": f"{heading} · {project['full_name']}",
            "project": project,
            "nav": nav,
            "breadcrumbs": breadcrumbs(project, (heading, request.url.path)),
            **data,
        },
    )


def project_list(request: Request, where: str, params: tuple, default_sort: str = "latest_activity_desc"):
    gl = Gitlab.of(request)
    user = gl.user(request)
    vis, vparams = gl.visible_clause(user)
    q = request.query_params
    sort = q.get("sort", default_sort)
    if sort not in PROJECT_SORTS:
        sort = default_sort
    name = search_param(request, "name")
    filt, fparams = "", ()
    if name is None:
        filt, name = " AND 0", ""  # refused: GitLab's alert, and nothing matches
    elif name:
        filt, fparams = " AND (p.name LIKE ? OR p.path LIKE ? OR n.path || '/' || p.path LIKE ?)", (f"%{name}%",) * 3
    if q.get("personal") == "true" and user is not None:
        filt += " AND n.owner_id = ?"
        fparams += (user["id"],)
    total = gl.conn.execute(
        f"SELECT COUNT(*) FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE {where} AND {vis}{filt}",
        (*params, *vparams, *fparams),
    ).fetchone()[0]
    page = int_param(q.get("page"), 1)
    rows = gl.conn.execute(
        gl.PROJECT_SQL + f" WHERE {where} AND {vis}{filt} ORDER BY {PROJECT_SORTS[sort][1]}, p.id LIMIT ? OFFSET ?",
        (*params, *vparams, *fparams, PER_PAGE, (page - 1) * PER_PAGE),
    ).fetchall()
    roles = {}
    if user is not None:
        roles = {p["id"]: gl.access_level(user, p) for p in rows}
    return {
        "projects": rows,
        "roles": roles,
        "sort": sort,
        "sorts": PROJECT_SORTS,
        "name_filter": name,
        "page": page,
        "pages": max(1, -(-total // PER_PAGE)),
        "total": total,
    }


def member_where(user) -> tuple[str, tuple]:
    return (
        "(p.id IN (SELECT project_id FROM project_members WHERE user_id = ?) OR p.namespace_id IN"
        " (SELECT group_id FROM group_members WHERE user_id = ?) OR n.owner_id = ?)",
        (user["id"],) * 3,
    )


def counts(gl: Gitlab, user) -> dict:
    where, params = member_where(user)
    return {
        "your": gl.conn.execute(
            f"SELECT COUNT(*) FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE {where}", params
        ).fetchone()[0],
        "starred": gl.conn.execute("SELECT COUNT(*) FROM stars WHERE user_id = ?", (user["id"],)).fetchone()[0],
    }


@login_required
async def dashboard(request: Request, user) -> Response:
    gl = Gitlab.of(request)
    starred = request.url.path.endswith("/starred")
    where, params = (
        ("p.id IN (SELECT project_id FROM stars WHERE user_id = ?)", (user["id"],)) if starred else member_where(user)
    )
    data = project_list(request, where, params)
    return gl.render(
        request,
        "projects_list.html",
        {
            **data,
            "title": "Starred Projects · Dashboard" if starred else "Projects · Dashboard",
            "page_id": "dashboard:projects",
            "tab": "starred" if starred else "your",
            "counts": counts(gl, user),
            "heading": "Projects",
        },
    )


async def explore(request: Request) -> Response:
    gl = Gitlab.of(request)
    path = request.url.path.rstrip("/")
    tab = "starred" if path.endswith("/starred") else "trending" if path.endswith("/trending") else "all"
    default = {"starred": "stars_desc", "trending": "stars_desc", "all": "latest_activity_desc"}[tab]
    where = "p.visibility != 'private'" if tab != "trending" else "p.last_activity_at >= '2023-01-01'"
    data = project_list(request, where, (), default)
    user = gl.user(request)
    return gl.render(
        request,
        "projects_list.html",
        {
            **data,
            "title": "Projects · Explore",
            "page_id": "explore:projects",
            "tab": tab,
            "explore": True,
            "counts": counts(gl, user) if user else {},
            "heading": "Explore projects",
        },
    )


@project_page()
async def show(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    branch = project["default_branch"]
    head = gitstore.head(gl.conn, project["id"], branch)
    ctx = {
        "title": project["full_name"],
        "project": project,
        "nav": "overview",
        "page_id": "projects:show",
        "breadcrumbs": breadcrumbs(project)[:-1] + [(project["name"], f"/{project['full_path']}")],
    }
    if head is not None:
        ctx["entries"] = gitstore.tree(gl.conn, project["id"], branch)
        ctx["last_commit"] = gl.conn.execute(
            "SELECT * FROM commits WHERE project_id = ? AND sha = ?", (project["id"], head)
        ).fetchone()
        ctx["commit_count"] = gitstore.commit_count(gl.conn, project["id"], head)
        readme = next(
            (e for e in ctx["entries"] if e["type"] == "blob" and e["name"].lower().startswith("readme")), None
        )
        if readme:
            ctx["readme"] = readme
            ctx["readme_html"] = gitlab_markdown(
                gitstore.blob_text(gl.conn, readme["blob_id"]),
                f"/{project['full_path']}/-/issues",
                f"/{project['full_path']}/-/blob/{branch}/",
            )
    ctx["branch_count"] = gl.conn.execute(
        "SELECT COUNT(*) FROM branches WHERE project_id = ?", (project["id"],)
    ).fetchone()[0]
    ctx["ref"] = branch
    if project["forked_from_id"]:
        ctx["forked_from"] = gl.project_by_id(project["forked_from_id"])
    return gl.render(request, "project_show.html", ctx)


@project_page(login=True)
async def toggle_star(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    starred = gl.conn.execute(
        "SELECT 1 FROM stars WHERE user_id = ? AND project_id = ?", (user["id"], project["id"])
    ).fetchone()
    if starred:
        gl.conn.execute("DELETE FROM stars WHERE user_id = ? AND project_id = ?", (user["id"], project["id"]))
    else:
        gl.conn.execute(
            "INSERT INTO stars (user_id, project_id, created_at) VALUES (?, ?, ?)", (user["id"], project["id"], now())
        )
    referer = request.headers.get("referer", "")
    base = str(request.base_url)
    return redirect(referer[len(base) - 1 :] if referer.startswith(base) else f"/{project['full_path']}")


@project_page()
async def starrers(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    rows = gl.conn.execute(
        "SELECT u.*, s.created_at AS starred_at FROM stars s JOIN users u ON u.id = s.user_id"
        " WHERE s.project_id = ? ORDER BY s.created_at DESC",
        (project["id"],),
    ).fetchall()
    return render_subpage(request, project, "starrers.html", "Starrers", "overview", starrers=rows)


@project_page()
async def activity(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    events = gl.conn.execute(
        "SELECT e.*, u.username, u.name, ? AS full_path, ? AS ns_name, ? AS project_name FROM events e"
        " JOIN users u ON u.id = e.user_id WHERE e.project_id = ? ORDER BY e.created_at DESC, e.id DESC LIMIT 60",
        (project["full_path"], project["ns_name"], project["name"], project["id"]),
    ).fetchall()
    return render_subpage(request, project, "activity.html", "Activity", "activity", events=events)


@project_page()
async def labels(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    rows = gl.conn.execute(
        "SELECT l.*, (SELECT COUNT(*) FROM issue_labels x JOIN issues i ON i.id = x.issue_id WHERE x.label_id = l.id "
        "AND i.state = 'opened') AS open_issues,"
        " (SELECT COUNT(*) FROM mr_labels x JOIN merge_requests m ON m.id = x.mr_id WHERE x.label_id = l.id AND "
        "m.state = 'opened') AS open_mrs"
        " FROM labels l WHERE l.project_id = ? ORDER BY l.title COLLATE NOCASE",
        (project["id"],),
    ).fetchall()
    return render_subpage(
        request,
        project,
        "labels.html",
        "Labels",
        "labels",
        labels=rows,
        form=request.session.pop("label_form", {}),
        errors=request.session.pop("label_errors", []),
    )


@project_page(level=20)
async def label_create(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    form = await request.form()
    title = str(form.get("label[title]", "")).strip()
    color = str(form.get("label[color]", "")).strip() or "#6699cc"
    desc = str(form.get("label[description]", "")).strip()
    errors = []
    if not title:
        errors.append("Title can't be blank")
    elif gl.conn.execute(
        "SELECT 1 FROM labels WHERE project_id = ? AND title = ? COLLATE NOCASE", (project["id"], title)
    ).fetchone():
        errors.append("Title has already been taken")
    if not re.fullmatch(r"#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3}", color):
        errors.append("Color must be a valid color code")
    if errors:
        request.session["label_form"] = {"title": title, "color": color, "description": desc}
        request.session["label_errors"] = errors
        return redirect(f"/{project['full_path']}/-/labels")
    gl.conn.execute(
        "INSERT INTO labels (project_id, title, color, description) VALUES (?, ?, ?, ?)",
        (project["id"], title, color, desc),
    )
    flash(request, f"Label {title} was created")
    return redirect(f"/{project['full_path']}/-/labels")


@project_page()
async def milestones(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    rows = gl.conn.execute(
        "SELECT m.*, (SELECT COUNT(*) FROM issues i WHERE i.milestone_id = m.id) AS issue_count,"
        " (SELECT COUNT(*) FROM issues i WHERE i.milestone_id = m.id AND i.state = 'closed') AS closed_count"
        " FROM milestones m WHERE m.project_id = ? ORDER BY m.due_date",
        (project["id"],),
    ).fetchall()
    return render_subpage(request, project, "milestones.html", "Milestones", "milestones", milestones=rows)


async def explore_root(request: Request) -> Response:
    return await explore(request)


async def dashboard_root(request: Request) -> Response:
    return RedirectResponse("/dashboard/projects", status_code=302)


ROUTES = [
    Route("/dashboard", dashboard_root),
    Route("/dashboard/projects", dashboard),
    Route("/dashboard/projects/starred", dashboard),
    Route("/explore", explore_root),
    Route("/explore/projects", explore),
    Route("/explore/projects/starred", explore),
    Route("/explore/projects/trending", explore),
    Route("/{ns}/{project}/toggle_star", toggle_star, methods=["POST"]),
    Route("/{ns}/{project}/toggle_star.json", toggle_star, methods=["POST"]),
    Route("/{ns}/{project}/-/starrers", starrers),
    Route("/{ns}/{project}/activity", activity),
    Route("/{ns}/{project}/-/activity", activity),
    Route("/{ns}/{project}/-/labels", labels),
    Route("/{ns}/{project}/-/labels", label_create, methods=["POST"]),
    Route("/{ns}/{project}/-/milestones", milestones),
]


CATCH_ALL = [Route("/{ns}/{project}", show)]  # goes after the named two-segment pages (/dashboard/projects, ...)
