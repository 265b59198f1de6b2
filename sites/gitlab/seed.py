"""Deterministic seed of the forge: users, groups, projects with commit histories, issues, merge
requests, comments, stars and activity.

Same seed -> same database. Randomness comes from `random.Random(seed)` and one `Faker("en_US")`
seeded with `seed`; every date lies in 2019-01-01 .. 2023-06-30 (no wall clock).

Accounts: byteblaze / hello1234 (WebArena's user, owns the projects in seed_data.BYTEBLAZE_PROJECTS,
Owner of the a11yproject group), root / 5iveL!fe (Administrator); everybody else has Password.123.
"""

from __future__ import annotations

import random
import re
import sqlite3
from datetime import datetime, timedelta

from faker import Faker

from webrl.sites.gitlab import gitstore as repo
from webrl.sites.gitlab import seed_data as sd
from webrl.sites.platform import hash_password

START = datetime(2019, 1, 1)
END = datetime(2023, 6, 30, 23, 59, 59)
N_USERS = 45
OTHER_PASSWORD = "Password.123"


def fmt(d: datetime) -> str:
    return d.strftime("%Y-%m-%d %H:%M:%S")


def between(rng: random.Random, a: datetime, b: datetime) -> datetime:
    if b <= a:
        return a
    return a + timedelta(seconds=rng.randint(0, int((b - a).total_seconds())))


