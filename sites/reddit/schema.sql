-- The forum (a Postmill look-alike). Timestamps are UTC 'YYYY-MM-DD HH:MM:SS'.
-- Scores are kept in step with the vote rows: net_score = upvotes - downvotes = SUM(choice).

CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password TEXT NOT NULL,
    email TEXT,
    biography TEXT,
    created_at TEXT NOT NULL,
    admin INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE forums (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    sidebar TEXT NOT NULL DEFAULT '',
    featured INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);

CREATE TABLE moderators (
    forum_id INTEGER NOT NULL REFERENCES forums(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (forum_id, user_id)
);

CREATE TABLE subscriptions (
    forum_id INTEGER NOT NULL REFERENCES forums(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (forum_id, user_id)
);
CREATE INDEX subscriptions_user ON subscriptions(user_id);

CREATE TABLE submissions (
    id INTEGER PRIMARY KEY,
    forum_id INTEGER NOT NULL REFERENCES forums(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    url TEXT,
    body TEXT,
    created_at TEXT NOT NULL,
    edited_at TEXT,
    upvotes INTEGER NOT NULL DEFAULT 0,
    downvotes INTEGER NOT NULL DEFAULT 0,
    net_score INTEGER NOT NULL DEFAULT 0,
    comment_count INTEGER NOT NULL DEFAULT 0,
    ranking INTEGER NOT NULL DEFAULT 0  -- "hot": creation time plus a bonus per point of score
);
CREATE INDEX submissions_forum ON submissions(forum_id, ranking);
CREATE INDEX submissions_user ON submissions(user_id);

CREATE TABLE comments (
    id INTEGER PRIMARY KEY,
    submission_id INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    parent_id INTEGER REFERENCES comments(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    edited_at TEXT,
    upvotes INTEGER NOT NULL DEFAULT 0,
    downvotes INTEGER NOT NULL DEFAULT 0,
    net_score INTEGER NOT NULL DEFAULT 0,
    soft_deleted INTEGER NOT NULL DEFAULT 0  -- deleted, but kept as "[deleted]" because it has replies
);
CREATE INDEX comments_submission ON comments(submission_id);
CREATE INDEX comments_user ON comments(user_id);
CREATE INDEX comments_parent ON comments(parent_id);

CREATE TABLE submission_votes (
    submission_id INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    choice INTEGER NOT NULL CHECK (choice IN (-1, 1)),
    created_at TEXT NOT NULL,
    PRIMARY KEY (submission_id, user_id)
);
CREATE INDEX submission_votes_user ON submission_votes(user_id);

CREATE TABLE comment_votes (
    comment_id INTEGER NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    choice INTEGER NOT NULL CHECK (choice IN (-1, 1)),
    created_at TEXT NOT NULL,
    PRIMARY KEY (comment_id, user_id)
);
CREATE INDEX comment_votes_user ON comment_votes(user_id);
