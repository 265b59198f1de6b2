"""What every embedded site is built from: a seeded SQLite database with snapshot/restore,
server-side sessions, templates, the `SiteSpec` that names a site and its app factory, and
`SiteWithUsers`, what the site objects of sites with accounts share (the signed-in user).

A site is a Starlette app over one `Database`. Sites that are one product share a database
(the storefront and its admin share the store), so a reset works per database and resets every
site on it.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qsl, urlencode

from jinja2.bccache import Bucket, BytecodeCache
from starlette.applications import Starlette
from starlette.convertors import IntegerConvertor, register_url_convertor
from starlette.responses import RedirectResponse
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webrl.files import write_atomically, writing

# ---------------------------------------------------------------------------------------------
# Database: the live SQLite file, restored in place from the pristine snapshot.


@dataclass(frozen=True)
class DatabaseSpec:
    """How to build a site database: its schema, its deterministic seeding, and a version that is
    part of the snapshot's file name (bump it whenever the schema or the seed data changes)."""

    name: str
    schema: Path
    seed: Callable[[sqlite3.Connection, int], None]
    version: int
    read_only: bool = False  # served straight from the snapshot (the map): writes fail, reset is a no-op

    def snapshot_path(self, snapshot_dir: Path, seed: int) -> Path:
        return snapshot_dir / f"{self.name}-v{self.version}-seed{seed}.db"

    def snapshot_problem(self, snapshot_dir: Path, seed: int) -> str | None:
        """Why the pristine snapshot for `seed` cannot be served as it is (None: it can). Its file's SHA-256 is
        recorded beside it when it is built (`<snapshot>.sha256`) and compared here, so a snapshot changed
        afterwards (by hand, by a stray process, by an agent with file access) is not served as pristine."""
        path = self.snapshot_path(snapshot_dir, seed)
        recorded = path.with_name(path.name + CHECKSUM_SUFFIX)
        if not path.exists():
            return "it has not been built"
        if not recorded.exists():
            return "no checksum was recorded when it was built"
        if file_sha256(path) != recorded.read_text().strip():
            return "its content changed after it was built (checksum mismatch)"
        return None

    def build_snapshot(self, snapshot_dir: Path, seed: int, verify: bool = False) -> Path:
        """Create the pristine database for `seed` unless one exists (a valid SQLite file; with `verify`, one
        with no `snapshot_problem`); return its path."""
        path = self.snapshot_path(snapshot_dir, seed)
        usable = self.snapshot_problem(snapshot_dir, seed) is None if verify else _is_valid_sqlite(path)
        if path.exists() and usable:
            return path
        snapshot_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{secrets.token_hex(4)}")
        tmp.touch(exist_ok=False)  # a folder SQLite may not write makes it say only "unable to open database file"
        try:
            with writing(path), closing(sqlite3.connect(tmp)) as conn:
                conn.executescript(self.schema.read_text())
                self.seed(conn, seed)
                conn.commit()
                conn.execute("VACUUM")
            write_atomically(path.with_name(path.name + CHECKSUM_SUFFIX), file_sha256(tmp) + "\n")
            tmp.replace(path)  # atomic: a crash never leaves a half-built snapshot under the real name
        except BaseException:
            with suppress(OSError):
                tmp.unlink()  # a half-built one would keep a full disk full
            raise
        return path


CHECKSUM_SUFFIX = ".sha256"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _is_valid_sqlite(path: Path) -> bool:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False


