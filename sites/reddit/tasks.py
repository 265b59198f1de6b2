"""Task templates over the forum (see webrl.tasks.templates), and the forum + forge ones (sites gitlab and reddit).

Every answer, URL, locator value and element name is read from the pristine "reddit" database (and the
"gitlab" one for the multi-site templates). Texts that a task asks the agent to enter (titles, comments,
biographies, forum names) are made from other rows of the data; instances are picked in id order or with a
`random.Random` seeded by the template key. The signed-in account is MarvelsGrantMan136 (WebArena's user).

How the scripted solutions find things: a forum through Forums -> the alphabetical list -> its letter; a
submission through the search box (a submission is only used when the site's own search lists it first); a
user through one of their submissions. Subscribing clicks the subscriber count inside the sidebar's
Subscribe button (the button itself is not labelled in the observation: it contains a labelled span).
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter

from webrl.sites.reddit.web import submission_path
from webrl.tasks.script import click, done, go_back, scroll_down, search, select, type_
from webrl.tasks.templates import Data, Instance, TaskTemplate, html_eval, string_eval, unachievable, url_eval

DB = "reddit"
ME = "MarvelsGrantMan136"
R = "__REDDIT__"
G = "__GITLAB__"

# -- scripted-solution steps (in the WebRL syntax of webrl.tasks.script) -----------------------------------


def search_forum(text: str) -> str:
    """The search box in every page's header."""
    return search("placeholder=Search…", text)


def to_forum(name: str, from_list: bool = False) -> list[str]:
    """From any page (or, with from_list, from /forums/all) to /f/<name>."""
    steps = [] if from_list else [click("Forums"), click("View an alphabetical list of all forums")]
    return [*steps, click(name[0].upper()), click(name)]


def comments_label(n: int) -> str:
    return "No comments" if n == 0 else "1 comment" if n == 1 else f"{n} comments"


def open_post(s) -> list[str]:
    """Search for the submission's title and open its page (a link post's title leads off-site: its
    comments link is taken instead)."""
    return [
        search_forum(s["title"]),
        click(f"data-text={s['title']}" if s["url"] is None else comments_label(s["comment_count"])),
    ]


# -- evaluation objects ----------------------------------------------------------------------------------


# A post's checks read each field from its own element: a text checked in the whole post (or a forum's name
# checked in its text) is met by the dictated body that names the forum, wherever the post was made.
POST_URL = "func:reddit_get_post_url('__last_url__')"
POST_TITLE = "document.querySelector('.submission__link').outerText"
POST_BODY = "document.querySelector('.submission__body').outerText"
POST_FORUM = "document.querySelector('.submission__forum').outerText"
POST_SUBMITTER = "document.querySelector('.submission__submitter').outerText"
POST_LINK = "document.querySelector('.submission__link').href"
# the bodies of the signed-in user's comments on the page (a comment's first author and body are its own)
MY_COMMENTS = (
    "[...document.querySelectorAll('.comment-tree .comment')]"
    f".filter((c) => c.querySelector('.comment__author')?.outerText.trim() === '{ME}')"
    ".map((c) => c.querySelector('.comment__body').outerText).join('\\n')"
)
FORUM_NAME = "document.querySelector('.forum-header__name').outerText"


def new_post_checks(forum: str, title: str, *more: tuple[str, str, str, object]) -> tuple:
    """The post the agent ended on: in `forum`, titled `title`, by the signed-in user, and `more` checks of it."""
    return (
        (POST_URL, POST_FORUM, "exact_match", f"/f/{forum}"),
        ("last", POST_TITLE, "exact_match", title),
        ("last", POST_SUBMITTER, "exact_match", ME),
        *more,
    )


# -- data helpers -------------------------------------------------------------------------------------------


def _rng(key: str) -> random.Random:
    return random.Random(key)


def _nameable(*texts: str) -> bool:
    """Texts a step can name an element by or pass as an argument without surprises."""
    return all(t and not any(c in t for c in '"}\\\n') for t in texts)


