"""The embedded sites, by name."""

from webrl.sites.embedded.platform import SiteSpec
from webrl.sites.shopping import SITE as SHOPPING
from webrl.sites.shopping_admin import SITE as SHOPPING_ADMIN

SITES: dict[str, SiteSpec] = {site.name: site for site in (SHOPPING, SHOPPING_ADMIN)}

# WebArena sites whose embedded look-alike does not exist yet: asked for, they get a clear "not yet".
PLANNED = ("reddit", "gitlab", "map", "homepage")
