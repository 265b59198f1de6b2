"""The interface every site backend implements, and the records it reports."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from pydantic import BaseModel

from webrl.config import Config
from webrl.sitelist import SITE_LIST


class SiteStatus(BaseModel):
    site: str
    instance: int
    url: str  # what the task placeholder (e.g. __SHOPPING_ADMIN__) expands to
    healthy: bool
    writes_since_reset: int | None = None
    last_reset: datetime | None = None
    last_reset_ms: float | None = None  # how long that reset took


class ResetResult(BaseModel):
    site: str
    instance: int
    ms: float  # time to restore this site's state; sites sharing a database report the same restore


class RunningSites(Protocol):
    """What a backend reports of the sites it has up (its plan: the embedded server's, or the containers')."""

    seed: int  # the embedded sites' data seed (task sets are resolved against it)
    sites: list[str]
    instances: int


class SiteBackend(Protocol):
    """Where the sites come from (the embedded server, or Docker containers): what every caller may use."""

    config: Config

    def running(self) -> RunningSites | None:
        """The sites that are up (None: not started)."""

    def up(self, owner: int | None = None) -> list[SiteStatus]:
        """Start the sites; with `owner`, a process id, they end with that process where the backend can tie them to
        one (the embedded server watches it; Docker's containers outlive it until `down`)."""

    def down(self) -> None: ...

    def status(self) -> list[SiteStatus]: ...

    def urls(self, instance: int) -> dict[str, str]: ...

    def reset(self, sites: list[str] | None = None, instance: int | None = None) -> list[ResetResult]: ...

    def is_dirty(self, site: str, instance: int, writes: bool = True) -> bool:
        """Whether the site must be reset before an episode of a task that `writes` (or only reads)."""

    @property
    def reset_policy(self) -> str:
        """When sites are reset before an episode, for the run's summary."""

    def last_resets(self, instance: int) -> dict[str, datetime | None]: ...


# WebArena's accounts (webrl.sitelist), the same on every backend: site -> (user, password).
ACCOUNTS: dict[str, tuple[str, str]] = {
    site.name: (site.login.username, site.login.password) for site in SITE_LIST if site.login
}