SUBMISSIONS = (
    "SELECT s.*, f.name AS forum_name, u.username FROM submissions s JOIN forums f ON f.id = s.forum_id"
    " JOIN users u ON u.id = s.user_id"
)


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def search_finds_first(data: Data, s) -> bool:
    """The site's search (title or body LIKE the query, newest first) lists this submission first."""
    like = _like(s["title"])
    row = data.one(
        DB,
        "SELECT MAX(id) AS id FROM submissions WHERE title LIKE ? ESCAPE '\\' OR body LIKE ? ESCAPE '\\'",
        (like, like),
    )
    return row["id"] == s["id"]


def findable_posts(data: Data, where: str = "1", params: tuple = ()) -> list[sqlite3.Row]:
    """Submissions (id order) that the search box finds first and whose title can name a link."""
    rows = data.rows(DB, f"{SUBMISSIONS} WHERE {where} ORDER BY s.id", params)
    return [s for s in rows if _nameable(s["title"]) and search_finds_first(data, s)]


def forums(data: Data) -> list[sqlite3.Row]:
    return data.rows(
        DB,
        "SELECT f.*, (SELECT COUNT(*) FROM submissions s WHERE s.forum_id = f.id) AS n_submissions,"
        " (SELECT COUNT(*) FROM subscriptions s WHERE s.forum_id = f.id) AS n_subscribers,"
        " EXISTS (SELECT 1 FROM subscriptions s JOIN users u ON u.id = s.user_id"
        "  WHERE s.forum_id = f.id AND u.username = ?) AS mine FROM forums f ORDER BY f.id",
        (ME,),
    )


def karma(data: Data, user_id: int) -> int:
    return data.one(
        DB,
        "SELECT (SELECT COALESCE(SUM(net_score), 0) FROM submissions WHERE user_id = :u) +"
        " (SELECT COALESCE(SUM(net_score), 0) FROM comments WHERE user_id = :u) AS k",
        {"u": user_id},
    )["k"]


def post_url(s) -> str:
    return R + submission_path(s)


# -- information retrieval -------------------------------------------------------------------------------


def forum_submission_count(data: Data) -> list[Instance]:
    """The number of submissions in a forum, as the forum list shows it."""
    key = "reddit.forum_submission_count"
    return [
        Instance(
            values={"forum": f["name"]},
            start_url=f"{R}/",
            eval=string_eval("exact_match", str(f["n_submissions"])),
            cheat=[
                click("Forums"),
                done(str(f["n_submissions"]), f"the Submissions column of /f/{f['name']} reads {f['n_submissions']}"),
            ],
        )
        for f in data.sample(key, forums(data), 9, "kept")
    ]


def untied_best_per_forum(data: Data, column: str) -> list[dict]:
    """Each forum's submission with the most `column`, for the forums where no other submission ties it."""
    rows = data.rows(
        DB,
        f"{SUBMISSIONS} WHERE s.{column} = (SELECT MAX({column}) FROM submissions t"
        " WHERE t.forum_id = s.forum_id) ORDER BY s.forum_id",
    )
    per_forum = Counter(s["forum_id"] for s in rows)
    return [s for s in rows if per_forum[s["forum_id"]] == 1]


def forum_top_post_author(data: Data) -> list[Instance]:
    """The author of the highest-scored submission of a forum (forums whose best score is not tied)."""
    unique = untied_best_per_forum(data, "net_score")
    return [
        Instance(
            values={"forum": s["forum_name"]},
            start_url=f"{R}/",
            eval=string_eval("must_include", [s["username"]]),
            cheat=[
                *to_forum(s["forum_name"]),
                click("Top"),
                done(s["username"], f"the top post is {s['title']!r} ({s['net_score']} points)"),
            ],
        )
        for s in data.sample("reddit.forum_top_post_author", unique, 9, "kept")
    ]


def forum_most_commented_title(data: Data) -> list[Instance]:
    """The title of the most commented submission of a forum (no tie for the most comments)."""
    unique = untied_best_per_forum(data, "comment_count")
    return [
        Instance(
            values={"forum": s["forum_name"]},
            start_url=f"{R}/forums/all",
            eval=string_eval("must_include", [s["title"]]),
            cheat=[
                *to_forum(s["forum_name"], from_list=True),
                click("Most commented"),
                done(s["title"], f"{s['comment_count']} comments"),
            ],
        )
        for s in data.sample("reddit.forum_most_commented_title", unique, 9, "kept")
    ]


