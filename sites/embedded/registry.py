"""The embedded sites, by name: WebArena's in WebArena's order, then MiniWoB++ (webrl.sitelist: those with a port).
Each lives in the package `webrl.sites.<name>` (which exports `SITE`), imported only when the site is used."""

import importlib
from functools import cache

from webrl.sitelist import SITE_LIST
from webrl.sites.platform import SiteSpec

# Every site `webrl up` starts by default on the embedded backend.
SITE_NAMES = tuple(site.name for site in SITE_LIST if site.port is not None)
# The WebArena-Lite look-alikes and their homepage: what the Docker image of the embedded sites serves.
WEBARENA_SITES = tuple(site.name for site in SITE_LIST if site.port is not None and site.webarena)


@cache
def site_spec(name: str) -> SiteSpec:
    return importlib.import_module(f"webrl.sites.{name}").SITE
