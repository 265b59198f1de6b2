"""The code forge (GitLab look-alike), driven through the real embedded server: pages over HTTP, the
main flows in Chromium (sign in, issues, members, projects, merge requests), the member-role DOM
contract of WebArena's helper, bad input, and the deterministic seed."""

from __future__ import annotations

import html
import re

import httpx
from playwright.sync_api import expect

from webrl.sites.platform import check_password, content_checksum

USER = ("byteblaze", "hello1234")
SITE = "gitlab"  # the site of the fixtures in conftest.py


def sign_in(client: httpx.Client, back: str = "/") -> None:
    r = client.post("/users/sign_in", data={"user[login]": USER[0], "user[password]": USER[1]})
    assert r.status_code == 303 and r.headers["location"] == back


def browser_sign_in(page, base: str) -> None:
    page.goto(base + "/users/sign_in")
    page.get_by_test_id("username-field").fill(USER[0])
    page.get_by_test_id("password-field").fill(USER[1])
    page.get_by_test_id("sign-in-button").click()
    expect(page).to_have_url(base + "/dashboard/projects")


ROLE_OF = """(username) => {
    const subs = Array.from(document.querySelectorAll("td[data-label='Account'] span.gl-avatar-labeled-sublabel"));
    const idx = subs.findIndex(s => s.outerText === '@' + username);
    if (idx < 0) return '';
    return document.querySelectorAll("td.col-max-role span")[idx].outerText;
}"""


# ---------------------------------------------------------------------------------------------
# The seed


def test_seed_is_deterministic_and_sized(seeded):  # its speed is bench/reset.py's to measure, not a test's
    a = seeded(0)
    assert content_checksum(a) == content_checksum(seeded(0)) != content_checksum(seeded(1))
    count = lambda table: a.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: E731
    assert 30 <= count("users") <= 80
    assert 30 <= count("projects") <= 80
    assert 400 <= count("issues") <= 1200
    assert 100 <= count("merge_requests") <= 500
    assert count("commits") >= 30 * 10 and count("notes") >= 1000 and count("labels") >= 100
    (hash_,) = a.execute("SELECT password_hash FROM users WHERE username = 'byteblaze'").fetchone()
    assert check_password("hello1234", hash_)
    owned = {
        r[0]
        for r in a.execute(
            "SELECT p.path FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.path = 'byteblaze'"
        )
    }
    assert {"a11y-syntax-highlighting", "dotfiles", "empathy-prompts", "byteblaze.gitlab.io"} <= owned
    dates = a.execute("SELECT MIN(created_at), MAX(created_at) FROM commits").fetchone()
    assert dates[0] >= "2019-01-01" and dates[1] < "2024-01-01"
    # every branch's materialised tree matches the files its commits produced
    files = a.execute(
        "SELECT COUNT(*) FROM branch_files f JOIN branches b ON b.project_id = f.project_id AND b.name = f.branch"
    ).fetchone()[0]
    assert files == count("branch_files") > 0


# ---------------------------------------------------------------------------------------------
# Pages over HTTP


def test_sign_in_page_redirects_and_404(client):
    r = client.get("/")
    assert r.status_code == 302 and r.headers["location"] == "/users/sign_in"
    page = client.get("/users/sign_in").text
    assert "<title>Sign in · GitLab</title>" in page and "Username or email" in page
    for testid in ("username-field", "password-field", "sign-in-button"):
        assert f'data-testid="{testid}"' in page
    assert client.get("/-/profile").status_code == 302
    assert client.get("/explore").status_code == 200
    r = client.get("/no-such-user-or-page")
    assert r.status_code == 404 and "Page Not Found" in r.text
    assert client.get("/byteblaze/no-such-project/-/issues").status_code == 404
    bad = client.post("/users/sign_in", data={"user[login]": "byteblaze", "user[password]": "wrong"})
    assert bad.status_code == 303 and "Invalid login or password." in client.get("/users/sign_in").text
    sign_in(client, back="/-/profile")  # back to the page that asked for a sign-in
    r = client.get("/-/profile")
    assert r.status_code == 200 and "Profile · User Settings · GitLab" in r.text
    assert client.get("/").headers["location"] == "/dashboard/projects"


