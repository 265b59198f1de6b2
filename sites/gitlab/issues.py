"""Project issues: the filtered list, new issue, the issue page with comments, close/reopen, editing
the title and description, and the sidebar (assignee, labels, milestone, due date)."""

from __future__ import annotations

import sqlite3

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.gitlab import issuables as iss
from webrl.sites.gitlab.issuables import ISSUE, item_page
from webrl.sites.gitlab.web import Gitlab, project_page
from webrl.sites.platform import flash, now, redirect, row_id

index = iss.list_page(ISSUE, "issues.html", nav="issues")


def milestones(conn: sqlite3.Connection, project):
    return conn.execute(
        "SELECT * FROM milestones WHERE project_id = ? AND state = 'active' ORDER BY due_date", (project["id"],)
    ).fetchall()


def form_page(request, project, form, errors, issue=None):
    gl = Gitlab.of(request)
    title = f"Edit {issue['title']} (#{issue['iid']})" if issue else "New Issue"
    return gl.render(
        request,
        "issue_form.html",
        {
            "title": f"{title} · {project['full_name']}",
            "project": project,
            "form": form,
            "errors": errors,
            "issue": issue,
            "labels": iss.project_labels(gl.conn, project["id"]),
            "nav": "issues",
            "members": iss.assignable_users(gl.conn, project),
            "milestones": milestones(gl.conn, project),
            "breadcrumbs": iss.crumbs(
                project, ISSUE, ("New" if issue is None else f"#{issue['iid']}", request.url.path)
            ),
        },
    )


@project_page(login=True)
async def new(request: Request, project, user) -> Response:
    q = request.query_params
    form = {
        "title": q.get("issue[title]", ""),
        "description": q.get("issue[description]", ""),
        "label_ids": [],
        "assignee_username": "",
        "due_date": "",
        "milestone_id": "",
    }
    return form_page(request, project, form, [])


@project_page(login=True)
async def create(request: Request, project, user) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    form = {
        "title": str(f.get("issue[title]", "")).strip(),
        "description": str(f.get("issue[description]", "")),
        "label_ids": [i for i in map(row_id, f.getlist("issue[label_ids][]")) if i is not None],
        "assignee_username": str(f.get("issue[assignee_username]", "")).strip().lstrip("@"),
        "due_date": str(f.get("issue[due_date]", "")).strip(),
        "milestone_id": str(f.get("issue[milestone_id]", "")),
    }
    errors = []
    if not form["title"]:
        errors.append("Title can't be blank")
    elif len(form["title"]) > 255:
        errors.append("Title is too long (maximum is 255 characters)")
    assignee = iss.form_assignee(gl.conn, project, form["assignee_username"], errors)
    if form["due_date"] and not iss._is_date(form["due_date"]):
        errors.append("Due date is invalid")
    if errors:
        return form_page(request, project, form, errors)
    can_set = gl.access_level(user, project) >= 20
    valid_labels = {r["id"] for r in iss.project_labels(gl.conn, project["id"])}
    ms = {str(m["id"]) for m in milestones(gl.conn, project)}
    when = now()
    with gl.ctx.db.transaction() as c:
        iid = iss.next_iid(c, ISSUE, project)
        issue_id = c.execute(
            "INSERT INTO issues (project_id, iid, title, description, author_id, assignee_id, milestone_id, due_date,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                project["id"],
                iid,
                form["title"],
                form["description"],
                user["id"],
                assignee["id"] if assignee and can_set else None,
                int(form["milestone_id"]) if can_set and form["milestone_id"] in ms else None,
                (form["due_date"] or None) if can_set else None,
                when,
                when,
            ),
        ).lastrowid
        if can_set:
            for lid in sorted(set(form["label_ids"]) & valid_labels):
                c.execute("INSERT INTO issue_labels VALUES (?, ?)", (issue_id, lid))
        iss.add_event(c, user["id"], project["id"], "opened", "Issue", iid, form["title"], when)
    return redirect(f"/{project['full_path']}/-/issues/{iid}")


@item_page(ISSUE)
async def show(request: Request, project, user, issue) -> Response:
    gl = Gitlab.of(request)
    people = iss.people(gl.conn, issue["author_id"], issue["assignee_id"])
    notes = iss.notes_of(gl.conn, ISSUE, issue["id"])
    access = gl.access_level(user, project)
    participants = {n["username"]: n["name"] for n in notes if not n["system"]}
    ms = (
        gl.conn.execute("SELECT * FROM milestones WHERE id = ?", (issue["milestone_id"],)).fetchone()
        if issue["milestone_id"]
        else None
    )
    return gl.render(
        request,
        "issue_show.html",
        {
            "title": f"{issue['title']} (#{issue['iid']}) · Issues · {project['full_name']}",
            "project": project,
            "issue": issue,
            "author": people[issue["author_id"]],
            "assignee": people.get(issue["assignee_id"]),
            "labels": iss.labels_of(gl.conn, ISSUE, issue["id"]),
            "all_labels": iss.project_labels(gl.conn, project["id"]),
            "notes": notes,
            "members": iss.assignable_users(gl.conn, project),
            "milestone": ms,
            "milestones": milestones(gl.conn, project),
            "can_update": user is not None and (access >= 20 or issue["author_id"] == user["id"]),
            "can_edit": user is not None and (access >= 30 or issue["author_id"] == user["id"]),
            "participants": participants,
            "nav": "issues",
            "page_id": "projects:issues:show",
            "breadcrumbs": iss.crumbs(project, ISSUE, (f"#{issue['iid']}", request.url.path)),
        },
    )


