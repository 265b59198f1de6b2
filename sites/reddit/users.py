"""Accounts and user pages: log in, log out, sign up, the user's overview, submissions and comments,
account settings, the biography and deleting the account."""

from __future__ import annotations

import sqlite3

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.platform import (
    check_password,
    flash,
    hash_password,
    int_param,
    now,
    redirect,
)
from webrl.sites.reddit.web import (
    NAME_RE,
    PER_PAGE,
    SUBMISSION_SELECT,
    Postmill,
    length_error,
)

COMMENT_SELECT = (
    "SELECT c.*, u.username, s.title AS submission_title, f.name AS forum_name, v.choice AS my_vote"
    " FROM comments c JOIN users u ON u.id = c.user_id JOIN submissions s ON s.id = c.submission_id"
    " JOIN forums f ON f.id = s.forum_id LEFT JOIN comment_votes v ON v.comment_id = c.id AND v.user_id = ?"
)


def password_errors(password: str, repeat: str) -> str | None:
    if not password:
        return "This value should not be blank."
    if len(password) < 8:
        return "This value is too short. It should have 8 characters or more."
    if len(password) > 72:
        return "This value is too long. It should have 72 characters or less."
    if password != repeat:
        return "The password fields must match."
    return None


def email_error(email: str) -> str | None:
    if email and ("@" not in email or "." not in email.split("@")[-1] or " " in email):
        return "This value is not a valid email address."
    return None


async def login(request: Request) -> Response:
    site = Postmill.of(request)
    username, error = "", None
    if request.method == "POST":
        form = await request.form()
        username = str(form.get("_username", "")).strip()
        row = site.conn.execute("SELECT * FROM users WHERE username = ? AND deleted = 0", (username,)).fetchone()
        if row and check_password(str(form.get("_password", "")), row["password"]):
            request.session["user_id"] = row["id"]
            return redirect(request.session.pop("after_login", None) or "/")
        error = "Invalid credentials."
    elif site.user(request):
        return redirect("/")
    return site.render(
        request,
        "login.html",
        {"title": "Log in", "username": username, "error": error},
        status_code=400 if error else 200,
    )


async def logout(request: Request) -> Response:
    request.session.clear()
    return redirect("/")


async def registration(request: Request) -> Response:
    site = Postmill.of(request)
    if site.user(request):
        return redirect("/")
    values = {"username": "", "email": ""}
    errors: dict[str, str] = {}
    if request.method == "POST":
        form = await request.form()
        values = {"username": str(form.get("username", "")).strip(), "email": str(form.get("email", "")).strip()}
        name = values["username"]
        if problem := length_error(name, 3, 25):
            errors["username"] = problem
        elif not NAME_RE.match(name):
            errors["username"] = "The username must contain only letters, numbers, and underscores."
        elif site.conn.execute("SELECT 1 FROM users WHERE username = ?", (name,)).fetchone():
            errors["username"] = "This username is already taken."
        if problem := password_errors(str(form.get("password", "")), str(form.get("password_repeat", ""))):
            errors["password"] = problem
        if problem := email_error(values["email"]):
            errors["email"] = problem
        if not errors:
            cur = site.conn.execute(
                "INSERT INTO users (username, password, email, created_at) VALUES (?, ?, ?, ?)",
                (name, hash_password(str(form["password"])), values["email"] or None, now()),
            )
            request.session["user_id"] = cur.lastrowid
            flash(request, "Your account has been registered.")
            return redirect("/")
    return site.render(
        request,
        "registration.html",
        {"title": "Sign up", "values": values, "errors": errors},
        status_code=400 if errors else 200,
    )


def profile(request: Request):
    site = Postmill.of(request)
    row = site.conn.execute(
        "SELECT * FROM users WHERE username = ? AND deleted = 0", (request.path_params["username"],)
    ).fetchone()
    return row


def sidebar_data(conn: sqlite3.Connection, owner) -> dict:
    counts = conn.execute(
        "SELECT (SELECT COUNT(*) FROM submissions WHERE user_id = :u) AS submissions,"
        " (SELECT COUNT(*) FROM comments WHERE user_id = :u AND soft_deleted = 0) AS comments,"
        " (SELECT COALESCE(SUM(net_score), 0) FROM submissions WHERE user_id = :u) +"
        " (SELECT COALESCE(SUM(net_score), 0) FROM comments WHERE user_id = :u) AS karma",
        {"u": owner["id"]},
    ).fetchone()
    moderates = conn.execute(
        "SELECT f.name FROM moderators m JOIN forums f ON f.id = m.forum_id"
        " WHERE m.user_id = ? ORDER BY f.name COLLATE NOCASE",
        (owner["id"],),
    ).fetchall()
    return {"owner": owner, "counts": counts, "moderates": moderates}