class Seeder:
    def __init__(self, conn: sqlite3.Connection, seed: int):
        self.conn = conn
        self.rng = random.Random(seed)
        self.fake = Faker("en_US")
        self.fake.seed_instance(seed)
        self.users: list[dict] = []
        self.projects: list[dict] = []
        self.events: list[tuple] = []

    # -- users and groups ---------------------------------------------------------------------------

    def add_user(self, username: str, name: str, password: str, created: datetime, **extra) -> dict:
        rng = self.rng
        email = (
            extra.pop("email", None)
            or f"{username.replace('_', '.')}@{rng.choice(sd.FIRST_NAMES_OF_FAKE_EMAIL_DOMAINS)}"
        )
        salt = "".join(rng.choice("0123456789abcdef") for _ in range(16))
        uid = self.conn.execute(
            "INSERT INTO users (username, name, email, password_hash, bio, location, organization, website, is_admin,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                username,
                name,
                email,
                hash_password(password, salt),
                extra.get("bio", ""),
                extra.get("location", ""),
                extra.get("organization", ""),
                extra.get("website", ""),
                extra.get("is_admin", 0),
                fmt(created),
            ),
        ).lastrowid
        ns = self.conn.execute(
            "INSERT INTO namespaces (path, name, kind, owner_id, created_at) VALUES (?, ?, 'user', ?, ?)",
            (username, name, uid, fmt(created)),
        ).lastrowid
        user = {"id": uid, "username": username, "name": name, "email": email, "ns": ns, "created": created}
        self.users.append(user)
        return user

    def seed_users(self) -> None:
        rng, fake = self.rng, self.fake
        self.root = self.add_user("root", "Administrator", "5iveL!fe", START, is_admin=1, email="admin@example.com")
        self.byteblaze = self.add_user(
            "byteblaze",
            "Byte Blaze",
            "hello1234",
            datetime(2019, 2, 3, 9, 12),
            email="byteblaze@gmail.com",
            bio="Accessibility advocate and frontend developer.",
            location="Portland, OR",
            website="https://byteblaze.gitlab.io",
        )
        taken = {"root", "byteblaze"}
        while len(self.users) < N_USERS + 2:
            first, last = fake.first_name(), fake.last_name()
            style = rng.randrange(4)
            base = [f"{first}{last}", f"{first[0]}{last}", f"{first}.{last}", f"{first}_{last[0]}"][style].lower()
            base = re.sub(r"[^a-z0-9._]", "", base)
            username = base if base not in taken and rng.random() < 0.7 else f"{base}{rng.randint(1, 99)}"
            if username in taken:
                continue
            taken.add(username)
            self.add_user(
                username,
                f"{first} {last}",
                OTHER_PASSWORD,
                between(rng, START, datetime(2021, 12, 31)),
                bio=rng.choice(["", "", fake.job(), "Open source enthusiast."]),
                location=rng.choice(["", fake.city() + ", " + fake.state_abbr()]),
                organization=rng.choice(["", "", fake.company()]),
            )
        self.others = self.users[2:]

    # -- projects --------------------------------------------------------------------------------

    def add_project(
        self,
        ns_id: int,
        path: str,
        name: str,
        kind: str,
        description: str,
        visibility: str,
        owner: dict,
        created: datetime,
        members: list[tuple[dict, int]],
    ) -> dict:
        pid = self.conn.execute(
            "INSERT INTO projects (namespace_id, path, name, description, visibility, creator_id, created_at,"
            " last_activity_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (ns_id, path, name, description, visibility, owner["id"], fmt(created), fmt(created)),
        ).lastrowid
        for user, level in members:
            self.conn.execute(
                "INSERT OR IGNORE INTO project_members (project_id, user_id, access_level, created_at)"
                " VALUES (?, ?, ?, ?)",
                (pid, user["id"], level, fmt(between(self.rng, created, created + timedelta(days=90)))),
            )
        project = {
            "id": pid,
            "path": path,
            "name": name,
            "kind": kind,
            "description": description,
            "owner": owner,
            "created": created,
            "members": [u for u, _ in members],
            "ns": ns_id,
        }
        self.projects.append(project)
        self.events.append((owner["id"], pid, "created", "Project", None, name, fmt(created)))
        return project

    def seed_projects(self) -> None:
        rng, bb = self.rng, self.byteblaze
        for path, name, kind, desc, vis in sd.BYTEBLAZE_PROJECTS:
            created = between(rng, datetime(2019, 3, 1), datetime(2022, 6, 30))
            helpers = rng.sample(self.others, rng.randint(0, 4))
            members = [(bb, 50)] + [(u, rng.choice((20, 30, 30, 40))) for u in helpers]
            self.add_project(bb["ns"], path, name, kind, desc, vis, bb, created, members)
        for gpath, gname, gdesc, projects in sd.GROUPS:
            created = between(rng, datetime(2019, 1, 15), datetime(2020, 6, 30))
            gid = self.conn.execute(
                "INSERT INTO namespaces (path, name, kind, description, created_at) VALUES (?, ?, 'group', ?, ?)",
                (gpath, gname, gdesc, fmt(created)),
            ).lastrowid
            crew = rng.sample(self.others, rng.randint(5, 12))
            owner = crew[0]
            levels = [(owner, 50)] + [(u, rng.choice((10, 20, 30, 30, 40))) for u in crew[1:]]
            if gpath == "a11yproject":
                levels.insert(0, (bb, 50))
            elif gpath == "primer":
                levels.append((bb, 30))
            for user, level in levels:
                self.conn.execute(
                    "INSERT OR IGNORE INTO group_members VALUES (?, ?, ?, ?)", (gid, user["id"], level, fmt(created))
                )
            for path, name, kind, desc in projects:
                self.add_project(
                    gid, path, name, kind, desc, "public", owner, between(rng, created, datetime(2021, 6, 30)), []
                )
                self.projects[-1]["members"] = [u for u, _ in levels]
                self.projects[-1]["group"] = gpath
        for path, kind, desc in sd.USER_PROJECTS:
            owner = rng.choice(self.others)
            while self.conn.execute(
                "SELECT 1 FROM projects WHERE namespace_id = ? AND path = ?", (owner["ns"], path)
            ).fetchone():
                owner = rng.choice(self.others)
            helpers = rng.sample(self.others, rng.randint(0, 3))
            members = [(owner, 50)] + [(u, rng.choice((20, 30, 40))) for u in helpers if u is not owner]
            vis = rng.choice(("public",) * 5 + ("internal", "private"))
            self.add_project(
                owner["ns"],
                path,
                path,
                kind,
                desc,
                vis,
                owner,
                between(rng, max(owner["created"], datetime(2019, 6, 1)), datetime(2022, 12, 31)),
                members,
            )

    # -- repositories ------------------------------------------------------------------------------

    def files_for(self, project: dict, year: int) -> dict[str, str]:
        kind, name = project["kind"], project["path"]
        module = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
        values = {
            "name": name,
            "module": module,
            "owner": project["owner"]["name"],
            "year": year,
            "description": project["description"].replace('"', "'"),
        }
        files = {path.format(**values): text.format(**values) for path, text in sd.FILES[kind].items()}
        values_readme = dict(values, description=project["description"])
        files["README.md"] = sd.README.format(
            **values_readme, install=sd.INSTALL[kind].format(**values), usage=sd.USAGE[kind].format(**values)
        )
        if kind != "dotfiles":
            files["LICENSE"] = sd.LICENSE_MIT.format(**values)
        return files

    def author(self, user: dict) -> repo.Author:
        return repo.Author(user["id"], user["name"], user["email"])

    def change(self, files: dict[str, str], n: int) -> tuple[dict[str, str], str]:
        """A commit's changes to `files` (mutated) and its title."""
        rng = self.rng
        if rng.random() < 0.12:
            path = rng.choice(["CHANGELOG.md", f"docs/notes-{n}.md", f"src/util{n}.js", f"examples/example{n}.md"])
            files[path] = f"# {path.rsplit('/', 1)[-1]}\n\n- Initial notes ({n})\n"
            return {path: files[path]}, f"Add {path}"
        path = rng.choice(
            sorted(p for p in files if not p.endswith(".json") and not p.endswith(".svg")) or sorted(files)
        )
        ext = "." + path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1][1:] else ""
        lines = sd.EXTRA_LINES.get(ext) or sd.EXTRA_LINES[""]
        line = rng.choice(lines).replace("{{", "{").replace("}}", "}").replace("{thing}", rng.choice(sd.THINGS))
        files[path] = files[path].rstrip("\n") + "\n" + line + "\n"
        template = rng.choice(sd.COMMIT_MESSAGES)
        title = template.format(
            file=path.rsplit("/", 1)[-1],
            thing=rng.choice(sd.THINGS),
            component=rng.choice(sd.COMPONENTS),
            version=f"1.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
        )
        return {path: files[path]}, title

    def branch_name(self) -> str:
        words = self.rng.sample(
            (
                "contrast",
                "readme",
                "focus",
                "nav",
                "tests",
                "deps",
                "theme",
                "links",
                "layout",
                "install",
                "docs",
                "colors",
                "search",
                "footer",
                "lint",
                "ci",
            ),
            2,
        )
        return f"{self.rng.choice(sd.BRANCH_PREFIXES)}-{'-'.join(words)}"

    def seed_repository(self, project: dict) -> None:
        rng, conn, pid = self.rng, self.conn, project["id"]
        authors = project["members"] or [project["owner"]]
        weights = [5 if u is project["owner"] else 1 for u in authors]
        created = project["created"]
        files = self.files_for(project, created.year)
        repo.commit(conn, pid, "main", self.author(project["owner"]), "Initial commit", dict(files), fmt(created))
        n_commits = rng.randint(12, 45) if project["path"] != "a11yproject.com" else 80
        dates = sorted(between(rng, created + timedelta(hours=1), END - timedelta(days=20)) for _ in range(n_commits))
        project["merged"] = []
        used_branches = set()
        i = 0
        while i < len(dates):
            who = rng.choices(authors, weights)[0]
            if rng.random() < 0.18 and i + 2 < len(dates):  # a merged feature branch
                name = self.branch_name()
                while name in used_branches:
                    name += "-2"
                used_branches.add(name)
                repo.create_branch(conn, pid, name, "main")
                branch_files = dict(files)
                for _ in range(rng.randint(1, 2)):
                    changes, title = self.change(branch_files, i)
                    repo.commit(conn, pid, name, self.author(who), title, changes, fmt(dates[i]))
                    i += 1
                merger = project["owner"]
                sha = repo.merge(
                    conn, pid, name, "main", self.author(merger), f"Merge branch '{name}' into 'main'", fmt(dates[i])
                )
                files.update(branch_files)
                repo.delete_branch(conn, pid, name)
                project["merged"].append(
                    {"branch": name, "sha": sha, "author": who, "merger": merger, "merged_at": dates[i], "title": title}
                )
            else:
                changes, title = self.change(files, i)
                repo.commit(conn, pid, "main", self.author(who), title, changes, fmt(dates[i]))
            i += 1
        conn.execute("UPDATE branches SET protected = 1 WHERE project_id = ? AND name = 'main'", (pid,))
        # Open (or abandoned) branches, each with a few commits on top of main.
        project["open_branches"] = []
        for _ in range(rng.randint(0, 4) if project["path"] != "a11yproject.com" else 8):
            name = self.branch_name()
            if name in used_branches:
                continue
            used_branches.add(name)
            repo.create_branch(conn, pid, name, "main")
            who = rng.choice(authors)
            branch_files = dict(files)
            when = between(rng, END - timedelta(days=19), END)
            for k in range(rng.randint(1, 3)):
                changes, title = self.change(branch_files, 100 + k)
                repo.commit(conn, pid, name, self.author(who), title, changes, fmt(when + timedelta(minutes=10 * k)))
            project["open_branches"].append({"branch": name, "author": who, "when": when, "title": title})
        last = conn.execute("SELECT MAX(created_at) FROM commits WHERE project_id = ?", (pid,)).fetchone()[0]
        conn.execute("UPDATE projects SET last_activity_at = ? WHERE id = ?", (last, pid))
        self.events.append((project["owner"]["id"], pid, "pushed to", "branch", None, "main", last))

    # -- issues and merge requests ----------------------------------------------------------------

    def seed_labels(self, project: dict) -> None:
        rng = self.rng
        chosen = (
            sd.LABELS
            if project["path"] in ("a11yproject.com", "a11y-syntax-highlighting")
            else [sd.LABELS[i] for i in sorted(rng.sample(range(len(sd.LABELS)), rng.randint(4, 9)))]
        )
        if not any(t == "bug" for t, _, _ in chosen):
            chosen = [sd.LABELS[0], *chosen]
        project["labels"] = []
        for title, color, desc in chosen:
            lid = self.conn.execute(
                "INSERT INTO labels (project_id, title, color, description) VALUES (?, ?, ?, ?)",
                (project["id"], title, color, desc),
            ).lastrowid
            project["labels"].append(lid)
        for k in range(rng.randint(0, 2)):
            due = between(rng, datetime(2022, 1, 1), datetime(2023, 12, 31))
            self.conn.execute(
                "INSERT INTO milestones (project_id, title, due_date, state) VALUES (?, ?, ?, ?)",
                (project["id"], f"v{k + 1}.0", due.strftime("%Y-%m-%d"), "active" if k else "closed"),
            )

    def issue_title(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.4:
            return f"{rng.choice(sd.COMPONENTS).capitalize()} {rng.choice(sd.PROBLEMS)}"
        if r < 0.8:
            return rng.choice(sd.FEATURES).format(thing=rng.choice(sd.THINGS), component=rng.choice(sd.COMPONENTS))
        return rng.choice(sd.ISSUE_EXTRA_TITLES)

    def body(self, title: str) -> str:
        rng = self.rng
        return rng.choice(sd.ISSUE_BODIES).format(
            title=title,
            lower_title=title[0].lower() + title[1:],
            component=rng.choice(sd.COMPONENTS),
            problem=rng.choice(sd.PROBLEMS),
            thing=rng.choice(sd.THINGS),
        )

    def notes(
        self,
        kind: str,
        target_id: int,
        pid: int,
        iid: int,
        title: str,
        people: list[dict],
        start: datetime,
        end: datetime,
        count: int,
    ) -> datetime:
        rng, last = self.rng, start
        for when in sorted(between(rng, start, end) for _ in range(count)):
            who = rng.choice(people)
            body = rng.choice(sd.COMMENTS).format(thing=rng.choice(sd.THINGS))
            self.conn.execute(
                "INSERT INTO notes (noteable_type, noteable_id, author_id, body, system, created_at)"
                " VALUES (?, ?, ?, ?, 0, ?)",
                (kind, target_id, who["id"], body, fmt(when)),
            )
            self.events.append((who["id"], pid, "commented on", kind, iid, title, fmt(when)))
            last = when
        return last

    def system_note(self, kind: str, target_id: int, who: dict, body: str, when: datetime) -> None:
        self.conn.execute(
            "INSERT INTO notes (noteable_type, noteable_id, author_id, body, system, created_at)"
            " VALUES (?, ?, ?, ?, 1, ?)",
            (kind, target_id, who["id"], body, fmt(when)),
        )

    def seed_issues(self, project: dict) -> None:
        rng, conn, pid = self.rng, self.conn, project["id"]
        path = project["path"]
        n = (
            130
            if path == "a11yproject.com"
            else rng.randint(12, 40)
            if project["owner"] is self.byteblaze
            else rng.randint(3, 18)
        )
        people = project["members"] + rng.sample(self.others, 6)
        assignees = project["members"]
        milestones = [r[0] for r in conn.execute("SELECT id FROM milestones WHERE project_id = ?", (pid,))]
        for iid in range(1, n + 1):
            created = between(rng, project["created"] + timedelta(days=1), END - timedelta(days=3))
            title = self.issue_title()
            author = rng.choice(people)
            assignee = rng.choice(assignees) if rng.random() < 0.55 else None
            if project["owner"] is self.byteblaze and assignee is not None and rng.random() < 0.5:
                assignee = self.byteblaze
            closed = rng.random() < 0.45
            due = (
                between(rng, created, created + timedelta(days=120)).strftime("%Y-%m-%d")
                if rng.random() < 0.2
                else None
            )
            ms = rng.choice(milestones) if milestones and rng.random() < 0.25 else None
            iid_row = conn.execute(
                "INSERT INTO issues (project_id, iid, title, description, author_id, assignee_id, milestone_id, state,"
                " due_date, weight, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'opened', ?, ?, ?, ?)",
                (
                    pid,
                    iid,
                    title,
                    self.body(title),
                    author["id"],
                    assignee["id"] if assignee else None,
                    ms,
                    due,
                    rng.choice([None, None, 1, 2, 3, 5]),
                    fmt(created),
                    fmt(created),
                ),
            ).lastrowid
            for lid in rng.sample(project["labels"], rng.choice((0, 1, 1, 1, 2, 2, 3))):
                conn.execute("INSERT INTO issue_labels VALUES (?, ?)", (iid_row, lid))
            self.events.append((author["id"], pid, "opened", "Issue", iid, title, fmt(created)))
            last = self.notes(
                "Issue",
                iid_row,
                pid,
                iid,
                title,
                people,
                created,
                min(END, created + timedelta(days=60)),
                rng.choice((0, 0, 1, 1, 2, 3, 4, 6)),
            )
            if closed:
                closer = assignee or project["owner"]
                when = between(rng, last, min(END, last + timedelta(days=30)))
                self.system_note("Issue", iid_row, closer, "closed", when)
                conn.execute("UPDATE issues SET state = 'closed', closed_at = ? WHERE id = ?", (fmt(when), iid_row))
                self.events.append((closer["id"], pid, "closed", "Issue", iid, title, fmt(when)))
                last = when
            conn.execute("UPDATE issues SET updated_at = ? WHERE id = ?", (fmt(last), iid_row))

    def seed_merge_requests(self, project: dict) -> None:
        rng, conn, pid = self.rng, self.conn, project["id"]
        people = project["members"] or [project["owner"]]
        requests = [dict(m, state="merged") for m in project["merged"]] + [
            dict(b, state=rng.choice(("opened", "opened", "opened", "closed"))) for b in project["open_branches"]
        ]
        requests.sort(key=lambda m: m.get("merged_at") or m["when"])
        n_issues = conn.execute("SELECT COUNT(*) FROM issues WHERE project_id = ?", (pid,)).fetchone()[0]
        for iid, mr in enumerate(requests, start=1):
            end = mr.get("merged_at") or mr["when"]
            created = end - timedelta(hours=rng.randint(1, 24 * 14)) if mr["state"] == "merged" else mr["when"]
            title = rng.choice(sd.MR_TITLES).format(
                component=rng.choice(sd.COMPONENTS),
                thing=rng.choice(sd.THINGS),
                short_problem=rng.choice(sd.SHORT_PROBLEMS),
            )
            desc = f"{mr['title']}.\n\n" + (
                f"Closes #{rng.randint(1, n_issues)}"
                if n_issues and rng.random() < 0.5
                else "## What does this MR do?\n\nSmall improvement, see the commits."
            )
            assignee = rng.choice(people) if rng.random() < 0.6 else None
            reviewer = rng.choice(people) if rng.random() < 0.4 else None
            mid = conn.execute(
                "INSERT INTO merge_requests (project_id, iid, title, description, author_id, assignee_id, reviewer_id,"
                " source_branch, target_branch, state, draft, merge_commit_sha, merged_by_id, created_at, updated_at,"
                " merged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'main', ?, ?, ?, ?, ?, ?, ?)",
                (
                    pid,
                    iid,
                    title,
                    desc,
                    mr["author"]["id"],
                    assignee["id"] if assignee else None,
                    reviewer["id"] if reviewer else None,
                    mr["branch"],
                    mr["state"],
                    int(title.startswith("Draft:")),
                    mr.get("sha"),
                    mr["merger"]["id"] if mr["state"] == "merged" else None,
                    fmt(created),
                    fmt(end),
                    fmt(end) if mr["state"] == "merged" else None,
                ),
            ).lastrowid
            for lid in rng.sample(project["labels"], rng.choice((0, 0, 1, 1, 2))):
                conn.execute("INSERT INTO mr_labels VALUES (?, ?)", (mid, lid))
            self.events.append((mr["author"]["id"], pid, "opened", "MergeRequest", iid, title, fmt(created)))
            last = self.notes(
                "MergeRequest", mid, pid, iid, title, people, created, max(created, end), rng.randint(0, 4)
            )
            if mr["state"] == "merged":
                self.system_note("MergeRequest", mid, mr["merger"], "merged", end)
                self.events.append((mr["merger"]["id"], pid, "accepted", "MergeRequest", iid, title, fmt(end)))
            elif mr["state"] == "closed":
                end = between(rng, last, END)
                self.system_note("MergeRequest", mid, project["owner"], "closed", end)
                conn.execute(
                    "UPDATE merge_requests SET closed_at = ?, updated_at = ? WHERE id = ?", (fmt(end), fmt(end), mid)
                )

    # -- forks, stars, activity -----------------------------------------------------------------

    def seed_forks(self) -> None:
        rng = self.rng
        sources = [p for p in self.projects if p["kind"] != "dotfiles"]
        for source in rng.sample(sources, 8):
            user = rng.choice([u for u in self.others if u is not source["owner"]])
            if self.conn.execute(
                "SELECT 1 FROM projects WHERE namespace_id = ? AND path = ?", (user["ns"], source["path"])
            ).fetchone():
                continue
            created = between(rng, source["created"] + timedelta(days=30), END)
            pid = self.conn.execute(
                "INSERT INTO projects (namespace_id, path, name, description, visibility, creator_id, forked_from_id,"
                " created_at, last_activity_at) VALUES (?, ?, ?, ?, 'public', ?, ?, ?, ?)",
                (
                    user["ns"],
                    source["path"],
                    source["name"],
                    source["description"],
                    user["id"],
                    source["id"],
                    fmt(created),
                    fmt(created),
                ),
            ).lastrowid
            self.conn.execute("INSERT INTO project_members VALUES (?, ?, 50, ?)", (pid, user["id"], fmt(created)))
            repo.copy_repository(self.conn, source["id"], pid)
            self.events.append((user["id"], pid, "created", "Project", None, source["name"], fmt(created)))

    def seed_stars(self) -> None:
        rng = self.rng
        pids = [r[0] for r in self.conn.execute("SELECT id, created_at FROM projects WHERE visibility = 'public'")]
        for user in self.users[1:]:
            k = rng.randint(3, 9) if user is self.byteblaze else rng.choice((0, 1, 2, 3, 5, 8))
            for pid in sorted(rng.sample(pids, min(k, len(pids)))):
                self.conn.execute(
                    "INSERT INTO stars VALUES (?, ?, ?)",
                    (user["id"], pid, fmt(between(rng, datetime(2021, 1, 1), END))),
                )

    def seed_events(self) -> None:
        self.events.sort(key=lambda e: (e[6], e[0]))
        self.conn.executemany(
            "INSERT INTO events (user_id, project_id, action, target_type, target_iid, target_title,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            self.events,
        )

    def run(self) -> None:
        self.seed_users()
        self.seed_projects()
        for project in list(self.projects):
            self.seed_repository(project)
            self.seed_labels(project)
            self.seed_issues(project)
            self.seed_merge_requests(project)
        self.seed_forks()
        self.seed_stars()
        self.seed_events()


def seed(conn: sqlite3.Connection, seed: int) -> None:
    conn.execute("PRAGMA foreign_keys = ON")
    factory, conn.row_factory = conn.row_factory, sqlite3.Row
    conn.execute("BEGIN")
    Seeder(conn, seed).run()
    conn.execute("COMMIT")
    conn.row_factory = factory