def post_score(data: Data) -> list[Instance]:
    """The score (upvotes minus downvotes) of a submission found by its title."""
    posts = findable_posts(data, "s.user_id != (SELECT id FROM users WHERE username = ?)", (ME,))
    return [
        Instance(
            values={"title": s["title"]},
            start_url=f"{R}/",
            eval=string_eval("must_include", [str(s["net_score"])]),
            cheat=[search_forum(s["title"]), done(str(s["net_score"]), f"{s['upvotes']} up, {s['downvotes']} down")],
        )
        for s in data.sample("reddit.post_score", posts, 9, "kept")
    ]


def post_comment_count(data: Data) -> list[Instance]:
    """The number of comments of a submission found by its title (read on its page)."""
    posts = findable_posts(data, "s.comment_count > 0")
    return [
        Instance(
            values={"title": s["title"], "forum": s["forum_name"]},
            start_url=f"{R}/",
            eval=string_eval("exact_match", str(s["comment_count"])),
            cheat=[*open_post(s), done(str(s["comment_count"]), comments_label(s["comment_count"]))],
        )
        for s in data.sample("reddit.post_comment_count", posts, 8, "kept")
    ]


def post_author_karma(data: Data) -> list[Instance]:
    """The profile score of the user who submitted a given submission (two hops: search, then the author)."""
    posts = findable_posts(data, "s.user_id != (SELECT id FROM users WHERE username = ?)", (ME,))
    return [
        Instance(
            values={"title": s["title"]},
            start_url=f"{R}/",
            eval=string_eval("must_include", [str(karma(data, s["user_id"]))]),
            cheat=[
                search_forum(s["title"]),
                click(s["username"]),
                done(
                    str(karma(data, s["user_id"])),
                    f"{s['username']}'s profile lists a score of {karma(data, s['user_id'])}",
                ),
            ],
        )
        for s in data.sample("reddit.post_author_karma", posts, 8, "kept")
    ]


def forum_moderators(data: Data) -> list[Instance]:
    """Every moderator of a forum, as its sidebar lists them."""
    out = []
    for f in data.sample("reddit.forum_moderators", forums(data), 8, "kept"):
        names = [
            r["username"]
            for r in data.rows(
                DB,
                "SELECT u.username FROM moderators m JOIN users u ON u.id = m.user_id WHERE m.forum_id = ?"
                " ORDER BY u.username COLLATE NOCASE",
                (f["id"],),
            )
        ]
        out.append(
            Instance(
                values={"forum": f["name"]},
                start_url=f"{R}/",
                eval=string_eval("must_include", names),
                cheat=[*to_forum(f["name"]), done(", ".join(names), "the sidebar's Moderators list")],
            )
        )
    return out


def user_top_forum(data: Data) -> list[Instance]:
    """The forum a user has submitted to most (users with at least 3 submissions and no tie)."""
    users = data.rows(
        DB,
        "SELECT u.id, u.username, COUNT(*) AS n FROM users u JOIN submissions s ON s.user_id = u.id"
        " WHERE u.username != ? GROUP BY u.id HAVING n >= 3 ORDER BY u.id",
        (ME,),
    )
    out = []
    for u in users:
        counts = data.rows(
            DB,
            "SELECT f.name, COUNT(*) AS n FROM submissions s JOIN forums f ON f.id = s.forum_id"
            " WHERE s.user_id = ? GROUP BY f.id ORDER BY n DESC, f.name",
            (u["id"],),
        )
        if len(counts) > 1 and counts[0]["n"] == counts[1]["n"]:
            continue
        out.append(
            Instance(
                values={"user": u["username"]},
                start_url=f"{R}/user/{u['username']}",
                eval=string_eval("must_include", [counts[0]["name"]]),
                cheat=[click("Submissions"), done(counts[0]["name"], f"{counts[0]['n']} of {u['n']} submissions")],
            )
        )
    return data.sample("reddit.user_top_forum", out, 8, "kept")


