"""The map (WebArena's OpenStreetMap website), read-only."""

from webrl.sites.map.app import SITE

__all__ = ["SITE"]
