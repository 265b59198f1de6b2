"""Creating projects (/projects/new), forking, and the project settings page (/-/edit): rename,
description, visibility, path, delete."""

from __future__ import annotations

import re
import sqlite3

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.gitlab import gitstore
from webrl.sites.gitlab.issuables import add_event
from webrl.sites.gitlab.projects import breadcrumbs, render_subpage
from webrl.sites.gitlab.web import NAME_RE, PATH_RE, VISIBILITIES, Gitlab, login_required, project_page
from webrl.sites.platform import flash, now, redirect

LEVEL_TO_VISIBILITY = {"0": "private", "10": "internal", "20": "public"}
NAME_ERROR = (
    "Name can contain only letters, digits, emojis, '_', '.', '+', dashes, or spaces. "
    "It must start with a letter, digit, emoji, or '_'."
)
PATH_ERROR = (
    "Path can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"
)

README_TEMPLATE = """# {name}

{description}

## Getting started

To make it easy for you to get started with GitLab, here's a list of recommended next steps.

- [ ] Add files using the web editor or the command line
- [ ] Invite team members and collaborators
- [ ] Create issues and merge requests to track the work

## Name

Choose a self-explaining name for your project.

## License

For open source projects, say how it is licensed.
"""


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9_.\-]+", "-", name.strip().lower()).strip("-")
    return re.sub(r"-{2,}", "-", slug)


def named_form(form, kind: str) -> tuple[str, str, str, str]:
    """(name, path, description, visibility) of a new project's or group's form (`kind[field]` names); the path
    defaults to the name's slug."""
    name = str(form.get(f"{kind}[name]", "")).strip()
    path = str(form.get(f"{kind}[path]", "")).strip() or slugify(name)
    description = str(form.get(f"{kind}[description]", "")).strip()
    visibility = LEVEL_TO_VISIBILITY.get(str(form.get(f"{kind}[visibility_level]", "0")), "private")
    return name, path, description, visibility


def validate(conn: sqlite3.Connection, ns_id: int, name: str, path: str, exclude: int | None = None) -> list[str]:
    errors = []
    if not name:
        errors.append("Name can't be blank")
    elif not NAME_RE.match(name):
        errors.append(NAME_ERROR)
    elif len(name) > 255:
        errors.append("Name is too long (maximum is 255 characters)")
    if not path:
        errors.append("Path can't be blank")
    elif not PATH_RE.match(path) or path.endswith((".git", ".atom")):
        errors.append(PATH_ERROR)
    taken = "SELECT 1 FROM projects WHERE namespace_id = ? AND {} = ? COLLATE NOCASE AND id IS NOT ?"
    if name and conn.execute(taken.format("name"), (ns_id, name, exclude)).fetchone():
        errors.append("Name has already been taken")
    if path and conn.execute(taken.format("path"), (ns_id, path, exclude)).fetchone():
        errors.append("Path has already been taken")
    return errors


def namespaces_for(conn: sqlite3.Connection, user) -> list[sqlite3.Row]:
    return conn.execute(
        "SELECT * FROM namespaces WHERE owner_id = ? UNION SELECT n.* FROM namespaces n JOIN group_members m"
        " ON m.group_id = n.id WHERE m.user_id = ? AND m.access_level >= 30 ORDER BY kind DESC, name",
        (user["id"], user["id"]),
    ).fetchall()


@login_required
async def new(request: Request, user) -> Response:
    gl = Gitlab.of(request)
    form = request.session.pop("project_form", None) or {
        "namespace_id": request.query_params.get("namespace_id", ""),
        "visibility": "private",
        "readme": True,
    }
    return gl.render(
        request,
        "project_new.html",
        {
            "title": "New Project",
            "namespaces": namespaces_for(gl.conn, user),
            "form": form,
            "page_id": "projects:new",
            "errors": request.session.pop("project_errors", []),
            "breadcrumbs": [("Projects", "/dashboard/projects"), ("New project", "/projects/new")],
        },
    )


