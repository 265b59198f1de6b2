"""The forum: WebArena's Reddit, a Postmill instance ("Postmill").

Pages follow Postmill's URL shapes: /forums, /forums/all, /f/<forum>[/<sort>], /f/<forum>/<id>/<slug>
(with /comment/<id> permalinks), /submit[/<forum>], /user/<name>[/submissions|/comments|/account],
/search?q=, /create_forum, /login, /registration. Votes are plain form POSTs to /sv/<id> and /cv/<id>.
Modules: forums.py (listings, forums, search), submissions.py, comments.py, users.py, each with its
route table (ROUTES); web.py holds what they share.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from webrl.sites.platform import DatabaseSpec, SiteContext, SiteSpec
from webrl.sites.reddit import comments, forums, submissions, users
from webrl.sites.reddit.seed import seed_forum
from webrl.sites.reddit.web import Postmill, not_allowed, not_found

FORUM_DB = DatabaseSpec(name="reddit", schema=Path(__file__).with_name("schema.sql"), seed=seed_forum, version=1)


def make_app(ctx: SiteContext) -> Starlette:
    static = StaticFiles(directory=str(Path(__file__).with_name("static")))
    routes = [
        Mount("/static", static, name="static"),
        Mount("/build", static, name="build"),
        *users.ROUTES,
        *submissions.ROUTES,
        *comments.ROUTES,
        *forums.ROUTES,  # last: its /{sort} route catches the front page's sorts
    ]
    return Postmill(ctx).app(routes, {404: not_found, 405: not_allowed})


SITE = SiteSpec(name="reddit", title="Postmill", database=FORUM_DB, make_app=make_app)
