"""What the Docker backend keeps between `webrl up` and later commands: the plan `up` started (`DockerPlan`, its
containers as `Unit`s), what happened since (`DockerState`), and the files that hold them in the state directory
(`StateFile`: the record, its lock, the control API's token)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import secrets
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from webrl.errors import UsageError
from webrl.files import write_private
from webrl.sites.embedded.registry import site_spec

ImageSetName = Literal["embedded", "webarena"]


class DockerPlan(BaseModel):
    """What `up` started, recorded in the state directory (the sites' addresses, images and snapshot keys)."""

    images: ImageSetName
    owner: str  # names and labels every container and snapshot of this state directory
    host: str
    public_name: str | None = None  # sites.public_host
    seed: int
    sites: list[str]
    instances: int
    ports: dict[str, list[int]]
    control_ports: list[int]  # embedded images only
    site_images: dict[str, str] = Field(default_factory=dict)  # the image each site starts from

    @property
    def public_host(self) -> str:
        """The host name in the sites' URLs (where the ports are published): the one set, else the bind address."""
        return self.public_name or ("127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host)

    def origin(self, site: str, instance: int) -> str:
        return f"http://{self.public_host}:{self.ports[site][instance]}"

    def site_url(self, site: str, instance: int) -> str:
        return self.origin(site, instance) + site_spec(site).base_path

    def listeners(self) -> list[tuple[str, int, str]]:
        out = [(self.host, self.ports[s][k], f"{s} instance {k}") for k in range(self.instances) for s in self.sites]
        return out + [("127.0.0.1", port, f"control API instance {k}") for k, port in enumerate(self.control_ports)]


@dataclass(frozen=True)
class Unit:
    """One container: the sites it serves for one instance."""

    key: str
    instance: int
    sites: tuple[str, ...]

    @property
    def label(self) -> str:
        return "+".join(self.sites)

    @property
    def what(self) -> str:
        """The unit in messages."""
        return f"{self.label} (instance {self.instance})"


class DockerState(BaseModel):
    plan: DockerPlan
    # "starting" until `up` has every container configured, snapshotted and healthy: a record left "starting" is
    # that of an `up` that was killed (the up lock is free), and the next `up` starts over.
    phase: Literal["starting", "up"] = "up"
    touched: list[str] = Field(default_factory=list)  # containers given to a task that writes (real images)
    last_reset: dict[str, datetime] = Field(default_factory=dict)  # unit key -> when it was last recreated
    reset_ms: dict[str, float] = Field(default_factory=dict)  # unit key -> how long its last recreation took


class StateFile:
    """The backend's files under `root`: state.json (the `DockerState`), the lock of its updates, and the token
    of the embedded image's control API."""

    def __init__(self, root: Path):
        self.root = root
        self.path, self.token_path = root / "state.json", root / "control.token"

    @contextmanager
    def up_lock(self):
        """Held while `up` runs: a second `up` is refused instead of starting the same containers, and the lock
        is free again when its holder dies, however it dies."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "up.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise UsageError(
                    f"another `webrl up` is starting the docker sites of {self.root.parent}; wait for "
                    f"it to finish (or stop it)"
                ) from None
            yield

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> DockerState | None:
        try:
            return DockerState.model_validate_json(self.path.read_text())
        except FileNotFoundError:
            return None
        except ValueError as err:
            raise UsageError(
                f"state file {self.path} is corrupt ({type(err).__name__}); run `webrl down` and `webrl up` again"
            ) from None

    def read_or_fail(self) -> DockerState:
        state = self.read()
        if state is None:
            raise UsageError("the docker sites are not running; start them with `webrl up --backend docker`")
        return state

    def update(self, change) -> DockerState:
        """Apply `change(state)` under a lock (several processes may run episodes) and write it atomically."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "state.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self.read_or_fail()
            change(state)
            self._write(state)
            return state

    def create(self, plan: DockerPlan) -> None:
        """A new control token and the record of `plan`, starting, with nothing happened yet."""
        self.root.mkdir(parents=True, exist_ok=True)
        write_private(self.token_path, secrets.token_urlsafe(32))
        self._write(DockerState(plan=plan, phase="starting"))

    def discard(self) -> None:
        """Forget the record (an `up` that failed)."""
        self.path.unlink(missing_ok=True)

    def remove(self) -> bool:
        """Remove the record and the token; whether there was a record."""
        had_record = self.path.exists()
        self.discard()
        self.token_path.unlink(missing_ok=True)
        return had_record

    def token(self) -> str:
        try:
            return self.token_path.read_text().strip()
        except OSError:
            raise UsageError(f"control token {self.token_path} is missing; run `webrl down` and `webrl up`") from None

    def _write(self, state: DockerState) -> None:
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(state.model_dump_json(indent=2))
        tmp.replace(self.path)


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]