def my_post_comment_count(data: Data) -> list[Instance]:
    """The number of comments on one of the signed-in user's own submissions."""
    posts = data.rows(DB, f"{SUBMISSIONS} WHERE u.username = ? ORDER BY s.id", (ME,))
    return [
        Instance(
            values={"title": s["title"]},
            start_url=f"{R}/",
            eval=string_eval("must_include", [str(s["comment_count"])]),
            cheat=[click(ME), click("Submissions"), done(str(s["comment_count"]), comments_label(s["comment_count"]))],
        )
        for s in posts
        if _nameable(s["title"])
    ]


# -- navigation --------------------------------------------------------------------------------------------

SORT_LABELS = {
    "new": "New",
    "active": "Active",
    "top": "Top",
    "controversial": "Controversial",
    "most_commented": "Most commented",
}
SORT_WORDS = {
    "new": "date, newest first",
    "active": "latest activity",
    "top": "top score of all time",
    "controversial": "controversy",
    "most_commented": "number of comments",
}


def nav_forum_sorted(data: Data) -> list[Instance]:
    """A forum's listing in a given sort (Top with the All time filter)."""
    rng = _rng("reddit.nav_forum_sorted")
    out = []
    for f in data.sample("reddit.nav_forum_sorted", forums(data), 10, "kept"):
        sort = rng.choice(sorted(SORT_LABELS))
        steps = [*to_forum(f["name"]), click(SORT_LABELS[sort])]
        url = f"{R}/f/{f['name']}/{sort}"
        if sort == "top":
            steps.append(click("All time"))
            url += "?t=all"
        out.append(
            Instance(
                values={"forum": f["name"], "order": SORT_WORDS[sort]},
                start_url=f"{R}/",
                eval=url_eval(url),
                cheat=[*steps, done()],
            )
        )
    return out


def nav_author_comments(data: Data) -> list[Instance]:
    """The Comments tab of the profile of the user who submitted a given submission."""
    posts = findable_posts(data, "s.user_id != (SELECT id FROM users WHERE username = ?)", (ME,))
    return [
        Instance(
            values={"title": s["title"]},
            start_url=f"{R}/",
            eval=url_eval(f"{R}/user/{s['username']}/comments"),
            cheat=[search_forum(s["title"]), click(s["username"]), click("Comments"), done()],
        )
        for s in data.sample("reddit.nav_author_comments", posts, 8, "kept")
    ]


def nav_post(data: Data) -> list[Instance]:
    """The page of a submission named by title and forum."""
    posts = findable_posts(data)
    return [
        Instance(
            values={"title": s["title"], "forum": s["forum_name"]},
            start_url=f"{R}/f/{s['forum_name']}",
            eval=url_eval(post_url(s)),
            cheat=[*open_post(s), done()],
        )
        for s in data.sample("reddit.nav_post", posts, 8, "kept")
    ]


def nav_search(data: Data) -> list[Instance]:
    """The search results page for a query (a forum's name)."""
    out = []
    for f in data.sample("reddit.nav_search", [f for f in forums(data) if f["name"].isalpha()], 8, "kept"):
        out.append(
            Instance(
                values={"query": f["name"]},
                start_url=f"{R}/",
                eval=url_eval(f"{R}/search?q={f['name']}"),
                cheat=[search_forum(f["name"]), done()],
            )
        )
    return out


# -- state changes -----------------------------------------------------------------------------------------


def create_post(data: Data) -> list[Instance]:
    """A new text submission in a forum: title and body on the new post's page, in that forum."""
    out = []
    posts = data.rows(DB, f"{SUBMISSIONS} WHERE s.body IS NOT NULL AND s.url IS NULL ORDER BY s.id")
    for s in data.sample("reddit.create_post", [s for s in posts if _nameable(s["title"], s["forum_name"])], 9, "kept"):
        title = f"Follow-up: {s['title']}"
        body = (
            f"Picking up the thread {s['username']} started in /f/{s['forum_name']}. Has anything changed since then?"
        )
        out.append(
            Instance(
                values={"forum": s["forum_name"], "title": title, "body": body},
                start_url=f"{R}/",
                eval=html_eval(*new_post_checks(s["forum_name"], title, ("last", POST_BODY, "must_include", [body]))),
                cheat=[
                    *to_forum(s["forum_name"]),
                    click("Submit a new post"),
                    type_("Title", title),
                    type_("Body", body),
                    click("Create submission"),
                    done(),
                ],
            )
        )
    return out


