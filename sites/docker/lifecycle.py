"""The containers' life on the engine: `Containers` runs, finds and removes one state directory's containers
(named and labelled by its owner key), commits them to snapshot images and finds those again, and waits until a
container is healthy; `exec_command` runs a configuration command in one, `answers` asks a site over HTTP."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable

import docker
from docker.errors import APIError, ImageNotFound, NotFound

from webrl.errors import WebrlError
from webrl.sites.docker.configure import Command
from webrl.sites.docker.engine import connect
from webrl.sites.docker.state import DockerPlan, Unit

LABEL_OWNER, LABEL_UNIT, LABEL_BASE = "webrl.owner", "webrl.unit", "webrl.base"


class Containers:
    """The containers and snapshot images of the state directory whose key is `owner`."""

    def __init__(self, owner: str):
        self.owner = owner
        self._client: docker.DockerClient | None = None

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = connect()
        return self._client

    def run(self, plan: DockerPlan, unit: Unit, image: str, **options):
        """Start the unit's container from `image`; `options` go to the engine (ports, environment, limits)."""
        return self.client.containers.run(image, name=f"webrl-{plan.owner}-{unit.key}", detach=True,
                                          labels={LABEL_OWNER: plan.owner, LABEL_UNIT: unit.key}, **options)

    def get(self, unit: Unit):
        """The unit's container, running or not; None if there is none."""
        try:
            return self.client.containers.get(f"webrl-{self.owner}-{unit.key}")
        except NotFound:
            return None

    def running(self, unit: Unit) -> bool:
        container = self.get(unit)
        return container is not None and container.status == "running"

    def remove_all(self) -> int:
        containers = self.client.containers.list(all=True, filters={"label": f"{LABEL_OWNER}={self.owner}"})
        for container in containers:
            try:
                container.remove(force=True, v=True)
            except NotFound:
                pass
        return len(containers)

    def commit(self, plan: DockerPlan, container, key: str, base: str) -> None:
        """Commit `container` as the snapshot `key`, labelled with the base image it was made from."""
        container.commit(repository=f"webrl-snapshot/{plan.owner}", tag=key,
                         changes=[f"LABEL {LABEL_BASE}={self.image_id(base)} {LABEL_OWNER}={plan.owner}"])

    def snapshot(self, plan: DockerPlan, key: str, base: str) -> str | None:
        """The snapshot image `key`, if one exists and was made from the current `base` image."""
        name = f"webrl-snapshot/{plan.owner}:{key}"
        try:
            image = self.client.images.get(name)
        except ImageNotFound:
            return None
        return name if image.labels.get(LABEL_BASE) == self.image_id(base) else None

    def remove_snapshots(self) -> int:
        images = self.client.images.list(filters={"label": f"{LABEL_OWNER}={self.owner}"})
        for image in images:
            self.client.images.remove(image.id, force=True)
        return len(images)

    def image_id(self, name: str) -> str | None:
        try:
            return self.client.images.get(name).id
        except ImageNotFound:
            return None


def wait_until_healthy(container, what: str, healthy: Callable[[], bool], limit_s: float, poll_s: float,
                 recover: Callable[[], None] | None = None) -> None:
    """Until `healthy()`; a container that exits or takes longer than `limit_s` is an error with the end of its
    log. `recover`, if given, runs once when the time is up, and the wait starts again."""
    deadline = time.monotonic() + limit_s
    while True:
        if healthy():
            return
        container.reload()
        if container.status not in ("created", "running"):
            raise WebrlError(f"the {what} container stopped while starting: {_log_tail(container)}")
        if time.monotonic() > deadline:
            if recover is not None:
                recover()
                recover, deadline = None, time.monotonic() + limit_s
                continue
            raise WebrlError(f"{what} did not become healthy within {limit_s} s: {_log_tail(container)}")
        time.sleep(poll_s)


def exec_command(container, command: Command, doing: str) -> None:
    try:
        code, output = container.exec_run(list(command.argv), user=command.user)
    except APIError as err:
        raise WebrlError(f"{doing}: '{command.why}' could not run: {err.explanation}") from None
    if code != 0:
        last = (output or b"").decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise WebrlError(f"{doing}: '{command.why}' failed (exit {code}): {last[0]}")


def answers(url: str, ok=lambda code: code < 500) -> bool:
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
