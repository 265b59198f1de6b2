"""Merge requests: the filtered list, new merge request from a branch (compare, then the form), the
merge request page (Overview, Commits, Changes) with comments, merge, close/reopen and sidebar."""

from __future__ import annotations

import re
import sqlite3
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.gitlab import gitstore
from webrl.sites.gitlab import issuables as iss
from webrl.sites.gitlab.issuables import MR, item_page
from webrl.sites.gitlab.repository import branch_names, file_diff
from webrl.sites.gitlab.web import Gitlab, project_page
from webrl.sites.platform import flash, now, redirect, row_id


def changes(conn: sqlite3.Connection, project, source: str, target: str) -> list[dict]:
    return [
        file_diff(conn, path, old, new)
        for path, (old, new) in gitstore.branch_diff(conn, project["id"], source, target).items()
    ]


index = iss.list_page(MR, "merge_requests.html", nav="mrs")


def form_page(request, project, form, errors, commits=None, files=None):
    gl = Gitlab.of(request)
    return gl.render(
        request,
        "mr_new.html",
        {
            "title": f"New merge request · {project['full_name']}",
            "project": project,
            "form": form,
            "errors": errors,
            "branch_names": branch_names(gl.conn, project),
            "labels": iss.project_labels(gl.conn, project["id"]),
            "members": iss.assignable_users(gl.conn, project),
            "commits": commits,
            "files": files,
            "nav": "mrs",
            "breadcrumbs": iss.crumbs(project, MR, ("New", request.url.path)),
        },
    )


def validate_branches(conn: sqlite3.Connection, project, source: str, target: str) -> list[str]:
    names = branch_names(conn, project)
    errors = []
    if source not in names:
        errors.append("Source branch is invalid" if source else "Source branch can't be blank")
    if target not in names:
        errors.append("Target branch is invalid")
    if not errors and source == target:
        errors.append("Validate branches You can't use same project/branch for source and target")
    if not errors:
        other = conn.execute(
            "SELECT iid FROM merge_requests WHERE project_id = ? AND source_branch = ?"
            " AND target_branch = ? AND state = 'opened'",
            (project["id"], source, target),
        ).fetchone()
        if other:
            errors.append(f"Another open merge request already exists for this source branch: !{other[0]}")
    return errors


