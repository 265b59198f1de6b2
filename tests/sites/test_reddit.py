"""The forum (Postmill look-alike), driven through the real embedded server: pages over HTTP, the
main flows in Chromium (log in, submit, comment and reply, vote, edit and delete, subscribe, create a
forum, edit the biography), WebArena's post-URL contract, bad input, reset and the seed."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import expect

from webrl.sites.platform import content_checksum

USER = ("MarvelsGrantMan136", "test1234")
SITE = "reddit"  # the site of the fixtures in conftest.py


def login_http(client: httpx.Client) -> str:
    r = client.post("/login", data={"_username": USER[0], "_password": USER[1]})
    assert r.status_code == 303
    return r.headers["location"]


def login(page, base: str) -> None:
    page.goto(base + "/login")
    page.get_by_label("Username").fill(USER[0])
    page.get_by_label("Password").fill(USER[1])
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".site-nav__username")).to_have_text(USER[0])


def reddit_get_post_url(url: str) -> str:
    """WebArena's helper: reduce a submission URL to scheme://host/f/<forum>/<id>/."""
    parts = urlsplit(url)
    segments = parts.path.split("/")
    if len(segments) >= 4 and segments[1] == "f" and segments[3].isdigit():
        return f"{parts.scheme}://{parts.netloc}/f/{segments[2]}/{segments[3]}/"
    return url


# ---------------------------------------------------------------------------------------------
# Seed


def test_seed_is_deterministic_and_consistent(seeded):  # its speed is bench/reset.py's to measure, not a test's
    a = seeded(0)
    assert content_checksum(a) == content_checksum(seeded(0)) != content_checksum(seeded(1))
    count = lambda table: a.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: E731
    assert 90 <= count("users") <= 120 and 30 <= count("forums") <= 60
    assert 500 <= count("submissions") <= 1000 and 3000 <= count("comments") <= 10000
    assert count("submission_votes") > 5000 and count("comment_votes") > 5000
    # scores and comment counts agree with the rows they summarise
    assert (
        a.execute(
            "SELECT COUNT(*) FROM submissions s WHERE net_score != (SELECT COALESCE(SUM(choice), 0)"
            " FROM submission_votes v WHERE v.submission_id = s.id)"
        ).fetchone()[0]
        == 0
    )
    assert (
        a.execute(
            "SELECT COUNT(*) FROM comments c WHERE net_score != (SELECT COALESCE(SUM(choice), 0)"
            " FROM comment_votes v WHERE v.comment_id = c.id)"
        ).fetchone()[0]
        == 0
    )
    assert (
        a.execute(
            "SELECT COUNT(*) FROM submissions s WHERE comment_count !="
            " (SELECT COUNT(*) FROM comments c WHERE c.submission_id = s.id)"
        ).fetchone()[0]
        == 0
    )
    marvels = a.execute("SELECT * FROM users WHERE username = ?", (USER[0],)).fetchone()
    assert marvels[4]  # biography
    for table in ("submissions", "comments", "subscriptions"):
        assert a.execute(f"SELECT COUNT(*) FROM {table} WHERE user_id = ?", (marvels[0],)).fetchone()[0] >= 5
    dates = a.execute("SELECT MIN(created_at), MAX(created_at) FROM comments").fetchone()
    assert dates[0] >= "2021-01-01" and dates[1] <= "2023-12-31 23:59:59"


# ---------------------------------------------------------------------------------------------
# Pages over HTTP


