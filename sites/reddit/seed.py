"""Deterministic seed of the forum: users, forums, subscriptions, submissions, threaded comments
and votes. The same seed always gives the same tables: all randomness comes from one
`random.Random(seed)` and one `Faker("en_US")` seeded with `seed`; dates come from the rng and lie
in 2021-01-01 .. 2023-12-31 (users and forums from 2020). Scores are computed from the vote rows.

WebArena's account: MarvelsGrantMan136 / test1234 (user id 1). Every seeded user has that password.
"""

from __future__ import annotations

import random
import re
import sqlite3
from datetime import datetime, timedelta

from faker import Faker

from webrl.sites.platform import hash_password
from webrl.sites.reddit import seed_data as data

MARVELS = "MarvelsGrantMan136"
PASSWORD = "test1234"
N_USERS = 100
N_SUBMISSIONS = 720
START = datetime(2021, 1, 1)
END = datetime(2023, 12, 31, 23, 59, 59)
HOT_BONUS = 1800  # seconds of "hot" ranking per point of net score

FMT = "%Y-%m-%d %H:%M:%S"


def ranking(created_at: str, net_score: int) -> int:
    """Hot ranking: newer and higher-scored submissions rank first."""
    return int(datetime.strptime(created_at, FMT).timestamp()) + net_score * HOT_BONUS


def _between(rng: random.Random, lo: datetime, hi: datetime) -> datetime:
    return lo + timedelta(seconds=rng.randrange(max(1, int((hi - lo).total_seconds()))))


def _after(rng: random.Random, t: datetime, mean_hours: float) -> datetime:
    return min(END, t + timedelta(seconds=int(rng.expovariate(1 / (mean_hours * 3600))) + 30))


def _fill(rng: random.Random, text: str, things: list[str]) -> str:
    a, b = rng.sample(things, 2) if len(things) > 1 else (things[0], things[0])
    return text.format(
        a=a,
        b=b,
        n=rng.choice([2, 3, 5, 7, 10, 12, 15, 20, 30, 40, 45, 50, 60, 75, 90, 100]),
        year=rng.choice([2021, 2022, 2023, 2024]),
    )


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].strip("-")


def _usernames(rng: random.Random, fake: Faker) -> list[str]:
    names = [MARVELS]
    seen = {MARVELS.lower()}
    while len(names) < N_USERS:
        style = rng.randrange(4)
        if style == 0:
            name = fake.user_name()
        elif style == 1:
            name = rng.choice(data.USERNAME_WORDS) + rng.choice(data.USERNAME_WORDS) + str(rng.randrange(10, 999))
        elif style == 2:
            name = fake.first_name() + fake.last_name()
        else:
            name = f"{fake.first_name().lower()}_{rng.choice(data.USERNAME_WORDS).lower()}{rng.randrange(1, 99)}"
        name = re.sub(r"[^A-Za-z0-9_]", "", name)[:25]
        if len(name) >= 3 and name.lower() not in seen:
            seen.add(name.lower())
            names.append(name)
    return names


def _comment_body(rng: random.Random, things: list[str]) -> str:
    middle = _fill(rng, rng.choice(data.MIDDLES), things)
    opener = rng.choice(data.OPENERS)
    text = f"{opener} {_cap(middle)}." if opener.endswith((".", "!")) else f"{opener} {middle}."
    if rng.random() < 0.6:
        text += " " + rng.choice(data.CLOSERS)
    if rng.random() < 0.25:
        text += "\n\n" + _cap(_fill(rng, rng.choice(data.MIDDLES), things)) + "."
    return text.strip()


