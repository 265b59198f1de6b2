"""Task templates over the code forge (see webrl.tasks.templates). Every answer, URL, locator value and element
name is read from the pristine forge data (the "gitlab" database); new titles, comments and names that a
task asks the agent to enter are drawn from the seed's own vocabulary (`seed_data`) or from other rows, with
a `random.Random` seeded by the template key. The signed-in account is byteblaze (WebArena's user)."""

from __future__ import annotations

import random
import re
from urllib.parse import urlencode

from webrl.sites.gitlab import gitstore as repo
from webrl.sites.gitlab import seed_data as sd
from webrl.sites.gitlab.project_admin import slugify
from webrl.sites.gitlab.web import ROLES
from webrl.tasks.script import click, done, scroll_down, search, select, type_
from webrl.tasks.templates import Data, Instance, TaskTemplate, html_eval, string_eval, unachievable, url_eval

DB = "gitlab"
ME = "byteblaze"
G = "__GITLAB__"

# -- evaluation objects ----------------------------------------------------------------------------------


def testid_text(testid: str) -> str:
    return f"document.querySelector('[data-testid=\"{testid}\"]').outerText"


# the title's own text: the visibility icon after it leaves a space in its outerText, which VAB's exact match keeps
PROJECT_NAME_JS = "document.querySelector('[data-testid=\"project-name-content\"]').firstChild.textContent.trim()"


# -- shared data -------------------------------------------------------------------------------------------

PROJECTS_SQL = (
    "SELECT p.*, n.path AS ns_path, n.name AS ns_name, n.kind AS ns_kind, n.owner_id AS ns_owner_id,"
    " n.path || '/' || p.path AS full_path, n.name || ' / ' || p.name AS full_name,"
    " (SELECT COUNT(*) FROM stars s WHERE s.project_id = p.id) AS star_count,"
    " (SELECT COUNT(*) FROM branches b WHERE b.project_id = p.id) AS branch_count,"
    " (SELECT COUNT(*) FROM merge_requests m WHERE m.project_id = p.id AND m.state = 'opened') AS open_mrs"
    " FROM projects p JOIN namespaces n ON n.id = p.namespace_id"
)


def _me(data: Data):
    return data.one(DB, "SELECT * FROM users WHERE username = ?", (ME,))


def _projects(data: Data, where: str = "1 = 1", params: tuple = ()) -> list:
    return data.rows(DB, f"{PROJECTS_SQL} WHERE {where} ORDER BY p.id", params)


def _my_level(data: Data, project) -> int:
    """byteblaze's access level in `project` (direct, via the group, or as the namespace owner)."""
    me = _me(data)
    levels = [
        r[0]
        for r in data.rows(
            DB,
            "SELECT access_level FROM project_members WHERE project_id = ? AND user_id = ? UNION ALL"
            " SELECT access_level FROM group_members WHERE group_id = ? AND user_id = ?",
            (project["id"], me["id"], project["namespace_id"], me["id"]),
        )
    ]
    if project["ns_owner_id"] == me["id"]:
        levels.append(50)
    return max(levels, default=0)


def _managed(data: Data, level: int) -> list:
    """Projects where byteblaze has at least `level` (the ones the forge lists on the dashboard)."""
    return [p for p in _projects(data) if _my_level(data, p) >= level]


def _others(data: Data) -> list:
    """Public projects of other users (not forks), as found on the Explore page."""
    me = _me(data)
    return _projects(
        data,
        "p.visibility = 'public' AND p.forked_from_id IS NULL AND (n.owner_id IS NULL OR n.owner_id != ?)"
        " AND p.namespace_id NOT IN (SELECT group_id FROM group_members WHERE user_id = ?)",
        (me["id"], me["id"]),
    )


def _contributors(data: Data, project) -> list:
    """The contributors graph of the default branch (merge commits excluded), as the page computes it."""
    conn = data.connections[DB]
    head = repo.head(conn, project["id"], project["default_branch"])
    return repo.contributors(conn, project["id"], head)


def _labels(data: Data, project_id: int) -> list:
    return data.rows(DB, "SELECT * FROM labels WHERE project_id = ? ORDER BY title COLLATE NOCASE", (project_id,))


def _assignable(data: Data, project) -> list:
    return data.rows(
        DB,
        "SELECT * FROM users WHERE id IN (SELECT user_id FROM project_members WHERE project_id = ?"
        " UNION SELECT user_id FROM group_members WHERE group_id = ? UNION SELECT owner_id FROM namespaces WHERE id "
        "= ?)"
        " ORDER BY name COLLATE NOCASE",
        (project["id"], project["namespace_id"], project["namespace_id"]),
    )