def comment_on_post(data: Data) -> list[Instance]:
    """A comment on a submission found by title: its text under the submission, by the signed-in user."""
    posts = findable_posts(data, "s.user_id != (SELECT id FROM users WHERE username = ?) AND s.url IS NULL", (ME,))
    out = []
    for s in data.sample("reddit.comment_on_post", posts, 8, "kept"):
        text = f"Thanks for posting this, {s['username']}. Bookmarking it for later."
        out.append(
            Instance(
                values={"title": s["title"], "comment": text},
                start_url=f"{R}/",
                eval=html_eval((post_url(s), MY_COMMENTS, "must_include", [text])),  # that post, not the last one
                cheat=[*open_post(s), type_("Comment", text), click("Post"), done()],
            )
        )
    return out


def reply_to_comment(data: Data) -> list[Instance]:
    """A reply to the top comment of a submission: under that comment, by the signed-in user."""
    out = []
    for s in findable_posts(data, "s.url IS NULL AND s.comment_count >= 2"):
        top = data.rows(
            DB,
            "SELECT c.*, u.username FROM comments c JOIN users u ON u.id = c.user_id"
            " WHERE c.submission_id = ? AND c.parent_id IS NULL ORDER BY c.net_score DESC, c.id LIMIT 1",
            (s["id"],),
        )
        if not top or top[0]["username"] == ME:
            continue
        c = top[0]
        mine = data.one(
            DB, "SELECT COUNT(*) AS n FROM comments WHERE submission_id = ? AND user_id = ?", (s["id"], c["user_id"])
        )["n"]
        if mine != 1:  # "the comment by X" must name one comment
            continue
        text = f"Good point, {c['username']}. I had not thought of it that way."
        permalink = f"{post_url(s)}/comment/{c['id']}"
        out.append(
            Instance(
                values={"user": c["username"], "title": s["title"], "reply": text},
                start_url=f"{R}/",
                eval=html_eval(
                    (
                        permalink,
                        f"document.querySelector('#comment_{c['id']} > .comment__replies').outerText",
                        "must_include",
                        [text, ME],
                    )
                ),
                cheat=[
                    *open_post(s),
                    click("Permalink"),
                    click("Reply"),
                    type_(f"Reply to {c['username']}", text),
                    scroll_down(),
                    click("Post"),
                    done(),
                ],
            )
        )
    return data.sample("reddit.reply_to_comment", out, 8, "kept")


def vote_post(data: Data) -> list[Instance]:
    """An upvote or a downvote on a submission the signed-in user has not voted on: the vote button's state."""
    rng = _rng("reddit.vote_post")
    posts = findable_posts(
        data,
        "s.url IS NULL AND NOT EXISTS (SELECT 1 FROM submission_votes v JOIN users u"
        " ON u.id = v.user_id WHERE v.submission_id = s.id AND u.username = ?)",
        (ME,),
    )
    out = []
    for s in data.sample("reddit.vote_post", posts, 9, "kept"):
        way = rng.choice(["Upvote", "Downvote"])
        state = "vote--user-upvoted" if way == "Upvote" else "vote--user-downvoted"
        out.append(
            Instance(
                values={"action": way.lower(), "title": s["title"]},
                start_url=f"{R}/",
                eval=html_eval(
                    (
                        R + f"/f/{s['forum_name']}/{s['id']}",
                        f"document.querySelector('#submission_{s['id']} .vote').className",
                        "must_include",
                        [state],
                    )
                ),
                cheat=[*open_post(s), click(f"title={way}"), done()],
            )
        )
    return out


