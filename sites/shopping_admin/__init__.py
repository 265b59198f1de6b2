"""The shop's admin panel (WebArena's shopping_admin, the Magento 2 admin)."""

from webrl.sites.shopping_admin.app import SITE

__all__ = ["SITE"]
