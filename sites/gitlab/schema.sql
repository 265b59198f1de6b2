-- The code forge (GitLab CE look-alike). Everything, repositories included, lives here so that a
-- reset restores it exactly. Timestamps are 'YYYY-MM-DD HH:MM:SS' (UTC).
-- Access levels follow GitLab: 10 Guest, 20 Reporter, 30 Developer, 40 Maintainer, 50 Owner.

CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT NOT NULL,
    bio TEXT NOT NULL DEFAULT '',
    location TEXT NOT NULL DEFAULT '',
    organization TEXT NOT NULL DEFAULT '',
    website TEXT NOT NULL DEFAULT '',
    is_admin INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);

-- A namespace is a user's personal namespace (kind 'user', owner_id) or a group (kind 'group').
CREATE TABLE namespaces (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('user', 'group')),
    owner_id INTEGER REFERENCES users(id),
    description TEXT NOT NULL DEFAULT '',
    visibility TEXT NOT NULL DEFAULT 'public',
    created_at TEXT NOT NULL
);

CREATE TABLE group_members (
    group_id INTEGER NOT NULL REFERENCES namespaces(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    access_level INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (group_id, user_id)
);

CREATE TABLE projects (
    id INTEGER PRIMARY KEY,
    namespace_id INTEGER NOT NULL REFERENCES namespaces(id),
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    visibility TEXT NOT NULL DEFAULT 'public' CHECK (visibility IN ('private', 'internal', 'public')),
    default_branch TEXT NOT NULL DEFAULT 'main',
    creator_id INTEGER REFERENCES users(id),
    forked_from_id INTEGER REFERENCES projects(id) ON DELETE SET NULL,
    archived INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    last_activity_at TEXT NOT NULL,
    UNIQUE (namespace_id, path)
);

CREATE TABLE project_members (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    access_level INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id)
);

CREATE TABLE stars (
    user_id INTEGER NOT NULL REFERENCES users(id),
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, project_id)
);

-- Repositories: file contents (deduplicated), commits with up to two parents, the changes each
-- commit made, branch heads, and the materialised file tree of every branch.
CREATE TABLE blobs (
    id INTEGER PRIMARY KEY,
    sha TEXT NOT NULL UNIQUE,
    content TEXT NOT NULL
);

CREATE TABLE commits (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    sha TEXT NOT NULL,
    parent_sha TEXT,
    parent2_sha TEXT,
    author_id INTEGER REFERENCES users(id),
    author_name TEXT NOT NULL,
    author_email TEXT NOT NULL,
    title TEXT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, sha)
);

CREATE TABLE commit_changes (
    project_id INTEGER NOT NULL,
    sha TEXT NOT NULL,
    path TEXT NOT NULL,
    old_blob_id INTEGER REFERENCES blobs(id),  -- NULL: the file was added
    new_blob_id INTEGER REFERENCES blobs(id),  -- NULL: the file was deleted
    PRIMARY KEY (project_id, sha, path),
    FOREIGN KEY (project_id, sha) REFERENCES commits(project_id, sha) ON DELETE CASCADE
);

CREATE TABLE branches (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    protected INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, name)
);

CREATE TABLE branch_files (
    project_id INTEGER NOT NULL,
    branch TEXT NOT NULL,
    path TEXT NOT NULL,
    blob_id INTEGER NOT NULL REFERENCES blobs(id),
    last_commit_sha TEXT NOT NULL,
    PRIMARY KEY (project_id, branch, path),
    FOREIGN KEY (project_id, branch) REFERENCES branches(project_id, name) ON DELETE CASCADE ON UPDATE CASCADE
);

-- Issues and merge requests.
CREATE TABLE labels (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    color TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    UNIQUE (project_id, title)
);

CREATE TABLE milestones (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    due_date TEXT,
    state TEXT NOT NULL DEFAULT 'active'
);

CREATE TABLE issues (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    iid INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    author_id INTEGER NOT NULL REFERENCES users(id),
    assignee_id INTEGER REFERENCES users(id),
    milestone_id INTEGER REFERENCES milestones(id) ON DELETE SET NULL,
    state TEXT NOT NULL DEFAULT 'opened' CHECK (state IN ('opened', 'closed')),
    confidential INTEGER NOT NULL DEFAULT 0,
    due_date TEXT,
    weight INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    closed_at TEXT,
    UNIQUE (project_id, iid)
);

CREATE TABLE issue_labels (
    issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
    label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    PRIMARY KEY (issue_id, label_id)
);

CREATE TABLE merge_requests (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    iid INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    author_id INTEGER NOT NULL REFERENCES users(id),
    assignee_id INTEGER REFERENCES users(id),
    reviewer_id INTEGER REFERENCES users(id),
    source_branch TEXT NOT NULL,
    target_branch TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'opened' CHECK (state IN ('opened', 'closed', 'merged')),
    draft INTEGER NOT NULL DEFAULT 0,
    merge_commit_sha TEXT,
    merged_by_id INTEGER REFERENCES users(id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    merged_at TEXT,
    closed_at TEXT,
    UNIQUE (project_id, iid)
);

CREATE TABLE mr_labels (
    mr_id INTEGER NOT NULL REFERENCES merge_requests(id) ON DELETE CASCADE,
    label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    PRIMARY KEY (mr_id, label_id)
);

-- Comments on issues and merge requests; system notes record actions ("closed", "changed ...").
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    noteable_type TEXT NOT NULL CHECK (noteable_type IN ('Issue', 'MergeRequest')),
    noteable_id INTEGER NOT NULL,
    author_id INTEGER NOT NULL REFERENCES users(id),
    body TEXT NOT NULL,
    system INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);

-- The activity feed of users and projects.
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    project_id INTEGER REFERENCES projects(id) ON DELETE CASCADE,
    action TEXT NOT NULL,          -- 'created', 'pushed to', 'opened', 'closed', 'commented on', 'merged', 'joined'
    target_type TEXT NOT NULL DEFAULT '',
    target_iid INTEGER,
    target_title TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);

CREATE INDEX commits_parent ON commits (project_id, parent_sha);
CREATE INDEX issues_project ON issues (project_id, state);
CREATE INDEX issues_assignee ON issues (assignee_id);
CREATE INDEX mrs_project ON merge_requests (project_id, state);
CREATE INDEX notes_target ON notes (noteable_type, noteable_id);
CREATE INDEX events_user ON events (user_id, created_at);
CREATE INDEX events_project ON events (project_id, created_at);
CREATE INDEX projects_namespace ON projects (namespace_id);