def test_listings_and_forum_pages(client, query):
    r = client.get("/")
    assert r.status_code == 200 and "<title>Postmill</title>" in r.text
    assert 'class="site-nav__brand" href="/">Postmill</a>' in r.text and 'href="/login"' in r.text
    r = client.get("/forums")
    names = re.findall(r'<td><a href="/f/([^"]+)">', r.text)
    assert r.status_code == 200 and len(names) >= 30 and names == sorted(names, key=str.lower)
    assert "books" in names and "Music" in names and "Subscribers" in r.text
    r = client.get("/forums/all")
    assert r.status_code == 200 and 'id="letter-B"' in r.text and 'href="/f/books"' in r.text
    for path in ("/f/books", "/f/books/new", "/f/books/top?t=all", "/f/books/most_commented", "/all/new", "/new"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert 'class="submission"' in r.text and 'aria-label="Upvote"' in r.text
    # /new is newest first
    (forum_id,) = query("SELECT id FROM forums WHERE name = 'books'")[0]
    newest = query("SELECT id FROM submissions WHERE forum_id = ? ORDER BY id DESC LIMIT 2", (forum_id,))
    ids = [int(i) for i in re.findall(r'id="submission_(\d+)"', client.get("/f/books/new").text)]
    assert ids[:2] == [row["id"] for row in newest]
    # top: by net score; pagination by ?page=
    scores = [
        int(s) for s in re.findall(r'class="vote__net-score"[^>]*>(-?\d+)<', client.get("/f/books/top?t=all").text)
    ]
    assert scores == sorted(scores, reverse=True)
    page2 = client.get("/f/books/new?page=2")
    assert page2.status_code == 200 and 'rel="prev"' in page2.text
    assert not set(re.findall(r'id="submission_(\d+)"', page2.text)) & set(map(str, ids))
    # search finds submissions and comments
    r = client.get("/search", params={"q": "Dune"})
    assert r.status_code == 200 and "Search results for: Dune" in r.text and 'class="submission"' in r.text
    # the forum's sidebar, user pages, 404s
    assert "Subscribe" in client.get("/f/books").text
    r = client.get(f"/user/{USER[0]}")
    assert r.status_code == 200 and "Movie buff" in r.text
    assert client.get(f"/user/{USER[0]}/comments").status_code == 200
    assert client.get(f"/user/{USER[0]}/submissions").status_code == 200
    for path in ("/nope", "/f/nope", "/f/books/99999999/x", "/user/nobody_here", "/f/books/bogus_sort"):
        r = client.get(path)
        assert r.status_code == 404 and "The page you requested does not exist." in r.text, path


def test_get_post_url_contract(client, query):
    row = query(
        "SELECT s.id, s.title, f.name FROM submissions s JOIN forums f ON f.id = s.forum_id"
        " WHERE s.comment_count > 3 LIMIT 1"
    )[0]
    listing = client.get(f"/f/{row['name']}/new?page=1").text + client.get(f"/f/{row['name']}/top?t=all").text
    link = re.search(rf'href="(/f/{row["name"]}/{row["id"]}/[^"]+)"', listing) or pytest.fail("no link")
    full = str(client.base_url).rstrip("/") + link.group(1)
    reduced = reddit_get_post_url(full)
    assert reduced == f"{str(client.base_url).rstrip('/')}/f/{row['name']}/{row['id']}/"
    for url in (full, reduced):
        r = client.get(url)
        assert r.status_code == 200
        assert f'id="submission_{row["id"]}"' in r.text and f"<title>{row['title']}</title>" in r.text.replace(
            "&#39;", "'"
        )


def test_bad_input_gets_user_facing_errors(client, query):
    # voting while logged out sends the guest to the login page
    r = client.post("/sv/1", data={"choice": "1", "next": "/f/books"})
    assert r.status_code == 303 and r.headers["location"] == "/login"
    assert client.post("/login", data={"_username": USER[0], "_password": "wrong"}).status_code < 500
    assert "Invalid credentials." in client.post("/login", data={"_username": USER[0], "_password": "x"}).text
    assert login_http(client) == "/f/books"  # back to where the vote was cast
    r = client.post("/submit/books", data={"forum": "books", "title": "  ", "url": "", "body": "x"})
    assert r.status_code == 400 and "This value should not be blank." in r.text
    r = client.post("/submit", data={"forum": "", "title": "Hello", "url": "not a url", "body": ""})
    assert r.status_code == 400 and "This value is not a valid URL." in r.text
    for name, message in (
        ("books", "already exists"),
        ("a b!", "letters, numbers, and underscores"),
        ("ab", "too short"),
        ("x" * 26, "too long"),
    ):
        r = client.post("/create_forum", data={"name": name, "title": "T", "description": "D", "sidebar": ""})
        assert r.status_code == 400 and message in r.text, name
    assert client.post("/sv/1", data={"choice": "7", "next": "/"}).status_code == 400
    assert client.post("/sv/99999999", data={"choice": "1"}).status_code == 404
    assert client.post("/f/books/1/-/comment", data={"comment": ""}).status_code in (400, 404)
    assert client.get("/f/books/1/-/comment").status_code < 500  # GET on a POST-only URL
    (after,) = query("SELECT COUNT(*) FROM forums WHERE name IN ('ab', 'a b!')")[0]
    assert after == 0


def test_account_page_has_delete_and_biography_edit(page, base, query, site_backend):
    login(page, base)
    page.goto(f"{base}/user/{USER[0]}/account")
    expect(page.get_by_role("heading", name="Account settings")).to_be_visible()
    assert "Delete" in page.content()
    page.goto(f"{base}/user/{USER[0]}")
    page.get_by_role("link", name="Edit biography").click()
    page.get_by_label("Biography").fill("I review **films** every week.")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".user-sidebar__biography")).to_contain_text("I review films every week.")
    assert query("SELECT biography FROM users WHERE username = ?", USER[:1])[0][0] == "I review **films** every week."
    current, pristine = site_backend.checksums("reddit")
    assert current != pristine
    site_backend.reset()
    assert site_backend.checksums("reddit")[0] == pristine


