"""The Docker `SiteBackend`: the sites run in containers, one set per instance on that instance's port block,
bound to the configured address (127.0.0.1 by default). What differs between the two image sets (embedded,
webarena) is in imagesets.py, the record `up` leaves in state.py, the containers' life on the engine in
lifecycle.py; `DockerBackend` composes them.

`up` starts each container, waits for real health, configures it and commits it to a snapshot image; every
later start and every reset recreates the container from that snapshot (the writable layer is dropped), so no
reset seeds or configures anything again. `down` removes the containers and keeps the snapshots; `purge` removes
the snapshots too.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Literal

import docker

from webrl.config import Config
from webrl.errors import UsageError, WebrlError
from webrl.sites.base import ResetResult, SiteStatus
from webrl.sites.docker.engine import check_ports
from webrl.sites.docker.imagesets import IMAGE_SETS, ImageSet
from webrl.sites.docker.lifecycle import LABEL_OWNER, LABEL_UNIT, Containers, answers
from webrl.sites.docker.state import DockerPlan, DockerState, ImageSetName, StateFile, Unit, short_hash

# Also the names that importers take from here (cli, bench, sites/backends.py).
__all__ = ["LABEL_OWNER", "LABEL_UNIT", "DockerBackend", "ImageSet", "ImageSetName", "SiteDown"]


class SiteDown(WebrlError, ConnectionError):
    """A site's container died under a running episode: an environment fault (a ConnectionError, as the
    harness counts those), not the agent's failure."""