def subscription(data: Data) -> list[Instance]:
    """Subscribing to a forum (or unsubscribing from one the user follows): its button in the forum list."""
    out = []
    rows = forums(data)
    mine = [f for f in rows if f["mine"]]
    others = [f for f in rows if not f["mine"]]
    picked = data.sample("reddit.subscription", others, 6, "kept") + data.sample("reddit.subscription", mine, 3, "kept")
    for f in picked:
        action, after = ("Unsubscribe from", "Subscribe") if f["mine"] else ("Subscribe to", "Unsubscribe")
        locator = (
            "[...document.querySelectorAll('.forum-table tbody tr')].filter((r) => "
            f"r.querySelector('td').outerText.trim() === '{f['name']}')"
            ".map((r) => r.querySelector('button').outerText.trim()).join('|')"
        )
        out.append(
            Instance(
                values={"action": action, "forum": f["name"]},
                start_url=f"{R}/",
                eval=html_eval((f"{R}/forums", locator, "exact_match", after)),
                # the Subscribe button's labelled part is its subscriber count
                cheat=[*to_forum(f["name"]), click(str(f["n_subscribers"])), done()],
            )
        )
    return out


def edit_biography(data: Data) -> list[Instance]:
    """The signed-in user's biography replaced by a given text (another user's biography)."""
    bios = data.rows(
        DB,
        "SELECT MIN(id) AS id, biography FROM users WHERE biography IS NOT NULL AND username != ?"
        " GROUP BY biography ORDER BY id",
        (ME,),
    )
    return [
        Instance(
            values={"biography": b["biography"]},
            start_url=f"{R}/",
            eval=html_eval(
                (
                    f"{R}/user/{ME}",
                    "document.querySelector('.user-bio__biography').outerText",
                    "exact_match",
                    b["biography"],
                )
            ),
            cheat=[click(ME), click("Edit biography"), type_("Biography", b["biography"]), click("Save"), done()],
        )
        for b in data.sample("reddit.edit_biography", [b for b in bios if _nameable(b["biography"])], 8, "kept")
    ]


def create_forum(data: Data) -> list[Instance]:
    """A new forum with a name, title and description (a meetup forum for an existing one)."""
    out = []
    taken = {f["name"].lower() for f in forums(data)}
    for f in data.sample("reddit.create_forum", forums(data), 8, "kept"):
        name = f"{f['name']}_meetups"
        if len(name) > 25 or name.lower() in taken:
            continue
        title = f"{f['title']} Meetups"
        description = f"Meetups for the members of /f/{f['name']}."
        out.append(
            Instance(
                values={"name": name, "title": title, "description": description},
                start_url=f"{R}/",
                eval=html_eval(  # each field in its own element: the description could hold the title
                    (f"{R}/f/{name}", FORUM_NAME, "exact_match", f"/f/{name}"),
                    ("last", "document.querySelector('.forum-header__title').outerText", "exact_match", title),
                    (
                        "last",
                        "document.querySelector('.forum-sidebar__description').outerText",
                        "must_include",
                        [description],
                    ),
                ),
                cheat=[
                    click("Create forum"),
                    type_("Name", name),
                    type_("Title", title),
                    type_("Description", description),
                    scroll_down(),
                    click("Create forum"),
                    done(),
                ],
            )
        )
    return out


def retitle_my_post(data: Data) -> list[Instance]:
    """One of the signed-in user's submissions renamed: its title on its page."""
    out = []
    for s in data.rows(DB, f"{SUBMISSIONS} WHERE u.username = ? ORDER BY s.id", (ME,)):
        if not (_nameable(s["title"]) and search_finds_first(data, s)):
            continue
        new = f"{s['title']} [updated]"
        out.append(
            Instance(
                values={"old": s["title"], "new": new},
                start_url=f"{R}/",
                eval=html_eval(
                    (
                        R + f"/f/{s['forum_name']}/{s['id']}",
                        "document.querySelector('.submission__link').outerText",
                        "exact_match",
                        new,
                    )
                ),
                cheat=[*open_post(s), click("Edit"), type_("Title", new), click("Save"), done()],
            )
        )
    return out


# -- unachievable ------------------------------------------------------------------------------------------


def missing_forum(data: Data) -> list[Instance]:
    """A question about a forum that does not exist (an existing name with a suffix)."""
    taken = {f["name"].lower() for f in forums(data)}
    out = []
    for f in data.sample("reddit.missing_forum", forums(data), 5, "kept"):
        fake = f"{f['name']}_archive"
        if fake.lower() in taken:
            continue
        out.append(unachievable({"forum": fake}, f"{R}/forums", f"There is no forum named {fake}."))
    return out