def test_project_pages_and_filters(client, query):
    sign_in(client)
    urls = [
        "/dashboard/projects",
        "/dashboard/projects/starred",
        "/explore/projects?sort=stars_desc",
        "/dashboard/groups",
        "/byteblaze/dotfiles",
        "/byteblaze/dotfiles/-/commits/main",
        "/byteblaze/dotfiles/-/graphs/main",
        "/byteblaze/dotfiles/-/branches",
        "/byteblaze/dotfiles/-/blob/main/README.md",
        "/byteblaze/dotfiles/-/tree/main",
        "/byteblaze/dotfiles/-/starrers",
        "/byteblaze/dotfiles/-/edit",
        "/byteblaze/dotfiles/-/forks/new",
        "/projects/new",
        "/byteblaze",
        "/a11yproject",
        "/groups/a11yproject",
        "/a11yproject/a11yproject.com/-/merge_requests",
        "/dashboard/issues?assignee_username=byteblaze",
        "/dashboard/merge_requests?assignee_username=byteblaze",
        "/a11yproject/a11yproject.com/-/merge_requests/1",
        "/a11yproject/a11yproject.com/-/issues/1",
    ]
    for url in urls:
        assert client.get(url).status_code == 200, url
    home = client.get("/byteblaze/a11y-syntax-highlighting").text
    assert "<title>Byte Blaze / a11y-syntax-highlighting · GitLab</title>" in home
    assert 'id="readme"' in home and '<h2 id="installation">Installation</h2>' in home
    (n_bug,) = query(
        "SELECT COUNT(*) FROM issues i JOIN issue_labels x ON x.issue_id = i.id JOIN labels l"
        " ON l.id = x.label_id JOIN projects p ON p.id = i.project_id WHERE p.path = 'a11y-syntax-highlighting'"
        " AND l.title = 'bug' AND i.state = 'opened'"
    )[0]
    listing = client.get("/byteblaze/a11y-syntax-highlighting/-/issues/?label_name[]=bug").text
    assert re.search(rf'data-state="opened"[^>]*>.*?<span class="badge badge-pill">{n_bug}</span>', listing)
    sha = query(
        "SELECT b.commit_sha FROM branches b JOIN projects p ON p.id = b.project_id"
        " WHERE p.path = 'dotfiles' AND b.name = 'main'"
    )[0][0]
    commit = client.get(f"/byteblaze/dotfiles/-/commit/{sha}")
    assert commit.status_code == 200 and "changed file" in commit.text
    top = query(
        "SELECT author_name, COUNT(*) n FROM commits c JOIN projects p ON p.id = c.project_id"
        " WHERE p.path = 'a11yproject.com' AND c.parent2_sha IS NULL GROUP BY author_email ORDER BY n DESC LIMIT 1"
    )[0]
    graphs = client.get("/a11yproject/a11yproject.com/-/graphs/main").text
    assert re.search(
        rf"<h4[^>]*>{re.escape(top['author_name'])}</h4>\s*<p[^>]*><span class=\"commits-count\">{top['n']} commits",
        graphs,
    )


def test_a_list_s_url_keeps_only_the_filters_that_are_set(client):
    """The filter form sends every field; the list's URL keeps the set ones, in the form's order (the visible
    filters, then the tab's state), and a label's links say the same query: every way to a label's issues shows one
    URL (VAB compares URLs as strings)."""
    project = "/byteblaze/a11y-syntax-highlighting/-/issues"
    sent = f"{project}?search=&label_name%5B%5D=good+first+issue&assignee_username=&author_username=&state=opened"
    r = client.get(sent, follow_redirects=False)
    assert r.status_code == 302 and r.headers["location"] == f"{project}?label_name%5B%5D=good+first+issue&state=opened"
    assert client.get(f"{project}?state=&search=", follow_redirects=False).headers["location"] == project
    listing = client.get(r.headers["location"])
    assert listing.status_code == 200 and f'href="{project}?label_name%5B%5D=good+first+issue"' in listing.text
    assert "label_name[]=" not in listing.text