def _open_list(data: Data, table: str, project_id: int) -> list:
    """Open issues / merge requests of a project in the list's default order (newest first)."""
    return data.rows(
        DB,
        f"SELECT * FROM {table} WHERE project_id = ? AND state = 'opened' ORDER BY created_at DESC, id DESC",
        (project_id,),
    )


def _unique_titles(rows: list) -> list:
    titles = [r["title"] for r in rows]
    return [r for r in rows if titles.count(r["title"]) == 1]


def _searchable_issues(data: Data, project_id: int) -> list:
    """Open issues whose title, typed in the issue search, finds that issue alone."""
    out = []
    for issue in _unique_titles(_open_list(data, "issues", project_id)):
        like = f"%{issue['title']}%"
        hits = data.one(
            DB,
            "SELECT COUNT(*) FROM issues WHERE project_id = ? AND state = 'opened'"
            " AND (title LIKE ? OR description LIKE ?)",
            (project_id, like, like),
        )[0]
        if hits == 1:
            out.append(issue)
    return out


def _explore_steps(project) -> list[str]:
    """From the Explore page: filter by the project's path and open it."""
    return [search("placeholder=Filter by name", project["full_path"]), click(project["name"])]


def _dashboard_steps(project) -> list[str]:
    return [search("placeholder=Filter by name", project["path"]), click(project["name"])]


# -- information retrieval ---------------------------------------------------------------------------------


def author_commit_count(data: Data) -> list[Instance]:
    """How many commits an author made to a project's default branch: the contributors page's count."""
    rng = random.Random("gitlab.author_commit_count")
    out = []
    for project in _projects(data, "p.forked_from_id IS NULL AND p.visibility != 'private'"):
        people = _contributors(data, project)
        names = [c["name"] for c in people]
        choices = [c for c in people[1:] if names.count(c["name"]) == 1]
        if not choices:
            continue
        c = rng.choice(choices)
        out.append(
            Instance(
                values={"author": c["name"], "project": project["full_path"]},
                start_url=f"{G}/{project['full_path']}",
                eval=string_eval("must_include", [str(c["commits"])]),
                cheat=[
                    click("Repository"),
                    click("Contributors"),
                    done(str(c["commits"]), f"{c['name']}: {c['commits']} commits"),
                ],
            )
        )
    return data.sample(rng, out, 10)


def top_contributor(data: Data) -> list[Instance]:
    """Who made the most commits to a project's default branch (a unique top of the contributors page)."""
    rng = random.Random("gitlab.top_contributor")
    out = []
    for project in _others(data):
        people = _contributors(data, project)
        if len(people) < 2 or people[0]["commits"] == people[1]["commits"]:
            continue
        top = people[0]
        out.append(
            Instance(
                values={"project": project["full_path"]},
                start_url=f"{G}/explore/projects",
                eval=string_eval("must_include", [top["name"]]),
                cheat=[
                    *_explore_steps(project),
                    click("Repository"),
                    click("Contributors"),
                    done(top["name"], f"top: {top['commits']} commits"),
                ],
            )
        )
    return data.sample(rng, out, 8)


def branch_latest_commit(data: Data) -> list[Instance]:
    """The title of the head commit of a (non-default) branch, as the branches page shows it."""
    rng = random.Random("gitlab.branch_latest_commit")
    rows = data.rows(
        DB,
        "SELECT b.name AS branch, c.title, n.path || '/' || p.path AS full_path FROM branches b"
        " JOIN projects p ON p.id = b.project_id JOIN namespaces n ON n.id = p.namespace_id"
        " JOIN commits c ON c.project_id = b.project_id AND c.sha = b.commit_sha"
        " WHERE b.name != p.default_branch AND p.forked_from_id IS NULL AND p.visibility != 'private'"
        " ORDER BY p.id, b.name",
    )
    return [
        Instance(
            values={"branch": r["branch"], "project": r["full_path"]},
            start_url=f"{G}/{r['full_path']}",
            eval=string_eval("must_include", [r["title"]]),
            cheat=[click("Repository"), click("Branches"), done(r["title"], f"{r['branch']} head commit")],
        )
        for r in data.sample(rng, rows, 8)
    ]


def branch_count(data: Data) -> list[Instance]:
    """How many branches one of my projects has (the project overview's count)."""
    rng = random.Random("gitlab.branch_count")
    return [
        Instance(
            values={"project": p["name"]},
            start_url=f"{G}/dashboard/projects",
            eval=string_eval("exact_match", str(p["branch_count"])),
            cheat=[*_dashboard_steps(p), done(str(p["branch_count"]), f"{p['branch_count']} branches")],
        )
        for p in data.sample(rng, _managed(data, 10), 8)
    ]