def missing_user(data: Data) -> list[Instance]:
    """A question about a user that does not exist (an existing name with a suffix)."""
    users = data.rows(DB, "SELECT username FROM users WHERE username != ? ORDER BY id", (ME,))
    taken = {u["username"].lower() for u in users}
    out = []
    for u in data.sample("reddit.missing_user", users, 4, "kept"):
        fake = f"{u['username']}_official"
        if fake.lower() in taken:
            continue
        out.append(unachievable({"user": fake}, f"{R}/", f"There is no user named {fake} on the forum."))
    return out


# -- forum + forge (sites gitlab and reddit) -----------------------------------------------------------------


def _tech_forums(data: Data) -> list[sqlite3.Row]:
    """Forums about technology or programming, by their description; each one the Forum dropdown selects by
    its name (no option listed before it contains that name)."""
    names = [r["name"] for r in data.rows(DB, "SELECT name FROM forums ORDER BY name COLLATE NOCASE")]
    rows = data.rows(
        DB, "SELECT * FROM forums WHERE description LIKE '%technolog%' OR description LIKE '%programming%' ORDER BY id"
    )
    return [f for f in rows if next(n for n in names if f["name"].lower() in n.lower()) == f["name"]]


def _public_projects(data: Data) -> list[sqlite3.Row]:
    return data.rows(
        "gitlab",
        "SELECT p.id, p.name, p.description, n.path || '/' || p.path AS full_path,"
        " (SELECT c.title FROM branches b JOIN commits c ON c.project_id = b.project_id"
        "  AND c.sha = b.commit_sha WHERE b.project_id = p.id AND b.name = p.default_branch)"
        "  AS last_commit"
        " FROM projects p JOIN namespaces n ON n.id = p.namespace_id"
        " WHERE p.visibility = 'public' AND p.archived = 0 ORDER BY p.id",
    )


def _link_post_steps(url: str, title: str, forum: str) -> list[str]:
    return [
        click("Submit"),
        type_("URL", url),
        type_("Title", title),
        select("Choose one...", forum),
        click("Create submission"),
    ]


def share_repo(data: Data) -> list[Instance]:
    """A link submission to a GitLab repository, titled with its name and description, in a tech forum."""
    rng = _rng("multi.gitlab_reddit.share_repo")
    tech = _tech_forums(data)
    projects = [p for p in _public_projects(data) if p["description"] and _nameable(p["name"], p["description"])]
    out = []
    for p in data.sample("multi.gitlab_reddit.share_repo", projects, 6, "kept"):
        forum = rng.choice(tech)["name"]
        url = f"{G}/{p['full_path']}"
        title = f"{p['name']}: {p['description']}"
        out.append(
            Instance(
                values={"project": p["full_path"], "url": url, "forum": forum, "title": title},
                start_url=f"{R}/",
                eval=html_eval(*new_post_checks(forum, title, ("last", POST_LINK, "must_include", [url]))),
                cheat=[*_link_post_steps(url, title, forum), done()],
            )
        )
    return out


def share_repo_with_last_commit(data: Data) -> list[Instance]:
    """A link submission to a GitLab repository, then a comment on it with the repository's latest commit title,
    read on GitLab by following the new link."""
    rng = _rng("multi.gitlab_reddit.share_repo_last_commit")
    tech = _tech_forums(data)
    projects = [p for p in _public_projects(data) if p["last_commit"] and _nameable(p["name"], p["last_commit"])]
    out = []
    for p in data.sample("multi.gitlab_reddit.share_repo_last_commit", projects, 5, "kept"):
        forum = rng.choice(tech)["name"]
        url = f"{G}/{p['full_path']}"
        title = f"Check out {p['name']} on GitLab"
        out.append(
            Instance(
                values={"project": p["full_path"], "url": url, "forum": forum, "title": title},
                start_url=f"{R}/",
                eval=html_eval(
                    *new_post_checks(forum, title, ("last", POST_LINK, "must_include", [url])),
                    ("last", MY_COMMENTS, "must_include", [p["last_commit"]]),
                ),
                cheat=[
                    *_link_post_steps(url, title, forum),
                    click(f"data-text={title}"),
                    go_back(),
                    type_("Comment", p["last_commit"]),
                    click("Post"),
                    done(),
                ],
            )
        )
    return out