def test_bad_inputs_get_user_facing_errors(client, site_backend):
    sign_in(client)
    r = client.post("/byteblaze/dotfiles/-/issues", data={"issue[title]": "  "})
    assert r.status_code == 200 and "Title can&#39;t be blank" in r.text
    r = client.post(
        "/byteblaze/dotfiles/-/project_members",
        data={"user_ids": "nobody-here", "access_level": "30"},
        follow_redirects=True,
    )
    assert r.status_code == 200 and "user &#39;nobody-here&#39; was not found" in r.text
    r = client.post(
        "/projects",
        data={"project[name]": "-bad name!", "project[path]": "", "project[visibility_level]": "0"},
        follow_redirects=True,
    )
    assert r.status_code == 200 and "Name can contain only letters" in r.text
    r = client.post(
        "/projects", data={"project[name]": "dotfiles", "project[visibility_level]": "0"}, follow_redirects=True
    )
    assert "Name has already been taken" in r.text
    r = client.post(
        "/byteblaze/dotfiles/-/branches", data={"branch_name": "bad..name", "ref": "main"}, follow_redirects=True
    )
    assert r.status_code == 200 and "Branch name is invalid" in r.text
    r = client.get(
        "/byteblaze/dotfiles/-/merge_requests/new?merge_request[source_branch]=main&merge_request[target_branch]=main"
    )
    assert r.status_code == 200 and "same project/branch" in r.text
    assert client.get("/byteblaze/dotfiles/-/issues/abc").status_code == 404
    assert client.get("/byteblaze/dotfiles/-/commit/zzzz").status_code == 404
    current, pristine = site_backend.checksums("gitlab")
    assert current == pristine  # nothing was written


# ---------------------------------------------------------------------------------------------
# Flows in the browser


def test_issue_create_filter_comment_close(page, base, query, site_backend):
    browser_sign_in(page, base)
    page.goto(base + "/byteblaze/a11y-syntax-highlighting/-/issues/new")
    page.get_by_label("Title (required)").fill("Keyboard focus is invisible in the demo")
    page.get_by_label("Description").fill("Tab through the **demo** page.")
    page.locator("label.form-check", has_text=re.compile(r"^\s*bug\s*$")).locator("input").check()
    page.get_by_label("Due date").fill("2024-02-01")
    page.get_by_test_id("issuable-create-button").click()
    expect(page.get_by_test_id("issue-title")).to_have_text("Keyboard focus is invisible in the demo")
    iid = int(page.url.rsplit("/", 1)[1])
    page.goto(base + "/byteblaze/a11y-syntax-highlighting/-/issues/?label_name[]=bug")
    expect(page.get_by_role("link", name="Keyboard focus is invisible in the demo")).to_be_visible()
    page.get_by_role("link", name="Keyboard focus is invisible in the demo").click()
    page.get_by_test_id("comment-field").fill("I can reproduce this in Firefox.")
    page.get_by_test_id("comment-button").click()
    expect(page.get_by_test_id("note-text").last).to_have_text("I can reproduce this in Firefox.")
    page.get_by_test_id("toggle-issue-state-button").click()
    expect(page.get_by_test_id("issue-state")).to_have_text("Closed")
    row = query(
        "SELECT i.* FROM issues i JOIN projects p ON p.id = i.project_id"
        " WHERE p.path = 'a11y-syntax-highlighting' AND i.iid = ?",
        (iid,),
    )[0]
    assert row["state"] == "closed" and row["due_date"] == "2024-02-01" and row["closed_at"]
    labels = [
        r[0]
        for r in query(
            "SELECT l.title FROM issue_labels x JOIN labels l ON l.id = x.label_id WHERE x.issue_id = ?", (row["id"],)
        )
    ]
    notes = [
        r[0]
        for r in query(
            "SELECT body FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ? ORDER BY id", (row["id"],)
        )
    ]
    assert labels == ["bug"] and notes == ["I can reproduce this in Firefox.", "closed"]
    current, pristine = site_backend.checksums("gitlab")
    assert current != pristine
    site_backend.reset()
    current, pristine = site_backend.checksums("gitlab")
    assert current == pristine


