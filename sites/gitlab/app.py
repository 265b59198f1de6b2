"""The code forge: WebArena's GitLab CE (port 8023, user byteblaze / hello1234).

Pages follow GitLab's URL shapes: /users/sign_in, /dashboard/projects, /explore, /<namespace>/<project>
with its /-/tree, /-/blob, /-/commits, /-/commit/<sha>, /-/branches, /-/graphs/<ref>, /-/issues,
/-/merge_requests, /-/project_members, /-/edit, /-/forks/new, /-/starrers; /<user>, /groups/<group>.
Everything, repositories included, lives in the site's SQLite database (schema.sql, seed.py).
Modules: users.py, projects.py, project_admin.py, repository.py (pages over gitstore.py, the git object
store), editor.py, issues.py and merge_requests.py (sharing issuables.py), members.py; web.py holds what
they share. Each exposes its route table (ROUTES); the order below is the order of matching.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from webrl.sites.gitlab import (
    editor,
    issues,
    members,
    merge_requests,
    project_admin,
    projects,
    repository,
    users,
)
from webrl.sites.gitlab.seed import seed
from webrl.sites.gitlab.web import Gitlab, not_found
from webrl.sites.platform import DatabaseSpec, SiteContext, SiteSpec

HERE = Path(__file__).parent


def make_app(ctx: SiteContext) -> Starlette:
    static = StaticFiles(directory=str(HERE / "static"))
    routes = [
        Mount("/assets", static, name="assets"),
        Mount("/static", static, name="static"),
        *users.ROUTES,
        *project_admin.ROUTES,
        *projects.ROUTES,
        *repository.ROUTES,
        *editor.ROUTES,
        *issues.ROUTES,
        *merge_requests.ROUTES,
        *members.ROUTES,
        *projects.CATCH_ALL,  # /<namespace>/<project>
        *users.CATCH_ALL,  # /<user> or /<group>
    ]
    return Gitlab(ctx).app(routes, {404: not_found})


GITLAB_DB = DatabaseSpec(name="gitlab", schema=HERE / "schema.sql", seed=seed, version=2)

SITE = SiteSpec(name="gitlab", title="GitLab", database=GITLAB_DB, make_app=make_app)
