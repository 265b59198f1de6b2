"""The git object store: repositories kept in SQLite (no pages), i.e. content-addressed blobs, commits
(up to two parents) with the changes they made, branch heads, and each branch's materialised file tree.

Used by the seed and by the app (commits from the web editor, new branches, merges, forks); the
repository pages that show it are in repository.py.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class Author:
    id: int | None
    name: str
    email: str


def sha1(*parts: object) -> str:
    return hashlib.sha1("\x00".join(str(p) for p in parts).encode()).hexdigest()


def blob_id(conn: sqlite3.Connection, content: str) -> int:
    digest = sha1("blob", content)
    row = conn.execute("SELECT id FROM blobs WHERE sha = ?", (digest,)).fetchone()
    if row:
        return row[0]
    return conn.execute("INSERT INTO blobs (sha, content) VALUES (?, ?)", (digest, content)).lastrowid


def head(conn: sqlite3.Connection, project_id: int, branch: str) -> str | None:
    row = conn.execute(
        "SELECT commit_sha FROM branches WHERE project_id = ? AND name = ?", (project_id, branch)
    ).fetchone()
    return row[0] if row else None


def commit(
    conn: sqlite3.Connection,
    project_id: int,
    branch: str,
    author: Author,
    title: str,
    changes: dict[str, str | None],
    created_at: str,
    message: str = "",
    parent2: str | None = None,
) -> str:
    """Commit `changes` (path -> new content, None deletes) on `branch` (created if missing)."""
    parent = head(conn, project_id, branch)
    sha = sha1(project_id, parent, parent2, title, created_at, author.email, sorted(changes.items()))
    conn.execute(
        "INSERT INTO commits (project_id, sha, parent_sha, parent2_sha, author_id, author_name, author_email,"
        " title, message, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (project_id, sha, parent, parent2, author.id, author.name, author.email, title, message, created_at),
    )
    if parent is None:
        conn.execute("INSERT INTO branches (project_id, name, commit_sha) VALUES (?, ?, ?)", (project_id, branch, sha))
    else:
        conn.execute("UPDATE branches SET commit_sha = ? WHERE project_id = ? AND name = ?", (sha, project_id, branch))
    for path, content in sorted(changes.items()):
        old = conn.execute(
            "SELECT blob_id FROM branch_files WHERE project_id = ? AND branch = ? AND path = ?",
            (project_id, branch, path),
        ).fetchone()
        old_id = old[0] if old else None
        new_id = blob_id(conn, content) if content is not None else None
        if old_id == new_id:
            continue
        conn.execute(
            "INSERT INTO commit_changes (project_id, sha, path, old_blob_id, new_blob_id) VALUES (?, ?, ?, ?, ?)",
            (project_id, sha, path, old_id, new_id),
        )
        if new_id is None:
            conn.execute(
                "DELETE FROM branch_files WHERE project_id = ? AND branch = ? AND path = ?", (project_id, branch, path)
            )
        else:
            conn.execute(
                "INSERT INTO branch_files (project_id, branch, path, blob_id, last_commit_sha) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (project_id, branch, path) DO UPDATE SET blob_id = excluded.blob_id,"
                " last_commit_sha = excluded.last_commit_sha",
                (project_id, branch, path, new_id, sha),
            )
    return sha


def create_branch(conn: sqlite3.Connection, project_id: int, name: str, source: str) -> None:
    """A new branch at the head of branch `source`."""
    conn.execute(
        "INSERT INTO branches (project_id, name, commit_sha) SELECT project_id, ?, commit_sha FROM branches"
        " WHERE project_id = ? AND name = ?",
        (name, project_id, source),
    )
    conn.execute(
        "INSERT INTO branch_files (project_id, branch, path, blob_id, last_commit_sha)"
        " SELECT project_id, ?, path, blob_id, last_commit_sha FROM branch_files WHERE project_id = ? AND branch = ?",
        (name, project_id, source),
    )


def delete_branch(conn: sqlite3.Connection, project_id: int, name: str) -> None:
    conn.execute("DELETE FROM branch_files WHERE project_id = ? AND branch = ?", (project_id, name))
    conn.execute("DELETE FROM branches WHERE project_id = ? AND name = ?", (project_id, name))


REACHABLE = """
WITH RECURSIVE reach(sha) AS (
    SELECT :head UNION
    SELECT p.sha FROM reach r JOIN commits c ON c.project_id = :pid AND c.sha = r.sha
    JOIN commits p ON p.project_id = :pid AND p.sha IN (c.parent_sha, c.parent2_sha)
)
"""


def _reachable_sql(select: str) -> str:
    return REACHABLE + select


def history(
    conn: sqlite3.Connection,
    project_id: int,
    head_sha: str,
    limit: int = 40,
    offset: int = 0,
    path: str | None = None,
    search: str | None = None,
) -> list[sqlite3.Row]:
    """Commits reachable from `head_sha`, newest first (optionally touching `path` or matching `search`)."""
    where, params = "", {"head": head_sha, "pid": project_id, "limit": limit, "offset": offset}
    if path:
        where += (
            " AND EXISTS (SELECT 1 FROM commit_changes cc WHERE cc.project_id = :pid AND cc.sha = c.sha"
            " AND (cc.path = :path OR cc.path LIKE :prefix))"
        )
        params.update(path=path, prefix=path.rstrip("/") + "/%")
    if search:
        where += " AND (c.title LIKE :q OR c.message LIKE :q OR c.author_name LIKE :q)"
        params["q"] = f"%{search}%"
    sql = _reachable_sql(
        "SELECT c.* FROM reach JOIN commits c ON c.project_id = :pid AND c.sha = reach.sha"
        f" WHERE 1 = 1{where} ORDER BY c.created_at DESC, c.rowid DESC LIMIT :limit OFFSET :offset"
    )
    return conn.execute(sql, params).fetchall()


def commit_count(conn: sqlite3.Connection, project_id: int, head_sha: str) -> int:
    return conn.execute(_reachable_sql("SELECT COUNT(*) FROM reach"), {"head": head_sha, "pid": project_id}).fetchone()[
        0
    ]


def contributors(conn: sqlite3.Connection, project_id: int, head_sha: str) -> list[sqlite3.Row]:
    """Authors of the commits reachable from `head_sha`, merge commits excluded (as GitLab's graph counts)."""
    sql = _reachable_sql(
        "SELECT c.author_name AS name, c.author_email AS email, MAX(c.author_id) AS user_id, COUNT(*) AS commits,"
        " MIN(c.created_at) AS first_at, MAX(c.created_at) AS last_at"
        " FROM reach JOIN commits c ON c.project_id = :pid AND c.sha = reach.sha WHERE c.parent2_sha IS NULL"
        " GROUP BY c.author_email ORDER BY commits DESC, name"
    )
    return conn.execute(sql, {"head": head_sha, "pid": project_id}).fetchall()


def reachable(conn: sqlite3.Connection, project_id: int, head_sha: str) -> set[str]:
    rows = conn.execute(_reachable_sql("SELECT sha FROM reach"), {"head": head_sha, "pid": project_id})
    return {r[0] for r in rows}


def diverging(conn: sqlite3.Connection, project_id: int, source: str, target: str) -> list[sqlite3.Row]:
    """Commits on branch `source` that are not on branch `target`, newest first."""
    src, tgt = head(conn, project_id, source), head(conn, project_id, target)
    if src is None:
        return []
    only = reachable(conn, project_id, src) - (reachable(conn, project_id, tgt) if tgt else set())
    rows = history(conn, project_id, src, limit=10_000)
    return [r for r in rows if r["sha"] in only]


def branch_diff(
    conn: sqlite3.Connection, project_id: int, source: str, target: str
) -> dict[str, tuple[int | None, int | None]]:
    """path -> (target blob, source blob) for every path the source-only commits changed."""
    commits = diverging(conn, project_id, source, target)
    paths: set[str] = set()
    for c in commits:
        paths.update(
            r[0]
            for r in conn.execute(
                "SELECT path FROM commit_changes WHERE project_id = ? AND sha = ?", (project_id, c["sha"])
            )
        )
    out = {}
    for path in sorted(paths):
        old = file_blob(conn, project_id, target, path)
        new = file_blob(conn, project_id, source, path)
        if old != new:
            out[path] = (old, new)
    return out


def file_blob(conn: sqlite3.Connection, project_id: int, branch: str, path: str) -> int | None:
    row = conn.execute(
        "SELECT blob_id FROM branch_files WHERE project_id = ? AND branch = ? AND path = ?", (project_id, branch, path)
    ).fetchone()
    return row[0] if row else None


def blob_text(conn: sqlite3.Connection, blob: int | None) -> str:
    if blob is None:
        return ""
    return conn.execute("SELECT content FROM blobs WHERE id = ?", (blob,)).fetchone()[0]


def merge(
    conn: sqlite3.Connection,
    project_id: int,
    source: str,
    target: str,
    author: Author,
    title: str,
    created_at: str,
    message: str = "",
) -> str:
    """Merge branch `source` into `target` with a merge commit; the source's changes win."""
    changes = {
        path: (blob_text(conn, new) if new is not None else None)
        for path, (_old, new) in branch_diff(conn, project_id, source, target).items()
    }
    return commit(
        conn,
        project_id,
        target,
        author,
        title,
        changes,
        created_at,
        message=message,
        parent2=head(conn, project_id, source),
    )


def copy_repository(conn: sqlite3.Connection, source_id: int, target_id: int) -> None:
    """Copy every commit, change, branch and file tree of a project into another (a fork)."""
    conn.execute(
        "INSERT INTO commits SELECT ?, sha, parent_sha, parent2_sha, author_id, author_name, author_email,"
        " title, message, created_at FROM commits WHERE project_id = ? ORDER BY rowid",
        (target_id, source_id),
    )
    conn.execute(
        "INSERT INTO commit_changes SELECT ?, sha, path, old_blob_id, new_blob_id FROM commit_changes"
        " WHERE project_id = ? ORDER BY rowid",
        (target_id, source_id),
    )
    conn.execute(
        "INSERT INTO branches SELECT ?, name, commit_sha, protected FROM branches WHERE project_id = ? ORDER BY rowid",
        (target_id, source_id),
    )
    conn.execute(
        "INSERT INTO branch_files SELECT ?, branch, path, blob_id, last_commit_sha FROM branch_files"
        " WHERE project_id = ? ORDER BY rowid",
        (target_id, source_id),
    )


def tree(conn: sqlite3.Connection, project_id: int, branch: str, directory: str = "") -> list[dict]:
    """The entries of `directory` on `branch`: folders first, then files, each with its last commit."""
    prefix = directory.strip("/") + "/" if directory.strip("/") else ""
    rows = conn.execute(
        "SELECT f.path, f.blob_id, c.sha, c.title, c.created_at FROM branch_files f JOIN commits c"
        " ON c.project_id = f.project_id AND c.sha = f.last_commit_sha"
        " WHERE f.project_id = ? AND f.branch = ? AND f.path LIKE ? ESCAPE '\\' ORDER BY f.path",
        (project_id, branch, prefix.replace("%", "\\%").replace("_", "\\_") + "%"),
    ).fetchall()
    dirs: dict[str, dict] = {}
    files = []
    for r in rows:
        rest = r["path"][len(prefix) :]
        if "/" in rest:
            name = rest.split("/", 1)[0]
            d = dirs.setdefault(
                name,
                {
                    "name": name,
                    "path": prefix + name,
                    "type": "tree",
                    "sha": r["sha"],
                    "title": r["title"],
                    "created_at": r["created_at"],
                },
            )
            if r["created_at"] > d["created_at"]:
                d.update(sha=r["sha"], title=r["title"], created_at=r["created_at"])
        else:
            files.append(
                {
                    "name": rest,
                    "path": r["path"],
                    "type": "blob",
                    "sha": r["sha"],
                    "title": r["title"],
                    "created_at": r["created_at"],
                    "blob_id": r["blob_id"],
                }
            )
    return sorted(dirs.values(), key=lambda d: d["name"].lower()) + sorted(files, key=lambda f: f["name"].lower())


def is_dir(conn: sqlite3.Connection, project_id: int, branch: str, path: str) -> bool:
    prefix = path.strip("/").replace("%", "\\%").replace("_", "\\_") + "/%"
    return (
        conn.execute(
            "SELECT 1 FROM branch_files WHERE project_id = ? AND branch = ? AND path LIKE ? ESCAPE '\\' LIMIT 1",
            (project_id, branch, prefix),
        ).fetchone()
        is not None
    )