class Database:
    """The live database of one site group in one instance.

    All access goes through one connection on the server's event-loop thread, so
    `writes_since_reset` is simply SQLite's change counter since the last restore.
    A read-only database is the snapshot itself; a site without data gets an empty read-only one
    (`Database.empty`), so every site is reset and reported the same way.
    """

    def __init__(
        self,
        name: str,
        live_path: Path | None,
        snapshot_path: Path | None,
        read_only: bool = False,
        pristine: sqlite3.Connection | None = None,
    ):
        """`pristine`: the snapshot already in memory (`load_pristine`), which the instances of a server share."""
        self.name = name
        self.read_only = read_only
        self.live_path = live_path
        # Autocommit (group writes with transaction()). The server touches the connection only from its
        # event-loop thread; check_same_thread=False lets tests drive an app through a portal thread.
        if read_only:
            target = f"file:{snapshot_path}?mode=ro" if snapshot_path else ":memory:"
            self.conn = sqlite3.connect(target, uri=True, isolation_level=None, check_same_thread=False)
            self._pristine = self.conn
        else:
            self._pristine = pristine if pristine is not None else load_pristine(snapshot_path)
            live_path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(live_path, isolation_level=None, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.conn.execute("PRAGMA synchronous = OFF")  # a benchmark site: speed over durability
        self.resets = 0
        self.last_reset: datetime | None = None
        self.last_reset_ms: float | None = None
        self.restore()  # every server start serves the pristine state

    def restore(self) -> float:
        """Restore the pristine snapshot in place; return the time it took in milliseconds."""
        start = time.perf_counter()
        if not self.read_only:
            with writing(self.live_path):  # a full disk: the server's log says where
                self._pristine.backup(self.conn)
        self._baseline = self.conn.total_changes
        self.resets += 1
        self.last_reset = datetime.now(UTC)
        self.last_reset_ms = (time.perf_counter() - start) * 1000
        return self.last_reset_ms

    @property
    def writes_since_reset(self) -> int:
        return self.conn.total_changes - self._baseline

    def transaction(self) -> Transaction:
        """`with db.transaction() as conn:` groups writes atomically (commit on success, rollback on error)."""
        return Transaction(self.conn)

    def checksum(self) -> str:
        """A content hash of every table, independent of page layout."""
        return content_checksum(self.conn)

    def pristine_checksum(self) -> str:
        return content_checksum(self._pristine)

    @classmethod
    def empty(cls, name: str) -> Database:
        return cls(name, None, None, read_only=True)


def load_pristine(snapshot_path: Path) -> sqlite3.Connection:
    """The snapshot copied into memory, to restore from."""
    pristine = sqlite3.connect(":memory:", check_same_thread=False)
    with closing(sqlite3.connect(f"file:{snapshot_path}?mode=ro", uri=True)) as src:
        src.backup(pristine)
    return pristine


class Transaction:
    """BEGIN ... COMMIT (ROLLBACK on error) on an autocommit connection. Inside an open transaction it
    joins it, so shared helpers (e.g. placing an order) can be atomic alone and within a caller's."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.owned = False

    def __enter__(self) -> sqlite3.Connection:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.owned = True
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.owned:
            self.conn.execute("ROLLBACK" if exc_type else "COMMIT")


def content_checksum(conn: sqlite3.Connection) -> str:
    digest = hashlib.sha256()
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    for table in tables:
        digest.update(table.encode())
        for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
            digest.update(repr(tuple(row)).encode())
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# Passwords and time


def hash_password(password: str, salt: str | None = None) -> str:
    """Salted PBKDF2. Few iterations: these are benchmark accounts, and seeding must stay fast."""
    salt = salt or secrets.token_hex(8)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), 1000).hex()
    return f"{salt}${digest}"


def check_password(password: str, stored: str) -> bool:
    salt, _, _ = stored.partition("$")
    return hmac.compare_digest(hash_password(password, salt), stored)


def now() -> str:
    """The current UTC time in the databases' timestamp format."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")


# ---------------------------------------------------------------------------------------------
# Sessions: server-side, so that a reset can drop them all.


class SessionStore:
    """In-memory sessions of one site; the browser holds only a random id in a cookie.

    The cookie name includes the site and instance: cookies are scoped by host, not port, so
    sites on one host would otherwise overwrite each other's sessions.
    """

    def __init__(self, cookie_name: str):
        self.cookie_name = cookie_name
        self._sessions: dict[str, dict[str, Any]] = {}

    def clear(self) -> None:
        self._sessions.clear()

    def middleware(self, app: ASGIApp) -> ASGIApp:
        store = self

        async def with_session(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            cookie = SimpleCookie(_header(scope, b"cookie"))
            sid = cookie[store.cookie_name].value if store.cookie_name in cookie else None
            if sid not in store._sessions:
                sid = None
            session = store._sessions.get(sid, {}) if sid else {}
            scope["session"] = session

            async def send_with_cookie(message: Message) -> None:
                nonlocal sid
                if message["type"] == "http.response.start" and sid is None and scope["session"]:
                    sid = secrets.token_urlsafe(24)
                    store._sessions[sid] = scope["session"]
                    value = f"{store.cookie_name}={sid}; Path=/; HttpOnly; SameSite=Lax"
                    message.setdefault("headers", []).append((b"set-cookie", value.encode()))
                await send(message)

            await app(scope, receive, send_with_cookie)

        return with_session


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return ""


def here(request) -> str:
    """The path and query of the current request (where to come back to)."""
    return request.url.path + (f"?{request.url.query}" if request.url.query else "")


def set_params_only(endpoint):
    """Decorate a list page's endpoint `(request, ...)`: a GET form sends every field, set or not, and the page's
    URL keeps only the set ones, as GitLab's and Magento's own scripts build it (so that a URL task's reference is
    the URL every path to the page shows): a query with empty parameters is redirected (302) to itself without
    them, in the order sent."""

    @functools.wraps(endpoint)
    async def wrapper(request, *args, **kwargs):
        sent = parse_qsl(request.url.query, keep_blank_values=True)
        if any(not value for _, value in sent):
            kept = urlencode([(key, value) for key, value in sent if value])
            return RedirectResponse(request.url.path + (f"?{kept}" if kept else ""), status_code=302)
        return await endpoint(request, *args, **kwargs)

    return wrapper


def redirect(url: str, message: str | None = None, kind: str = "success", request=None) -> RedirectResponse:
    """303 See Other (the answer to a form POST), optionally with a message for the next page."""
    if message and request is not None:
        flash(request, message, kind)
    return RedirectResponse(url, status_code=303)


def login_redirect(request, login_url: str, back: str | None = None) -> RedirectResponse:
    """Send a guest to the login page and, after signing in, back to `back` (default: this page if
    it can be fetched again, i.e. a GET), as every site here does."""
    if back or request.method == "GET":
        request.session["after_login"] = back or here(request)
    return RedirectResponse(login_url, status_code=303 if request.method == "POST" else 302)


ROW_ID_DIGITS = 18  # every number of up to 18 digits fits SQLite's signed 64-bit INTEGER


def row_id(text: Any) -> int | None:
    """A database id from URL or form text: ASCII digits that fit SQLite's INTEGER, else None, which the caller
    answers as an id that does not exist (404), as the real sites do. A longer number passed to SQLite raises
    OverflowError (an HTTP 500); str.isdigit() alone also accepts '²', which int() refuses."""
    text = str(text)
    return int(text) if text.isascii() and text.isdigit() and len(text) <= ROW_ID_DIGITS else None


class RowIdConvertor(IntegerConvertor):
    """`{name:id}` in a route: a row_id, so that a path with a longer number matches no route (404)."""

    regex = f"[0-9]{{1,{ROW_ID_DIGITS}}}"


register_url_convertor("id", RowIdConvertor())


def int_param(value: Any, default: int, lo: int = 1, hi: int = 10**9) -> int:
    """An integer from a query or form value, clamped to [lo, hi]; `default` when it is not a number."""
    try:
        return min(max(int(value), lo), hi)
    except (TypeError, ValueError):
        return default


def search_term(value: Any, max_chars: int) -> tuple[str, bool]:
    """A search term from a query or form value, stripped and cut to `max_chars` characters (each site passes its
    real counterpart's limit), and whether it was cut. Uncut, a long term reached SQLite as a LIKE pattern over its
    50,000-byte limit ("LIKE or GLOB pattern too complex": an HTTP 500), or as thousands of words, each a clause."""
    term = str(value or "").strip()
    return term[:max_chars], len(term) > max_chars


def flash(request, message: str, kind: str = "success") -> None:
    """Queue a message for the next rendered page (Magento's success/error banners)."""
    request.session.setdefault("messages", []).append({"kind": kind, "text": message})


def pop_messages(request) -> list[dict[str, str]]:
    return request.session.pop("messages", [])


# ---------------------------------------------------------------------------------------------
# Sites


@dataclass
class SiteContext:
    """What a site's app factory receives."""

    site: str
    instance: int
    db: Database
    sessions: SessionStore
    urls: dict[str, str]  # base URL of every running site of this instance, e.g. urls["shopping"]
    shared: dict[str, Any] = field(default_factory=dict)  # the same for every instance of the site in a server


@dataclass(frozen=True)
class SiteSpec:
    """An embedded site's app. Its port, account and the rest are plain data in its entry of webrl.sitelist."""

    name: str
    title: str  # what the site calls itself, e.g. "One Stop Market"
    database: DatabaseSpec | None  # None: the site keeps no data (the homepage)
    make_app: Callable[[SiteContext], ASGIApp]
    base_path: str = ""  # part of the site's URL, as in WebArena's SHOPPING_ADMIN=<host>:7780/admin
    check: Callable[[], object] | None = None  # run by `webrl up` first: raises a UsageError naming the fix


def money(value: float | None) -> str:
    return f"${(value or 0):,.2f}"


class SharedBytecode(BytecodeCache):
    """Compiled templates in memory, for every Jinja2 environment of the process. Each instance of a site has its
    own environment, and compiling its templates anew in each (~10 ms a template) made the first visit of every
    page on every instance slow, and `webrl up` with many instances (its health check visits each site)."""

    def __init__(self):
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        if (code := self._code.get(bucket.key)) is not None:
            bucket.bytecode_from_string(code)  # ignored (compiled again) when the template's source changed

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


COMPILED_TEMPLATES = SharedBytecode()


def make_templates(directory: Path) -> Jinja2Templates:
    """A Jinja2 environment with the filters every site uses."""
    templates = Jinja2Templates(directory=str(directory))
    templates.env.bytecode_cache = COMPILED_TEMPLATES
    templates.env.filters["money"] = money
    templates.env.filters["fromjson"] = json.loads
    templates.env.globals["get_messages"] = pop_messages
    return templates


class SiteWithUsers:
    """The site object of one instance whose pages know the signed-in user: its context, templates and
    database connection. Its app keeps it as `app.state.site`, so module-level handlers find it with
    `of(request)`."""

    USER_SQL = "SELECT * FROM users WHERE id = ?"  # the signed-in user's row by id (a site may hide some)

    def __init__(self, ctx: SiteContext, templates_dir: Path):
        self.ctx = ctx
        self.templates = make_templates(templates_dir)

    @classmethod
    def of(cls, request) -> Self:
        return request.app.state.site

    @property
    def conn(self) -> sqlite3.Connection:
        return self.ctx.db.conn

    def user(self, request) -> sqlite3.Row | None:
        """The signed-in user, or None; a session whose user is gone is signed out."""
        uid = request.session.get("user_id")
        row = None if uid is None else self.conn.execute(self.USER_SQL, (uid,)).fetchone()
        if row is None:
            request.session.pop("user_id", None)
        return row

    def app(self, routes: list, exception_handlers: dict) -> Starlette:
        """The site's Starlette app, holding this object for its handlers."""
        app = Starlette(routes=routes, exception_handlers=exception_handlers)
        app.state.site = self
        return app
