"""The code forge (WebArena's GitLab CE)."""

from webrl.sites.gitlab.app import SITE

__all__ = ["SITE"]
