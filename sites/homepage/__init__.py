"""The WebArena homepage look-alike: links to every site of the instance, a scratchpad and a calculator."""

from webrl.sites.homepage.app import SITE

__all__ = ["SITE"]