def star_count(data: Data) -> list[Instance]:
    """The number of stars of another user's project (its row on the Explore page)."""
    rng = random.Random("gitlab.star_count")
    return [
        Instance(
            values={"project": p["full_path"]},
            start_url=f"{G}/explore/projects",
            eval=string_eval("exact_match", str(p["star_count"])),
            cheat=[
                search("placeholder=Filter by name", p["full_path"]),
                done(str(p["star_count"]), f"{p['star_count']} stars"),
            ],
        )
        for p in data.sample(rng, _others(data), 8)
    ]


def open_mr_count(data: Data) -> list[Instance]:
    """The number of open merge requests of a project (its row on the Explore page)."""
    rng = random.Random("gitlab.open_mr_count")
    return [
        Instance(
            values={"project": p["full_path"]},
            start_url=f"{G}/explore/projects",
            eval=string_eval("exact_match", str(p["open_mrs"])),
            cheat=[
                search("placeholder=Filter by name", p["full_path"]),
                click(p["name"]),
                done(str(p["open_mrs"]), f"{p['open_mrs']} open merge requests"),
            ],
        )
        for p in data.sample(rng, _others(data), 8)
    ]


def _label_counts(data: Data) -> list:
    return data.rows(
        DB,
        "SELECT n.path || '/' || p.path AS full_path, l.title AS label, (SELECT COUNT(*) FROM issues i JOIN"
        " issue_labels x ON x.issue_id = i.id WHERE x.label_id = l.id AND i.state = 'opened') AS n"
        " FROM labels l JOIN projects p ON p.id = l.project_id JOIN namespaces n ON n.id = p.namespace_id"
        " WHERE p.forked_from_id IS NULL AND p.visibility != 'private' ORDER BY p.id, l.title",
    )


def label_issue_count(data: Data) -> list[Instance]:
    """How many open issues of a project carry a label (the Open tab's count once filtered by the label)."""
    rng = random.Random("gitlab.label_issue_count")
    rows = [r for r in _label_counts(data) if r["n"] > 0]
    return [
        Instance(
            values={"project": r["full_path"], "label": r["label"]},
            start_url=f"{G}/{r['full_path']}",
            eval=string_eval("must_include", [str(r["n"])]),
            cheat=[click("Issues"), search("placeholder=Label", r["label"]), done(str(r["n"]), f"Open: {r['n']}")],
        )
        for r in data.sample(rng, rows, 10)
    ]


def my_latest_assigned_issue(data: Data) -> list[Instance]:
    """The title of the most recently created open issue of a project that is assigned to me."""
    rng = random.Random("gitlab.my_latest_assigned_issue")
    me = _me(data)
    out = []
    for project in _projects(data):
        rows = data.rows(
            DB,
            "SELECT * FROM issues WHERE project_id = ? AND assignee_id = ? AND state = 'opened'"
            " ORDER BY created_at DESC, id DESC",
            (project["id"], me["id"]),
        )
        if not rows or (len(rows) > 1 and rows[0]["created_at"] == rows[1]["created_at"]):
            continue
        out.append(
            Instance(
                values={"project": project["full_path"]},
                start_url=f"{G}/{project['full_path']}",
                eval=string_eval("must_include", [rows[0]["title"]]),
                cheat=[
                    click("Issues"),
                    search("placeholder=Assignee username", ME),
                    done(rows[0]["title"], f"newest: #{rows[0]['iid']}"),
                ],
            )
        )
    return data.sample(rng, out, 8)


def mr_source_branch(data: Data) -> list[Instance]:
    """The source branch of an open merge request (named by its title)."""
    rng = random.Random("gitlab.mr_source_branch")
    out = []
    for project in _projects(data, "p.visibility != 'private'"):
        for mr in _unique_titles(_open_list(data, "merge_requests", project["id"]))[:3]:
            if _open_list(data, "merge_requests", project["id"]).index(mr) < 3:
                out.append((project, mr))
    return [
        Instance(
            values={"project": project["full_path"], "title": mr["title"]},
            start_url=f"{G}/{project['full_path']}",
            eval=string_eval("must_include", [mr["source_branch"]]),
            cheat=[click("Merge requests"), click(mr["title"]), done(mr["source_branch"], f"!{mr['iid']}")],
        )
        for project, mr in data.sample(rng, out, 8)
    ]


def issue_author(data: Data) -> list[Instance]:
    """Who opened an open issue (named by its title)."""
    rng = random.Random("gitlab.issue_author")
    out = []
    for project in _projects(data, "p.visibility != 'private'"):
        out += [(project, i) for i in _searchable_issues(data, project["id"])]
    picked = data.sample(rng, out, 8)
    return [
        Instance(
            values={"project": project["full_path"], "title": issue["title"]},
            start_url=f"{G}/{project['full_path']}",
            eval=string_eval("must_include", [author]),
            cheat=[
                click("Issues"),
                search("placeholder=Search or filter results...", issue["title"]),
                done(author, f"#{issue['iid']}"),
            ],
        )
        for project, issue in picked
        for author in [data.one(DB, "SELECT name FROM users WHERE id = ?", (issue["author_id"],))["name"]]
    ]