async def user_page(request: Request) -> Response:
    site = Postmill.of(request)
    owner = profile(request)
    if owner is None:
        return site.not_found(request)
    user = site.user(request)
    tab = request.url.path.rstrip("/").rsplit("/", 1)[-1]
    tab = tab if tab in ("submissions", "comments") else "overview"
    page = int_param(request.query_params.get("page"), 1)
    uid = user["id"] if user else None
    items = []
    if tab in ("overview", "submissions"):
        for s in site.conn.execute(
            SUBMISSION_SELECT + " WHERE s.user_id = ? ORDER BY s.created_at DESC LIMIT ?",
            (uid, owner["id"], page * PER_PAGE + 1),
        ):
            items.append(("submission", s))
    if tab in ("overview", "comments"):
        for c in site.conn.execute(
            COMMENT_SELECT + " WHERE c.user_id = ? AND c.soft_deleted = 0 ORDER BY c.created_at DESC LIMIT ?",
            (uid, owner["id"], page * PER_PAGE + 1),
        ):
            items.append(("comment", c))
    items.sort(key=lambda item: item[1]["created_at"], reverse=True)
    shown = items[(page - 1) * PER_PAGE : page * PER_PAGE]
    title = (
        owner["username"]
        if tab == "overview"
        else f"Submissions by {owner['username']}"
        if tab == "submissions"
        else f"Comments by {owner['username']}"
    )
    return site.render(
        request,
        "user.html",
        {
            "title": title,
            "tab": tab,
            "items": shown,
            "page": page,
            "has_prev": page > 1,
            "has_next": len(items) > page * PER_PAGE,
            **sidebar_data(site.conn, owner),
        },
    )


def self_only(request: Request):
    site = Postmill.of(request)
    owner = profile(request)
    if owner is None:
        return None, None, site.not_found(request)
    user = site.user(request)
    if user is None:
        return None, None, site.login_redirect(request)
    if user["id"] != owner["id"] and not user["admin"]:
        return None, None, site.forbidden(request)
    return owner, user, None


async def account(request: Request) -> Response:
    site = Postmill.of(request)
    owner, user, denied = self_only(request)
    if denied:
        return denied
    values = {"email": owner["email"] or ""}
    errors: dict[str, str] = {}
    if request.method == "POST":
        form = await request.form()
        values = {"email": str(form.get("email", "")).strip()}
        password = str(form.get("password", ""))
        if problem := email_error(values["email"]):
            errors["email"] = problem
        if password and (problem := password_errors(password, str(form.get("password_repeat", "")))):
            errors["password"] = problem
        if not errors:
            site.conn.execute("UPDATE users SET email = ? WHERE id = ?", (values["email"] or None, owner["id"]))
            if password:
                site.conn.execute("UPDATE users SET password = ? WHERE id = ?", (hash_password(password), owner["id"]))
            flash(request, "The changes were saved.")
            return redirect(f"/user/{owner['username']}/account")
    return site.render(
        request,
        "account.html",
        {"title": "Account settings", "values": values, "errors": errors, **sidebar_data(site.conn, owner)},
        status_code=400 if errors else 200,
    )


async def edit_biography(request: Request) -> Response:
    site = Postmill.of(request)
    owner, user, denied = self_only(request)
    if denied:
        return denied
    biography, error = owner["biography"] or "", None
    if request.method == "POST":
        form = await request.form()
        biography = str(form.get("biography", "")).strip()
        if len(biography) > 300:
            error = "This value is too long. It should have 300 characters or less."
        else:
            site.conn.execute("UPDATE users SET biography = ? WHERE id = ?", (biography or None, owner["id"]))
            flash(request, "The biography was saved.")
            return redirect(f"/user/{owner['username']}")
    return site.render(
        request,
        "edit_biography.html",
        {"title": "Edit biography", "biography": biography, "error": error, **sidebar_data(site.conn, owner)},
        status_code=400 if error else 200,
    )


async def delete_account(request: Request) -> Response:
    site = Postmill.of(request)
    owner, user, denied = self_only(request)
    if denied:
        return denied
    error = None
    if request.method == "POST":
        form = await request.form()
        if str(form.get("confirm", "")).strip() != owner["username"]:
            error = "Type your username to confirm."
        else:
            with site.ctx.db.transaction() as c:
                c.execute(
                    "UPDATE users SET deleted = 1, biography = NULL, email = NULL, password = '!' WHERE id = ?",
                    (owner["id"],),
                )
                c.execute("DELETE FROM subscriptions WHERE user_id = ?", (owner["id"],))
            if user["id"] == owner["id"]:
                request.session.clear()
            return redirect("/")
    return site.render(
        request,
        "delete_account.html",
        {"title": "Delete account", "error": error, **sidebar_data(site.conn, owner)},
        status_code=400 if error else 200,
    )


ROUTES = [
    Route("/login", login, methods=["GET", "POST"]),
    Route("/login_check", login, methods=["POST"]),
    Route("/logout", logout, methods=["GET", "POST"]),
    Route("/registration", registration, methods=["GET", "POST"]),
    Route("/user/{username}", user_page),
    Route("/user/{username}/submissions", user_page),
    Route("/user/{username}/comments", user_page),
    Route("/user/{username}/account", account, methods=["GET", "POST"]),
    Route("/user/{username}/edit_biography", edit_biography, methods=["GET", "POST"]),
    Route("/user/{username}/delete_account", delete_account, methods=["GET", "POST"]),
]
