"""The embedded server: one uvicorn process serving every site of every instance, each on its own
port, plus one loopback control API per instance (health, status, reset) guarded by a token.

One ASGI app dispatches on the port a request arrived at, so a single event loop serves them all
and every database connection is used from that loop only.

Run by `webrl up` as `python -m webrl.sites.embedded.server STATE_DIR` (the plan is read from the
state directory).
"""

from __future__ import annotations

import hmac
import json
import os
import resource
import signal
import socket
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import uvicorn
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from webrl.config import Config
from webrl.sites.embedded.registry import site_spec
from webrl.sites.platform import Database, SessionStore, SiteContext, load_pristine

TOKEN_HEADER = "x-webrl-token"
BIND_FAILED = "cannot bind"  # how the server's last log line starts when a port was taken (the backend reads it)


class EmbeddedPaths:
    """Where the embedded backend keeps its files under the state directory."""

    def __init__(self, state_dir: Path):
        self.root = state_dir / "embedded"
        self.plan = self.root / "plan.json"  # what to serve; written by `webrl up`
        self.server = self.root / "server.json"  # the running server (pid); written once it listens
        self.token = self.root / "control.token"
        self.log = self.root / "server.log"
        self.snapshots = state_dir / "snapshots"

    def live_db(self, instance: int, name: str) -> Path:
        return self.root / "instances" / str(instance) / f"{name}.db"


class ServerPlan(BaseModel):
    """Everything the server process needs, resolved from the configuration."""

    state_dir: Path
    host: str
    seed: int
    sites: list[str]
    instances: int
    ports: dict[str, list[int]]  # site -> port of each instance
    control_ports: list[int]  # per instance, always on 127.0.0.1

    @classmethod
    def from_config(cls, config: Config, sites: list[str]) -> ServerPlan:
        cfg = config.sites
        return cls(
            state_dir=config.state_dir,
            host=cfg.host,
            seed=cfg.seed,
            sites=sites,
            instances=cfg.instances,
            ports={s: [cfg.port(s, k) for k in range(cfg.instances)] for s in sites},
            control_ports=[cfg.control(k) for k in range(cfg.instances)],
        )

    def site_url(self, site: str, instance: int) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.ports[site][instance]}{site_spec(site).base_path}"

    def listeners(self) -> list[tuple[str, int, str]]:
        """(host, port, what) for every socket the server binds."""
        out = [(self.host, self.ports[s][k], f"{s} instance {k}") for k in range(self.instances) for s in self.sites]
        out += [("127.0.0.1", port, f"control API instance {k}") for k, port in enumerate(self.control_ports)]
        return out


def control_app(instance: int, token: str, sites: dict[str, SiteContext]) -> ASGIApp:
    """The control API of one instance. Every call needs the token, so pages in the agent's browser
    (which can reach loopback ports) cannot reset or inspect the sites."""

    def by_database(names: list[str]) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for name in names:
            groups.setdefault(sites[name].db.name, []).append(name)
        return groups

    async def health(request: Request):
        return JSONResponse({"ok": True, "instance": instance, "pid": os.getpid()})

    async def status(request: Request):
        return JSONResponse(
            {
                "sites": [
                    {
                        "site": name,
                        "database": ctx.db.name,
                        "writes_since_reset": ctx.db.writes_since_reset,
                        "resets": ctx.db.resets,
                        "last_reset": ctx.db.last_reset.isoformat() if ctx.db.last_reset else None,
                        "last_reset_ms": ctx.db.last_reset_ms,
                    }
                    for name, ctx in sites.items()
                ]
            }
        )

    async def reset(request: Request):
        body = await request.json() if await request.body() else {}
        wanted = body.get("sites") or list(sites)
        unknown = [s for s in wanted if s not in sites]
        if unknown:
            return JSONResponse({"error": f"not served by this instance: {', '.join(unknown)}"}, status_code=400)
        results = []
        # A restore covers every site on the database, so all of them are reported and lose their sessions.
        for db_name in by_database(wanted):
            sharing = [name for name, ctx in sites.items() if ctx.db.name == db_name]
            ms = sites[sharing[0]].db.restore()
            for name in sharing:
                sites[name].sessions.clear()
                results.append({"site": name, "instance": instance, "ms": ms})
        return JSONResponse({"reset": results})

    async def checksum(request: Request):
        ctx = sites[request.path_params["site"]] if request.path_params["site"] in sites else None
        if ctx is None:
            return JSONResponse({"error": "unknown site"}, status_code=404)
        return JSONResponse({"checksum": ctx.db.checksum(), "pristine": ctx.db.pristine_checksum()})

    app = Starlette(
        routes=[
            Route("/health", health),
            Route("/status", status),
            Route("/reset", reset, methods=["POST"]),
            Route("/checksum/{site}", checksum),
        ]
    )

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(TOKEN_HEADER.encode(), b"").decode()
            if not hmac.compare_digest(given, token):
                await PlainTextResponse("forbidden", status_code=403)(scope, receive, send)
                return
        await app(scope, receive, send)

    return guarded


