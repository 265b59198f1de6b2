"""The shop storefront (WebArena's OneStopShop, a Magento 2 storefront)."""

from webrl.sites.shopping.app import SITE

__all__ = ["SITE"]
