"""The forum (WebArena's Reddit, a Postmill instance)."""

from webrl.sites.reddit.app import SITE

__all__ = ["SITE"]