def build_routes(plan: ServerPlan, token: str) -> dict[int, ASGIApp]:
    """port -> app for every site of every instance and every control API."""
    paths = EmbeddedPaths(plan.state_dir)
    specs = [site_spec(s) for s in plan.sites]
    databases = {spec.database.name: spec.database for spec in specs if spec.database}
    snapshots = {name: db.build_snapshot(paths.snapshots, plan.seed) for name, db in databases.items()}
    # What every instance would otherwise hold a copy of: the snapshots in memory, and what a site keeps in `shared`.
    pristine = {name: load_pristine(snapshots[name]) for name, db in databases.items() if not db.read_only}
    shared: dict[str, dict] = {spec.name: {} for spec in specs}
    routes: dict[int, ASGIApp] = {}
    for k in range(plan.instances):
        urls = {s: plan.site_url(s, k) for s in plan.sites}
        dbs = {
            name: Database(name, paths.live_db(k, name), snapshots[name], databases[name].read_only, pristine.get(name))
            for name in databases
        }
        contexts = {}
        for spec in specs:
            db = dbs[spec.database.name] if spec.database else Database.empty(spec.name)
            ctx = SiteContext(spec.name, k, db, SessionStore(f"webrl_{spec.name}_{k}"), urls, shared[spec.name])
            contexts[spec.name] = ctx
            routes[plan.ports[spec.name][k]] = ctx.sessions.middleware(spec.make_app(ctx))
        routes[plan.control_ports[k]] = control_app(k, token, contexts)
    return routes


def _bind(host: str, port: int, what: str) -> socket.socket:
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on connections whose socket says TCP, and without it a
    # response's body waits for the client's delayed ACK of its headers (~40 ms on every keep-alive request).
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise SystemExit(f"{BIND_FAILED} {host}:{port} ({what}): {err.strerror}") from None
    sock.listen(512)
    sock.set_inheritable(True)
    return sock


def _raise_file_limit() -> None:
    """Raise the soft limit of open files to the hard one: each instance holds a listening socket per site and
    for its control API and its database files (~12), each browser connection one more, and a soft limit of 1024
    (a common default) would stop the server near 80 instances."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def serve(plan: ServerPlan) -> None:
    _raise_file_limit()
    paths = EmbeddedPaths(plan.state_dir)
    routes = build_routes(plan, paths.token.read_text().strip())
    sockets = [_bind(host, port, what) for host, port, what in plan.listeners()]

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        await routes[scope["server"][1]](scope, receive, send)

    record = {"pid": os.getpid(), "started_at": datetime.now(UTC).isoformat(), "plan": plan.model_dump(mode="json")}
    tmp = paths.server.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2))
    tmp.replace(paths.server)
    # A request head may arrive in several reads on a loaded machine; h11 refuses a partial head over its 16 KiB
    # default, so a long search term would be a 400 or not by timing. 256 KiB holds any term the sites answer.
    config = uvicorn.Config(
        dispatch,
        lifespan="off",
        access_log=False,
        log_level="warning",
        timeout_keep_alive=30,
        h11_max_incomplete_event_size=256 * 1024,
    )
    try:
        uvicorn.Server(config).run(sockets=sockets)
    finally:
        if paths.server.exists() and json.loads(paths.server.read_text()).get("pid") == os.getpid():
            paths.server.unlink()


def exit_with(pid: int) -> None:
    """Stop this server (as `webrl down` would) once process `pid` is gone: the sites of an environment worker
    end with it, however it ends (a Ray worker killed with its node leaves no server behind)."""

    def watch() -> None:
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os.kill(os.getpid(), signal.SIGTERM)
                return
            except PermissionError:  # alive, under another user
                pass
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True, name="exit-with").start()


def main(argv: list[str]) -> None:
    """`python -m webrl.sites.embedded.server STATE_DIR [OWNER_PID]`: serve the plan in STATE_DIR (until OWNER_PID
    ends, when given)."""
    state_dir = Path(argv[0])
    plan = ServerPlan.model_validate_json(EmbeddedPaths(state_dir).plan.read_text())
    if len(argv) > 1:
        exit_with(int(argv[1]))
    serve(plan)


if __name__ == "__main__":
    main(sys.argv[1:])