TEMPLATES = [
    TaskTemplate(
        "reddit.forum_submission_count",
        ("reddit",),
        "How many submissions are there in the forum {forum}?",
        forum_submission_count,
    ),
    TaskTemplate(
        "reddit.forum_top_post_author",
        ("reddit",),
        "Who submitted the top post of all time in the {forum} forum?",
        forum_top_post_author,
    ),
    TaskTemplate(
        "reddit.forum_most_commented_title",
        ("reddit",),
        "What is the title of the most commented submission in the {forum} forum?",
        forum_most_commented_title,
    ),
    TaskTemplate("reddit.post_score", ("reddit",), 'What is the score of the post "{title}"?', post_score),
    TaskTemplate(
        "reddit.post_comment_count",
        ("reddit",),
        'How many comments does the post "{title}" in /f/{forum} have?',
        post_comment_count,
    ),
    TaskTemplate(
        "reddit.post_author_karma",
        ("reddit",),
        'What is the profile score of the user who submitted "{title}"?',
        post_author_karma,
    ),
    TaskTemplate(
        "reddit.forum_moderators", ("reddit",), "Who are the moderators of the {forum} forum?", forum_moderators
    ),
    TaskTemplate(
        "reddit.user_top_forum", ("reddit",), "In which forum has {user} made the most submissions?", user_top_forum
    ),
    TaskTemplate(
        "reddit.my_post_comment_count",
        ("reddit",),
        'How many comments has my post "{title}" received?',
        my_post_comment_count,
    ),
    TaskTemplate(
        "reddit.nav_forum_sorted",
        ("reddit",),
        "Show me the submissions of the {forum} forum sorted by {order}.",
        nav_forum_sorted,
    ),
    TaskTemplate(
        "reddit.nav_author_comments",
        ("reddit",),
        'Show me the comments of the user who submitted "{title}".',
        nav_author_comments,
    ),
    TaskTemplate("reddit.nav_post", ("reddit",), 'Open the post "{title}" in /f/{forum}.', nav_post),
    TaskTemplate("reddit.nav_search", ("reddit",), 'Search the forum site for "{query}".', nav_search),
    TaskTemplate(
        "reddit.create_post",
        ("reddit",),
        'Create a post in the {forum} forum titled "{title}" with the body "{body}".',
        create_post,
    ),
    TaskTemplate("reddit.comment_on_post", ("reddit",), 'Comment "{comment}" on the post "{title}".', comment_on_post),
    TaskTemplate(
        "reddit.reply_to_comment",
        ("reddit",),
        'Reply "{reply}" to the comment by {user} on the post "{title}".',
        reply_to_comment,
    ),
    TaskTemplate("reddit.vote_post", ("reddit",), 'Please {action} the post "{title}".', vote_post),
    TaskTemplate("reddit.subscription", ("reddit",), "{action} the forum {forum}.", subscription),
    TaskTemplate("reddit.edit_biography", ("reddit",), 'Change my biography to "{biography}".', edit_biography),
    TaskTemplate(
        "reddit.create_forum",
        ("reddit",),
        'Create a forum named {name} with the title "{title}" and the description "{description}".',
        create_forum,
    ),
    TaskTemplate("reddit.retitle_my_post", ("reddit",), 'Rename my post "{old}" to "{new}".', retitle_my_post),
    TaskTemplate(
        "reddit.missing_forum", ("reddit",), "How many subscribers does the forum {forum} have?", missing_forum
    ),
    TaskTemplate("reddit.missing_user", ("reddit",), "What does the biography of the user {user} say?", missing_user),
    TaskTemplate(
        "multi.gitlab_reddit.share_repo",
        ("gitlab", "reddit"),
        'Share the GitLab repository {project} ({url}) in the {forum} forum as a link post titled "{title}".',
        share_repo,
    ),
    TaskTemplate(
        "multi.gitlab_reddit.share_repo_last_commit",
        ("gitlab", "reddit"),
        'Share the GitLab repository {project} ({url}) in the {forum} forum as a link post titled "{title}", '
        "then comment on your post with the title of the repository's latest commit.",
        share_repo_with_last_commit,
    ),
]