@login_required
async def create(request: Request, user) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    name, path, description, visibility = named_form(f, "project")
    allowed = {str(n["id"]): n for n in namespaces_for(gl.conn, user)}
    ns = allowed.get(str(f.get("project[namespace_id]", "")))
    if ns is None:
        ns = next(n for n in allowed.values() if n["owner_id"] == user["id"])
    readme = bool(f.get("project[initialize_with_readme]"))
    errors = validate(gl.conn, ns["id"], name, path)
    if errors:
        request.session["project_form"] = {
            "name": name,
            "path": path,
            "description": description,
            "readme": readme,
            "visibility": visibility,
            "namespace_id": str(ns["id"]),
        }
        request.session["project_errors"] = errors
        return redirect("/projects/new")
    when = now()
    with gl.ctx.db.transaction() as c:
        pid = c.execute(
            "INSERT INTO projects (namespace_id, path, name, description, visibility, creator_id, created_at,"
            " last_activity_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (ns["id"], path, name, description, visibility, user["id"], when, when),
        ).lastrowid
        if ns["kind"] == "user":
            c.execute("INSERT INTO project_members VALUES (?, ?, 50, ?)", (pid, user["id"], when))
        if readme:
            text = README_TEMPLATE.format(name=name, description=description or "")
            gitstore.commit(
                c,
                pid,
                "main",
                gitstore.Author(user["id"], user["name"], user["email"]),
                "Initial commit",
                {"README.md": text},
                when,
            )
            c.execute("UPDATE branches SET protected = 1 WHERE project_id = ?", (pid,))
        add_event(c, user["id"], pid, "created", "Project", None, name, when)
    flash(request, f"Project '{name}' was successfully created.")
    return redirect(f"/{ns['path']}/{path}")