def test_submit_comment_reply_edit_delete(page, base, query):
    login(page, base)
    page.goto(base + "/submit/books")
    page.get_by_role("button", name="Create submission").click()
    expect(page.locator(".form-error-list")).to_contain_text("This value should not be blank.")
    page.get_by_label("Title").fill("My favourite novels of the decade")
    page.get_by_label("Body").fill("Here is my list. What are yours?")
    page.get_by_role("button", name="Create submission").click()
    expect(page).to_have_url(re.compile(r"/f/books/\d+/my-favourite-novels-of-the-decade$"))
    sid = int(page.url.split("/")[-2])
    row = query("SELECT * FROM submissions WHERE id = ?", (sid,))[0]
    assert row["title"] == "My favourite novels of the decade" and row["net_score"] == 1 and row["url"] is None
    page.goto(base + "/f/books/new")
    expect(page.locator(".submission").first).to_contain_text("My favourite novels of the decade")

    page.goto(f"{base}/f/books/{sid}/-")
    page.get_by_label("Comment", exact=True).fill("Starting with The Name of the Wind.")
    page.get_by_role("button", name="Post").click()
    comment = query("SELECT * FROM comments WHERE submission_id = ?", (sid,))[0]
    assert comment["body"] == "Starting with The Name of the Wind." and comment["parent_id"] is None
    page.goto(f"{base}/f/books/{sid}/-")
    top = page.locator(f"#comment_{comment['id']}")
    top.locator("summary", has_text="Reply").first.click()
    top.get_by_label(f"Reply to {USER[0]}").first.fill("And then The Wise Man's Fear.")
    top.get_by_role("button", name="Post").first.click()
    reply = query("SELECT * FROM comments WHERE parent_id = ?", (comment["id"],))[0]
    page.goto(f"{base}/f/books/{sid}/-")
    expect(page.locator(f"#comment_{comment['id']} .comment__replies #comment_{reply['id']}")).to_contain_text(
        "Wise Man"
    )
    assert query("SELECT comment_count FROM submissions WHERE id = ?", (sid,))[0][0] == 2

    # edit the reply, then delete the parent: it stays as [deleted] because it has a reply
    page.goto(f"{base}/f/books/{sid}/-/comment/{reply['id']}/edit")
    page.get_by_label("Comment").fill("And then The Wise Man's Fear, of course.")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(f"#comment_{reply['id']} .comment__body")).to_contain_text("of course")
    page.goto(f"{base}/f/books/{sid}/-")
    page.locator(f"#comment_{comment['id']} > .comment__row").get_by_role("button", name="Delete").click()
    expect(page.locator(f"#comment_{comment['id']} .comment__deleted").first).to_have_text("[deleted]")
    assert query("SELECT soft_deleted FROM comments WHERE id = ?", (comment["id"],))[0][0] == 1
    # the submission itself can be edited and deleted
    page.goto(f"{base}/f/books/{sid}/-/edit")
    page.get_by_label("Title").fill("My favourite novels, revised")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("h1.submission__title")).to_contain_text("My favourite novels, revised")
    page.locator(f"#submission_{sid}").get_by_role("button", name="Delete").click()
    expect(page).to_have_url(re.compile(r"/f/books$"))
    assert not query("SELECT 1 FROM submissions WHERE id = ?", (sid,))
    assert not query("SELECT 1 FROM comments WHERE submission_id = ?", (sid,))


