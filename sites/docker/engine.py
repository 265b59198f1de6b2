"""The Docker engine: connecting with a useful error, pulling with progress, and refusing up front what cannot fit
(disk, memory, ports)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass

import docker
from docker.errors import APIError, DockerException
from requests.exceptions import RequestException

from webrl.errors import PortTaken, UsageError, WebrlError
from webrl.netutil import port_free, port_owner

# Queries answer in moments; an engine that takes a minute is stuck. Commits, removals, starts and loads of images
# of many GB take minutes (a 155 GB tarball, a 30 GB writable layer), so those wait hours instead.
QUERY_TIMEOUT_S = 60
LONG_TIMEOUT_S = 6 * 3600
ENGINE_FIX = (
    "start it (as root: `dockerd &`, or `systemctl start docker`; scripts/install-docker.sh installs "
    "and starts one), or point DOCKER_HOST at a running engine"
)
GB = 1e9


def connect(timeout: float = QUERY_TIMEOUT_S) -> docker.DockerClient:
    """A client of a reachable engine whose requests give up after `timeout` s, or one line saying where none
    answered and how to fix it."""
    where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except DockerException as err:
        if "Permission denied" in str(err):
            raise UsageError(
                f"the Docker engine at {where} refused this user: add it to the `docker` group "
                f"(then log in again) or run as root"
            ) from None
        raise UsageError(f"the Docker engine is not reachable at {where}: {ENGINE_FIX}") from None
    except RequestException as err:  # a connection error after the SDK had the API version already
        raise UsageError(
            f"the Docker engine is not reachable at {where} ({type(err).__name__}): {ENGINE_FIX}"
        ) from None
    return client


LAYER_DONE = ("Download complete", "Already exists", "Pull complete")


def pull(
    client: docker.DockerClient, image: str, on_progress: Callable[[int, int], None] = lambda done, total: None
) -> None:
    """Pull `image` from its registry, calling `on_progress(bytes downloaded, bytes known so far)` summed over its
    layers; a failure (no registry reachable, no such image) is one WebrlError naming the image."""
    name, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "latest")
    layers: dict[str, tuple[int, int]] = {}
    try:
        for event in client.api.pull(name, tag=tag, stream=True, decode=True):
            if "error" in event:
                raise WebrlError(f"cannot pull {image}: {event['error']}")
            layer, detail = event.get("id"), event.get("progressDetail") or {}
            if event.get("status") == "Downloading" and detail.get("total"):
                layers[layer] = (detail.get("current", 0), detail["total"])
            elif event.get("status") in LAYER_DONE and layer in layers:
                layers[layer] = (layers[layer][1], layers[layer][1])
            on_progress(sum(done for done, _ in layers.values()), sum(total for _, total in layers.values()))
    except APIError as err:
        raise WebrlError(f"cannot pull {image}: {err.explanation or err}") from None


def load(
    client: docker.DockerClient, data, on_progress: Callable[[int, int], None] = lambda done, total: None
) -> list[str]:
    """Load an image tarball (`data`, a file object; `client` should wait hours) and return the names loaded,
    calling `on_progress(bytes unpacked, bytes known so far)` summed over the layers as the engine unpacks them.
    Asked with quiet=False: otherwise the engine says nothing for the minutes a 100 GB tarball takes. A failure is
    one WebrlError."""
    names: list[str] = []
    layers: dict[str, tuple[int, int]] = {}
    try:
        for event in client.api.load_image(data, quiet=False):
            if "error" in event or "errorDetail" in event:
                raise WebrlError(f"the engine could not load it: {event.get('error') or event['errorDetail']}")
            detail = event.get("progressDetail") or {}
            if detail.get("total"):
                layers[event.get("id")] = (detail.get("current", 0), detail["total"])
                on_progress(sum(done for done, _ in layers.values()), sum(total for _, total in layers.values()))
            loaded = re.match(r"Loaded image(?: ID)?: (\S+)", event.get("stream", ""))
            if loaded:
                names.append(loaded.group(1))
    except APIError as err:
        raise WebrlError(f"the engine could not load it: {err.explanation or err}") from None
    return names


@dataclass(frozen=True)
class Need:
    """What one container needs: memory (its limit) and disk (its image when missing, plus its writes)."""

    what: str
    memory_gb: float
    disk_gb: float


def check_resources(client: docker.DockerClient, needs: list[Need]) -> None:
    """Refuse, with the numbers, sites that cannot fit in the engine's memory or on its disk."""
    info = client.info()
    total_memory = info.get("MemTotal", 0) / GB
    memory = sum(n.memory_gb for n in needs)
    if total_memory and memory > total_memory:
        raise UsageError(
            f"the chosen sites need {memory:.1f} GB of memory ({_itemise(needs, 'memory_gb')}) but the "
            f"Docker engine has {total_memory:.1f} GB; choose fewer --sites or --instances"
        )
    root = info.get("DockerRootDir", "")
    if os.path.isdir(root):  # a local engine: its disk is this machine's
        free = shutil.disk_usage(root).free / GB
        disk = sum(n.disk_gb for n in needs)
        if disk > free:
            raise UsageError(
                f"the chosen sites need {disk:.1f} GB of disk ({_itemise(needs, 'disk_gb')}) but "
                f"{root} has {free:.1f} GB free; free some space or choose fewer --sites or --instances"
            )


def _itemise(needs: list[Need], field: str) -> str:
    return ", ".join(f"{n.what} {getattr(n, field):g}" for n in needs if getattr(n, field))


def check_ports(client: docker.DockerClient, ports: list[tuple[str, int, str]]) -> None:
    """Every (host, port, what) must be free; a taken one is named with whoever holds it."""
    for host, port, what in ports:
        if not port_free(host, port):
            owner = _container_on(client, port) or port_owner(port) or "another process"
            raise PortTaken(
                f"port {port} ({what}) is already in use by {owner}; stop it, or move the sites "
                f"with a config file (sites.ports) or WEBRL_SITES__PORTS__<SITE>"
            )


def _container_on(client: docker.DockerClient, port: int) -> str | None:
    for container in client.containers.list():
        for bindings in (container.ports or {}).values():
            if any(int(b["HostPort"]) == port for b in bindings or []):
                return f"container {container.name}"
    return None
