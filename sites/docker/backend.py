"""The Docker `SiteBackend`: the sites run in containers, one set per instance on that instance's port block,
bound to the configured address (127.0.0.1 by default).

Two image sets:
- `embedded`: our image (Dockerfile) serving the embedded sites, one container per instance. Its control API
  (published to the host's loopback only) reports writes per site and restores a database in milliseconds.
- `webarena`: the real WebArena images, one container per site and instance, configured after their first start
  (configure.py). Dirty means "an episode was given the site since it was recreated".

`up` starts each container, waits for real health, configures it and commits it to a snapshot image; every
later start and every reset recreates the container from that snapshot (the writable layer is dropped), so no
reset seeds or configures anything again. `down` removes the containers and keeps the snapshots; `purge` removes
the snapshots too.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

import docker
from docker.errors import APIError, ImageNotFound, NotFound
from pydantic import BaseModel, Field

from webrl.config import Config
from webrl.errors import UsageError, WebrlError
from webrl.sites.base import ResetResult, SiteStatus
from webrl.sites.docker.configure import configure_commands, gitlab_recovery_commands
from webrl.sites.docker.container import PUBLIC_HOST_ENV, TOKEN_ENV
from webrl.sites.docker.engine import Need, check_ports, check_resources, connect
from webrl.sites.docker.images import (
    EMBEDDED_BUILD,
    EMBEDDED_DISK_GB,
    EMBEDDED_IMAGE,
    EMBEDDED_MEMORY_GB,
    WEBARENA,
    webarena_image,
)
from webrl.sites.embedded.backend import check_sites
from webrl.sites.embedded.registry import WEBARENA_SITES, site_spec
from webrl.sites.embedded.server import TOKEN_HEADER

ImageSet = Literal["embedded", "webarena"]
EMBEDDED_START_S = 120  # a first start seeds every database (~10 s on two busy cores)
WRITES_GB = {"gitlab": 3.0}  # a container's writable layer plus its snapshot's; 1 GB for the other sites
LABEL_OWNER, LABEL_UNIT, LABEL_BASE = "webrl.owner", "webrl.unit", "webrl.base"


class SiteDown(WebrlError, ConnectionError):
    """A site's container died under a running episode: an environment fault (a ConnectionError, as the
    harness counts those), not the agent's failure."""


