"""Comments: posting a comment or a reply, the comment permalink page, editing and deleting your
own comments, and comment votes (`/cv/<id>`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.platform import flash, now, redirect
from webrl.sites.reddit.submissions import comment_tree
from webrl.sites.reddit.web import Postmill, length_error, submission_path, vote_form

MAX_COMMENT = 10000


def recount_comments(conn, submission_id: int) -> None:
    conn.execute(
        "UPDATE submissions SET comment_count = (SELECT COUNT(*) FROM comments"
        " WHERE submission_id = ? AND soft_deleted = 0) WHERE id = ?",
        (submission_id, submission_id),
    )


def lookup(request: Request):
    """The signed-in user, the submission and (when the path names one) the comment; a response when missing."""
    site = Postmill.of(request)
    user = site.user(request)
    s = site.submission(request.path_params["forum"], request.path_params["id"], user)
    if s is None:
        return user, None, None, site.not_found(request)
    cid = request.path_params.get("cid")
    if cid is None:
        return user, s, None, None
    c = site.conn.execute(
        "SELECT c.*, u.username FROM comments c JOIN users u ON u.id = c.user_id"
        " WHERE c.id = ? AND c.submission_id = ?",
        (cid, s["id"]),
    ).fetchone()
    if c is None:
        return user, s, None, site.not_found(request)
    return user, s, c, None


def render_thread(
    request: Request, s, comment, user, body: str = "", error: str | None = None, status_code: int = 200
) -> Response:
    site = Postmill.of(request)
    return site.render(
        request,
        "submission.html",
        {
            "title": s["title"],
            "s": s,
            "children": comment_tree(site, s["id"], user),
            "root": comment,
            "forum": site.forum(s["forum_name"]),
            "subscribed": site.is_subscribed(s["forum_id"], user),
            "can_moderate": site.is_moderator(s["forum_id"], user),
            "comment_body": body,
            "comment_error": error,
        },
        status_code=status_code,
    )


async def permalink(request: Request) -> Response:
    user, s, c, missing = lookup(request)
    if missing:
        return missing
    return render_thread(request, s, c, user)


async def post_comment(request: Request) -> Response:
    """A comment on the submission (no comment in the path) or a reply to the comment."""
    user, s, parent, missing = lookup(request)
    if missing:
        return missing
    site = Postmill.of(request)
    back = submission_path(s) + (f"/comment/{parent['id']}" if parent else "")
    if user is None:
        return site.login_redirect(request, back)
    form = await request.form()
    body = str(form.get("comment", "")).strip()
    if problem := length_error(body, 1, MAX_COMMENT):
        return render_thread(request, s, parent, user, body, problem, status_code=400)
    if parent is not None and parent["soft_deleted"]:
        return render_thread(request, s, parent, user, body, "You cannot reply to a deleted comment.", 400)
    stamp = now()
    with site.ctx.db.transaction() as c:
        cur = c.execute(
            "INSERT INTO comments (submission_id, parent_id, user_id, body, created_at, upvotes, net_score)"
            " VALUES (?, ?, ?, ?, ?, 1, 1)",
            (s["id"], parent["id"] if parent else None, user["id"], body, stamp),
        )
        c.execute("INSERT INTO comment_votes VALUES (?, ?, 1, ?)", (cur.lastrowid, user["id"], stamp))
        recount_comments(c, s["id"])
    return redirect(f"{submission_path(s)}/comment/{cur.lastrowid}")


def own_comment(request: Request):
    """The submission and the signed-in user's comment (or one they moderate); a response instead."""
    user, s, c, missing = lookup(request)
    if missing:
        return None, None, missing
    site = Postmill.of(request)
    if user is None:
        return None, None, site.login_redirect(request, f"{submission_path(s)}/comment/{c['id']}")
    if c["soft_deleted"]:
        return None, None, site.not_found(request)
    if c["user_id"] != user["id"] and not site.is_moderator(s["forum_id"], user):
        return None, None, site.forbidden(request)
    return s, c, None


async def edit(request: Request) -> Response:
    s, c, denied = own_comment(request)
    if denied:
        return denied
    site = Postmill.of(request)
    body, error = c["body"], None
    if request.method == "POST":
        form = await request.form()
        body = str(form.get("comment", "")).strip()
        error = length_error(body, 1, MAX_COMMENT)
        if not error:
            site.conn.execute("UPDATE comments SET body = ?, edited_at = ? WHERE id = ?", (body, now(), c["id"]))
            flash(request, "The comment was edited.")
            return redirect(f"{submission_path(s)}/comment/{c['id']}")
    return site.render(
        request,
        "edit_comment.html",
        {"title": "Edit comment", "s": s, "c": c, "body": body, "error": error},
        status_code=400 if error else 200,
    )


async def delete(request: Request) -> Response:
    s, c, denied = own_comment(request)
    if denied:
        return denied
    site = Postmill.of(request)
    with site.ctx.db.transaction() as tx:
        if tx.execute("SELECT 1 FROM comments WHERE parent_id = ?", (c["id"],)).fetchone():
            # replies keep their place in the thread: the comment stays as "[deleted]"
            tx.execute("UPDATE comments SET soft_deleted = 1, body = '', edited_at = ? WHERE id = ?", (now(), c["id"]))
        else:
            tx.execute("DELETE FROM comments WHERE id = ?", (c["id"],))
        recount_comments(tx, s["id"])
    flash(request, "The comment was deleted.")
    return redirect(submission_path(s))


async def vote(request: Request) -> Response:
    return await vote_form(request, "comment")


COMMENT_URL = "/f/{forum}/{id:id}/{slug}/comment"


ROUTES = [
    Route("/cv/{id:id}", vote, methods=["POST"]),
    Route(COMMENT_URL, post_comment, methods=["POST"]),
    Route(COMMENT_URL + "/{cid:id}", permalink),
    Route(COMMENT_URL + "/{cid:id}", post_comment, methods=["POST"]),
    Route(COMMENT_URL + "/{cid:id}/edit", edit, methods=["GET", "POST"]),
    Route(COMMENT_URL + "/{cid:id}/delete", delete, methods=["POST"]),
]
