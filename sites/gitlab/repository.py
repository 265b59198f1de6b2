"""The Repository pages of a project (views of the git object store, gitstore.py): files (tree, blob, raw,
find file), commits and a commit's diff, branches and contributors; and what the web editor (editor.py) and
merge requests use of them: refs in URLs, the file pages' context and file diffs."""

from __future__ import annotations

import difflib
import functools
import re
import sqlite3

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from webrl.sites.gitlab import gitstore
from webrl.sites.gitlab.issuables import add_event
from webrl.sites.gitlab.projects import breadcrumbs, render_subpage
from webrl.sites.gitlab.web import Gitlab, project_page, search_param
from webrl.sites.markdown import gitlab_markdown
from webrl.sites.platform import flash, int_param, now, redirect

COMMITS_PER_PAGE = 40
BRANCH_RE = re.compile(r"(?!/)(?!.*//)(?!.*\.\.)(?!.*\.lock$)[A-Za-z0-9._/\-]+(?<!/)(?<!\.)\Z")


def diff_rows(old: str, new: str) -> tuple[list[tuple[str, int | str, int | str, str]], int, int]:
    """Unified diff rows (kind, old line no, new line no, text) with added and removed counts."""
    rows, added, removed = [], 0, 0
    a, b = old.splitlines(), new.splitlines()
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(3):
        first, last = group[0], group[-1]
        rows.append(
            ("match", "", "", f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@")
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [("context", i1 + k + 1, j1 + k + 1, a[i1 + k]) for k in range(i2 - i1)]
                continue
            if tag in ("replace", "delete"):
                rows += [("old", i1 + k + 1, "", a[i1 + k]) for k in range(i2 - i1)]
                removed += i2 - i1
            if tag in ("replace", "insert"):
                rows += [("new", "", j1 + k + 1, b[j1 + k]) for k in range(j2 - j1)]
                added += j2 - j1
    return rows, added, removed


def file_diff(conn: sqlite3.Connection, path: str, old: int | None, new: int | None, status: str | None = None) -> dict:
    """One file's diff between two blobs (None: no file), as the commit and merge request pages show it."""
    rows, added, removed = diff_rows(gitstore.blob_text(conn, old), gitstore.blob_text(conn, new))
    status = status or ("added" if old is None else "deleted" if new is None else "modified")
    return {"path": path, "rows": rows, "added": added, "removed": removed, "status": status}


def branch_names(conn: sqlite3.Connection, project) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM branches WHERE project_id = ? ORDER BY name = ? DESC, name",
        (project["id"], project["default_branch"]),
    ).fetchall()
    return [r[0] for r in rows]


def split_ref(conn: sqlite3.Connection, project, rest: str, allow_sha: bool = False) -> tuple[str, str] | None:
    """'feature/x/src/a.js' -> ('feature/x', 'src/a.js') using the project's branch names."""
    rest = rest.strip("/")
    for name in sorted(branch_names(conn, project), key=len, reverse=True):
        if rest == name or rest.startswith(name + "/"):
            return name, rest[len(name) :].strip("/")
    if allow_sha:
        first, _, path = rest.partition("/")
        if re.fullmatch(r"[0-9a-f]{7,40}", first):
            row = conn.execute(
                "SELECT sha FROM commits WHERE project_id = ? AND sha LIKE ?", (project["id"], first + "%")
            ).fetchone()
            if row:
                return row[0], path
    return None


def ref_page(allow_sha: bool = False):
    """Decorate an endpoint `(request, project, user, ref, path)` of a /{ns}/{project}/-/<page>/<ref>/<path>
    route (no ref: the default branch); a ref that is not the project's is a 404."""

    def decorate(endpoint):
        @project_page()
        @functools.wraps(endpoint)
        async def wrapper(request: Request, project, user) -> Response:
            gl = Gitlab.of(request)
            found = split_ref(gl.conn, project, request.path_params.get("rest", project["default_branch"]), allow_sha)
            if found is None:
                return gl.not_found(request)
            return await endpoint(request, project, user, *found)

        return wrapper

    return decorate


def base_ctx(conn: sqlite3.Connection, project, ref: str, path: str, nav: str, title: str, **extra) -> dict:
    crumbs = []
    parts = path.split("/") if path else []
    for i, part in enumerate(parts):
        crumbs.append((part, "/".join(parts[: i + 1])))
    return {
        "project": project,
        "ref": ref,
        "path": path,
        "nav": nav,
        "title": title,
        "path_crumbs": crumbs,
        "branch_names": branch_names(conn, project),
        "parent_path": "/".join(parts[:-1]),
        **extra,
    }


@ref_page()
async def tree(request: Request, project, user, ref: str, path: str) -> Response:
    gl = Gitlab.of(request)
    if path and not gitstore.is_dir(gl.conn, project["id"], ref, path):
        if gitstore.file_blob(gl.conn, project["id"], ref, path) is not None:
            return redirect(f"/{project['full_path']}/-/blob/{ref}/{path}")
        return gl.not_found(request)
    title = f"{path or 'Files'} · {ref} · {project['full_name']}"
    ctx = base_ctx(
        gl.conn,
        project,
        ref,
        path,
        "files",
        title,
        entries=gitstore.tree(gl.conn, project["id"], ref, path),
        breadcrumbs=breadcrumbs(project, ("Repository", request.url.path)),
    )
    head = gitstore.head(gl.conn, project["id"], ref)
    ctx["last_commit"] = gitstore.history(gl.conn, project["id"], head, limit=1, path=path or None)[0]
    return gl.render(request, "tree.html", ctx)


@ref_page()
async def blob(request: Request, project, user, ref: str, path: str) -> Response:
    gl = Gitlab.of(request)
    if not path:
        return gl.not_found(request)
    blob_id = gitstore.file_blob(gl.conn, project["id"], ref, path)
    if blob_id is None:
        if gitstore.is_dir(gl.conn, project["id"], ref, path):
            return redirect(f"/{project['full_path']}/-/tree/{ref}/{path}")
        return gl.not_found(request)
    text = gitstore.blob_text(gl.conn, blob_id)
    name = path.rsplit("/", 1)[-1]
    head = gitstore.head(gl.conn, project["id"], ref)
    ctx = base_ctx(
        gl.conn,
        project,
        ref,
        path,
        "files",
        f"{path} · {ref} · {project['full_name']}",
        content=text,
        name=name,
        lines=text.splitlines(),
        size=len(text.encode()),
        last_commit=gitstore.history(gl.conn, project["id"], head, limit=1, path=path)[0],
        breadcrumbs=breadcrumbs(project, ("Repository", f"/{project['full_path']}/-/tree/{ref}")),
    )
    if name.lower().endswith((".md", ".markdown")) and request.query_params.get("plain") != "1":
        folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        ctx["rendered"] = gitlab_markdown(
            text, f"/{project['full_path']}/-/issues", f"/{project['full_path']}/-/blob/{ref}/{folder}"
        )
    return gl.render(request, "blob.html", ctx)


@ref_page()
async def raw(request: Request, project, user, ref: str, path: str) -> Response:
    gl = Gitlab.of(request)
    blob_id = gitstore.file_blob(gl.conn, project["id"], ref, path)
    if not blob_id:
        return gl.not_found(request)
    return PlainTextResponse(gitstore.blob_text(gl.conn, blob_id))


@ref_page()
async def find_file(request: Request, project, user, ref: str, path: str) -> Response:
    gl = Gitlab.of(request)
    q = request.query_params.get("q", "").lower()
    paths = gl.conn.execute(
        "SELECT path FROM branch_files WHERE project_id = ? AND branch = ? ORDER BY path", (project["id"], ref)
    )
    files = [r[0] for r in paths if q in r[0].lower()]
    return gl.render(
        request,
        "find_file.html",
        base_ctx(
            gl.conn,
            project,
            ref,
            "",
            "files",
            f"Find File · {ref} · {project['full_name']}",
            files=files,
            q=q,
            breadcrumbs=breadcrumbs(project, ("Find file", request.url.path)),
        ),
    )


@ref_page(allow_sha=True)
async def commits(request: Request, project, user, ref: str, path: str) -> Response:
    gl = Gitlab.of(request)
    head = gitstore.head(gl.conn, project["id"], ref) or ref
    page = int_param(request.query_params.get("page"), 1)
    search, author = search_param(request), search_param(request, "author")
    rows = (
        []
        if search is None or author is None
        else gitstore.history(  # None: refused, GitLab's alert
            gl.conn,
            project["id"],
            head,
            limit=COMMITS_PER_PAGE + 1,
            offset=(page - 1) * COMMITS_PER_PAGE,
            path=path or None,
            search=search or author or None,
        )
    )
    days: dict[str, list] = {}
    for c in rows[:COMMITS_PER_PAGE]:
        days.setdefault(c["created_at"][:10], []).append(c)
    ctx = base_ctx(
        gl.conn,
        project,
        ref,
        path,
        "commits",
        f"Commits · {ref} · {project['full_name']}",
        days=days,
        page=page,
        has_next=len(rows) > COMMITS_PER_PAGE,
        search=search or "",
        breadcrumbs=breadcrumbs(
            project, ("Repository", f"/{project['full_path']}/-/tree/{ref}"), ("Commits", request.url.path)
        ),
    )
    ctx["switch_kind"] = "commits"
    return gl.render(request, "commits.html", ctx)


@project_page()
async def commit_show(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    sha = request.path_params["sha"]
    c = (
        gl.conn.execute(
            "SELECT * FROM commits WHERE project_id = ? AND sha LIKE ? ORDER BY sha LIMIT 1", (project["id"], sha + "%")
        ).fetchone()
        if re.fullmatch(r"[0-9a-f]{6,40}", sha)
        else None
    )
    if c is None:
        return gl.not_found(request)
    changes = gl.conn.execute(
        "SELECT * FROM commit_changes WHERE project_id = ? AND sha = ? ORDER BY path", (project["id"], c["sha"])
    ).fetchall()
    files = [file_diff(gl.conn, ch["path"], ch["old_blob_id"], ch["new_blob_id"]) for ch in changes]
    total_add, total_del = sum(f["added"] for f in files), sum(f["removed"] for f in files)
    author = gl.conn.execute("SELECT username FROM users WHERE id = ?", (c["author_id"],)).fetchone()
    return gl.render(
        request,
        "commit.html",
        {
            "title": f"{c['title']} ({c['sha'][:8]}) · Commits · {project['full_name']}",
            "project": project,
            "commit": c,
            "files": files,
            "additions": total_add,
            "deletions": total_del,
            "nav": "commits",
            "author_username": author[0] if author else None,
            "page_id": "projects:commit:show",
            "breadcrumbs": breadcrumbs(
                project,
                ("Repository", f"/{project['full_path']}/-/tree/{project['default_branch']}"),
                ("Commits", f"/{project['full_path']}/-/commits/{project['default_branch']}"),
                (c["sha"][:8], request.url.path),
            ),
        },
    )


@project_page()
async def tags(request: Request, project, user) -> Response:
    """The project's tags: the seeded repositories have none (the project page says 0 Tags)."""
    return render_subpage(request, project, "tags.html", "Tags", "tags")


@project_page()
async def branches(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    search = search_param(request)
    rows = (
        []
        if search is None
        else gl.conn.execute(  # None: refused, GitLab's alert
            "SELECT b.*, c.title, c.created_at, c.author_name FROM branches b JOIN commits c ON c.project_id = "
            "b.project_id"
            " AND c.sha = b.commit_sha WHERE b.project_id = ? AND b.name LIKE ? ORDER BY b.name = ? DESC, "
            "c.created_at DESC",
            (project["id"], f"%{search}%", project["default_branch"]),
        ).fetchall()
    )
    default_head = gitstore.head(gl.conn, project["id"], project["default_branch"])
    merged = gitstore.reachable(gl.conn, project["id"], default_head) if default_head else set()
    mrs = {
        r["source_branch"]: r
        for r in gl.conn.execute(
            "SELECT source_branch, iid, state FROM merge_requests WHERE project_id = ? ORDER BY id", (project["id"],)
        )
    }
    return gl.render(
        request,
        "branches.html",
        {
            "title": f"Branches · {project['full_name']}",
            "project": project,
            "branches": rows,
            "merged": merged,
            "mrs": mrs,
            "search": search or "",
            "nav": "branches",
            "breadcrumbs": breadcrumbs(
                project,
                ("Repository", f"/{project['full_path']}/-/tree/{project['default_branch']}"),
                ("Branches", request.url.path),
            ),
        },
    )


@project_page(level=30)
async def branch_new(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    form = request.session.pop("branch_form", None) or {
        "branch_name": request.query_params.get("branch_name", ""),
        "ref": request.query_params.get("ref", project["default_branch"]),
    }
    return gl.render(
        request,
        "branch_new.html",
        {
            "title": f"New branch · {project['full_name']}",
            "project": project,
            "form": form,
            "nav": "branches",
            "branch_names": branch_names(gl.conn, project),
            "errors": request.session.pop("branch_errors", []),
            "breadcrumbs": breadcrumbs(
                project, ("Branches", f"/{project['full_path']}/-/branches"), ("New branch", request.url.path)
            ),
        },
    )


@project_page(level=30)
async def branch_create(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    name = str(f.get("branch_name", "")).strip()
    ref = str(f.get("ref", project["default_branch"])).strip()
    errors = []
    if not name:
        errors.append("Branch name can't be blank")
    elif not BRANCH_RE.match(name):
        errors.append("Branch name is invalid")
    elif name in branch_names(gl.conn, project):
        errors.append("Branch already exists")
    if ref not in branch_names(gl.conn, project):
        errors.append("Invalid reference name: " + ref)
    if errors:
        request.session["branch_form"], request.session["branch_errors"] = {"branch_name": name, "ref": ref}, errors
        return redirect(f"/{project['full_path']}/-/branches/new")
    with gl.ctx.db.transaction() as c:
        gitstore.create_branch(c, project["id"], name, ref)
        add_event(c, user["id"], project["id"], "pushed new", "branch", None, name, now())
    flash(request, f"Branch {name} was created")
    return redirect(f"/{project['full_path']}/-/tree/{name}")


@project_page(level=30)
async def branch_delete(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    name = request.path_params["branch"]
    row = gl.conn.execute("SELECT * FROM branches WHERE project_id = ? AND name = ?", (project["id"], name)).fetchone()
    if row is None:
        return gl.not_found(request)
    if name == project["default_branch"] or row["protected"]:
        flash(
            request,
            "The default branch of a project cannot be deleted."
            if name == project["default_branch"]
            else "Protected branches cannot be deleted.",
            "alert",
        )
    else:
        with gl.ctx.db.transaction() as c:
            gitstore.delete_branch(c, project["id"], name)
        flash(request, f"Branch {name} was deleted")
    return redirect(f"/{project['full_path']}/-/branches")


@ref_page()
async def contributors(request: Request, project, user, ref: str, path: str) -> Response:
    gl = Gitlab.of(request)
    head = gitstore.head(gl.conn, project["id"], ref)
    rows = gitstore.contributors(gl.conn, project["id"], head)
    top = max((r["commits"] for r in rows), default=1)
    return gl.render(
        request,
        "contributors.html",
        {
            "title": f"Contributors · {project['full_name']}",
            "project": project,
            "ref": ref,
            "contributors": rows,
            "top": top,
            "nav": "contributors",
            "branch_names": branch_names(gl.conn, project),
            "path": "",
            "total": sum(r["commits"] for r in rows),
            "switch_kind": "graphs",
            "breadcrumbs": breadcrumbs(
                project, ("Repository", f"/{project['full_path']}/-/tree/{ref}"), ("Contributors", request.url.path)
            ),
        },
    )


ROUTES = [
    Route("/{ns}/{project}/-/tree/{rest:path}", tree),
    Route("/{ns}/{project}/-/tree", tree),
    Route("/{ns}/{project}/-/blob/{rest:path}", blob),
    Route("/{ns}/{project}/-/raw/{rest:path}", raw),
    Route("/{ns}/{project}/-/find_file/{rest:path}", find_file),
    Route("/{ns}/{project}/-/commits/{rest:path}", commits),
    Route("/{ns}/{project}/-/commits", commits),
    Route("/{ns}/{project}/-/commit/{sha}", commit_show),
    Route("/{ns}/{project}/-/tags", tags),
    Route("/{ns}/{project}/-/branches", branches),
    Route("/{ns}/{project}/-/branches/new", branch_new),
    Route("/{ns}/{project}/-/branches/{tab:str}", branches),
    Route("/{ns}/{project}/-/branches", branch_create, methods=["POST"]),
    Route("/{ns}/{project}/-/branches/{branch:path}/delete", branch_delete, methods=["POST"]),
    Route("/{ns}/{project}/-/graphs/{rest:path}", contributors),
]
