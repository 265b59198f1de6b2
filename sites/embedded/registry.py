"""The embedded sites, by name, in WebArena's order. Each lives in the package `webrl.sites.<name>`
(which exports `SITE`), imported only when the site is used."""

import importlib
from functools import cache

from webrl.sites.embedded.platform import SiteSpec

SITE_NAMES = ("shopping", "shopping_admin", "reddit", "gitlab", "map", "homepage")


@cache
def site_spec(name: str) -> SiteSpec:
    return importlib.import_module(f"webrl.sites.{name}").SITE
