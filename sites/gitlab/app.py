"""The code forge: WebArena's GitLab CE (port 8023, user byteblaze / hello1234).

Pages follow GitLab's URL shapes: /users/sign_in, /dashboard/projects, /explore, /<namespace>/<project>
with its /-/tree, /-/blob, /-/commits, /-/commit/<sha>, /-/branches, /-/graphs/<ref>, /-/issues,
/-/merge_requests, /-/project_members, /-/edit, /-/forks/new, /-/starrers; /<user>, /groups/<group>.
Everything, repositories included, lives in the site's SQLite database (schema.sql, seed.py).
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from webrl.sites.embedded.platform import DatabaseSpec, SiteContext, SiteSpec
from webrl.sites.gitlab import (
    issues,
    members,
    merge_requests,
    project_admin,
    projects,
    repository,
    users,
)
from webrl.sites.gitlab.seed import seed
from webrl.sites.gitlab.web import Gitlab

HERE = Path(__file__).parent


def make_app(ctx: SiteContext) -> Starlette:
    gl = Gitlab(ctx)

    async def not_found(request: Request, exc: Exception):
        return gl.not_found(request)

    user_routes, user_catchall = users.routes(gl)
    project_routes, project_show = projects.routes(gl)
    static = StaticFiles(directory=str(HERE / "static"))
    routes = [
        Mount("/assets", static, name="assets"),
        Mount("/static", static, name="static"),
        *user_routes,
        *project_admin.routes(gl),
        *project_routes,
        *repository.routes(gl),
        *issues.routes(gl),
        *merge_requests.routes(gl),
        *members.routes(gl),
        *project_show,  # /<namespace>/<project>
        *user_catchall,  # /<user> or /<group>
    ]
    return Starlette(routes=routes, exception_handlers={404: not_found})


GITLAB_DB = DatabaseSpec(name="gitlab", schema=HERE / "schema.sql", seed=seed, version=1)

SITE = SiteSpec(name="gitlab", title="GitLab", database=GITLAB_DB, make_app=make_app)