@project_page(level=30)
async def new(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    q = request.query_params
    source = q.get("merge_request[source_branch]", "")
    target = q.get("merge_request[target_branch]", "") or project["default_branch"]
    form = {
        "source_branch": source,
        "target_branch": target,
        "title": "",
        "description": "",
        "label_ids": [],
        "assignee_username": "",
        "remove_source_branch": True,
    }
    if not source:
        return form_page(request, project, form, [])
    errors = validate_branches(gl.conn, project, source, target)
    if errors:
        return form_page(request, project, dict(form, source_branch=""), errors)
    commits = gitstore.diverging(gl.conn, project["id"], source, target)
    form["title"] = (
        commits[0]["title"] if len(commits) == 1 else source.replace("-", " ").replace("_", " ").capitalize()
    )
    form["description"] = commits[0]["message"] if len(commits) == 1 else ""
    form["step"] = 2
    return form_page(request, project, form, [], commits, changes(gl.conn, project, source, target))


@project_page(level=30)
async def create(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    form = {
        "source_branch": str(f.get("merge_request[source_branch]", "")),
        "target_branch": str(f.get("merge_request[target_branch]", "")),
        "title": str(f.get("merge_request[title]", "")).strip(),
        "description": str(f.get("merge_request[description]", "")),
        "label_ids": [i for i in map(row_id, f.getlist("merge_request[label_ids][]")) if i is not None],
        "assignee_username": str(f.get("merge_request[assignee_username]", "")).strip().lstrip("@"),
        "remove_source_branch": bool(f.get("merge_request[force_remove_source_branch]")),
        "step": 2,
    }
    errors = validate_branches(gl.conn, project, form["source_branch"], form["target_branch"])
    if not form["title"]:
        errors.append("Title can't be blank")
    assignee = iss.form_assignee(gl.conn, project, form["assignee_username"], errors)
    if errors:
        bad_branches = any("branch" in e for e in errors)
        return form_page(request, project, dict(form, step=1 if bad_branches else 2), errors)
    when = now()
    valid = {r["id"] for r in iss.project_labels(gl.conn, project["id"])}
    with gl.ctx.db.transaction() as c:
        iid = iss.next_iid(c, MR, project)
        mid = c.execute(
            "INSERT INTO merge_requests (project_id, iid, title, description, author_id, assignee_id, source_branch,"
            " target_branch, draft, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                project["id"],
                iid,
                form["title"],
                form["description"],
                user["id"],
                assignee["id"] if assignee else None,
                form["source_branch"],
                form["target_branch"],
                int(form["title"].lower().startswith(("draft:", "[draft]"))),
                when,
                when,
            ),
        ).lastrowid
        for lid in sorted(set(form["label_ids"]) & valid):
            c.execute("INSERT INTO mr_labels VALUES (?, ?)", (mid, lid))
        iss.add_event(c, user["id"], project["id"], "opened", "MergeRequest", iid, form["title"], when)
    request.session.setdefault("remove_source", {})[f"{project['id']}:{iid}"] = form["remove_source_branch"]
    return redirect(f"/{project['full_path']}/-/merge_requests/{iid}")


@item_page(MR)
async def show(request: Request, project, user, mr) -> Response:
    gl = Gitlab.of(request)
    tab = request.path_params.get("tab", "overview")
    if tab not in ("overview", "commits", "diffs"):
        return gl.not_found(request)
    people = iss.people(gl.conn, mr["author_id"], mr["assignee_id"], mr["reviewer_id"], mr["merged_by_id"])
    access = gl.access_level(user, project)
    notes = iss.notes_of(gl.conn, MR, mr["id"])
    source_exists = gitstore.head(gl.conn, project["id"], mr["source_branch"]) is not None
    if mr["state"] == "merged" and mr["merge_commit_sha"]:
        merge = gl.conn.execute(
            "SELECT * FROM commits WHERE project_id = ? AND sha = ?", (project["id"], mr["merge_commit_sha"])
        ).fetchone()
        commits = (
            [
                r
                for r in gitstore.history(gl.conn, project["id"], merge["parent2_sha"], limit=50)
                if r["sha"] not in gitstore.reachable(gl.conn, project["id"], merge["parent_sha"])
            ]
            if merge and merge["parent2_sha"]
            else []
        )
        changed = (
            gl.conn.execute(
                "SELECT * FROM commit_changes WHERE project_id = ? AND sha = ? ORDER BY path",
                (project["id"], merge["sha"]),
            )
            if merge
            else []
        )
        files = [
            file_diff(gl.conn, ch["path"], ch["old_blob_id"], ch["new_blob_id"], status="modified") for ch in changed
        ]
    elif source_exists:
        commits = gitstore.diverging(gl.conn, project["id"], mr["source_branch"], mr["target_branch"])
        files = changes(gl.conn, project, mr["source_branch"], mr["target_branch"])
    else:
        commits, files = [], []
    remove_default = request.session.get("remove_source", {}).get(f"{project['id']}:{mr['iid']}", True)
    return gl.render(
        request,
        "mr_show.html",
        {
            "title": f"{mr['title']} (!{mr['iid']}) · Merge requests · {project['full_name']}",
            "project": project,
            "mr": mr,
            "author": people[mr["author_id"]],
            "assignee": people.get(mr["assignee_id"]),
            "reviewer": people.get(mr["reviewer_id"]),
            "merged_by": people.get(mr["merged_by_id"]),
            "labels": iss.labels_of(gl.conn, MR, mr["id"]),
            "all_labels": iss.project_labels(gl.conn, project["id"]),
            "notes": notes,
            "members": iss.assignable_users(gl.conn, project),
            "commits": commits,
            "files": files,
            "tab": tab,
            "source_exists": source_exists,
            "remove_default": remove_default,
            "can_update": user is not None and (access >= 20 or mr["author_id"] == user["id"]),
            "can_merge": user is not None and access >= 30 and mr["state"] == "opened" and source_exists,
            "participants": {n["username"]: n["name"] for n in notes if not n["system"]},
            "nav": "mrs",
            "page_id": "projects:merge_requests:show",
            "breadcrumbs": iss.crumbs(project, MR, (f"!{mr['iid']}", request.url.path)),
        },
    )


@item_page(MR, login=True)
async def update(request: Request, project, user, mr) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    access = gl.access_level(user, project)
    url = iss.item_url(project, MR, mr)
    if access < 20 and mr["author_id"] != user["id"]:
        flash(request, "You are not allowed to update this merge request.", "alert")
        return redirect(url)
    when = now()
    event = f.get("merge_request[state_event]")
    try:
        with gl.ctx.db.transaction() as c:
            if event == "close" and mr["state"] == "opened":
                iss.close(c, MR, mr, user["id"], when)
                iss.add_event(c, user["id"], project["id"], "closed", "MergeRequest", mr["iid"], mr["title"], when)
            elif event == "reopen" and mr["state"] == "closed":
                iss.reopen(c, MR, mr, user["id"], when)
            elif event == "ready" and mr["draft"]:
                title = mr["title"]
                if title.lower().startswith("draft:"):
                    title = title.split(":", 1)[1].strip()
                c.execute(
                    "UPDATE merge_requests SET draft = 0, title = ?, updated_at = ? WHERE id = ?",
                    (title, when, mr["id"]),
                )
                iss.add_note(c, MR, mr["id"], user["id"], "marked this merge request as **ready**", when, system=True)
            if access >= 20:
                iss.apply_sidebar_update(c, MR, mr, project, user, f, when)
    except ValueError as e:
        flash(request, str(e), "alert")
    return redirect(url)


@item_page(MR, level=30)
async def merge(request: Request, project, user, mr) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    url = iss.item_url(project, MR, mr)
    if mr["state"] != "opened":
        flash(request, "This merge request cannot be merged: it is not open.", "alert")
        return redirect(url)
    if mr["draft"]:
        flash(request, "Merge blocked: merge request must be marked as ready. It's still marked as draft.", "alert")
        return redirect(url)
    if gitstore.head(gl.conn, project["id"], mr["source_branch"]) is None:
        flash(request, "Merge blocked: the source branch no longer exists.", "alert")
        return redirect(url)
    when = now()
    message = f"{mr['title']}\n\nSee merge request {project['full_path']}!{mr['iid']}"
    with gl.ctx.db.transaction() as c:
        sha = gitstore.merge(
            c,
            project["id"],
            mr["source_branch"],
            mr["target_branch"],
            gitstore.Author(user["id"], user["name"], user["email"]),
            f"Merge branch '{mr['source_branch']}' into '{mr['target_branch']}'",
            when,
            message,
        )
        c.execute(
            "UPDATE merge_requests SET state = 'merged', merged_at = ?, merged_by_id = ?, merge_commit_sha = ?,"
            " updated_at = ? WHERE id = ?",
            (when, user["id"], sha, when, mr["id"]),
        )
        iss.add_note(c, MR, mr["id"], user["id"], "merged", when, system=True)
        iss.add_event(c, user["id"], project["id"], "accepted", "MergeRequest", mr["iid"], mr["title"], when)
        if f.get("should_remove_source_branch") and mr["source_branch"] != project["default_branch"]:
            gitstore.delete_branch(c, project["id"], mr["source_branch"])
        for ref in re.findall(r"(?:[Cc]loses|[Ff]ixes) #(\d+)", mr["description"] or ""):
            issue = c.execute(
                "SELECT * FROM issues WHERE project_id = ? AND iid = ? AND state = 'opened'",
                (project["id"], row_id(ref)),
            ).fetchone()
            if issue:
                c.execute(
                    "UPDATE issues SET state = 'closed', closed_at = ?, updated_at = ? WHERE id = ?",
                    (when, when, issue["id"]),
                )
                iss.add_note(
                    c, iss.ISSUE, issue["id"], user["id"], f"closed via merge request !{mr['iid']}", when, system=True
                )
    return redirect(url)


@item_page(MR, login=True)
async def add_note(request: Request, project, user, mr) -> Response:
    f = await request.form()
    body = str(f.get("note[note]", "")).strip()
    url = iss.item_url(project, MR, mr)
    if not body:
        flash(request, "Note can't be blank", "alert")
        return redirect(url)
    gl = Gitlab.of(request)
    when = now()
    with gl.ctx.db.transaction() as c:
        iss.add_note(c, MR, mr["id"], user["id"], body, when)
        iss.add_event(c, user["id"], project["id"], "commented on", "MergeRequest", mr["iid"], mr["title"], when)
        if (
            f.get("close")
            and mr["state"] == "opened"
            and (gl.access_level(user, project) >= 20 or mr["author_id"] == user["id"])
        ):
            c.execute("UPDATE merge_requests SET state = 'closed', closed_at = ? WHERE id = ?", (when, mr["id"]))
            iss.add_note(c, MR, mr["id"], user["id"], "closed", when, system=True)
    return redirect(url + "#notes")


async def compare_redirect(request: Request) -> Response:
    p = request.path_params
    query = urlencode({k: v for k, v in request.query_params.items()})
    return redirect(f"/{p['ns']}/{p['project']}/-/merge_requests/new?{query}")


ROUTES = [
    Route("/{ns}/{project}/-/merge_requests", index),
    Route("/{ns}/{project}/merge_requests", index),
    Route("/{ns}/{project}/-/merge_requests/new", new),
    Route("/{ns}/{project}/-/merge_requests/new/diffs", compare_redirect),
    Route("/{ns}/{project}/-/merge_requests", create, methods=["POST"]),
    Route("/{ns}/{project}/-/merge_requests/{iid}", show),
    Route("/{ns}/{project}/-/merge_requests/{iid}/{tab}", show),
    Route("/{ns}/{project}/-/merge_requests/{iid}", update, methods=["POST"]),
    Route("/{ns}/{project}/-/merge_requests/{iid}/merge", merge, methods=["POST"]),
    Route("/{ns}/{project}/-/merge_requests/{iid}/notes", add_note, methods=["POST"]),
]
