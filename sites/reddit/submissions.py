"""Submissions: the submission page with its comment tree, submitting, editing and deleting a
submission, and submission votes (`/sv/<id>`, a plain form POST with `choice` = 1, -1 or 0)."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.platform import flash, now, redirect
from webrl.sites.reddit.web import (
    Postmill,
    length_error,
    slugify,
    submission_path,
    update_ranking,
    vote_form,
)

FIELDS = ("url", "title", "body")


def url_error(url: str) -> str | None:
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or "." not in parts.hostname or " " in url:
        return "This value is not a valid URL."
    if len(url) > 2000:
        return "This value is too long. It should have 2000 characters or less."
    return None


def submission_errors(values: dict[str, str]) -> dict[str, str]:
    errors = {}
    if problem := length_error(values["title"], 1, 300):
        errors["title"] = problem
    if problem := url_error(values["url"]):
        errors["url"] = problem
    if len(values["body"]) > 25000:
        errors["body"] = "This value is too long. It should have 25000 characters or less."
    return errors


def comment_tree(site: Postmill, submission_id: int, user) -> dict:
    """All comments of a submission, keyed by parent id (None: top level), best first."""
    rows = site.conn.execute(
        "SELECT c.*, u.username, v.choice AS my_vote FROM comments c JOIN users u ON u.id = c.user_id"
        " LEFT JOIN comment_votes v ON v.comment_id = c.id AND v.user_id = ?"
        " WHERE c.submission_id = ? ORDER BY c.net_score DESC, c.id",
        (user["id"] if user else None, submission_id),
    ).fetchall()
    children: dict = {}
    for row in rows:
        children.setdefault(row["parent_id"], []).append(row)
    return children


async def show(request: Request) -> Response:
    site = Postmill.of(request)
    user = site.user(request)
    s = site.submission(request.path_params["forum"], request.path_params["id"], user)
    if s is None:
        return site.not_found(request)
    return site.render(
        request,
        "submission.html",
        {
            "title": s["title"],
            "s": s,
            "children": comment_tree(site, s["id"], user),
            "root": None,
            "forum": site.forum(s["forum_name"]),
            "subscribed": site.is_subscribed(s["forum_id"], user),
            "can_moderate": site.is_moderator(s["forum_id"], user),
        },
    )


async def submit(request: Request) -> Response:
    site = Postmill.of(request)
    user = site.user(request)
    if user is None:
        return site.login_redirect(request)
    forums = site.conn.execute("SELECT id, name FROM forums ORDER BY name COLLATE NOCASE").fetchall()
    chosen = request.path_params.get("forum", "")
    if chosen and site.forum(chosen) is None:
        return site.not_found(request)
    values = dict.fromkeys(FIELDS, "")
    values["forum"] = site.forum(chosen)["name"] if chosen else ""
    errors: dict[str, str] = {}
    if request.method == "POST":
        form = await request.form()
        values = {k: str(form.get(k, "")).strip() for k in (*FIELDS, "forum")}
        errors = submission_errors(values)
        forum = site.forum(values["forum"]) if values["forum"] else None
        if forum is None:
            errors["forum"] = "This value should not be blank." if not values["forum"] else "This value is not valid."
        if not errors:
            stamp = now()
            with site.ctx.db.transaction() as c:
                cur = c.execute(
                    "INSERT INTO submissions (forum_id, user_id, title, url, body, created_at, upvotes, net_score)"
                    " VALUES (?, ?, ?, ?, ?, ?, 1, 1)",
                    (forum["id"], user["id"], values["title"], values["url"] or None, values["body"] or None, stamp),
                )
                sid = cur.lastrowid
                c.execute("INSERT INTO submission_votes VALUES (?, ?, 1, ?)", (sid, user["id"], stamp))
                update_ranking(c, sid)
            return redirect(f"/f/{forum['name']}/{sid}/{slugify(values['title'])}")
    return site.render(
        request,
        "submit.html",
        {"title": "Create submission", "values": values, "errors": errors, "forums": forums},
        status_code=400 if errors else 200,
    )


def own_submission(request: Request):
    """The signed-in user's submission (or one they moderate); a response instead."""
    site = Postmill.of(request)
    user = site.user(request)
    s = site.submission(request.path_params["forum"], request.path_params["id"], user)
    if s is None:
        return None, site.not_found(request)
    if user is None:
        return None, site.login_redirect(request, submission_path(s))
    if s["user_id"] != user["id"] and not site.is_moderator(s["forum_id"], user):
        return None, site.forbidden(request)
    return s, None


async def edit(request: Request) -> Response:
    s, denied = own_submission(request)
    if denied:
        return denied
    site = Postmill.of(request)
    values = {"url": s["url"] or "", "title": s["title"], "body": s["body"] or ""}
    errors: dict[str, str] = {}
    if request.method == "POST":
        form = await request.form()
        values = {k: str(form.get(k, "")).strip() for k in FIELDS}
        errors = submission_errors(values)
        if not errors:
            site.conn.execute(
                "UPDATE submissions SET title = ?, url = ?, body = ?, edited_at = ? WHERE id = ?",
                (values["title"], values["url"] or None, values["body"] or None, now(), s["id"]),
            )
            flash(request, "The submission was edited.")
            return redirect(f"/f/{s['forum_name']}/{s['id']}/{slugify(values['title'])}")
    return site.render(
        request,
        "edit_submission.html",
        {"title": "Edit submission", "s": s, "values": values, "errors": errors},
        status_code=400 if errors else 200,
    )


async def delete(request: Request) -> Response:
    s, denied = own_submission(request)
    if denied:
        return denied
    site = Postmill.of(request)
    site.conn.execute("DELETE FROM submissions WHERE id = ?", (s["id"],))
    flash(request, "The submission was deleted.")
    return redirect(f"/f/{s['forum_name']}")


async def vote(request: Request) -> Response:
    return await vote_form(request, "submission")


SUBMISSION_URL = "/f/{forum}/{id:id}"


ROUTES = [
    Route("/submit", submit, methods=["GET", "POST"]),
    Route("/submit/{forum}", submit, methods=["GET", "POST"]),
    Route("/sv/{id:id}", vote, methods=["POST"]),
    Route(SUBMISSION_URL, show),
    Route(SUBMISSION_URL + "/", show),
    Route(SUBMISSION_URL + "/{slug}/edit", edit, methods=["GET", "POST"]),
    Route(SUBMISSION_URL + "/{slug}/delete", delete, methods=["POST"]),
    Route(SUBMISSION_URL + "/{slug}", show),
]