@item_page(ISSUE, login=True)
async def edit(request: Request, project, user, issue) -> Response:
    gl = Gitlab.of(request)
    if gl.access_level(user, project) < 30 and issue["author_id"] != user["id"]:
        return gl.not_found(request)
    form = {"title": issue["title"], "description": issue["description"]}
    return form_page(request, project, form, [], issue)


@item_page(ISSUE, login=True)
async def update(request: Request, project, user, issue) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    access = gl.access_level(user, project)
    is_author = issue["author_id"] == user["id"]
    url = iss.item_url(project, ISSUE, issue)
    when = now()
    if "issue[title]" in f:  # the edit form
        if access < 30 and not is_author:
            return gl.not_found(request)
        title = str(f.get("issue[title]", "")).strip()
        description = str(f.get("issue[description]", issue["description"]))
        if not title:
            return form_page(
                request, project, {"title": title, "description": description}, ["Title can't be blank"], issue
            )
        with gl.ctx.db.transaction() as c:
            if title != issue["title"]:
                iss.add_note(
                    c,
                    ISSUE,
                    issue["id"],
                    user["id"],
                    f"changed title from **{issue['title']}** to **{title}**",
                    when,
                    system=True,
                )
            if description != issue["description"]:
                iss.add_note(c, ISSUE, issue["id"], user["id"], "changed the description", when, system=True)
            c.execute(
                "UPDATE issues SET title = ?, description = ?, updated_at = ? WHERE id = ?",
                (title, description, when, issue["id"]),
            )
        return redirect(url)
    if access < 20 and not is_author:
        flash(request, "You are not allowed to update this issue.", "alert")
        return redirect(url)
    state_event = f.get("issue[state_event]")
    try:
        with gl.ctx.db.transaction() as c:
            if state_event == "close" and issue["state"] == "opened":
                iss.close(c, ISSUE, issue, user["id"], when)
                iss.add_event(c, user["id"], project["id"], "closed", "Issue", issue["iid"], issue["title"], when)
            elif state_event == "reopen" and issue["state"] == "closed":
                iss.reopen(c, ISSUE, issue, user["id"], when)
                iss.add_event(c, user["id"], project["id"], "reopened", "Issue", issue["iid"], issue["title"], when)
            if access >= 20:
                iss.apply_sidebar_update(c, ISSUE, issue, project, user, f, when)
    except ValueError as e:
        flash(request, str(e), "alert")
    return redirect(url)


@item_page(ISSUE, login=True)
async def add_note(request: Request, project, user, issue) -> Response:
    gl = Gitlab.of(request)
    f = await request.form()
    body = str(f.get("note[note]", "")).strip()
    url = iss.item_url(project, ISSUE, issue)
    close = f.get("close") and (gl.access_level(user, project) >= 20 or issue["author_id"] == user["id"])
    if not body and not close:
        flash(request, "Note can't be blank", "alert")
        return redirect(url)
    when = now()
    with gl.ctx.db.transaction() as c:
        if body:
            iss.add_note(c, ISSUE, issue["id"], user["id"], body, when)
            iss.add_event(c, user["id"], project["id"], "commented on", "Issue", issue["iid"], issue["title"], when)
        if close and issue["state"] == "opened":
            c.execute("UPDATE issues SET state = 'closed', closed_at = ? WHERE id = ?", (when, issue["id"]))
            iss.add_note(c, ISSUE, issue["id"], user["id"], "closed", when, system=True)
            iss.add_event(c, user["id"], project["id"], "closed", "Issue", issue["iid"], issue["title"], when)
    return redirect(url + "#notes")


ROUTES = [
    Route("/{ns}/{project}/-/issues", index),
    Route("/{ns}/{project}/-/issues/", index),
    Route("/{ns}/{project}/issues", index),
    Route("/{ns}/{project}/-/issues/new", new),
    Route("/{ns}/{project}/-/issues", create, methods=["POST"]),
    Route("/{ns}/{project}/-/issues/{iid}", show),
    Route("/{ns}/{project}/-/issues/{iid}", update, methods=["POST"]),
    Route("/{ns}/{project}/-/issues/{iid}/edit", edit),
    Route("/{ns}/{project}/-/issues/{iid}/notes", add_note, methods=["POST"]),
]
