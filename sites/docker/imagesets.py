"""The image sets the Docker backend runs, one class each behind `ImageSet`: which sites and containers a plan
has, where their images come from, how a container starts, becomes healthy and is configured, and what "dirty"
and "restore" mean for it.

- `EmbeddedImages`: our image (Dockerfile) serving the embedded sites, one container per instance. Its control
  API (published to the host's loopback only) reports writes per site and restores a database in milliseconds.
- `WebArenaImages`: the real WebArena images, one container per site and instance, configured after their first
  start (configure.py). Dirty means "a task that writes was given the site since it was recreated"
  (`sites.reset_when`).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar

from webrl.config import SitesConfig
from webrl.errors import UsageError, WebrlError
from webrl.sites.base import ResetResult
from webrl.sites.docker.configure import (
    configure_commands,
    gitlab_recovery_commands,
    gitlab_stale_lock_check,
    stop_commands,
)
from webrl.sites.docker.container import PUBLIC_HOST_ENV, TOKEN_ENV
from webrl.sites.docker.engine import Need, check_resources
from webrl.sites.docker.images import (
    EMBEDDED_BUILD,
    EMBEDDED_DISK_GB,
    EMBEDDED_IMAGE,
    EMBEDDED_MEMORY_GB,
    MAP_DATA_SETUP,
    WEBARENA,
    WebArenaImage,
    webarena_image,
)
from webrl.sites.docker.lifecycle import (
    Containers,
    answers,
    exec_command,
    serves,
    stop_cleanly,
    wait_until_healthy,
)
from webrl.sites.docker.state import DockerPlan, DockerState, ImageSetName, StateFile, Unit, short_hash
from webrl.sites.embedded.backend import check_sites
from webrl.sites.embedded.registry import WEBARENA_SITES
from webrl.sites.embedded.server import TOKEN_HEADER

EMBEDDED_START_S = 120  # a first start seeds every database (~10 s on two busy cores)
STOP_S = 300  # for a real site's services to shut down before its snapshot (supervisord waits 10 s per program)
WRITES_GB = {"gitlab": 3.0}  # a container's writable layer plus its snapshot's; 1 GB for the other sites


class ImageSet(ABC):
    """What differs between the image sets, for one plan: `files` holds its record, `containers` its containers."""

    name: ClassVar[ImageSetName]
    poll_s: ClassVar[float]  # between two health checks of a starting container
    counts_hand_outs: ClassVar[bool] = False  # whether a container is dirty once given to an episode

    def __init__(self, plan: DockerPlan, files: StateFile, containers: Containers):
        self.plan, self.files, self.containers = plan, files, containers

    # -- the plan ---------------------------------------------------------------------------------

    @classmethod
    def make_plan(cls, cfg: SitesConfig, owner: str) -> DockerPlan:
        sites = cls.choose_sites(cfg.sites)
        return DockerPlan(
            images=cls.name,
            owner=owner,
            host=cfg.host,
            public_name=cfg.public_host,
            seed=cfg.seed,
            sites=sites,
            instances=cfg.instances,
            ports={s: [cfg.port(s, k) for k in range(cfg.instances)] for s in sites},
            control_ports=cls.control_ports(cfg),
        )

    @staticmethod
    @abstractmethod
    def choose_sites(requested: list[str] | None) -> list[str]:
        """The sites to run: `requested` (checked), or all this image set runs by default."""

    @staticmethod
    def control_ports(cfg: SitesConfig) -> list[int]:
        return []

    @abstractmethod
    def units(self) -> list[Unit]:
        """The plan's containers."""

    def unit_of(self, site: str, instance: int) -> Unit:
        return next(u for u in self.units() if u.instance == instance and site in u.sites)

    @abstractmethod
    def snapshot_key(self, unit: Unit) -> str:
        """Units with the same key start from the same snapshot."""

    @abstractmethod
    def resolve_images(self) -> dict[str, str]:
        """The image of each site, refusing up front what will not fit or is not there (with the fix)."""

    # -- a container ------------------------------------------------------------------------------

    @abstractmethod
    def run(self, unit: Unit, image: str):
        """Start the unit's container from `image` (its base image or its snapshot)."""

    @abstractmethod
    def healthy(self, unit: Unit, configured: bool = True) -> bool:
        """Whether every site of the unit answers (`configured`: as it will once configured)."""

    @abstractmethod
    def start_s(self, unit: Unit) -> int:
        """How long a starting container of the unit may take to become healthy."""

    def recovery(self, unit: Unit, container, on_step) -> Callable[[], bool] | None:
        """What to try once on a container that is not healthy in time (it says whether it repaired anything);
        None: nothing."""
        return None

    def wait_healthy(self, unit: Unit, container, on_step, configured: bool = True) -> None:
        wait_until_healthy(
            container,
            unit.what,
            lambda: self.healthy(unit, configured),
            self.start_s(unit),
            self.poll_s,
            self.recovery(unit, container, on_step),
        )

    def alive(self, unit: Unit) -> bool:
        return self.containers.running(unit)

    def configure(self, unit: Unit, container, on_step) -> None:
        """Make a healthy container fresh from its base image ready for its snapshot; nothing by default."""

    def quiesce(self, unit: Unit, container, on_step) -> None:
        """Make the configured container safe to commit; nothing by default (it is committed as it runs)."""

    def reconfigure(self, unit: Unit, container, on_step) -> None:
        """What a healthy container fresh from its snapshot still needs; nothing by default."""

    # -- episodes ---------------------------------------------------------------------------------

    @abstractmethod
    def is_dirty(self, unit: Unit, site: str, writes: bool) -> bool:
        """Whether `site` (served by `unit`) needs a reset before an episode of a task that `writes`."""

    def status_rows(self, unit: Unit) -> dict[str, dict]:
        """site -> what the unit reports about it (writes and restores since its start); none by default."""
        return {}

    def restore(self, sites: list[str], instances: Sequence[int]) -> list[ResetResult]:
        raise UsageError(
            "a database restore (sites.reset = restore) needs the embedded image; the real sites reset by recreation"
        )

    def checksums(self, site: str, instance: int) -> tuple[str, str]:
        raise UsageError("the real WebArena images have no control API; that needs `--images embedded`")