# -- navigation ----------------------------------------------------------------------------------------------


def nav_label_issues(data: Data) -> list[Instance]:
    """Open a project's issue list filtered by a label (url: label_name[])."""
    rng = random.Random("gitlab.nav_label_issues")
    rows = _label_counts(data)
    return [
        Instance(
            values={"project": r["full_path"], "label": r["label"]},
            start_url=f"{G}/{r['full_path']}",
            eval=url_eval(f"{G}/{r['full_path']}/-/issues?{urlencode({'label_name[]': r['label']})}"),
            cheat=[click("Issues"), search("placeholder=Label", r["label"]), done()],
        )
        for r in data.sample(rng, rows, 8)
    ]


def nav_contributors(data: Data) -> list[Instance]:
    """Open the contributors page of a project found on the Explore page."""
    rng = random.Random("gitlab.nav_contributors")
    return [
        Instance(
            values={"project": p["full_path"]},
            start_url=f"{G}/explore/projects",
            eval=url_eval(f"{G}/{p['full_path']}/-/graphs/{p['default_branch']}"),
            cheat=[*_explore_steps(p), click("Repository"), click("Contributors"), done()],
        )
        for p in data.sample(rng, _others(data), 8)
    ]


def nav_mr_author(data: Data) -> list[Instance]:
    """Open the profile page of the author of a merge request."""
    rng = random.Random("gitlab.nav_mr_author")
    out = []
    for project in _projects(data, "p.visibility != 'private'"):
        listed = _open_list(data, "merge_requests", project["id"])
        out += [(project, mr) for mr in _unique_titles(listed) if listed.index(mr) < 3]
    picked = data.sample(rng, out, 8)
    return [
        Instance(
            values={"project": project["full_path"], "iid": str(mr["iid"])},
            start_url=f"{G}/{project['full_path']}",
            eval=url_eval(f"{G}/{author['username']}"),
            cheat=[click("Merge requests"), click(mr["title"]), click(author["name"]), done()],
        )
        for project, mr in picked
        for author in [data.one(DB, "SELECT * FROM users WHERE id = ?", (mr["author_id"],))]
    ]


def nav_branch_commits(data: Data) -> list[Instance]:
    """Open the commit history of a non-default branch (through the branch switcher)."""
    rng = random.Random("gitlab.nav_branch_commits")
    rows = data.rows(
        DB,
        "SELECT b.name AS branch, p.default_branch, n.path || '/' || p.path AS full_path FROM branches b"
        " JOIN projects p ON p.id = b.project_id JOIN namespaces n ON n.id = p.namespace_id"
        " WHERE b.name != p.default_branch AND p.forked_from_id IS NULL AND p.visibility != 'private'"
        " ORDER BY p.id, b.name",
    )
    return [
        Instance(
            values={"project": r["full_path"], "branch": r["branch"]},
            start_url=f"{G}/{r['full_path']}",
            eval=url_eval(f"{G}/{r['full_path']}/-/commits/{r['branch']}"),
            cheat=[
                click("Repository"),
                click("Commits"),
                click(f"{r['default_branch']} \u25be"),
                click(r["branch"]),
                done(),
            ],
        )
        for r in data.sample(rng, rows, 8)
    ]


# -- state changes -------------------------------------------------------------------------------------------


def _new_issue_titles(data: Data, rng: random.Random, project_id: int) -> str:
    taken = {r[0].lower() for r in data.rows(DB, "SELECT title FROM issues WHERE project_id = ?", (project_id,))}
    while True:
        title = rng.choice(sd.FEATURES).format(thing=rng.choice(sd.THINGS), component=rng.choice(sd.COMPONENTS))
        if title.lower() not in taken:
            return title


def create_issue(data: Data) -> list[Instance]:
    """Create an issue with a title, a label and an assignee; checked on the new issue's page."""
    rng = random.Random("gitlab.create_issue")
    out = []
    for project in _managed(data, 20):
        labels = _labels(data, project["id"])[:5]
        people = [u for u in _assignable(data, project) if u["username"] != ME]
        if not labels or not people:
            continue
        label, person = rng.choice(labels), rng.choice(people)
        title = _new_issue_titles(data, rng, project["id"])
        out.append(
            Instance(
                values={
                    "project": project["full_path"],
                    "title": title,
                    "label": label["title"],
                    "assignee": person["name"],
                },
                start_url=f"{G}/{project['full_path']}",
                eval=html_eval(
                    # the page the agent ended on is an issue of that project (its path), not of another
                    ("last", "document.location.pathname.split('/-/')[0]", "exact_match", f"/{project['full_path']}"),
                    ("last", testid_text("issue-title"), "exact_match", title),
                    ("last", testid_text("labels-block"), "must_include", [label["title"]]),
                    ("last", testid_text("assignee-block"), "must_include", [person["name"]]),
                ),
                cheat=[
                    click("Issues"),
                    click("New issue"),
                    type_("placeholder=Title", title),
                    select("data-testid=assignee-select", f"(@{person['username']})"),
                    scroll_down(),
                    click(f"value={label['id']}"),
                    click("Create issue"),
                    done(),
                ],
            )
        )
    return data.sample(rng, out, 8)


