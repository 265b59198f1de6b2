"""The options that say where episodes and trainings run (`--executor`, `--ray-address`), shared by eval, train,
sft and rl-update."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

ExecutorOption = Annotated[
    Literal["local", "ray"] | None,
    typer.Option(
        help="Where episodes and trainings run: local (this machine) or ray (environment workers and training "
        "ranks on a Ray cluster, docs/cluster.md) [default: the configuration's cluster.executor, else local]."
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        help="The Ray cluster to join: auto (the one `ray start` runs on this machine) or HOST:PORT "
        "[default: the configuration's cluster.address, else auto]."
    ),
]


def cluster_flags(executor: str | None, ray_address: str | None) -> dict[str, Any]:
    """The configuration flags of the two options (None: not given, the configuration's stand)."""
    return {"cluster.executor": executor, "cluster.address": ray_address}
