"""The web editor: edit a file (/-/edit/<ref>/<path>) or add one (/-/new/<ref>/<dir>), committing to
the same or a new branch, optionally going on to a new merge request."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.gitlab import gitstore
from webrl.sites.gitlab.issuables import add_event
from webrl.sites.gitlab.projects import breadcrumbs
from webrl.sites.gitlab.repository import BRANCH_RE, base_ctx, split_ref
from webrl.sites.gitlab.web import Gitlab, project_page
from webrl.sites.platform import flash, now, redirect


def form_page(request: Request, project, ref: str, path: str, new: bool, form: dict, errors: list[str]) -> Response:
    gl = Gitlab.of(request)
    title = f"{'New File' if new else 'Edit ' + path} · {ref} · {project['full_name']}"
    ctx = base_ctx(
        gl.conn,
        project,
        ref,
        path,
        "files",
        title,
        new=new,
        form=form,
        errors=errors,
        breadcrumbs=breadcrumbs(project, ("Repository", f"/{project['full_path']}/-/tree/{ref}")),
    )
    return gl.render(request, "edit_blob.html", ctx)


async def handle(request: Request, project, user, new: bool) -> Response:
    gl = Gitlab.of(request)
    rest = request.path_params.get("rest", project["default_branch"]).strip("/")
    found = split_ref(gl.conn, project, rest)
    default = project["default_branch"]
    if (
        found is None
        and new
        and gitstore.head(gl.conn, project["id"], default) is None
        and (rest + "/").startswith(default + "/")
    ):
        found = (default, rest[len(default) :].strip("/"))  # an empty repository: the first file creates the branch
    if found is None:
        return gl.not_found(request)
    ref, path = found
    if not new and gitstore.file_blob(gl.conn, project["id"], ref, path) is None:
        return gl.not_found(request)
    if request.method == "GET":
        name = path.rsplit("/", 1)[-1]
        form = {
            "content": ""
            if new
            else gitstore.blob_text(gl.conn, gitstore.file_blob(gl.conn, project["id"], ref, path)),
            "file_name": request.query_params.get("file_name", ""),
            "branch_name": ref,
            "commit_message": "Add new file" if new else f"Update {name}",
            "create_merge_request": False,
        }
        return form_page(request, project, ref, path, new, form, [])
    f = await request.form()
    form = {k: str(f.get(k, "")) for k in ("content", "file_name", "branch_name", "commit_message")}
    form["create_merge_request"] = bool(f.get("create_merge_request"))
    target_path = "/".join(p for p in (path, form["file_name"].strip().strip("/")) if p) if new else path
    branch = form["branch_name"].strip() or ref
    errors = []
    if not form["commit_message"].strip():
        errors.append("Commit message can't be blank")
    if new and not form["file_name"].strip():
        errors.append("You must provide a file path")
    elif new and (
        gitstore.file_blob(gl.conn, project["id"], ref, target_path) is not None
        or gitstore.is_dir(gl.conn, project["id"], ref, target_path)
    ):
        errors.append("A file with this name already exists")
    if not BRANCH_RE.match(branch):
        errors.append("Branch name is invalid")
    if errors:
        return form_page(request, project, ref, path, new, form, errors)
    content = form["content"].replace("\r\n", "\n")
    lines = form["commit_message"].strip().split("\n", 1)
    with gl.ctx.db.transaction() as c:
        if gitstore.head(c, project["id"], branch) is None and gitstore.head(c, project["id"], ref) is not None:
            gitstore.create_branch(c, project["id"], branch, ref)
        gitstore.commit(
            c,
            project["id"],
            branch,
            gitstore.Author(user["id"], user["name"], user["email"]),
            lines[0].strip(),
            {target_path: content},
            now(),
            message=lines[1].strip() if len(lines) > 1 else "",
        )
        add_event(c, user["id"], project["id"], "pushed to", "branch", None, branch, now())
    if form["create_merge_request"] and branch != ref:
        query = urlencode({"merge_request[source_branch]": branch, "merge_request[target_branch]": ref})
        return redirect(f"/{project['full_path']}/-/merge_requests/new?{query}")
    flash(request, "Your changes have been successfully committed.")
    return redirect(f"/{project['full_path']}/-/blob/{branch}/{target_path}")


@project_page(level=30)
async def edit(request: Request, project, user) -> Response:
    return await handle(request, project, user, new=False)


@project_page(level=30)
async def new(request: Request, project, user) -> Response:
    return await handle(request, project, user, new=True)


ROUTES = [
    Route("/{ns}/{project}/-/edit/{rest:path}", edit, methods=["GET", "POST"]),
    Route("/{ns}/{project}/-/new/{rest:path}", new, methods=["GET", "POST"]),
]