def _reply_body(rng: random.Random, things: list[str]) -> str:
    text = rng.choice(data.REPLIES).format(m=_fill(rng, rng.choice(data.MIDDLES), things))
    return re.sub(r"(^|[.!?] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def seed_forum(conn: sqlite3.Connection, seed: int) -> None:
    rng = random.Random(seed)
    fake = Faker("en_US")
    fake.seed_instance(seed)
    forum_things = {f[0]: f[3] for f in data.FORUMS}

    # -- users
    users = []
    for i, name in enumerate(_usernames(rng, fake), start=1):
        created = _between(rng, datetime(2020, 1, 1), datetime(2021, 6, 30)).strftime(FMT)
        password = hash_password(PASSWORD, f"{rng.getrandbits(64):016x}")
        email = f"{name.lower()}@{rng.choice(['gmail.com', 'yahoo.com', 'outlook.com', 'proton.me'])}"
        if i == 1:
            bio = data.MARVELS_BIO
        elif rng.random() < 0.4:
            f = rng.choice(data.FORUMS)
            bio = rng.choice(data.BIOGRAPHIES).format(a=rng.choice(f[3]), b=rng.choice(f[3]), f=f[0])
        else:
            bio = None
        users.append((i, name, password, email if rng.random() < 0.8 else None, bio, created))
    conn.executemany(
        "INSERT INTO users (id, username, password, email, biography, created_at) VALUES (?,?,?,?,?,?)", users
    )
    user_ids = [u[0] for u in users]

    # -- forums, moderators, subscriptions
    forum_ids: dict[str, int] = {}
    for i, (name, title, description, things, _, _) in enumerate(data.FORUMS, start=1):
        created = _between(rng, datetime(2020, 1, 1), datetime(2020, 12, 31)).strftime(FMT)
        rules = rng.sample(data.SIDEBAR_RULES, rng.randrange(3, 6))
        sidebar = f"Welcome to /f/{name}!\n\n**Rules**\n\n" + "\n".join(
            f"{n}. {r.format(topic=title.lower())}" for n, r in enumerate(rules, start=1)
        )
        conn.execute(
            "INSERT INTO forums (id, name, title, description, sidebar, featured, created_at) VALUES (?,?,?,?,?,?,?)",
            (i, name, title, description, sidebar, int(name in data.FEATURED), created),
        )
        forum_ids[name] = i
        for uid in rng.sample(user_ids[1:], rng.randrange(1, 4)):
            conn.execute("INSERT INTO moderators VALUES (?,?,?)", (i, uid, created))
    popularity = {fid: rng.uniform(0.05, 0.5) * (2 if name in data.FEATURED else 1) for name, fid in forum_ids.items()}
    subs = set()
    for uid in user_ids[1:]:
        for fid, p in popularity.items():
            if rng.random() < p:
                subs.add((fid, uid))
    for name in data.MARVELS_SUBSCRIPTIONS:
        subs.add((forum_ids[name], 1))
    conn.executemany(
        "INSERT INTO subscriptions VALUES (?,?,?)",
        [
            (fid, uid, _between(rng, datetime(2021, 1, 1), datetime(2021, 12, 31)).strftime(FMT))
            for fid, uid in sorted(subs)
        ],
    )

    # -- submissions (inserted in time order: ids grow with time)
    names = list(forum_ids)
    weights = [
        3 if n in data.FEATURED else 1 + (n in ("AskReddit", "news", "wallstreetbets", "Showerthoughts")) for n in names
    ]
    specs = []
    titles_seen = set()
    marvels_forums = ["movies", "books", "pittsburgh", "Music", "movies", "technology", "books"]
    for k in range(N_SUBMISSIONS):
        forum = marvels_forums[k] if k < len(marvels_forums) else rng.choices(names, weights)[0]
        _, _, _, things, patterns, domains = data.FORUMS[forum_ids[forum] - 1]
        for _ in range(10):
            title = _cap(_fill(rng, rng.choice(patterns), things))
            if (forum, title) not in titles_seen:
                break
        titles_seen.add((forum, title))
        created = _between(rng, START, datetime(2023, 12, 20))
        author = 1 if k < len(marvels_forums) else rng.choice(user_ids[1:])
        url = body = None
        if domains and rng.random() < 0.45:
            url = f"https://www.{rng.choice(domains)}/{created.year}/{created.month:02d}/{_slugify(title)}"
            if rng.random() < 0.15:
                body = _fill(rng, "Found this while reading about {a}. Thoughts?", things)
        elif rng.random() < 0.85:
            body = rng.choice(data.SELF_BODIES).format(
                a=rng.choice(things), b=rng.choice(things), m=_cap(_fill(rng, rng.choice(data.MIDDLES), things))
            )
        specs.append((created, forum_ids[forum], author, title, url, body, forum))
    specs.sort(key=lambda s: s[0])

    submission_rows, comment_specs, sub_votes, com_votes = [], [], [], []
    for sid, (created, fid, author, title, url, body, forum) in enumerate(specs, start=1):
        things = forum_things[forum]
        popular = rng.random()
        n_voters = min(len(user_ids) - 1, int(rng.paretovariate(1.2) * 3) + (40 if popular > 0.93 else 0))
        p_up = rng.uniform(0.55, 0.97)
        voters = [author] + [u for u in rng.sample(user_ids, n_voters) if u != author]
        for uid in voters:
            choice = 1 if uid == author or rng.random() < p_up else -1
            sub_votes.append((sid, uid, choice, _after(rng, created, 30).strftime(FMT)))
        submission_rows.append([sid, fid, author, title, url, body, created.strftime(FMT)])
        # a comment thread: each comment answers the submission or an earlier comment
        n_comments = min(60, int(rng.expovariate(1 / 7))) + (rng.randrange(5, 25) if popular > 0.93 else 0)
        thread = []
        for _ in range(n_comments):
            parent = rng.choice(thread) if thread and rng.random() < 0.5 else None
            t = _after(rng, parent[1] if parent else created, 6 if parent else 12)
            uid = rng.choice(user_ids[1:] if rng.random() < 0.996 else user_ids[:1])
            text = _reply_body(rng, things) if parent and rng.random() < 0.5 else _comment_body(rng, things)
            key = (sid, len(thread))
            thread.append((key, t, sid, parent[0] if parent else None, uid, text))
        comment_specs.extend(thread)
    # MarvelsGrantMan136 comments on a few threads of his favourite forums
    favs = [s for s in submission_rows if s[1] in (forum_ids["movies"], forum_ids["books"], forum_ids["Music"])]
    for s in rng.sample(favs, 14):
        things = forum_things[data.FORUMS[s[1] - 1][0]]
        t = _after(rng, datetime.strptime(s[6], FMT), 20)
        comment_specs.append(((s[0], 1000), t, s[0], None, 1, _comment_body(rng, things)))

    comment_specs.sort(key=lambda c: (c[1], c[0]))
    comment_ids = {}
    comment_rows = []
    for cid, (key, t, sid, parent, uid, text) in enumerate(comment_specs, start=1):
        comment_ids[key] = cid
        comment_rows.append((cid, sid, comment_ids[parent] if parent else None, uid, text, t.strftime(FMT)))
        n_voters = min(len(user_ids) - 1, int(rng.paretovariate(1.5)) - 1)
        for voter in [uid] + [v for v in rng.sample(user_ids, n_voters) if v != uid]:
            choice = 1 if voter == uid or rng.random() < 0.75 else -1
            com_votes.append((cid, voter, choice, _after(rng, t, 10).strftime(FMT)))

    conn.executemany(
        "INSERT INTO submissions (id, forum_id, user_id, title, url, body, created_at) VALUES (?,?,?,?,?,?,?)",
        submission_rows,
    )
    conn.executemany(
        "INSERT INTO comments (id, submission_id, parent_id, user_id, body, created_at) VALUES (?,?,?,?,?,?)",
        comment_rows,
    )
    conn.executemany("INSERT INTO submission_votes VALUES (?,?,?,?)", sub_votes)
    conn.executemany("INSERT INTO comment_votes VALUES (?,?,?,?)", com_votes)
    recount(conn)


def recount(conn: sqlite3.Connection) -> None:
    """Derive every score, comment count and ranking from the vote and comment rows."""
    conn.execute("""UPDATE submissions SET
        upvotes = (SELECT COUNT(*) FROM submission_votes v WHERE v.submission_id = submissions.id AND v.choice = 1),
        downvotes = (SELECT COUNT(*) FROM submission_votes v WHERE v.submission_id = submissions.id AND v.choice = -1),
        comment_count = (SELECT COUNT(*) FROM comments c WHERE c.submission_id = submissions.id)""")
    conn.execute("UPDATE submissions SET net_score = upvotes - downvotes")
    conn.execute("""UPDATE comments SET
        upvotes = (SELECT COUNT(*) FROM comment_votes v WHERE v.comment_id = comments.id AND v.choice = 1),
        downvotes = (SELECT COUNT(*) FROM comment_votes v WHERE v.comment_id = comments.id AND v.choice = -1)""")
    conn.execute("UPDATE comments SET net_score = upvotes - downvotes")
    rows = conn.execute("SELECT id, created_at, net_score FROM submissions").fetchall()
    conn.executemany("UPDATE submissions SET ranking = ? WHERE id = ?", [(ranking(c, s), i) for i, c, s in rows])
