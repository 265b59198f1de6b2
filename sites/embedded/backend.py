"""The embedded `SiteBackend`: starts the site server as a background process and talks to it
through its control API."""

from __future__ import annotations

import json
import os
import secrets
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from webrl.config import Config, on_free_ports
from webrl.errors import PortTaken, SitesUnavailable, UsageError, WebrlError
from webrl.files import write_atomically, write_private
from webrl.netutil import port_free, port_owner
from webrl.sites.base import ResetResult, SiteBackend, SiteStatus
from webrl.sites.embedded.registry import SITE_NAMES, site_spec
from webrl.sites.embedded.server import BIND_FAILED, TOKEN_HEADER, EmbeddedPaths, ServerPlan

START_TIMEOUT_S = 60
PORT_ATTEMPTS = 3  # sets of free ports tried by up_on_free_ports

B = TypeVar("B", bound=SiteBackend)


class EmbeddedBackend:
    def __init__(self, config: Config):
        self.config = config
        self.paths = EmbeddedPaths(config.state_dir)

    # -- plan and running state ---------------------------------------------------------------

    def plan(self) -> ServerPlan:
        return ServerPlan.from_config(self.config, check_sites(self.config.sites.sites))

    def running(self) -> ServerPlan | None:
        """The plan of the live server, or None. A record left by a dead server is removed."""
        path = self.paths.server
        if not path.exists():
            return None
        try:
            record = json.loads(path.read_text())
            pid, plan = int(record["pid"]), ServerPlan.model_validate(record["plan"])
        except (ValueError, KeyError, TypeError) as err:
            raise UsageError(
                f"state file {path} is corrupt ({type(err).__name__}); if no webrl server is running "
                f"(check with `ps`), delete it and run the command again"
            ) from None
        if not _is_server_process(pid):
            path.unlink(missing_ok=True)
            return None
        return plan

    def _running_or_fail(self) -> ServerPlan:
        plan = self.running()
        if plan is None:
            raise SitesUnavailable("the embedded sites are not running; start them with `webrl up`")
        return plan

    # -- SiteBackend ----------------------------------------------------------------------------

    def up(self, on_step=lambda message: None, owner: int | None = None) -> list[SiteStatus]:
        """Start the sites in a background server process and wait until every site is healthy; with `owner`, a
        process id, the server stops when that process ends. Idempotent: if the same sites already run, report
        them."""
        plan = self.plan()
        current = self.running()
        if current is not None:
            if current.model_dump(exclude={"state_dir"}) != plan.model_dump(exclude={"state_dir"}):
                raise UsageError(
                    f"other embedded sites are already running ({', '.join(current.sites)}, "
                    f"{current.instances} instance(s)); run `webrl down` first"
                )
            return self.status()
        self._check_ports(plan)
        self._prepare(plan, on_step)
        on_step("starting the site server")
        with open(self.paths.log, "ab") as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "webrl.sites.embedded.server",
                    str(self.config.state_dir),
                    *([str(owner)] if owner else []),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # survives the terminal that ran `webrl up`
            )
        self._wait_until_up(plan, proc)
        return self.status()

    def serve_foreground(self, on_step=lambda message: None) -> None:
        """Run the server in this process until interrupted (`webrl up --foreground`)."""
        from webrl.sites.embedded.server import serve

        plan = self.plan()
        if self.running() is not None:
            raise UsageError("the embedded sites are already running in the background; run `webrl down` first")
        self._check_ports(plan)
        self._prepare(plan, on_step)
        try:
            serve(plan)
        except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C after a clean shutdown: the normal way out
            pass

    def down(self) -> bool:
        """Stop the server; False if it was not running."""
        plan = self.running()
        if plan is None:
            return False
        pid = json.loads(self.paths.server.read_text())["pid"]
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _is_server_process(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _is_server_process(pid):
            os.kill(pid, signal.SIGKILL)
        self.paths.server.unlink(missing_ok=True)
        return True

    def status(self) -> list[SiteStatus]:
        plan = self._running_or_fail()
        out = []
        for k in range(plan.instances):
            rows = self._site_rows(plan, k)
            for site in plan.sites:
                row = rows[site]
                url = plan.site_url(site, k)
                out.append(
                    SiteStatus(
                        site=site,
                        instance=k,
                        url=url,
                        healthy=_answers(url),
                        writes_since_reset=row["writes_since_reset"],
                        last_reset=datetime.fromisoformat(row["last_reset"]) if row["last_reset"] else None,
                        last_reset_ms=row.get("last_reset_ms"),
                    )
                )
        return out

    def urls(self, instance: int) -> dict[str, str]:
        plan = self._running_or_fail()
        self._check_instance(plan, instance)
        return {site: plan.site_url(site, instance) for site in plan.sites}

    def reset(self, sites: list[str] | None = None, instance: int | None = None) -> list[ResetResult]:
        plan = self._running_or_fail()
        if sites:
            check_sites(sites)
            missing = [s for s in sites if s not in plan.sites]
            if missing:
                raise UsageError(f"site(s) not running: {', '.join(missing)} (running: {', '.join(plan.sites)})")
        instances = range(plan.instances) if instance is None else [self._check_instance(plan, instance)]
        results = []
        for k in instances:
            reply = self._control(plan, k, "POST", "/reset", {"sites": sites or None})
            results += [ResetResult(**row) for row in reply["reset"]]
        return results

    reset_policy = "database-changed"

    def is_dirty(self, site: str, instance: int, writes: bool = True) -> bool:
        """Whether the site's database changed since its reset, whatever the task (a restore takes milliseconds).
        One call to the instance's control API (not `status()`, which also probes every site of every instance:
        ~35 ms per episode with 2 instances, growing with their number)."""
        plan = self._running_or_fail()
        return self._site_rows(plan, self._check_instance(plan, instance))[site]["writes_since_reset"] > 0

    def last_resets(self, instance: int) -> dict[str, datetime | None]:
        """When each site of the instance was last restored (one control API call)."""
        plan = self._running_or_fail()
        rows = self._site_rows(plan, self._check_instance(plan, instance))
        return {
            site: datetime.fromisoformat(row["last_reset"]) if row["last_reset"] else None for site, row in rows.items()
        }

    def _site_rows(self, plan: ServerPlan, instance: int) -> dict[str, dict]:
        """site -> what the instance's control API reports of it (writes and resets since the start)."""
        return {row["site"]: row for row in self._control(plan, instance, "GET", "/status")["sites"]}

    def query(self, site: str, sql: str, params: tuple = (), instance: int = 0) -> list[sqlite3.Row]:
        """Read a site's live data (read-only; the sites own every write), e.g. to check a task's outcome."""
        db = site_spec(site).database
        if db is None:
            raise UsageError(f"site '{site}' keeps no data")
        plan = self._running_or_fail()
        path = (
            db.snapshot_path(self.paths.snapshots, plan.seed) if db.read_only else self.paths.live_db(instance, db.name)
        )
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            conn.row_factory = sqlite3.Row
            return conn.execute(sql, params).fetchall()

    def checksums(self, site: str, instance: int = 0) -> tuple[str, str]:
        """(current, pristine) content checksums of the site's database."""
        reply = self._control(self._running_or_fail(), instance, "GET", f"/checksum/{site}")
        return reply["checksum"], reply["pristine"]

    # -- helpers --------------------------------------------------------------------------------

    def _check_ports(self, plan: ServerPlan) -> None:
        for host, port, what in plan.listeners():
            if not port_free(host, port):
                owner = port_owner(port) or "another process"
                raise PortTaken(
                    f"port {port} ({what}) is already in use by {owner}; stop it, or move the sites "
                    f"with a config file (sites.ports) or WEBRL_SITES__PORTS__<SITE>"
                )

    def _prepare(self, plan: ServerPlan, on_step) -> None:
        """Build missing snapshots and rebuild changed ones (the slow part, shown to the user); write plan and
        token."""
        self.paths.root.mkdir(parents=True, exist_ok=True)
        for spec in map(site_spec, plan.sites):
            if spec.check is not None:
                spec.check()
        databases = {spec.database.name: spec.database for spec in map(site_spec, plan.sites) if spec.database}
        for spec in databases.values():
            problem = spec.snapshot_problem(self.paths.snapshots, plan.seed)
            if problem is not None:
                missing = not spec.snapshot_path(self.paths.snapshots, plan.seed).exists()
                on_step(
                    f"building the '{spec.name}' snapshot (seed {plan.seed})"
                    if missing
                    else f"rebuilding the '{spec.name}' snapshot (seed {plan.seed}): {problem}"
                )
                spec.build_snapshot(self.paths.snapshots, plan.seed, verify=True)
        write_atomically(self.paths.plan, plan.model_dump_json(indent=2))
        write_private(self.paths.token, secrets.token_urlsafe(32))

    def _wait_until_up(self, plan: ServerPlan, proc: subprocess.Popen) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                last = _last_line(self.paths.log)
                error = PortTaken if last.startswith(BIND_FAILED) else WebrlError
                raise error(f"the site server stopped while starting: {last} (log: {self.paths.log})")
            if self.paths.server.exists() and all(self._answers_control(plan, k) for k in range(plan.instances)):
                return
            time.sleep(0.05)
        proc.terminate()
        raise WebrlError(f"the site server did not come up within {START_TIMEOUT_S} s (log: {self.paths.log})")

    def _answers_control(self, plan: ServerPlan, instance: int) -> bool:
        try:
            self._control(plan, instance, "GET", "/health")
            return True
        except WebrlError:
            return False

    def _control(self, plan: ServerPlan, instance: int, method: str, path: str, body: dict | None = None) -> dict:
        try:
            token = self.paths.token.read_text().strip()
        except OSError:
            raise UsageError(f"control token {self.paths.token} is missing; run `webrl down` and `webrl up`") from None
        port = plan.control_ports[instance]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}",
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={TOKEN_HEADER: token, "content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as err:
            raise WebrlError(
                f"control API of instance {instance} refused {method} {path}: "
                f"{err.code} {err.read().decode(errors='replace')}"
            ) from None
        except (urllib.error.URLError, OSError) as err:
            raise SitesUnavailable(
                f"control API of instance {instance} (port {port}) is not answering: {err}"
            ) from None

    @staticmethod
    def _check_instance(plan: ServerPlan, instance: int) -> int:
        if not 0 <= instance < plan.instances:
            raise UsageError(f"--instance {instance}: only instances 0..{plan.instances - 1} are running")
        return instance


def up_on_free_ports(config: Config, make: Callable[[Config], B] = EmbeddedBackend, owner: int | None = None) -> B:
    """The sites of `config` up on ports free now, in the backend `make` builds (tests, benchmarks, the environment
    workers that share a host), until process `owner` ends where given. A port chosen free can be taken by another
    process before the server binds it (most likely in the kernel's range for outgoing connections, where the ports
    of many instances fall): then the sites start on other free ports."""
    for attempt in range(1, PORT_ATTEMPTS + 1):
        backend = make(on_free_ports(config))
        try:
            backend.up(owner=owner)
        except PortTaken:
            if attempt < PORT_ATTEMPTS:
                continue
            raise
        return backend


def check_sites(sites: list[str] | None, available: tuple[str, ...] = SITE_NAMES) -> list[str]:
    """The sites to serve, in the registry's order (default: all `available`); unknown names are a usage error."""
    if not sites:
        return list(available)
    for site in sites:
        if site not in available:
            raise UsageError(f"unknown site '{site}'; available: {', '.join(available)}")
    return [s for s in available if s in sites]


def _is_server_process(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        try:
            os.kill(pid, 0)  # no /proc: trust the pid
            return True
        except OSError:
            return False
    return b"webrl" in cmdline  # the pid is ours, not a recycled one (zombies have no cmdline)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status < 500
    except (urllib.error.URLError, OSError):
        return False


def _last_line(path: Path) -> str:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "no output"
