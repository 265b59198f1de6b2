"""Listings and forums: the front page, /all, /featured, /subscribed, the forum list, forum pages
with their sorts, subscriptions, creating a forum, and search."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from webrl.sites.platform import flash, now, redirect, search_term
from webrl.sites.reddit.web import NAME_RE, SORTS, Postmill, length_error, safe_next

FORUM_SORTS = {
    "by_name": "f.name COLLATE NOCASE",
    "by_title": "f.title COLLATE NOCASE",
    "by_subscribers": "subscribers DESC, f.name COLLATE NOCASE",
    "by_submissions": "submissions DESC, f.name COLLATE NOCASE",
}
FORUM_FIELDS = ("name", "title", "description", "sidebar")
# Postmill's search form sets no limit that we know of; a term is cut at the length of its longest title (300, the
# submission form's limit): what could match a whole title still can, and SQLite never gets a huge pattern.
MAX_SEARCH = 300


def front_listing(request: Request, kind: str, sort: str) -> Response:
    site = Postmill.of(request)
    if sort not in SORTS:
        return site.not_found(request)
    user = site.user(request)
    if kind == "default":
        has_subs = user and site.conn.execute("SELECT 1 FROM subscriptions WHERE user_id = ?", (user["id"],)).fetchone()
        kind = "subscribed" if has_subs else "featured"
    if kind == "subscribed" and not user:
        return site.login_redirect(request)
    if kind == "featured":
        where, params = "f.featured = 1", ()
    elif kind == "subscribed":
        where, params = "s.forum_id IN (SELECT forum_id FROM subscriptions WHERE user_id = ?)", (user["id"],)
    else:
        where, params = "", ()
    listing = site.listing(request, where, params, sort, user)
    base = {"featured": "/featured", "subscribed": "/subscribed", "all": "/all"}[kind]
    return site.render(
        request,
        "front.html",
        {"title": "Postmill" if kind != "all" else "All forums", "kind": kind, "sort_base": base, **listing},
    )


async def front(request: Request) -> Response:
    return front_listing(request, "default", request.path_params.get("sort", "hot"))


async def featured(request: Request) -> Response:
    return front_listing(request, "featured", request.path_params.get("sort", "hot"))


async def subscribed(request: Request) -> Response:
    return front_listing(request, "subscribed", request.path_params.get("sort", "hot"))


async def all_submissions(request: Request) -> Response:
    return front_listing(request, "all", request.path_params.get("sort", "hot"))


async def forum_list(request: Request) -> Response:
    site = Postmill.of(request)
    sort = request.path_params.get("sort", "by_name")
    if sort not in FORUM_SORTS:
        return site.not_found(request)
    user = site.user(request)
    rows = site.conn.execute(
        "SELECT f.*, (SELECT COUNT(*) FROM subscriptions s WHERE s.forum_id = f.id) AS subscribers,"
        " (SELECT COUNT(*) FROM submissions s WHERE s.forum_id = f.id) AS submissions,"
        " EXISTS (SELECT 1 FROM subscriptions s WHERE s.forum_id = f.id AND s.user_id = ?) AS subscribed"
        f" FROM forums f ORDER BY {FORUM_SORTS[sort]}",
        (user["id"] if user else None,),
    ).fetchall()
    return site.render(request, "forum_list.html", {"title": "List of forums", "forums": rows, "sort": sort})


async def forums_all(request: Request) -> Response:
    site = Postmill.of(request)
    groups: dict[str, list] = {}
    for row in site.conn.execute("SELECT name FROM forums ORDER BY name COLLATE NOCASE"):
        letter = row["name"][0].upper()
        groups.setdefault(letter if letter.isalpha() else "#", []).append(row["name"])
    return site.render(request, "forums_all.html", {"title": "All forums", "groups": groups})


async def forum_page(request: Request) -> Response:
    site = Postmill.of(request)
    forum = site.forum(request.path_params["forum"])
    sort = request.path_params.get("sort", "hot")
    if forum is None or sort not in SORTS:
        return site.not_found(request)
    user = site.user(request)
    listing = site.listing(request, "s.forum_id = ?", (forum["id"],), sort, user)
    moderators = site.conn.execute(
        "SELECT u.username FROM moderators m JOIN users u ON u.id = m.user_id WHERE m.forum_id = ?"
        " ORDER BY u.username COLLATE NOCASE",
        (forum["id"],),
    ).fetchall()
    return site.render(
        request,
        "forum.html",
        {
            "title": f"/f/{forum['name']}",
            "forum": forum,
            "moderators": moderators,
            "subscribed": site.is_subscribed(forum["id"], user),
            "sort_base": f"/f/{forum['name']}",
            **listing,
        },
    )


async def subscribe(request: Request) -> Response:
    site = Postmill.of(request)
    forum = site.forum(request.path_params["forum"])
    if forum is None:
        return site.not_found(request)
    user = site.user(request)
    if user is None:
        return site.login_redirect(request, f"/f/{forum['name']}")
    if request.url.path.endswith("/unsubscribe"):
        site.conn.execute("DELETE FROM subscriptions WHERE forum_id = ? AND user_id = ?", (forum["id"], user["id"]))
    else:
        site.conn.execute(
            "INSERT OR IGNORE INTO subscriptions (forum_id, user_id, created_at) VALUES (?, ?, ?)",
            (forum["id"], user["id"], now()),
        )
    form = await request.form()
    return redirect(safe_next(form.get("next"), f"/f/{forum['name']}"))


async def create_forum(request: Request) -> Response:
    site = Postmill.of(request)
    user = site.user(request)
    if user is None:
        return site.login_redirect(request)
    values = dict.fromkeys(FORUM_FIELDS, "")
    errors: dict[str, str] = {}
    if request.method == "POST":
        form = await request.form()
        values = {k: str(form.get(k, "")).strip() for k in FORUM_FIELDS}
        errors = forum_errors(site, values)
        if not errors:
            stamp = now()
            with site.ctx.db.transaction() as c:
                cur = c.execute(
                    "INSERT INTO forums (name, title, description, sidebar, created_at) VALUES (?,?,?,?,?)",
                    (values["name"], values["title"], values["description"], values["sidebar"], stamp),
                )
                c.execute("INSERT INTO moderators VALUES (?, ?, ?)", (cur.lastrowid, user["id"], stamp))
                c.execute("INSERT INTO subscriptions VALUES (?, ?, ?)", (cur.lastrowid, user["id"], stamp))
            flash(request, "The forum was created.")
            return redirect(f"/f/{values['name']}")
    return site.render(
        request,
        "create_forum.html",
        {"title": "Create forum", "values": values, "errors": errors},
        status_code=400 if errors else 200,
    )


def forum_errors(site: Postmill, values: dict[str, str]) -> dict[str, str]:
    errors = {}
    name = values["name"]
    if problem := length_error(name, 3, 25):
        errors["name"] = problem
    elif not NAME_RE.match(name):
        errors["name"] = "The name must contain only letters, numbers, and underscores."
    elif site.forum(name) is not None:
        errors["name"] = "A forum with this name already exists."
    if problem := length_error(values["title"], 1, 100):
        errors["title"] = problem
    if problem := length_error(values["description"], 1, 1500):
        errors["description"] = problem
    if len(values["sidebar"]) > 10000:
        errors["sidebar"] = "This value is too long. It should have 10000 characters or less."
    return errors


async def search(request: Request) -> Response:
    site = Postmill.of(request)
    q, _ = search_term(request.query_params.get("q"), MAX_SEARCH)
    user = site.user(request)
    submissions, comments = [], []
    if q:
        like = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        submissions = site.conn.execute(
            "SELECT s.*, f.name AS forum_name, u.username, v.choice AS my_vote FROM submissions s"
            " JOIN forums f ON f.id = s.forum_id JOIN users u ON u.id = s.user_id"
            " LEFT JOIN submission_votes v ON v.submission_id = s.id AND v.user_id = ?"
            " WHERE s.title LIKE ? ESCAPE '\\' OR s.body LIKE ? ESCAPE '\\' ORDER BY s.id DESC LIMIT 50",
            (user["id"] if user else None, like, like),
        ).fetchall()
        comments = site.conn.execute(
            "SELECT c.*, u.username, s.title AS submission_title, f.name AS forum_name, v.choice AS my_vote"
            " FROM comments c JOIN users u ON u.id = c.user_id JOIN submissions s ON s.id = c.submission_id"
            " JOIN forums f ON f.id = s.forum_id"
            " LEFT JOIN comment_votes v ON v.comment_id = c.id AND v.user_id = ?"
            " WHERE c.soft_deleted = 0 AND c.body LIKE ? ESCAPE '\\' ORDER BY c.id DESC LIMIT 50",
            (user["id"] if user else None, like),
        ).fetchall()
    return site.render(
        request,
        "search.html",
        {
            "title": f"Search results for: {q}" if q else "Search",
            "q": q,
            "submissions": submissions,
            "comments": comments,
        },
    )


ROUTES = [
    Route("/", front),
    Route("/featured", featured),
    Route("/featured/{sort}", featured),
    Route("/subscribed", subscribed),
    Route("/subscribed/{sort}", subscribed),
    Route("/all", all_submissions),
    Route("/all/{sort}", all_submissions),
    Route("/forums", forum_list),
    Route("/forums/all", forums_all),
    Route("/forums/{sort}", forum_list),
    Route("/create_forum", create_forum, methods=["GET", "POST"]),
    Route("/search", search),
    Route("/f/{forum}", forum_page),
    Route("/f/{forum}/subscribe", subscribe, methods=["POST"]),
    Route("/f/{forum}/unsubscribe", subscribe, methods=["POST"]),
    Route("/f/{forum}/{sort}", forum_page),
    Route("/{sort}", front),  # the front page's sorts (/new, /top, ...): last, so named pages win
]