class DockerBackend:
    """The `SiteBackend` of one state directory: its record (`files`), its containers (`containers`), and per
    plan the image set that knows what differs (`_image_set`)."""

    def __init__(self, config: Config, images: ImageSetName | None = None):
        """`images`: the image set `up` starts; default: `sites.images`, else the running one's, else the real
        WebArena images."""
        self.config, self.images = config, images or config.sites.images
        self.owner = short_hash(str(config.state_dir.resolve()))
        self.files = StateFile(config.state_dir / "docker")
        self.containers = Containers(self.owner)

    @classmethod
    def recorded(cls, config: Config) -> bool:
        """Whether `up` started docker sites for this state directory (and `down` has not removed them)."""
        return cls(config).files.exists()

    @property
    def client(self) -> docker.DockerClient:
        return self.containers.client

    def plan(self) -> DockerPlan:
        running = self.running()
        return IMAGE_SETS[self.images or (running.images if running else "webarena")].make_plan(
            self.config.sites, self.owner
        )

    def running(self) -> DockerPlan | None:
        """The plan `up` brought up, or None (also while an `up` is starting it). Containers that died since are
        recreated when found (urls, reset)."""
        state = self.files.read()
        return state.plan if state and state.phase == "up" else None

    def _image_set(self, plan: DockerPlan) -> ImageSet:
        return IMAGE_SETS[plan.images](plan, self.files, self.containers)

    def _running_image_set(self) -> ImageSet:
        state = self.files.read_or_fail()
        if state.phase == "starting":
            raise UsageError(
                "the docker sites are still starting, or the `webrl up` that started them was killed "
                "(then run it again)"
            )
        return self._image_set(state.plan)

    # -- SiteBackend ----------------------------------------------------------------------------

    def up(self, on_step=lambda message: None, owner: int | None = None) -> list[SiteStatus]:
        """Start every container, configure and snapshot it (first time only), and wait until all are healthy.
        Idempotent: if the same sites are up, check them and report them; what a killed `up` left is started over.
        The containers are not tied to `owner`'s process: `down` stops them."""
        plan = self.plan()
        with self.files.up_lock():
            if self._already_up(plan, on_step):
                return self.status()
            on_step("checking the Docker engine")
            images = self._image_set(plan)
            plan.site_images = images.resolve_images()
            self.containers.remove_all()  # left by an `up` that was killed before it could clean up
            check_ports(self.client, plan.listeners())
            self.files.create(plan)
            try:
                self._start_all(images, on_step)
            except BaseException:
                self.containers.remove_all()
                self.files.discard()
                raise
            self.files.update(lambda state: setattr(state, "phase", "up"))
        return self.status()

    def _already_up(self, plan: DockerPlan, on_step) -> bool:
        """Whether `plan` is up: recorded as up, with every snapshot there and every container running (a dead one
        is recreated). Other docker sites up for this state directory are an error. False for what a killed `up`
        left (recorded as starting) and for sites whose snapshots are gone: those start over."""
        state = self.files.read()
        if state is None or state.phase == "starting":
            return False
        current = state.plan
        if current.model_dump(exclude={"site_images"}) != plan.model_dump(exclude={"site_images"}):
            raise UsageError(
                f"other docker sites are already running ({current.images} images: "
                f"{', '.join(current.sites)}, {current.instances} instance(s)); run `webrl down` first"
            )
        images = self._image_set(current)
        if any(self._snapshot(images, unit) is None for unit in images.units()):
            return False
        for unit in images.units():
            if not images.alive(unit):
                self._recreate(images, unit, on_step=on_step)
        return True

    def down(self) -> bool:
        """Remove the containers (the snapshot images stay); False if none were there."""
        removed = self.containers.remove_all()
        return self.files.remove() or removed > 0

    def purge(self) -> int:
        """Remove this state directory's snapshot images (after `down`); returns how many."""
        if self.running() is not None:
            raise UsageError("the docker sites are running; `webrl down --purge` removes them and their snapshots")
        return self.containers.remove_snapshots()

    def status(self) -> list[SiteStatus]:
        state = self.files.read_or_fail()
        images, out = self._image_set(state.plan), []
        for unit in images.units():
            rows = images.status_rows(unit)
            for site in unit.sites:
                url = state.plan.site_url(site, unit.instance)
                row = rows.get(site, {})
                # The later of the container's own database restore and its last recreation.
                resets = (
                    [(datetime.fromisoformat(row["last_reset"]), row.get("last_reset_ms"))]
                    if row.get("last_reset")
                    else []
                )
                if unit.key in state.last_reset:
                    resets.append((state.last_reset[unit.key], state.reset_ms.get(unit.key)))
                when, took = max(resets, key=lambda r: r[0]) if resets else (None, None)
                out.append(
                    SiteStatus(
                        site=site,
                        instance=unit.instance,
                        url=url,
                        healthy=answers(url),
                        writes_since_reset=row.get("writes_since_reset"),
                        last_reset=when,
                        last_reset_ms=took,
                    )
                )
        return out

    def urls(self, instance: int) -> dict[str, str]:
        """The instance's site URLs. A container found dead is first recreated from its snapshot, and the call
        raises SiteDown: the episode that was using it (the env asks for the URLs again to evaluate) is recorded
        as an environment fault, and its retry finds the site back."""
        images = self._running_image_set()
        _check_instance(images.plan, instance)
        dead = [unit for unit in images.units() if unit.instance == instance and not images.alive(unit)]
        for unit in dead:
            self._recreate(images, unit)
        if dead:
            raise SiteDown(
                f"the container of {', '.join(u.label for u in dead)} (instance {instance}) "
                f"had stopped; it was recreated from its snapshot"
            )
        return {site: images.plan.site_url(site, instance) for site in images.plan.sites}

    def reset(
        self,
        sites: list[str] | None = None,
        instance: int | None = None,
        how: Literal["recreate", "restore"] | None = None,
    ) -> list[ResetResult]:
        """Recreate the containers serving `sites` from their snapshots, or restore the embedded sites' databases
        in place through the control API (`how="restore"`); default: the `sites.reset` setting."""
        how = how or self.config.sites.reset
        images = self._running_image_set()
        plan = images.plan
        sites = _check_running_sites(plan, sites)
        instances = range(plan.instances) if instance is None else [_check_instance(plan, instance)]
        if how == "restore":
            return images.restore(sites, instances)
        units = [u for u in images.units() if u.instance in instances and set(u.sites) & set(sites)]
        return [result for unit in units for result in self._recreate(images, unit, handed_out=True)]

    def is_dirty(self, site: str, instance: int, writes: bool = True) -> bool:
        """Whether the site needs a reset before an episode of a task that `writes` (see the image sets'
        `is_dirty`); with `sites.reset_when: episode` every task counts as one that writes."""
        images = self._running_image_set()
        writes = writes or self.config.sites.reset_when == "episode"
        return images.is_dirty(images.unit_of(site, _check_instance(images.plan, instance)), site, writes)

    @property
    def reset_policy(self) -> str:
        """database-changed (the embedded image), else when the real sites reset: writing-task or every-episode."""
        if self._running_image_set().name == "embedded":
            return "database-changed"
        return {"writes": "writing-task", "episode": "every-episode"}[self.config.sites.reset_when]

    def last_resets(self, instance: int) -> dict[str, datetime | None]:
        """When each site of the instance was last reset (restored or recreated)."""
        return {s.site: s.last_reset for s in self.status() if s.instance == instance}

    def checksums(self, site: str, instance: int = 0) -> tuple[str, str]:
        """(current, pristine) content checksums of an embedded site's database."""
        return self._running_image_set().checksums(site, instance)

    # -- snapshots --------------------------------------------------------------------------------

    def _start_all(self, images: ImageSet, on_step) -> None:
        """Start every unit; the first unit of a snapshot key makes the snapshot, the others start from it."""
        groups: dict[str, list[Unit]] = {}
        for unit in images.units():
            groups.setdefault(images.snapshot_key(unit), []).append(unit)

        def start_group(units: list[Unit]) -> None:
            if self._snapshot(images, units[0]) is None:
                self._make_snapshot(images, units[0], on_step)
                if self.containers.running(units[0]):  # committed as it ran: it serves already
                    units = units[1:]
            with ThreadPoolExecutor(max_workers=8) as pool:
                list(pool.map(lambda u: self._recreate(images, u, on_step=on_step), units))

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(start_group, groups.values()))

    def _make_snapshot(self, images: ImageSet, unit: Unit, on_step) -> None:
        """Start `unit` from its base image, wait, configure it, and commit it as the snapshot image (stopped
        first where the image set says so, and then left stopped)."""
        base = images.plan.site_images[unit.sites[0]]
        on_step(f"starting {unit.what} from {base}")
        container = images.run(unit, base)
        images.wait_healthy(unit, container, on_step, configured=False)
        images.configure(unit, container, on_step)
        images.quiesce(unit, container, on_step)
        on_step(f"committing {unit.label} as its snapshot")
        self.containers.commit(images.plan, container, images.snapshot_key(unit), base)
        self._note_reset(unit, None)

    def _snapshot(self, images: ImageSet, unit: Unit) -> str | None:
        """The unit's snapshot image, if one exists and was made from the current base image."""
        return self.containers.snapshot(images.plan, images.snapshot_key(unit), images.plan.site_images[unit.sites[0]])

    def _recreate(self, images: ImageSet, unit: Unit, handed_out: bool = False, on_step=None) -> list[ResetResult]:
        """Replace the unit's container with a fresh one from its snapshot and wait until it is healthy."""
        snapshot = self._snapshot(images, unit)
        if snapshot is None:
            raise UsageError(f"the snapshot of {unit.what} is gone; run `webrl down` and `webrl up` to make it again")
        start = time.perf_counter()
        old = self.containers.get(unit)
        if old is not None:
            self.containers.remove(old.id)
        on_step = on_step or (lambda message: None)
        on_step(f"starting {unit.what} from its snapshot")
        container = images.run(unit, snapshot)
        images.wait_healthy(unit, container, on_step)
        images.reconfigure(unit, container, on_step)
        ms = (time.perf_counter() - start) * 1000
        self._note_reset(unit, ms, container.id if handed_out and images.counts_hand_outs else None)
        return [ResetResult(site=site, instance=unit.instance, ms=ms) for site in unit.sites]

    def _note_reset(self, unit: Unit, ms: float | None, handed_out: str | None = None) -> None:
        def change(state: DockerState) -> None:
            state.last_reset[unit.key] = datetime.now(UTC)
            if ms is not None:
                state.reset_ms[unit.key] = round(ms, 1)
            if handed_out:  # the env resets a site to use it at once
                state.touched = sorted({*state.touched, handed_out})

        self.files.update(change)


def _check_running_sites(plan: DockerPlan, sites: list[str] | None) -> list[str]:
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
