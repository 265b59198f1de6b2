"""The embedded-sites image's command: `webrl up --foreground` for the inside of a container.

Two things differ from the host's server: the control API listens on the container's interface (the backend
publishes it to the host's loopback only, so it is reachable at all), and its token comes from the backend
(SITES_CONTROL_TOKEN) instead of being made up here. The ports are the host's, passed as WEBRL_SITES__PORTS__*,
so the URLs the sites put in their pages are the ones the browser uses.
"""

from __future__ import annotations

import os

from webrl.config import load_config
from webrl.errors import UsageError
from webrl.files import write_private
from webrl.sites.embedded.backend import EmbeddedBackend, check_sites
from webrl.sites.embedded.registry import WEBARENA_SITES
from webrl.sites.embedded.server import ServerPlan

TOKEN_ENV = "SITES_CONTROL_TOKEN"  # not WEBRL_*: those are settings (webrl.config)
PUBLIC_HOST_ENV = "SITES_PUBLIC_HOST"  # the host name in the sites' own URLs (where the ports are published)


class ContainerPlan(ServerPlan):
    public_host: str = "127.0.0.1"

    def site_url(self, site: str, instance: int) -> str:
        return super().site_url(site, instance).replace("127.0.0.1", self.public_host, 1)

    def listeners(self) -> list[tuple[str, int, str]]:
        return [(self.host, port, what) for _, port, what in super().listeners()]


class ContainerBackend(EmbeddedBackend):
    def plan(self) -> ContainerPlan:
        plan = ContainerPlan.from_config(self.config, check_sites(self.config.sites.sites, WEBARENA_SITES))
        return plan.model_copy(update={"public_host": os.environ.get(PUBLIC_HOST_ENV, plan.public_host)})

    def _prepare(self, plan: ServerPlan, on_step) -> None:
        super()._prepare(plan, on_step)
        write_private(self.paths.token, os.environ[TOKEN_ENV])


def main() -> None:
    if not os.environ.get(TOKEN_ENV):
        raise SystemExit(
            f"{TOKEN_ENV} is not set: this command runs inside the image started by "
            f"`webrl up --backend docker --images embedded`"
        )
    backend = ContainerBackend(load_config())
    # A container started from a snapshot image carries the record of the server that ran when it was committed.
    backend.paths.server.unlink(missing_ok=True)
    try:
        backend.serve_foreground(on_step=lambda message: print(message, flush=True))
    except UsageError as err:
        raise SystemExit(f"error: {err}") from None


if __name__ == "__main__":
    main()
