"""The embedded sites, by name: WebArena's in WebArena's order, then MiniWoB++. Each lives in the package
`webrl.sites.<name>` (which exports `SITE`), imported only when the site is used."""

import importlib
from functools import cache

from webrl.sites.platform import SiteSpec

# The WebArena-Lite look-alikes and their homepage: what the Docker image of the embedded sites serves.
WEBARENA_SITES = ("shopping", "shopping_admin", "reddit", "gitlab", "map", "homepage")
# Every site `webrl up` starts by default on the embedded backend.
SITE_NAMES = (*WEBARENA_SITES, "miniwob")


@cache
def site_spec(name: str) -> SiteSpec:
    return importlib.import_module(f"webrl.sites.{name}").SITE