@project_page(level=40)
async def edit(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    form = request.session.pop("settings_form", None) or {
        "name": project["name"],
        "description": project["description"],
        "visibility": project["visibility"],
        "path": project["path"],
    }
    return gl.render(
        request,
        "project_edit.html",
        {
            "title": f"General · Settings · {project['full_name']}",
            "project": project,
            "nav": "settings",
            "form": form,
            "errors": request.session.pop("settings_errors", []),
            "page_id": "projects:edit",
            "breadcrumbs": breadcrumbs(
                project, ("Settings", f"/{project['full_path']}/-/edit"), ("General", f"/{project['full_path']}/-/edit")
            ),
        },
    )


@project_page(level=40)
async def update(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    if f.get("_method") == "delete":
        return await delete(request, project, user, f)
    name = str(f.get("project[name]", project["name"])).strip()
    path = str(f.get("project[path]", project["path"])).strip()
    description = str(f.get("project[description]", project["description"])).strip()
    visibility = LEVEL_TO_VISIBILITY.get(str(f.get("project[visibility_level]", "")), project["visibility"])
    errors = validate(gl.conn, project["namespace_id"], name, path, exclude=project["id"])
    if visibility not in VISIBILITIES:
        errors.append("Visibility level is not valid")
    if errors:
        request.session["settings_form"] = {
            "name": name,
            "description": description,
            "visibility": visibility,
            "path": path,
        }
        request.session["settings_errors"] = errors
        return redirect(f"/{project['full_path']}/-/edit")
    gl.conn.execute(
        "UPDATE projects SET name = ?, path = ?, description = ?, visibility = ?, last_activity_at = ? WHERE id = ?",
        (name, path, description, visibility, now(), project["id"]),
    )
    flash(request, f"Project '{name}' was successfully updated.")
    return redirect(f"/{project['ns_path']}/{path}/-/edit")


async def delete(request: Request, project, user, f) -> Response:
    gl = Gitlab.of(request)
    if gl.access_level(user, project) < 50:
        flash(request, "You don't have permission to delete this project.", "alert")
        return redirect(f"/{project['full_path']}/-/edit")
    if str(f.get("confirm_name", "")).strip() != project["full_path"]:
        flash(request, f"Please type {project['full_path']} to confirm deletion.", "alert")
        return redirect(f"/{project['full_path']}/-/edit")
    with gl.ctx.db.transaction() as c:
        for kind, table in (("Issue", "issues"), ("MergeRequest", "merge_requests")):
            c.execute(
                f"DELETE FROM notes WHERE noteable_type = ? AND noteable_id IN (SELECT id FROM {table} WHERE "
                "project_id = ?)",
                (kind, project["id"]),
            )
        c.execute("DELETE FROM projects WHERE id = ?", (project["id"],))
    flash(request, f"Project '{project['full_name']}' is being deleted.")
    return redirect("/dashboard/projects")


@project_page(login=True)
async def fork_new(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    form = request.session.pop("fork_form", None) or {
        "name": project["name"],
        "path": project["path"],
        "description": project["description"],
        "visibility": project["visibility"],
        "namespace_id": "",
    }
    return gl.render(
        request,
        "fork_new.html",
        {
            "title": f"Fork project · {project['full_name']}",
            "project": project,
            "form": form,
            "namespaces": namespaces_for(gl.conn, user),
            "errors": request.session.pop("fork_errors", []),
            "breadcrumbs": breadcrumbs(project, ("Fork project", request.url.path)),
        },
    )


@project_page(login=True)
async def fork_create(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    allowed = {str(n["id"]): n for n in namespaces_for(gl.conn, user)}
    ns = allowed.get(str(f.get("namespace_id", "")))
    name = str(f.get("name", project["name"])).strip()
    path = str(f.get("path", project["path"])).strip()
    description = str(f.get("description", project["description"])).strip()
    visibility = LEVEL_TO_VISIBILITY.get(str(f.get("visibility_level", "")), project["visibility"])
    errors = ["Please select a namespace"] if ns is None else validate(gl.conn, ns["id"], name, path)
    if errors:
        request.session["fork_form"] = {
            "name": name,
            "path": path,
            "description": description,
            "visibility": visibility,
            "namespace_id": str(f.get("namespace_id", "")),
        }
        request.session["fork_errors"] = errors
        return redirect(f"/{project['full_path']}/-/forks/new")
    when = now()
    with gl.ctx.db.transaction() as c:
        pid = c.execute(
            "INSERT INTO projects (namespace_id, path, name, description, visibility, default_branch, creator_id,"
            " forked_from_id, created_at, last_activity_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                ns["id"],
                path,
                name,
                description,
                visibility,
                project["default_branch"],
                user["id"],
                project["id"],
                when,
                when,
            ),
        ).lastrowid
        if ns["kind"] == "user":
            c.execute("INSERT INTO project_members VALUES (?, ?, 50, ?)", (pid, user["id"], when))
        gitstore.copy_repository(c, project["id"], pid)
        add_event(c, user["id"], pid, "created", "Project", None, name, when)
    flash(request, "The project was successfully forked.")
    return redirect(f"/{ns['path']}/{path}")


@project_page()
async def forks(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    vis, vparams = gl.visible_clause(user)
    rows = gl.conn.execute(
        gl.PROJECT_SQL + f" WHERE p.forked_from_id = ? AND {vis} ORDER BY p.created_at DESC", (project["id"], *vparams)
    ).fetchall()
    return render_subpage(request, project, "forks.html", "Forks", "overview", forks=rows)


ROUTES = [
    Route("/projects/new", new),
    Route("/projects", create, methods=["POST"]),
    Route("/{ns}/{project}/-/edit", edit),
    Route("/{ns}/{project}/-/edit", update, methods=["POST"]),
    Route("/{ns}/{project}/-/forks/new", fork_new),
    Route("/{ns}/{project}/-/forks", forks),
    Route("/{ns}/{project}/-/forks", fork_create, methods=["POST"]),
]
