"""The containers' life on the engine: `Containers` runs, finds and removes one state directory's containers
(named and labelled by its owner key), commits them to snapshot images and finds those again, and waits until a
container is healthy; `exec_command` runs a configuration command in one, `answers` and `serves` ask a site over
HTTP."""

from __future__ import annotations

import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable

import docker
from docker.errors import APIError, ImageNotFound, NotFound

from webrl.errors import WebrlError
from webrl.sites.docker.configure import Command
from webrl.sites.docker.engine import LONG_TIMEOUT_S, connect
from webrl.sites.docker.state import DockerPlan, Unit

LABEL_OWNER, LABEL_UNIT, LABEL_BASE = "webrl.owner", "webrl.unit", "webrl.base"


class Containers:
    """The containers and snapshot images of the state directory whose key is `owner`."""

    def __init__(self, owner: str):
        self.owner = owner
        self._client: docker.DockerClient | None = None
        self._slow: docker.DockerClient | None = None

    @property
    def client(self) -> docker.DockerClient:
        """For queries."""
        if self._client is None:
            self._client = connect()
        return self._client

    @property
    def slow(self) -> docker.DockerClient:
        """For what takes as long as the images are big: starting, stopping, committing, removing."""
        if self._slow is None:
            self._slow = connect(LONG_TIMEOUT_S)
        return self._slow

    def run(self, plan: DockerPlan, unit: Unit, image: str, **options):
        """Start the unit's container from `image`; `options` go to the engine (ports, environment, limits). The
        container object waits as long as its operations take (exec, stop, commit)."""
        return self.slow.containers.run(
            image,
            name=f"webrl-{plan.owner}-{unit.key}",
            detach=True,
            labels={LABEL_OWNER: plan.owner, LABEL_UNIT: unit.key},
            **options,
        )

    def get(self, unit: Unit):
        """The unit's container, running or not; None if there is none."""
        try:
            return self.client.containers.get(f"webrl-{self.owner}-{unit.key}")
        except NotFound:
            return None

    def running(self, unit: Unit) -> bool:
        container = self.get(unit)
        return container is not None and container.status == "running"

    def remove(self, container_id: str) -> None:
        """Remove a container, running or not, with its anonymous volumes (or every reset leaves one behind)."""
        try:
            self.slow.api.remove_container(container_id, force=True, v=True)
        except NotFound:
            pass

    def remove_all(self) -> int:
        containers = self.client.containers.list(all=True, filters={"label": f"{LABEL_OWNER}={self.owner}"})
        for container in containers:
            self.remove(container.id)
        return len(containers)

    def commit(self, plan: DockerPlan, container, key: str, base: str) -> None:
        """Commit `container` as the snapshot `key`, labelled with the base image it was made from."""
        self.slow.api.commit(
            container.id,
            repository=f"webrl-snapshot/{plan.owner}",
            tag=key,
            changes=[f"LABEL {LABEL_BASE}={self.image_id(base)} {LABEL_OWNER}={plan.owner}"],
        )

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
            self.slow.images.remove(image.id, force=True)
        return len(images)

    def image_id(self, name: str) -> str | None:
        try:
            return self.client.images.get(name).id
        except ImageNotFound:
            return None


def wait_until_healthy(
    container,
    what: str,
    healthy: Callable[[], bool],
    limit_s: float,
    poll_s: float,
    recover: Callable[[], bool] | None = None,
) -> None:
    """Until `healthy()`; a container that exits or takes longer than `limit_s` is an error with the end of its
    log. `recover`, if given, is asked once when the time is up; if it repaired something, the wait starts
    again."""
    deadline = time.monotonic() + limit_s
    while True:
        if healthy():
            return
        container.reload()
        if container.status not in ("created", "running"):
            raise WebrlError(f"the {what} container stopped while starting: {_log_tail(container)}")
        if time.monotonic() > deadline:
            if recover is not None and recover():
                recover, deadline = None, time.monotonic() + limit_s
                continue
            raise WebrlError(f"{what} did not become healthy within {limit_s} s: {_log_tail(container)}")
        time.sleep(poll_s)


def stop_cleanly(container, what: str, limit_s: int) -> None:
    """Stop the container (SIGTERM to its first process, which shuts its services down) and refuse one that had to
    be killed: its databases would be crash-consistent, with stale pid files, in every copy made of it."""
    container.stop(timeout=limit_s)
    container.reload()
    if container.attrs["State"]["ExitCode"] == 137:
        raise WebrlError(
            f"{what} did not stop within {limit_s} s and was killed, so it cannot make a clean snapshot: "
            f"{_log_tail(container)}"
        )


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


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the 3xx comes back as an HTTPError


_FIRST_ANSWER = urllib.request.build_opener(_NoRedirects)


def serves(url: str, configured: bool) -> bool:
    """Whether the site at `url` is up. Before its configuration any 2xx or 3xx counts, without following it: an
    unconfigured Magento sends every request to WebArena's original host, which does not resolve here. Once
    configured, only a 200 from a page on the site's own origin counts (redirects followed)."""
    try:
        if not configured:
            with _FIRST_ANSWER.open(url, timeout=10) as response:
                return response.status < 400
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status == 200 and _origin(response.geturl()) == _origin(url)
    except urllib.error.HTTPError as err:
        return not configured and err.code < 400
    except (urllib.error.URLError, OSError):
        return False


def _origin(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme, parts.netloc


def _log_tail(container) -> str:
    lines = [line for line in container.logs(tail=20).decode(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "no output (docker logs " + container.name + ")"
