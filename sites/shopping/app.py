"""The shop storefront: WebArena's OneStopShop, a Magento 2 storefront ("One Stop Market").

Pages follow Magento's URL shapes (/<url_key>.html, /checkout/cart/, /customer/account/login/,
/sales/order/history/, ...) and the REST endpoints WebArena's evaluators call (rest.py).
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from webrl.sites.embedded.platform import SiteContext, SiteSpec
from webrl.sites.shopping import catalog, checkout, customer, rest
from webrl.sites.shopping.web import Shop
from webrl.sites.store import STORE


def make_app(ctx: SiteContext) -> Starlette:
    shop = Shop(ctx)

    async def not_found(request: Request, exc: Exception):
        return shop.not_found(request)

    routes = [
        Mount("/static", StaticFiles(directory=str(Path(__file__).with_name("static"))), name="static"),
        *rest.routes(shop),
        *checkout.routes(shop),
        *customer.routes(shop),
        *catalog.routes(shop),  # last: its /<path>.html route catches products and categories
    ]
    return Starlette(routes=routes, exception_handlers={404: not_found})


SITE = SiteSpec(name="shopping", title="One Stop Market", database=STORE, make_app=make_app)
