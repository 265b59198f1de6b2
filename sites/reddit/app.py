"""The forum: WebArena's Reddit, a Postmill instance ("Postmill").

Pages follow Postmill's URL shapes: /forums, /forums/all, /f/<forum>[/<sort>], /f/<forum>/<id>/<slug>
(with /comment/<id> permalinks), /submit[/<forum>], /user/<name>[/submissions|/comments|/account],
/search?q=, /create_forum, /login, /registration. Votes are plain form POSTs to /sv/<id> and /cv/<id>.
Modules: forums.py (listings, forums, search), submissions.py, comments.py, users.py; web.py holds
what they share.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from webrl.sites.embedded.platform import DatabaseSpec, SiteContext, SiteSpec
from webrl.sites.reddit import comments, forums, submissions, users
from webrl.sites.reddit.seed import seed_forum
from webrl.sites.reddit.web import Postmill

FORUM_DB = DatabaseSpec(name="reddit", schema=Path(__file__).with_name("schema.sql"), seed=seed_forum, version=1)


def make_app(ctx: SiteContext) -> Starlette:
    site = Postmill(ctx)

    async def not_found(request: Request, exc: Exception):
        return site.not_found(request)

    async def not_allowed(request: Request, exc: Exception):
        return site.render(request, "404.html", {"title": "Bad request", "bad_request": True}, status_code=405)

    static = StaticFiles(directory=str(Path(__file__).with_name("static")))
    routes = [
        Mount("/static", static, name="static"),
        Mount("/build", static, name="build"),
        *users.routes(site),
        *submissions.routes(site),
        *comments.routes(site),
        *forums.routes(site),  # last: its /{sort} route catches the front page's sorts
    ]
    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})


SITE = SiteSpec(name="reddit", title="Postmill", database=FORUM_DB, make_app=make_app)