def test_votes_change_the_score(page, base, query):
    row = query(
        "SELECT s.id, s.net_score, f.name FROM submissions s JOIN forums f ON f.id = s.forum_id"
        " WHERE s.user_id != 1 AND NOT EXISTS (SELECT 1 FROM submission_votes v"
        " WHERE v.submission_id = s.id AND v.user_id = 1) ORDER BY s.id LIMIT 1"
    )[0]
    login(page, base)
    page.goto(f"{base}/f/{row['name']}/{row['id']}/")
    item = page.locator(f"#submission_{row['id']}")
    score = item.locator(".vote__net-score")
    expect(score).to_have_text(str(row["net_score"]))
    item.get_by_role("button", name="Upvote").click()
    expect(score).to_have_text(str(row["net_score"] + 1))

    def vote():
        return query("SELECT choice FROM submission_votes WHERE submission_id = ? AND user_id = 1", (row["id"],))

    assert vote()[0][0] == 1
    item.get_by_role("button", name="Downvote").click()
    expect(score).to_have_text(str(row["net_score"] - 1))
    assert vote()[0][0] == -1
    item.get_by_role("button", name="Downvote").click()  # pressing it again retracts the vote
    expect(score).to_have_text(str(row["net_score"]))
    assert vote() == []
    # a comment vote
    c = query(
        "SELECT id, net_score FROM comments WHERE submission_id = ? AND soft_deleted = 0 AND NOT EXISTS"
        " (SELECT 1 FROM comment_votes v WHERE v.comment_id = comments.id AND v.user_id = 1) LIMIT 1",
        (row["id"],),
    )
    if c:
        comment = page.locator(f"#comment_{c[0]['id']}")
        comment.get_by_role("button", name="Upvote").first.click()
        expect(comment.locator(".vote__net-score").first).to_have_text(str(c[0]["net_score"] + 1))
        assert query("SELECT net_score FROM comments WHERE id = ?", (c[0]["id"],))[0][0] == c[0]["net_score"] + 1


def test_subscribe_and_create_forum(page, base, query):
    login(page, base)
    page.goto(base + "/f/DIY")
    (before,) = query("SELECT COUNT(*) FROM subscriptions s JOIN forums f ON f.id = s.forum_id WHERE f.name = 'DIY'")[0]
    page.get_by_role("button", name=re.compile("^Subscribe")).click()
    expect(page.get_by_role("button", name=re.compile("^Unsubscribe"))).to_contain_text(str(before + 1))
    assert query(
        "SELECT 1 FROM subscriptions s JOIN forums f ON f.id = s.forum_id WHERE f.name = 'DIY' AND s.user_id = 1"
    )
    page.goto(base + "/create_forum")
    page.get_by_label("Name").fill("books")
    page.get_by_label("Title").fill("Another books forum")
    page.get_by_label("Description").fill("Duplicate")
    page.get_by_role("button", name="Create forum").click()
    expect(page.locator(".form-error-list")).to_contain_text("already exists")
    page.get_by_label("Name").fill("woodworking_club")
    page.get_by_label("Title").fill("Woodworking Club")
    page.get_by_label("Description").fill("Show off what you made.")
    page.get_by_label("Sidebar").fill("Be kind.")
    page.get_by_role("button", name="Create forum").click()
    expect(page).to_have_url(re.compile(r"/f/woodworking_club$"))
    expect(page.get_by_role("heading", name="Woodworking Club").first).to_be_visible()
    forum = query("SELECT * FROM forums WHERE name = 'woodworking_club'")[0]
    assert forum["sidebar"] == "Be kind."
    assert query("SELECT 1 FROM moderators WHERE forum_id = ? AND user_id = 1", (forum["id"],))
    page.goto(base + "/forums")
    expect(page.get_by_role("link", name="woodworking_club")).to_be_visible()


def test_sign_up_log_out_and_log_in(client, query):
    r = client.post(
        "/registration",
        data={
            "username": "MarvelsGrantMan136",
            "password": "longenough1",
            "password_repeat": "longenough1",
            "email": "",
        },
    )
    assert r.status_code == 400 and "This username is already taken." in r.text
    r = client.post("/registration", data={"username": "new_reader", "password": "short", "password_repeat": "short"})
    assert r.status_code == 400 and "It should have 8 characters or more." in r.text
    r = client.post(
        "/registration", data={"username": "new_reader", "password": "longenough1", "password_repeat": "different1"}
    )
    assert r.status_code == 400 and "The password fields must match." in r.text
    r = client.post(
        "/registration",
        data={
            "username": "new_reader",
            "password": "longenough1",
            "password_repeat": "longenough1",
            "email": "reader@example.com",
        },
    )
    assert r.status_code == 303
    assert 'class="site-nav__link site-nav__username">new_reader</a>' in client.get("/").text
    assert query("SELECT email FROM users WHERE username = 'new_reader'")[0][0] == "reader@example.com"
    assert client.post("/logout").status_code == 303
    assert 'href="/login"' in client.get("/").text
    assert client.get("/subscribed").headers.get("location") == "/login"
    r = client.post("/login", data={"_username": "new_reader", "_password": "longenough1"})
    assert r.status_code == 303 and r.headers["location"] == "/subscribed"