class EmbeddedImages(ImageSet):
    """Our image of the embedded sites: one container per instance, with a control API."""

    name = "embedded"
    poll_s = 0.1

    @staticmethod
    def choose_sites(requested: list[str] | None) -> list[str]:
        return check_sites(requested, WEBARENA_SITES)  # the image carries no MiniWoB++

    @staticmethod
    def control_ports(cfg: SitesConfig) -> list[int]:
        return [cfg.control(k) for k in range(cfg.instances)]

    def units(self) -> list[Unit]:
        return [Unit(f"i{k}", k, tuple(self.plan.sites)) for k in range(self.plan.instances)]

    def snapshot_key(self, unit: Unit) -> str:
        """The embedded data does not depend on the instance."""
        return f"embedded-seed{self.plan.seed}-{short_hash(','.join(self.plan.sites))}"

    def resolve_images(self) -> dict[str, str]:
        present = self.containers.image_id(EMBEDDED_IMAGE) is not None
        n = self.plan.instances
        check_resources(
            self.containers.client, [Need(f"embedded sites ×{n}", EMBEDDED_MEMORY_GB * n, EMBEDDED_DISK_GB * n)]
        )
        if not present:
            raise UsageError(
                f"the embedded-sites image {EMBEDDED_IMAGE} is not built; build it with `{EMBEDDED_BUILD}`"
            )
        return {site: EMBEDDED_IMAGE for site in self.plan.sites}

    def run(self, unit: Unit, image: str):
        plan, k = self.plan, unit.instance
        ports = {f"{plan.ports[s][k]}/tcp": (plan.host, plan.ports[s][k]) for s in unit.sites}
        ports[f"{plan.control_ports[k]}/tcp"] = ("127.0.0.1", plan.control_ports[k])
        env = {f"WEBRL_SITES__PORTS__{s.upper()}": str(plan.ports[s][k]) for s in unit.sites}
        env |= {
            "WEBRL_SITES__SITES": ",".join(unit.sites),
            "WEBRL_SITES__SEED": str(plan.seed),
            "WEBRL_SITES__CONTROL_PORT": str(plan.control_ports[k]),
            TOKEN_ENV: self.files.token(),
            PUBLIC_HOST_ENV: plan.public_host,
        }
        return self.containers.run(
            plan, unit, image, environment=env, ports=ports, mem_limit=f"{int(EMBEDDED_MEMORY_GB * 1024)}m"
        )

    def healthy(self, unit: Unit, configured: bool = True) -> bool:
        """The control API as well."""
        k = unit.instance
        try:
            self._control(k, "GET", "/health")
        except WebrlError:
            return False
        return all(answers(self.plan.site_url(s, k)) for s in unit.sites)

    def start_s(self, unit: Unit) -> int:
        return EMBEDDED_START_S

    def alive(self, unit: Unit) -> bool:
        try:
            self._control(unit.instance, "GET", "/health")
            return True
        except WebrlError:
            return super().alive(unit)  # slow or gone: the engine knows

    def is_dirty(self, unit: Unit, site: str, writes: bool) -> bool:
        """The site's database changed since its reset (whatever the task: a restore takes milliseconds)."""
        try:
            rows = self._control(unit.instance, "GET", "/status")["sites"]
        except WebrlError:
            return True  # not answering: the caller's reset recreates it
        return next(row for row in rows if row["site"] == site)["writes_since_reset"] > 0

    def status_rows(self, unit: Unit) -> dict[str, dict]:
        """The control API's status; none while the container does not answer."""
        try:
            return {row["site"]: row for row in self._control(unit.instance, "GET", "/status")["sites"]}
        except WebrlError:
            return {}

    def restore(self, sites: list[str], instances: Sequence[int]) -> list[ResetResult]:
        """Restore the sites' databases in place through the control API."""
        return [
            ResetResult(**{**row, "instance": k})
            for k in instances
            for row in self._control(k, "POST", "/reset", {"sites": sites})["reset"]
        ]

    def checksums(self, site: str, instance: int) -> tuple[str, str]:
        reply = self._control(instance, "GET", f"/checksum/{site}")
        return reply["checksum"], reply["pristine"]

    def _control(self, instance: int, method: str, path: str, body: dict | None = None) -> dict:
        port = self.plan.control_ports[instance]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}",
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={TOKEN_HEADER: self.files.token(), "content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as err:
            raise WebrlError(f"control API of docker instance {instance} refused {method} {path}: {err.code}") from None
        except (urllib.error.URLError, OSError) as err:
            raise WebrlError(
                f"control API of docker instance {instance} (port {port}) is not answering: "
                f"{getattr(err, 'reason', err)}"
            ) from None


class WebArenaImages(ImageSet):
    """The real WebArena images: one container per site and instance, configured before its snapshot."""

    name = "webarena"
    poll_s = 2
    counts_hand_outs = True

    @staticmethod
    def choose_sites(requested: list[str] | None) -> list[str]:
        if requested:
            return [s for s in WEBARENA if s in {webarena_image(name).site for name in requested}]
        return [s for s, image in WEBARENA.items() if not image.volumes]

    def units(self) -> list[Unit]:
        return [Unit(f"i{k}-{site}", k, (site,)) for k in range(self.plan.instances) for site in self.plan.sites]

    def snapshot_key(self, unit: Unit) -> str:
        """A configured real site depends on the instance: its URL is baked in."""
        site = unit.sites[0]
        return f"{site}-{short_hash(self.plan.site_url(site, unit.instance))}"

    def resolve_images(self) -> dict[str, str]:
        plan = self.plan
        found = {site: self._local_image(site) for site in plan.sites}
        needs = [
            Need(
                f"{site} ×{plan.instances}",
                WEBARENA[site].memory_gb * plan.instances,
                WRITES_GB.get(site, 1.0) * plan.instances + (0 if found[site] else WEBARENA[site].disk_gb),
            )
            for site in plan.sites
        ]
        check_resources(self.containers.client, needs)
        missing = [f"{site}: {WEBARENA[site].how_to_get()}" for site in plan.sites if not found[site]]
        if missing:
            raise UsageError(f"WebArena image(s) missing. {'; '.join(missing)}")
        for site in plan.sites:
            self._check_volumes(WEBARENA[site])
        return found

    def _check_volumes(self, image: WebArenaImage) -> None:
        if not image.volumes:
            return
        if self.plan.instances > 1:
            raise UsageError(
                f"--sites {image.site}: its databases live in its data volumes, which one container "
                f"uses at a time; run it with --instances 1"
            )
        names = {v.name for v in self.containers.client.volumes.list()}
        missing = [name for name in image.volumes if name not in names]
        if missing:
            raise UsageError(
                f"--sites {image.site}: its data volumes are missing ({', '.join(missing)}); {MAP_DATA_SETUP}"
            )

    def _local_image(self, site: str) -> str | None:
        image = WEBARENA[site]
        return next(
            (name for name in (image.verified, image.original) if name and self.containers.image_id(name)), None
        )

    def run(self, unit: Unit, image: str):
        plan, site = self.plan, WEBARENA[unit.sites[0]]
        host_port = plan.ports[site.site][unit.instance]
        options = {"shm_size": f"{int(site.shm_gb * 1024)}m"} if site.shm_gb else {}
        if site.command and plan.site_images[site.site] == site.original:
            options["command"] = list(site.command)
        if site.volumes:
            options["volumes"] = {name: {"bind": path, "mode": "rw"} for name, path in site.volumes.items()}
        return self.containers.run(
            plan,
            unit,
            image,
            mem_limit=f"{int(site.memory_gb * 1024)}m",
            ports={f"{site.port}/tcp": (plan.host, host_port)},
            environment={"WA_ENV_CTRL_EXTERNAL_SITE_URL": plan.origin(site.site, unit.instance), **site.environment},
            **options,
        )

    def healthy(self, unit: Unit, configured: bool = True) -> bool:
        site = unit.sites[0]
        return serves(self.plan.origin(site, unit.instance) + WEBARENA[site].health_path, configured)

    def start_s(self, unit: Unit) -> int:
        return WEBARENA[unit.sites[0]].startup_s

    def recovery(self, unit: Unit, container, on_step) -> Callable[[], bool] | None:
        """GitLab's 502 fix, once, and only if its PostgreSQL refused to start for a stale pid file: the fix resets
        the write-ahead log, which on a database that runs (or merely starts slowly) would lose data."""
        if unit.sites[0] != "gitlab":
            return None

        def recover() -> bool:
            if container.exec_run(list(gitlab_stale_lock_check())).exit_code != 0:
                return False
            on_step(f"{unit.what}: PostgreSQL found a stale pid file; applying GitLab's 502 fix")
            for command in gitlab_recovery_commands():
                exec_command(container, command, f"recovering {unit.what}")
            return True

        return recover

    def configure(self, unit: Unit, container, on_step) -> None:
        """The site's post-start configuration (configure.py), then health again."""
        site, k = unit.sites[0], unit.instance
        for command in configure_commands(site, self.plan.origin(site, k)):
            on_step(f"{site} (instance {k}): {command.why}")
            exec_command(container, command, f"configuring {site} (instance {k})")
        self.wait_healthy(unit, container, on_step)

    def quiesce(self, unit: Unit, container, on_step) -> None:
        """Stop the services and the container cleanly: committed as they ran, the databases would be
        crash-consistent and every copy would start with a stale pid file (GitLab's 502s)."""
        site, k = unit.sites[0], unit.instance
        for command in stop_commands(site):
            on_step(f"{site} (instance {k}): {command.why}")
            exec_command(container, command, f"stopping {site} (instance {k})")
        on_step(f"{site} (instance {k}): stopping the container")
        stop_cleanly(container, unit.what, STOP_S)

    def reconfigure(self, unit: Unit, container, on_step) -> None:
        if any(m.get("Type") == "volume" for m in container.attrs.get("Mounts", [])):
            # A commit does not hold what the image keeps in volumes (a database, say): configure again.
            self.configure(unit, container, on_step)

    def is_dirty(self, unit: Unit, site: str, writes: bool) -> bool:
        """For a task that writes: an episode of one was given the site since its container was recreated; asking
        marks it given, because the caller is about to use it (and a reset it asks for gives it a fresh one). A
        task that only reads shares the site as it is: nothing on a real site says which visits wrote (Magento
        writes sessions and carts on almost every one), and recreating it takes minutes. A container that is not
        running is dirty, so the caller's reset recreates it."""
        container = self.containers.get(unit)
        if container is None or container.status != "running":
            return True
        if not writes:
            return False
        given: list[bool] = []

        def mark(state: DockerState) -> None:
            given.append(container.id in state.touched)
            state.touched = sorted({*state.touched, container.id})

        self.files.update(mark)
        return given[0]


IMAGE_SETS: dict[str, type[ImageSet]] = {images.name: images for images in (EmbeddedImages, WebArenaImages)}
