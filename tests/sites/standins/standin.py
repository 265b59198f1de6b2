#!/usr/bin/env python3
"""Stand-ins for the real WebArena images, which cannot be pulled here: each imitates the behaviour of its image
that the docker backend depends on, and nothing else (stdlib only, for the debootstrap base image).

- `shop`: Magento's supervisord. A database writes its pid file and removes it on SIGTERM; the web server answers
  302 to WebArena's original host until `bin/magento setup:store-config:set --base-url=...` has run.
- `gitlab-entrypoint`: WebArena-Verified's GitLab entrypoint: starts the services, and reconfigures when its
  WA_ENV_CTRL_EXTERNAL_SITE_URL is not the baked-in default unless WA_ENV_CTRL_SKIP_RECONFIGURE=true; on SIGTERM
  it stops the services. `runsvdir-start`: the original image's command: no reconfigure, and SIGTERM ends it at
  once (the services die with the container).
- `gitlab-ctl start|stop|restart|reconfigure|status`: nginx listens on 8023 until a reconfigure moves it to
  nginx['listen_port'], else to the port of external_url; every reconfigure is logged. PostgreSQL refuses to
  start while its pid file exists, with PostgreSQL's own message in its log (a stale lock).
- `forum [PORT]`: Postmill's supervisord, as far as a web server (on port 80) that stops on SIGTERM; the map's
  Apache on 8080 likewise.
- `pg_resetwal`, `magento`, `mysql`: stubs that log their calls; `magento` also keeps the base URL and each
  indexer's mode that it was given.
"""

from __future__ import annotations

import http.server
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

CALLS = Path("/var/log/standin")  # one file per stub: one line per call
STATE = Path("/etc/standin")  # what the stubs configured
RUN = Path("/run/standin")  # pids of the gitlab services
ORIGINAL_HOST = "http://metis.lti.cs.cmu.edu:7770/"
GITLAB_RB = Path("/etc/gitlab/gitlab.rb")
GITLAB_DEFAULT_URL = "http://localhost:8023"
GITLAB_PG_PID = Path("/var/opt/gitlab/postgresql/data/postmaster.pid")
GITLAB_PG_LOG = Path("/var/log/gitlab/postgresql/current")
SHOP_DB_PID = Path("/var/run/mysqld/mysqld.pid")


def log_call(stub: str, args: list[str]) -> None:
    CALLS.mkdir(parents=True, exist_ok=True)
    with open(CALLS / stub, "a") as f:
        f.write(" ".join(args) + "\n")


def setting(name: str, default: str) -> str:
    """A knob of a derived stand-in image (a file under /etc/standin), e.g. how long a stop takes."""
    path = STATE / name
    return path.read_text().strip() if path.exists() else default


def database(pid_file: Path, log: Path) -> None:
    """A database server: its pid file while it runs, removed on a clean shutdown (SIGTERM)."""
    if pid_file.exists():
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a") as f:
            f.write('FATAL:  lock file "postmaster.pid" already exists\n')
        sys.exit(1)
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(f"{os.getpid()}\n")

    def shut_down(*_) -> None:
        time.sleep(float(setting("stop_s", "0")))
        pid_file.unlink(missing_ok=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, shut_down)
    while True:
        time.sleep(3600)