def close_issue(data: Data) -> list[Instance]:
    """Close an open issue (found with the issue search); the issue page must say Closed."""
    rng = random.Random("gitlab.close_issue")
    out = []
    for project in _managed(data, 20):
        out += [(project, i) for i in _searchable_issues(data, project["id"])]
    return [
        Instance(
            values={"project": project["full_path"], "title": issue["title"]},
            start_url=f"{G}/{project['full_path']}/-/issues",
            eval=html_eval(
                (
                    f"{G}/{project['full_path']}/-/issues/{issue['iid']}",
                    testid_text("issue-state"),
                    "exact_match",
                    "Closed",
                )
            ),
            cheat=[
                search("placeholder=Search or filter results...", issue["title"]),
                click(f"data-text={issue['title']}"),
                click("Close issue"),
                done(),
            ],
        )
        for project, issue in data.sample(rng, out, 8)
    ]


def comment_issue(data: Data) -> list[Instance]:
    """Post a comment on an open issue; the issue's last comment must be that text."""
    rng = random.Random("gitlab.comment_issue")
    comments = [c for c in sd.COMMENTS if ":" not in c]
    out = []
    for project in _projects(data, "p.visibility = 'public'"):
        for issue in _searchable_issues(data, project["id"]):
            notes = data.one(
                DB, "SELECT COUNT(*) FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ?", (issue["id"],)
            )[0]
            if notes == 0 and len(issue["description"]) < 300:
                out.append((project, issue))
    picked = data.sample(rng, out, 8)
    return [
        Instance(
            values={"project": project["full_path"], "title": issue["title"], "comment": comment},
            start_url=f"{G}/{project['full_path']}",
            eval=html_eval(
                (
                    f"{G}/{project['full_path']}/-/issues/{issue['iid']}",
                    "[...document.querySelectorAll('[data-testid=\"note-text\"]')].map((e) => e.outerText).pop()",
                    "exact_match",
                    comment,
                )
            ),
            cheat=[
                click("Issues"),
                search("placeholder=Search or filter results...", issue["title"]),
                click(f"data-text={issue['title']}"),
                type_("placeholder=Write a comment or drag your files here\u2026", comment),
                scroll_down(),
                click("Comment"),
                done(),
            ],
        )
        for project, issue in picked
        for comment in [rng.choice(comments).format(thing=rng.choice(sd.THINGS))]
    ]


def _mergeable(data: Data, project) -> list:
    listed = _open_list(data, "merge_requests", project["id"])
    return [
        mr
        for mr in _unique_titles(listed)
        if listed.index(mr) < 3
        and not mr["draft"]
        and data.rows(
            DB, "SELECT 1 FROM branches WHERE project_id = ? AND name = ?", (project["id"], mr["source_branch"])
        )
    ]


def merge_mr(data: Data) -> list[Instance]:
    """Merge an open merge request; its page must say Merged."""
    rng = random.Random("gitlab.merge_mr")
    out = [(p, mr) for p in _managed(data, 30) for mr in _mergeable(data, p)]
    return [
        Instance(
            values={"project": project["full_path"], "iid": str(mr["iid"]), "title": mr["title"]},
            start_url=f"{G}/{project['full_path']}/-/merge_requests",
            eval=html_eval(
                (
                    f"{G}/{project['full_path']}/-/merge_requests/{mr['iid']}",
                    testid_text("mr-state"),
                    "exact_match",
                    "Merged",
                )
            ),
            cheat=[click(mr["title"]), click("Merge"), done()],
        )
        for project, mr in data.sample(rng, out, 8)
    ]


