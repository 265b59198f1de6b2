"""Joining a Ray cluster as a driver: the episodes' environment workers (webrl.runs.ray_executor) and the training
ranks (webrl.rl.ranks) both run on one."""

from __future__ import annotations

import socket

import ray

from webrl.errors import UsageError

CONNECT_TIMEOUT_S = 5  # a cluster address that does not accept a connection by then is refused


def connect(address: str) -> None:
    """Join the Ray cluster at `address` (auto: the one `ray start` runs on this machine) as a driver, once per
    process; an address nobody answers on is one line, not Ray's minute of retries."""
    if ray.is_initialized():
        return
    if address != "auto":
        host, _, port = address.removeprefix("ray://").rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
        except (OSError, ValueError) as err:
            raise UsageError(
                f"--ray-address {address}: no Ray cluster answers there ({err}); start one with `ray start --head`"
            ) from None
    try:
        ray.init(address=address, namespace="webrl", log_to_driver=False, logging_level="ERROR")
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise UsageError(
            f"--ray-address {address}: cannot join the Ray cluster ({str(err).splitlines()[0]}); "
            "start one with `ray start --head`, or name it with --ray-address HOST:PORT"
        ) from None