def test_members_invite_change_role_and_dom_contract(page, base, query):
    invitee = query(
        "SELECT username FROM users WHERE id NOT IN (SELECT user_id FROM project_members pm"
        " JOIN projects p ON p.id = pm.project_id WHERE p.path = 'dotfiles' AND p.namespace_id ="
        " (SELECT id FROM namespaces WHERE path = 'byteblaze')) AND username != 'root' ORDER BY id LIMIT 1"
    )[0][0]
    browser_sign_in(page, base)
    page.goto(base + "/byteblaze/dotfiles/-/project_members")
    assert page.evaluate(ROLE_OF, "byteblaze") == "Owner"
    page.get_by_label("Username or email address").fill(invitee)
    page.get_by_label("Select a role").select_option(label="Developer")
    page.get_by_test_id("invite-button").click()
    expect(page.get_by_text("Members were successfully added")).to_be_visible()
    assert page.evaluate(ROLE_OF, invitee) == "Developer"
    page.get_by_test_id(f"role-select-{invitee}").select_option(label="Maintainer")
    page.get_by_test_id(f"update-role-{invitee}").click()
    expect(page.get_by_text(f"Role of @{invitee} was updated to Maintainer.")).to_be_visible()
    assert page.evaluate(ROLE_OF, invitee) == "Maintainer"
    subs = page.locator("td[data-label='Account'] span.gl-avatar-labeled-sublabel").count()
    assert subs == page.locator("td.col-max-role span").count() == page.locator("tbody tr").count()
    (level,) = query(
        "SELECT access_level FROM project_members WHERE user_id = (SELECT id FROM users WHERE username = ?)"
        " AND project_id = (SELECT p.id FROM projects p JOIN namespaces n ON n.id = p.namespace_id"
        " WHERE n.path = 'byteblaze' AND p.path = 'dotfiles')",
        (invitee,),
    )[0]
    assert level == 40
    page.get_by_label("Username or email address").fill("no-such-user")
    page.get_by_test_id("invite-button").click()
    expect(page.get_by_text("Members were not added: user 'no-such-user' was not found.")).to_be_visible()


def test_create_project_with_readme_and_star(page, base, query):
    browser_sign_in(page, base)
    page.goto(base + "/projects/new")
    page.get_by_test_id("project-name-field").fill("Accessibility Notes")
    page.get_by_test_id("public-radio").check()
    page.get_by_test_id("initialize-with-readme-checkbox").check()
    page.get_by_test_id("project-create-button").click()
    expect(page).to_have_url(base + "/byteblaze/accessibility-notes")
    expect(page.get_by_text("Project 'Accessibility Notes' was successfully created.")).to_be_visible()
    expect(page.get_by_test_id("readme-content").locator("h1")).to_have_text("Accessibility Notes")
    page.get_by_test_id("star-button").click()
    expect(page.get_by_test_id("star-button")).to_contain_text("Unstar")
    expect(page.locator(".star-count")).to_have_text("1")
    project = query("SELECT * FROM projects WHERE path = 'accessibility-notes'")[0]
    assert project["visibility"] == "public" and project["name"] == "Accessibility Notes"
    assert query("SELECT COUNT(*) FROM stars WHERE project_id = ?", (project["id"],))[0][0] == 1
    assert query("SELECT path FROM branch_files WHERE project_id = ?", (project["id"],))[0][0] == "README.md"
    page.goto(base + "/dashboard/projects/starred")
    expect(page.get_by_role("link", name=re.compile("Accessibility Notes"))).to_be_visible()