def assign_mr(data: Data) -> list[Instance]:
    """Assign an open merge request to a project member; the sidebar must name them."""
    rng = random.Random("gitlab.assign_mr")
    out = []
    for project in _managed(data, 20):
        people = _assignable(data, project)
        for mr in _mergeable(data, project):
            options = [
                u
                for u in people
                if u["id"] != mr["assignee_id"] and sum(u["name"].lower() in v["name"].lower() for v in people) == 1
            ]
            if options:
                out.append((project, mr, rng.choice(options)))
    return [
        Instance(
            values={"project": project["full_path"], "title": mr["title"], "assignee": person["name"]},
            start_url=f"{G}/{project['full_path']}/-/merge_requests",
            eval=html_eval(
                (
                    f"{G}/{project['full_path']}/-/merge_requests/{mr['iid']}",
                    testid_text("assignee-block"),
                    "must_include",
                    [person["name"]],
                )
            ),
            cheat=[
                click(mr["title"]),
                click("Edit"),
                select("data-testid=sidebar-assignee-select", person["name"]),
                click("Apply"),
                done(),
            ],
        )
        for project, mr, person in data.sample(rng, out, 8)
    ]


def _direct_members(data: Data, project_id: int) -> dict[int, int]:
    return {
        r["user_id"]: r["access_level"]
        for r in data.rows(DB, "SELECT user_id, access_level FROM project_members WHERE project_id = ?", (project_id,))
    }


def invite_member(data: Data) -> list[Instance]:
    """Invite a user to a project with a role; the members page must show that role for them."""
    rng = random.Random("gitlab.invite_member")
    users = data.rows(DB, "SELECT * FROM users WHERE username NOT IN ('root', ?) ORDER BY id", (ME,))
    out = []
    for project in _managed(data, 40):
        inherited = {
            r[0]
            for r in data.rows(DB, "SELECT user_id FROM group_members WHERE group_id = ?", (project["namespace_id"],))
        }
        members = set(_direct_members(data, project["id"])) | inherited
        candidates = [u for u in users if u["id"] not in members]
        user, level = rng.choice(candidates), rng.choice([10, 20, 30, 40])
        out.append(
            Instance(
                values={"user": user["username"], "project": project["full_path"], "role": ROLES[level]},
                start_url=f"{G}/{project['full_path']}",
                eval=html_eval(
                    (
                        f"{G}/{project['full_path']}/-/project_members",
                        f"func:gitlab_get_project_memeber_role(__page__, '{user['username']}')",
                        "exact_match",
                        ROLES[level],
                    )
                ),
                cheat=[
                    click("Members"),
                    type_("placeholder=Search for a user by name or username", user["username"]),
                    select("data-testid=access-level-dropdown", ROLES[level]),
                    click("Invite"),
                    done(),
                ],
            )
        )
    return data.sample(rng, out, 10)


def change_member_role(data: Data) -> list[Instance]:
    """Change a direct member's role; the members page must show the new role."""
    rng = random.Random("gitlab.change_member_role")
    me = _me(data)
    out = []
    for project in _managed(data, 40):
        inherited = {
            r[0]: r[1]
            for r in data.rows(
                DB, "SELECT user_id, access_level FROM group_members WHERE group_id = ?", (project["namespace_id"],)
            )
        }
        for uid, level in _direct_members(data, project["id"]).items():
            if uid in (me["id"], project["ns_owner_id"]):
                continue
            new = [lv for lv in (10, 20, 30, 40) if lv != level and lv > inherited.get(uid, 0)]
            user = data.one(DB, "SELECT * FROM users WHERE id = ?", (uid,))
            out.append((project, user, rng.choice(new)))
    return [
        Instance(
            values={"user": user["username"], "project": project["full_path"], "role": ROLES[level]},
            start_url=f"{G}/{project['full_path']}",
            eval=html_eval(
                (
                    f"{G}/{project['full_path']}/-/project_members",
                    f"func:gitlab_get_project_memeber_role(__page__, '{user['username']}')",
                    "exact_match",
                    ROLES[level],
                )
            ),
            cheat=[
                click("Members"),
                search("placeholder=Filter members", user["username"]),
                scroll_down(),
                select(f"data-testid=role-select-{user['username']}", ROLES[level]),
                click(f"data-testid=update-role-{user['username']}"),
                done(),
            ],
        )
        for project, user, level in data.sample(rng, out, 8)
    ]


def star_project(data: Data) -> list[Instance]:
    """Star a project I have not starred yet; its Star button must then read Unstar."""
    rng = random.Random("gitlab.star_project")
    me = _me(data)
    rows = [
        p
        for p in _others(data)
        if not data.rows(DB, "SELECT 1 FROM stars WHERE user_id = ? AND project_id = ?", (me["id"], p["id"]))
    ]
    return [
        Instance(
            values={"project": p["full_path"]},
            start_url=f"{G}/explore/projects",
            eval=html_eval((f"{G}/{p['full_path']}", testid_text("star-button"), "exact_match", "Unstar")),
            cheat=[*_explore_steps(p), click("data-testid=star-icon"), done()],
        )
        for p in data.sample(rng, rows, 8)
    ]