def serve(port: int, answer) -> None:
    """An HTTP server on `port`; `answer(path)` -> (status, headers)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, headers = answer(self.path)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args) -> None:
            pass

    http.server.ThreadingHTTPServer(("", port), Handler).serve_forever()


def spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, *args], start_new_session=True)


# -- Magento -----------------------------------------------------------------------------------------------


def shop() -> None:
    db = spawn("database", str(SHOP_DB_PID), "/var/log/mysql/error.log")

    def stop(*_) -> None:  # supervisord stops its programs, then exits
        db.terminate()
        db.wait()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)

    def answer(path: str):
        base = STATE / "base_url"
        if not base.exists():
            return 302, {"Location": ORIGINAL_HOST}
        return 200, {}

    serve(80, answer)


def magento(args: list[str]) -> None:
    log_call("magento", args)
    for arg in args:
        if arg.startswith("--base-url="):
            STATE.mkdir(parents=True, exist_ok=True)
            (STATE / "base_url").write_text(arg.split("=", 1)[1])
    if args[:1] == ["indexer:set-mode"]:  # MODE [INDEXER...]: one file per indexer holds its mode
        (STATE / "indexers").mkdir(parents=True, exist_ok=True)
        for indexer in args[2:]:
            (STATE / "indexers" / indexer).write_text(args[1])


def forum(port: int) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(port, lambda path: (200, {}))


# -- GitLab ------------------------------------------------------------------------------------------------


def nginx_port() -> int:
    return int(setting("nginx_port", "8023"))


def gitlab_web() -> None:
    def answer(path: str):
        alive = (RUN / "database").exists() and _alive(int((RUN / "database").read_text()))
        return (200 if alive and GITLAB_PG_PID.exists() else 502), {}

    serve(nginx_port(), answer)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def _start(service: str, *args: str) -> None:
    RUN.mkdir(parents=True, exist_ok=True)
    (RUN / service).write_text(str(spawn(*args).pid))


def _stop(service: str) -> None:
    path = RUN / service
    if not path.exists():
        return
    pid = int(path.read_text())
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    while _alive(pid):
        time.sleep(0.05)
    path.unlink()


def gitlab_ctl(args: list[str]) -> None:
    log_call("gitlab-ctl", args)
    command = args[0] if args else "status"
    if command in ("stop", "restart"):
        _stop("web")
        _stop("database")
    if command in ("start", "restart"):
        _start("database", "database", str(GITLAB_PG_PID), str(GITLAB_PG_LOG))
        _start("web", "gitlab-web")
    if command == "reconfigure":
        time.sleep(float(setting("reconfigure_s", "0")))
        text = GITLAB_RB.read_text()
        pinned = re.search(r"^nginx\['listen_port'\]\s*=\s*(\d+)", text, re.M)
        url = re.search(r"^external_url\s+'[^']*?(?::(\d+))?/?'", text, re.M)
        STATE.mkdir(parents=True, exist_ok=True)
        (STATE / "nginx_port").write_text(pinned.group(1) if pinned else (url.group(1) or "80"))
        _stop("web")
        _start("web", "gitlab-web")


def gitlab_entrypoint() -> None:
    def stop(*_) -> None:
        gitlab_ctl(["stop"])
        sys.exit(1)

    signal.signal(signal.SIGTERM, stop)
    gitlab_ctl(["start"])
    url = os.environ.get("WA_ENV_CTRL_EXTERNAL_SITE_URL", GITLAB_DEFAULT_URL)
    if os.environ.get("WA_ENV_CTRL_SKIP_RECONFIGURE") != "true" and url != GITLAB_DEFAULT_URL:
        port = url.rsplit(":", 1)[-1]
        text = GITLAB_RB.read_text().replace(f"external_url '{GITLAB_DEFAULT_URL}'", f"external_url '{url}'")
        GITLAB_RB.write_text(text.replace("nginx['listen_port'] = 8023", f"nginx['listen_port'] = {port}"))
        gitlab_ctl(["reconfigure"])
    while True:
        time.sleep(3600)


def runsvdir_start() -> None:
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))  # runsvdir exits at once on TERM
    gitlab_ctl(["start"])
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    role, rest = sys.argv[1], sys.argv[2:]
    {
        "shop": lambda: shop(),
        "forum": lambda: forum(int(rest[0]) if rest else 80),
        "magento": lambda: magento(rest),
        "database": lambda: database(Path(rest[0]), Path(rest[1])),
        "gitlab-web": lambda: gitlab_web(),
        "gitlab-ctl": lambda: gitlab_ctl(rest),
        "gitlab-entrypoint": lambda: gitlab_entrypoint(),
        "runsvdir-start": lambda: runsvdir_start(),
        "log": lambda: log_call(rest[0], rest[1:]),
    }[role]()