def test_edit_file_open_and_merge_merge_request(page, base, query):
    browser_sign_in(page, base)
    page.goto(base + "/byteblaze/dotfiles/-/edit/main/README.md")
    content = page.get_by_test_id("file-content")
    content.fill(content.input_value() + "\nNew section about fonts.\n")
    page.get_by_test_id("commit-message-field").fill("Document fonts")
    page.get_by_test_id("target-branch-field").fill("docs-fonts")
    page.get_by_text("Start a new merge request with these changes").click()
    page.get_by_test_id("commit-button").click()
    expect(page.get_by_test_id("issuable-form-title")).to_have_value("Document fonts")
    page.get_by_test_id("issuable-create-button").click()
    expect(page.get_by_test_id("mr-state")).to_have_text("Open")
    page.get_by_test_id("merge-button").click()
    expect(page.get_by_test_id("mr-state")).to_have_text("Merged")
    mr = query(
        "SELECT m.* FROM merge_requests m JOIN projects p ON p.id = m.project_id JOIN namespaces n"
        " ON n.id = p.namespace_id WHERE n.path = 'byteblaze' AND p.path = 'dotfiles' ORDER BY m.iid DESC LIMIT 1"
    )[0]
    assert mr["state"] == "merged" and mr["source_branch"] == "docs-fonts" and mr["merge_commit_sha"]
    readme = query(
        "SELECT b.content FROM branch_files f JOIN blobs b ON b.id = f.blob_id WHERE f.project_id = ?"
        " AND f.branch = 'main' AND f.path = 'README.md'",
        (mr["project_id"],),
    )[0][0]
    assert "New section about fonts." in readme
    assert not query("SELECT 1 FROM branches WHERE project_id = ? AND name = 'docs-fonts'", (mr["project_id"],))
    page.goto(base + "/byteblaze/dotfiles/-/commits/main")
    expect(page.get_by_role("link", name="Merge branch 'docs-fonts' into 'main'")).to_be_visible()


def test_new_group_is_created_owned_and_validated(client, query):
    sign_in(client)
    assert "Create group" in client.get("/groups/new").text
    for name, path, error in (
        ("", "", "Name can't be blank"),
        ("Docs", "explore", "reserved name"),
        ("Docs", "byteblaze", "Group URL has already been taken"),
        ("Docs", "-bad", "Group URL can contain only"),
    ):
        r = client.post("/groups", data={"group[name]": name, "group[path]": path}, follow_redirects=True)
        assert error in html.unescape(r.text), (name, path)
    r = client.post("/groups", data={"group[name]": "Accessibility Docs", "group[visibility_level]": "20"})
    assert r.status_code == 303 and r.headers["location"] == "/accessibility-docs"
    page = client.get("/accessibility-docs", follow_redirects=True)
    assert page.status_code == 200 and "Group 'Accessibility Docs' was successfully created." in html.unescape(
        page.text
    )
    group = query("SELECT * FROM namespaces WHERE path = 'accessibility-docs'")[0]
    assert group["kind"] == "group" and group["visibility"] == "public"
    owners = query(
        "SELECT u.username, m.access_level FROM group_members m JOIN users u ON u.id = m.user_id WHERE m.group_id = ?",
        (group["id"],),
    )
    assert [tuple(r) for r in owners] == [("byteblaze", 50)]


def test_the_signed_out_sign_in_button_is_readable(page, base):
    page.goto(base + "/explore/projects")
    button = page.locator("a.btn-sign-in")
    color, background = button.evaluate("e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]")
    assert color != background and color != "rgb(255, 255, 255)", (color, background)