def fork_project(data: Data) -> list[Instance]:
    """Fork another user's project into my namespace; the fork's page must say where it was forked from."""
    rng = random.Random("gitlab.fork_project")
    mine = {
        r[0]
        for r in data.rows(
            DB, "SELECT p.path FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.path = ?", (ME,)
        )
    }
    rows = [p for p in _others(data) if p["path"] not in mine]
    return [
        Instance(
            values={"project": p["full_path"]},
            start_url=f"{G}/explore/projects",
            eval=html_eval(
                (
                    f"{G}/{ME}/{p['path']}",
                    "document.querySelector('.forked-from').outerText",
                    "must_include",
                    [p["full_name"]],
                )
            ),
            cheat=[
                *_explore_steps(p),
                click("data-testid=fork-icon"),
                select("data-testid=select-namespace-dropdown", ME),
                scroll_down(),
                click("data-testid=submit-button"),
                done(),
            ],
        )
        for p in data.sample(rng, rows, 8)
    ]


VISIBILITY_JS = (
    'document.querySelector(\'[data-testid="project-name-content"] [data-testid^="visibility-"]\').dataset.testid'
)


def create_project(data: Data) -> list[Instance]:
    """Create a project with a given visibility and a README; checked on the new project's page."""
    rng = random.Random("gitlab.create_project")
    mine = {
        r[0]
        for r in data.rows(
            DB, "SELECT p.path FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.path = ?", (ME,)
        )
    }
    names = sorted({p["name"] for p in _others(data) if slugify(p["name"]) not in mine})
    out = []
    for name in data.sample(rng, names, 8):
        visibility = rng.choice(("private", "internal", "public"))
        out.append(
            Instance(
                values={"name": name, "visibility": visibility},
                start_url=f"{G}/dashboard/projects",
                eval=html_eval(
                    (f"{G}/{ME}/{slugify(name)}", PROJECT_NAME_JS, "exact_match", name),
                    ("last", VISIBILITY_JS, "exact_match", f"visibility-{visibility}"),
                    ("last", testid_text("readme-content"), "must_include", [name]),
                ),
                cheat=[
                    click("New project"),
                    type_("placeholder=My awesome project", name),
                    click(f"data-testid={visibility}-radio"),
                    scroll_down(),
                    click("Create project"),
                    done(),
                ],
            )
        )
    return out


def update_description(data: Data) -> list[Instance]:
    """Change a project's description in its settings; the overview must show the new one."""
    rng = random.Random("gitlab.update_description")
    out = []
    for project in _managed(data, 40):
        if not project["description"]:
            continue
        thing, component = rng.choice(sd.THINGS), rng.choice(sd.COMPONENTS)
        text = f"{project['name']}: {rng.choice(sd.FEATURES).format(thing=thing, component=component)}."
        out.append(
            Instance(
                values={"project": project["full_path"], "description": text},
                start_url=f"{G}/{project['full_path']}",
                eval=html_eval(
                    (
                        f"{G}/{project['full_path']}",
                        "document.querySelector('.home-panel-description-markdown').outerText",
                        "exact_match",
                        text,
                    )
                ),
                cheat=[
                    click("Settings"),
                    type_(f"data-value={project['description']}", text),
                    scroll_down(),
                    click("Save changes"),
                    done(),
                ],
            )
        )
    return data.sample(rng, out, 8)


def create_branch(data: Data) -> list[Instance]:
    """Create a branch from the default branch; the branches list must contain it."""
    rng = random.Random("gitlab.create_branch")
    out = []
    for project in _managed(data, 30):
        taken = {r[0] for r in data.rows(DB, "SELECT name FROM branches WHERE project_id = ?", (project["id"],))}
        while True:
            name = f"{rng.choice(sd.BRANCH_PREFIXES)}-{slugify(rng.choice(sd.COMPONENTS))}"
            if not any(name in t for t in taken):
                break
        out.append(
            Instance(
                values={"project": project["full_path"], "branch": name},
                start_url=f"{G}/{project['full_path']}",
                eval=html_eval(  # the branch of that name: a longer name the agent chose holds it too
                    (
                        f"{G}/{project['full_path']}/-/branches?{urlencode({'search': name})}",
                        f'document.querySelector(\'[data-testid="branches-list"] [data-name="{name}"]\').dataset.name',
                        "exact_match",
                        name,
                    )
                ),
                cheat=[
                    click("Repository"),
                    click("Branches"),
                    click("New branch"),
                    type_("data-testid=branch-name-field", name),
                    click("Create branch"),
                    done(),
                ],
            )
        )
    return data.sample(rng, out, 8)


# -- unachievable --------------------------------------------------------------------------------------------