class DockerPlan(BaseModel):
    """What `up` started, recorded in the state directory (the sites' addresses, images and snapshot keys)."""

    images: ImageSet
    owner: str  # names and labels every container and snapshot of this state directory
    host: str
    seed: int
    sites: list[str]
    instances: int
    ports: dict[str, list[int]]
    control_ports: list[int]  # embedded images only
    site_images: dict[str, str] = Field(default_factory=dict)  # the image each site starts from

    @property
    def public_host(self) -> str:
        """The host name in the sites' URLs: where the ports are published."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host

    def origin(self, site: str, instance: int) -> str:
        return f"http://{self.public_host}:{self.ports[site][instance]}"

    def site_url(self, site: str, instance: int) -> str:
        return self.origin(site, instance) + site_spec(site).base_path

    def units(self) -> list[Unit]:
        if self.images == "embedded":
            return [Unit(f"i{k}", k, tuple(self.sites)) for k in range(self.instances)]
        return [Unit(f"i{k}-{site}", k, (site,)) for k in range(self.instances) for site in self.sites]

    def unit_of(self, site: str, instance: int) -> Unit:
        return next(u for u in self.units() if u.instance == instance and site in u.sites)

    def snapshot_key(self, unit: Unit) -> str:
        """Units with the same key start from the same snapshot: the embedded data does not depend on the
        instance, a configured real site does (its URL is baked in)."""
        if self.images == "embedded":
            return f"embedded-seed{self.seed}-{_short_hash(','.join(self.sites))}"
        site = unit.sites[0]
        return f"{site}-{_short_hash(self.site_url(site, unit.instance))}"

    def listeners(self) -> list[tuple[str, int, str]]:
        out = [(self.host, self.ports[s][k], f"{s} instance {k}") for k in range(self.instances) for s in self.sites]
        return out + [("127.0.0.1", port, f"control API instance {k}") for k, port in enumerate(self.control_ports)]


@dataclass(frozen=True)
class Unit:
    """One container: the sites it serves for one instance."""

    key: str
    instance: int
    sites: tuple[str, ...]


class DockerState(BaseModel):
    plan: DockerPlan
    touched: list[str] = Field(default_factory=list)  # containers an episode was given (real images)
    last_reset: dict[str, datetime] = Field(default_factory=dict)  # unit key -> when it was last recreated
    reset_ms: dict[str, float] = Field(default_factory=dict)  # unit key -> how long its last recreation took


class DockerBackend:
    def __init__(self, config: Config, images: ImageSet | None = None):
        """`images`: the image set `up` starts; default: `sites.images`, else the running one's, else the real
        WebArena images."""
        self.config, self.images = config, images or config.sites.images
        self.root = config.state_dir / "docker"
        self.state_path, self.token_path = self.root / "state.json", self.root / "control.token"
        self.owner = _short_hash(str(config.state_dir.resolve()))
        self._client: docker.DockerClient | None = None

    @classmethod
    def recorded(cls, config: Config) -> bool:
        """Whether `up` started docker sites for this state directory (and `down` has not removed them)."""
        return cls(config).state_path.exists()

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = connect()
        return self._client

    # -- plan and record ------------------------------------------------------------------------

    def plan(self) -> DockerPlan:
        cfg = self.config.sites
        running = self.running()
        images = self.images or (running.images if running else "webarena")
        if images == "embedded":
            sites = check_sites(cfg.sites, WEBARENA_SITES)  # the image carries no MiniWoB++
        elif cfg.sites:
            sites = [s for s in WEBARENA if s in {webarena_image(name).site for name in cfg.sites}]
        else:
            sites = [s for s, image in WEBARENA.items() if image.automated]
        return DockerPlan(
            images=images, owner=self.owner, host=cfg.host, seed=cfg.seed, sites=sites,
            instances=cfg.instances, ports={s: [cfg.port(s, k) for k in range(cfg.instances)] for s in sites},
            control_ports=[cfg.control(k) for k in range(cfg.instances)] if images == "embedded" else [],
        )

    def running(self) -> DockerPlan | None:
        """The plan `up` recorded, or None. Containers that died since are recreated when found (urls, reset)."""
        state = self._read_state()
        return state.plan if state else None

    def _read_state(self) -> DockerState | None:
        try:
            return DockerState.model_validate_json(self.state_path.read_text())
        except FileNotFoundError:
            return None
        except ValueError as err:
            raise UsageError(f"state file {self.state_path} is corrupt ({type(err).__name__}); run `webrl down` "
                             f"and `webrl up` again") from None

    def _state_or_fail(self) -> DockerState:
        state = self._read_state()
        if state is None:
            raise UsageError("the docker sites are not running; start them with `webrl up --backend docker`")
        return state

    def _update_state(self, change) -> DockerState:
        """Apply `change(state)` under a lock (several processes may run episodes) and write it atomically."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "state.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self._state_or_fail()
            change(state)
            self._write_state(state)
            return state

    def _write_state(self, state: DockerState) -> None:
        tmp = self.state_path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(state.model_dump_json(indent=2))
        tmp.replace(self.state_path)

    # -- SiteBackend ----------------------------------------------------------------------------

    def up(self, on_step=lambda message: None) -> list[SiteStatus]:
        """Start every container, configure and snapshot it (first time only), and wait until all are healthy.
        Idempotent: if the same sites already run, report them."""
        plan = self.plan()
        if self._already_running(plan):
            return self.status()
        on_step("checking the Docker engine")
        plan.site_images = self._resolve_images(plan)
        self._remove_containers()  # left by an `up` that was killed before it could clean up
        check_ports(self.client, plan.listeners())
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.token_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(32))
        self._write_state(DockerState(plan=plan))
        try:
            self._start_all(plan, on_step)
        except BaseException:
            self._remove_containers()
            self.state_path.unlink(missing_ok=True)
            raise
        return self.status()

    def _already_running(self, plan: DockerPlan) -> bool:
        """Whether `plan` runs already; other docker sites running for this state directory are an error."""
        current = self.running()
        if current is not None and current.model_dump(exclude={"site_images"}) != plan.model_dump(
                exclude={"site_images"}):
            raise UsageError(f"other docker sites are already running ({current.images} images: "
                             f"{', '.join(current.sites)}, {current.instances} instance(s)); run `webrl down` first")
        return current is not None

    def down(self) -> bool:
        """Remove the containers (the snapshot images stay); False if none were there."""
        removed = self._remove_containers()
        had_record = self.state_path.exists()
        self.state_path.unlink(missing_ok=True)
        self.token_path.unlink(missing_ok=True)
        return had_record or removed > 0

    def purge(self) -> int:
        """Remove this state directory's snapshot images (after `down`); returns how many."""
        if self.running() is not None:
            raise UsageError("the docker sites are running; `webrl down --purge` removes them and their snapshots")
        images = self.client.images.list(filters={"label": f"{LABEL_OWNER}={self.owner}"})
        for image in images:
            self.client.images.remove(image.id, force=True)
        return len(images)

    def status(self) -> list[SiteStatus]:
        state = self._state_or_fail()
        plan, out = state.plan, []
        for unit in plan.units():
            rows = self._embedded_rows(plan, unit) if plan.images == "embedded" else {}
            for site in unit.sites:
                url = plan.site_url(site, unit.instance)
                row = rows.get(site, {})
                # The later of the container's own database restore and its last recreation.
                resets = [(datetime.fromisoformat(row["last_reset"]), row.get("last_reset_ms"))] \
                    if row.get("last_reset") else []
                if unit.key in state.last_reset:
                    resets.append((state.last_reset[unit.key], state.reset_ms.get(unit.key)))
                when, took = max(resets, key=lambda r: r[0]) if resets else (None, None)
                out.append(SiteStatus(
                    site=site, instance=unit.instance, url=url, healthy=_answers(url),
                    writes_since_reset=row.get("writes_since_reset"), last_reset=when, last_reset_ms=took,
                ))
        return out

    def urls(self, instance: int) -> dict[str, str]:
        """The instance's site URLs. A container found dead is first recreated from its snapshot, and the call
        raises SiteDown: the episode that was using it (the env asks for the URLs again to evaluate) is recorded
        as an environment fault, and its retry finds the site back."""
        plan = self._state_or_fail().plan
        _check_instance(plan, instance)
        dead = [unit for unit in plan.units() if unit.instance == instance and not self._alive(plan, unit)]
        for unit in dead:
            self._recreate(plan, unit)
        if dead:
            raise SiteDown(f"the container of {', '.join('+'.join(u.sites) for u in dead)} (instance {instance}) "
                           f"had stopped; it was recreated from its snapshot")
        return {site: plan.site_url(site, instance) for site in plan.sites}

    def reset(self, sites: list[str] | None = None, instance: int | None = None,
              how: Literal["recreate", "restore"] | None = None) -> list[ResetResult]:
        """Recreate the containers serving `sites` from their snapshots, or restore the embedded sites' databases
        in place through the control API (`how="restore"`); default: the `sites.reset` setting."""
        how = how or self.config.sites.reset
        plan = self._state_or_fail().plan
        sites = self._check_running_sites(plan, sites)
        instances = range(plan.instances) if instance is None else [_check_instance(plan, instance)]
        if how == "restore":
            if plan.images != "embedded":
                raise UsageError("a database restore (sites.reset = restore) needs the embedded image; the real sites "
                                 "reset by recreation")
            return [ResetResult(**{**row, "instance": k}) for k in instances
                    for row in self._control(plan, k, "POST", "/reset", {"sites": sites})["reset"]]
        units = [u for u in plan.units() if u.instance in instances and set(u.sites) & set(sites)]
        return [result for unit in units for result in self._recreate(plan, unit, handed_out=True)]

    def is_dirty(self, site: str, instance: int) -> bool:
        """Embedded images: the site's database changed since its reset. Real images: an episode was given the
        site since its container was recreated; asking marks it given, because the caller is about to use it.
        A container that is not running is dirty, so the caller's reset recreates it."""
        plan = self._state_or_fail().plan
        unit = plan.unit_of(site, _check_instance(plan, instance))
        if plan.images == "embedded":
            try:
                rows = self._control(plan, instance, "GET", "/status")["sites"]
            except WebrlError:
                return True  # not answering: the caller's reset recreates it
            return next(row for row in rows if row["site"] == site)["writes_since_reset"] > 0
        container = self._container(unit)
        if container is None or container.status != "running":
            return True
        given: list[bool] = []

        def mark(state: DockerState) -> None:
            given.append(container.id in state.touched)
            state.touched = sorted({*state.touched, container.id})

        self._update_state(mark)
        return given[0]

    # -- embedded control API ---------------------------------------------------------------------

    def checksums(self, site: str, instance: int = 0) -> tuple[str, str]:
        """(current, pristine) content checksums of an embedded site's database."""
        reply = self._control(self._state_or_fail().plan, instance, "GET", f"/checksum/{site}")
        return reply["checksum"], reply["pristine"]

    def _embedded_rows(self, plan: DockerPlan, unit: Unit) -> dict[str, dict]:
        """site -> its row of the control API's status; none while the container does not answer."""
        try:
            return {row["site"]: row for row in self._control(plan, unit.instance, "GET", "/status")["sites"]}
        except WebrlError:
            return {}

    def _control(self, plan: DockerPlan, instance: int, method: str, path: str, body: dict | None = None) -> dict:
        if plan.images != "embedded":
            raise UsageError("the real WebArena images have no control API; that needs `--images embedded`")
        port = plan.control_ports[instance]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}", method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={TOKEN_HEADER: self._token(), "content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as err:
            raise WebrlError(f"control API of docker instance {instance} refused {method} {path}: {err.code}") from None
        except (urllib.error.URLError, OSError) as err:
            raise WebrlError(f"control API of docker instance {instance} (port {port}) is not answering: "
                             f"{getattr(err, 'reason', err)}") from None

    def _token(self) -> str:
        try:
            return self.token_path.read_text().strip()
        except OSError:
            raise UsageError(f"control token {self.token_path} is missing; run `webrl down` and `webrl up`") from None

    # -- containers -------------------------------------------------------------------------------

    def _resolve_images(self, plan: DockerPlan) -> dict[str, str]:
        """The image of each site, refusing up front what will not fit or is not there (with the fix)."""
        if plan.images == "embedded":
            present = self._image_id(EMBEDDED_IMAGE) is not None
            n = plan.instances
            check_resources(self.client, [Need(f"embedded sites ×{n}", EMBEDDED_MEMORY_GB * n, EMBEDDED_DISK_GB * n)])
            if not present:
                raise UsageError(f"the embedded-sites image {EMBEDDED_IMAGE} is not built; build it with "
                                 f"`{EMBEDDED_BUILD}`")
            return {site: EMBEDDED_IMAGE for site in plan.sites}
        found = {site: self._local_webarena_image(site) for site in plan.sites}
        needs = [Need(f"{site} ×{plan.instances}", WEBARENA[site].memory_gb * plan.instances,
                      WRITES_GB.get(site, 1.0) * plan.instances + (0 if found[site] else WEBARENA[site].disk_gb))
                 for site in plan.sites]
        check_resources(self.client, needs)
        missing = [f"{site}: {WEBARENA[site].how_to_get()}" for site in plan.sites if not found[site]]
        if missing:
            raise UsageError(f"WebArena image(s) missing. {'; '.join(missing)}")
        return found

    def _local_webarena_image(self, site: str) -> str | None:
        image = WEBARENA[site]
        return next((name for name in (image.verified, image.original) if name and self._image_id(name)), None)

    def _image_id(self, name: str) -> str | None:
        try:
            return self.client.images.get(name).id
        except ImageNotFound:
            return None

    def _start_all(self, plan: DockerPlan, on_step) -> None:
        """Start every unit; the first unit of a snapshot key makes the snapshot, the others start from it."""
        groups: dict[str, list[Unit]] = {}
        for unit in plan.units():
            groups.setdefault(plan.snapshot_key(unit), []).append(unit)

        def start_group(units: list[Unit]) -> None:
            if self._snapshot(plan, units[0]) is None:
                self._make_snapshot(plan, units[0], on_step)
                units = units[1:]
            with ThreadPoolExecutor(max_workers=8) as pool:
                list(pool.map(lambda u: self._recreate(plan, u, on_step=on_step), units))

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(start_group, groups.values()))

    def _make_snapshot(self, plan: DockerPlan, unit: Unit, on_step) -> None:
        """Start `unit` from its base image, wait, configure it, and commit it as the snapshot image."""
        base = plan.site_images[unit.sites[0]]
        on_step(f"starting {'+'.join(unit.sites)} (instance {unit.instance}) from {base}")
        container = self._run(plan, unit, base)
        self._wait_healthy(plan, unit, container, on_step)
        if plan.images == "webarena":
            self._configure(plan, unit, container, on_step)
        on_step(f"committing {'+'.join(unit.sites)} as its snapshot")
        key = plan.snapshot_key(unit)
        container.commit(repository=f"webrl-snapshot/{plan.owner}", tag=key,
                         changes=[f"LABEL {LABEL_BASE}={self._image_id(base)} {LABEL_OWNER}={plan.owner}"])
        self._note_reset(unit, None)

    def _configure(self, plan: DockerPlan, unit: Unit, container, on_step) -> None:
        """A real site's post-start configuration (configure.py), then health again."""
        site, k = unit.sites[0], unit.instance
        for command in configure_commands(site, plan.origin(site, k)):
            on_step(f"{site} (instance {k}): {command.why}")
            _exec(container, command, f"configuring {site} (instance {k})")
        self._wait_healthy(plan, unit, container, on_step)

    def _snapshot(self, plan: DockerPlan, unit: Unit) -> str | None:
        """The unit's snapshot image, if one exists and was made from the current base image."""
        name = f"webrl-snapshot/{plan.owner}:{plan.snapshot_key(unit)}"
        try:
            image = self.client.images.get(name)
        except ImageNotFound:
            return None
        return name if image.labels.get(LABEL_BASE) == self._image_id(plan.site_images[unit.sites[0]]) else None

    def _recreate(self, plan: DockerPlan, unit: Unit, handed_out: bool = False, on_step=None) -> list[ResetResult]:
        """Replace the unit's container with a fresh one from its snapshot and wait until it is healthy."""
        snapshot = self._snapshot(plan, unit)
        if snapshot is None:
            raise UsageError(f"the snapshot of {'+'.join(unit.sites)} (instance {unit.instance}) is gone; "
                             f"run `webrl down` and `webrl up` to make it again")
        start = time.perf_counter()
        old = self._container(unit)
        if old is not None:
            old.remove(force=True, v=True)  # with its anonymous volumes, or every reset leaves one behind
        on_step = on_step or (lambda message: None)
        on_step(f"starting {'+'.join(unit.sites)} (instance {unit.instance}) from its snapshot")
        container = self._run(plan, unit, snapshot)
        self._wait_healthy(plan, unit, container, on_step)
        if plan.images == "webarena" and any(m.get("Type") == "volume" for m in container.attrs.get("Mounts", [])):
            # A commit does not hold what the image keeps in volumes (a database, say): configure again.
            self._configure(plan, unit, container, on_step)
        ms = (time.perf_counter() - start) * 1000
        self._note_reset(unit, ms, container.id if handed_out and plan.images == "webarena" else None)
        return [ResetResult(site=site, instance=unit.instance, ms=ms) for site in unit.sites]

    def _note_reset(self, unit: Unit, ms: float | None, handed_out: str | None = None) -> None:
        def change(state: DockerState) -> None:
            state.last_reset[unit.key] = datetime.now(UTC)
            if ms is not None:
                state.reset_ms[unit.key] = round(ms, 1)
            if handed_out:  # the env resets a site to use it at once
                state.touched = sorted({*state.touched, handed_out})

        self._update_state(change)

    def _run(self, plan: DockerPlan, unit: Unit, image: str):
        k = unit.instance
        labels = {LABEL_OWNER: plan.owner, LABEL_UNIT: unit.key}
        name = f"webrl-{plan.owner}-{unit.key}"
        if plan.images == "embedded":
            ports = {f"{plan.ports[s][k]}/tcp": (plan.host, plan.ports[s][k]) for s in unit.sites}
            ports[f"{plan.control_ports[k]}/tcp"] = ("127.0.0.1", plan.control_ports[k])
            env = {f"WEBRL_SITES__PORTS__{s.upper()}": str(plan.ports[s][k]) for s in unit.sites}
            env |= {"WEBRL_SITES__SITES": ",".join(unit.sites), "WEBRL_SITES__SEED": str(plan.seed),
                    "WEBRL_SITES__CONTROL_PORT": str(plan.control_ports[k]), TOKEN_ENV: self._token(),
                    PUBLIC_HOST_ENV: plan.public_host}
            return self.client.containers.run(image, name=name, labels=labels, detach=True, environment=env,
                                              ports=ports, mem_limit=f"{int(EMBEDDED_MEMORY_GB * 1024)}m")
        site = WEBARENA[unit.sites[0]]
        host_port = plan.ports[site.site][k]
        options = {"shm_size": f"{int(site.shm_gb * 1024)}m"} if site.shm_gb else {}
        if site.command and plan.site_images[site.site] == site.original:
            options["command"] = list(site.command)
        return self.client.containers.run(
            image, name=name, labels=labels, detach=True, mem_limit=f"{int(site.memory_gb * 1024)}m",
            ports={f"{site.port or host_port}/tcp": (plan.host, host_port)},
            environment={"WA_ENV_CTRL_EXTERNAL_SITE_URL": plan.origin(site.site, k)},
            **options,
        )

    def _wait_healthy(self, plan: DockerPlan, unit: Unit, container, on_step) -> None:
        """Until every site of the unit answers (and, embedded, the control API); a container that exits or
        takes too long is an error with the end of its log. GitLab gets the 502 fix once before giving up."""
        site = unit.sites[0]
        limit = EMBEDDED_START_S if plan.images == "embedded" else WEBARENA[site].startup_s
        what = f"{'+'.join(unit.sites)} (instance {unit.instance})"
        recovered = plan.images == "embedded" or site != "gitlab"
        deadline = time.monotonic() + limit
        while True:
            if self._healthy(plan, unit):
                return
            container.reload()
            if container.status not in ("created", "running"):
                raise WebrlError(f"the {what} container stopped while starting: {_log_tail(container)}")
            if time.monotonic() > deadline:
                if not recovered:
                    on_step(f"{what}: still not healthy, applying GitLab's 502 fix")
                    for command in gitlab_recovery_commands():
                        _exec(container, command, f"recovering {what}")
                    recovered, deadline = True, time.monotonic() + limit
                    continue
                raise WebrlError(f"{what} did not become healthy within {limit} s: {_log_tail(container)}")
            time.sleep(0.1 if plan.images == "embedded" else 2)

    def _healthy(self, plan: DockerPlan, unit: Unit) -> bool:
        k = unit.instance
        if plan.images == "embedded":
            try:
                self._control(plan, k, "GET", "/health")
            except WebrlError:
                return False
            return all(_answers(plan.site_url(s, k)) for s in unit.sites)
        site = unit.sites[0]
        return _answers(plan.origin(site, k) + WEBARENA[site].health_path, ok=lambda code: code == 200)

    def _alive(self, plan: DockerPlan, unit: Unit) -> bool:
        if plan.images == "embedded":
            try:
                self._control(plan, unit.instance, "GET", "/health")
                return True
            except WebrlError:
                pass  # slow or gone: the engine knows
        container = self._container(unit)
        return container is not None and container.status == "running"

    def _container(self, unit: Unit):
        try:
            return self.client.containers.get(f"webrl-{self.owner}-{unit.key}")
        except NotFound:
            return None

    def _remove_containers(self) -> int:
        containers = self.client.containers.list(all=True, filters={"label": f"{LABEL_OWNER}={self.owner}"})
        for container in containers:
            try:
                container.remove(force=True, v=True)
            except NotFound:
                pass
        return len(containers)

    def _check_running_sites(self, plan: DockerPlan, sites: list[str] | None) -> list[str]:
        if not sites:
            return list(plan.sites)
        missing = [s for s in sites if s not in plan.sites]
        if missing:
            raise UsageError(f"site(s) not running: {', '.join(missing)} (running: {', '.join(plan.sites)})")
        return sites


def _check_instance(plan: DockerPlan, instance: int) -> int:
    if not 0 <= instance < plan.instances:
        raise UsageError(f"--instance {instance}: only instances 0..{plan.instances - 1} are running")
    return instance


def _exec(container, command, doing: str) -> None:
    try:
        code, output = container.exec_run(list(command.argv), user=command.user)
    except APIError as err:
        raise WebrlError(f"{doing}: '{command.why}' could not run: {err.explanation}") from None
    if code != 0:
        last = (output or b"").decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise WebrlError(f"{doing}: '{command.why}' failed (exit {code}): {last[0]}")


def _answers(url: str, ok=lambda code: code < 500) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return ok(response.status)
    except urllib.error.HTTPError as err:
        return ok(err.code)
    except (urllib.error.URLError, OSError):
        return False


def _log_tail(container) -> str:
    lines = [line for line in container.logs(tail=20).decode(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "no output (docker logs " + container.name + ")"


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]