def missing_project(data: Data) -> list[Instance]:
    """Ask about a project that does not exist (a real user with another user's project name)."""
    rng = random.Random("gitlab.missing_project")
    paths = [r[0] for r in data.rows(DB, "SELECT DISTINCT path FROM projects ORDER BY path")]
    users = [
        r[0] for r in data.rows(DB, "SELECT username FROM users WHERE username NOT IN ('root', ?) ORDER BY id", (ME,))
    ]
    existing = {
        r[0]
        for r in data.rows(
            DB, "SELECT n.path || '/' || p.path FROM projects p JOIN namespaces n ON n.id = p.namespace_id"
        )
    }
    out = []
    while len(out) < 6:
        full = f"{rng.choice(users)}/{rng.choice(paths)}"
        if full not in existing and full not in [i.values["project"] for i in out]:
            out.append(
                unachievable({"project": full}, f"{G}/explore/projects", f"There is no project {full} on the forge.")
            )
    return out


def missing_user(data: Data) -> list[Instance]:
    """Invite a user who does not exist (a first name and a last name of two different users)."""
    rng = random.Random("gitlab.missing_user")
    names = [r[0] for r in data.rows(DB, "SELECT name FROM users WHERE username NOT IN ('root', ?) ORDER BY id", (ME,))]
    usernames = {r[0].lower() for r in data.rows(DB, "SELECT username FROM users")}
    full_names = {n.lower() for n in names}
    projects = _managed(data, 40)
    out = []
    while len(out) < 6:
        first, last = rng.choice(names).split()[0], rng.choice(names).split()[-1]
        username = re.sub(r"[^a-z0-9._]", "", f"{first}.{last}".lower())
        if username in usernames or f"{first} {last}".lower() in full_names:
            continue
        project = rng.choice(projects)
        out.append(
            unachievable(
                {"user": username, "project": project["full_path"]},
                f"{G}/{project['full_path']}",
                f"There is no user {username} on the forge, so they cannot be invited.",
            )
        )
    return out


def _t(key: str, intent: str, fn) -> TaskTemplate:
    return TaskTemplate(f"gitlab.{key}", ("gitlab",), intent, fn)


TEMPLATES = [
    _t(
        "author_commit_count",
        "How many commits did {author} make to the default branch of {project}?",
        author_commit_count,
    ),
    _t("top_contributor", "Who has made the most commits to the default branch of {project}?", top_contributor),
    _t(
        "branch_latest_commit",
        "What is the title of the latest commit on the {branch} branch of {project}?",
        branch_latest_commit,
    ),
    _t("branch_count", "How many branches does my project {project} have?", branch_count),
    _t("star_count", "How many stars does the project {project} have?", star_count),
    _t("open_mr_count", "How many open merge requests does {project} have?", open_mr_count),
    _t("label_issue_count", 'How many open issues in {project} have the label "{label}"?', label_issue_count),
    _t(
        "my_latest_assigned_issue",
        "What is the title of the most recently created open issue assigned to me in {project}?",
        my_latest_assigned_issue,
    ),
    _t(
        "mr_source_branch",
        'Which source branch does the merge request "{title}" in {project} come from?',
        mr_source_branch,
    ),
    _t("issue_author", 'Who opened the issue "{title}" in {project}?', issue_author),
    _t("nav_label_issues", 'Show me the open issues of {project} that have the label "{label}".', nav_label_issues),
    _t("nav_contributors", "Open the contributors page of {project}.", nav_contributors),
    _t("nav_mr_author", "Open the profile page of the author of merge request !{iid} in {project}.", nav_mr_author),
    _t("nav_branch_commits", "Show me the commit history of the {branch} branch of {project}.", nav_branch_commits),
    _t(
        "create_issue",
        'Create an issue in {project} titled "{title}" with the label "{label}", assigned to {assignee}.',
        create_issue,
    ),
    _t("close_issue", 'Close the issue "{title}" in {project}.', close_issue),
    _t("comment_issue", 'Comment "{comment}" on the issue "{title}" in {project}.', comment_issue),
    _t("merge_mr", 'Merge the merge request !{iid} ("{title}") of {project}.', merge_mr),
    _t("assign_mr", 'Assign the merge request "{title}" in {project} to {assignee}.', assign_mr),
    _t("invite_member", "Invite {user} to the project {project} as a {role}.", invite_member),
    _t("change_member_role", "Change the role of {user} in {project} to {role}.", change_member_role),
    _t("star_project", "Star the project {project}.", star_project),
    _t("fork_project", "Fork {project} into my personal namespace.", fork_project),
    _t("create_project", "Create a new {visibility} project named {name} with a README.", create_project),
    _t("update_description", 'Change the description of {project} to "{description}".', update_description),
    _t("create_branch", "Create a new branch named {branch} from the default branch of {project}.", create_branch),
    _t("missing_project", "How many open issues does the project {project} have?", missing_project),
    _t("missing_user", "Invite the user {user} to {project} as a Developer.", missing_user),
]
