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

from webrl.sites.platform import SiteContext, SiteSpec
from webrl.sites.shopping import catalog, checkout, customer, rest
from webrl.sites.shopping.web import Shop, shop_of
from webrl.sites.store import STORE

ROUTES = [
    Mount("/static", StaticFiles(directory=str(Path(__file__).with_name("static"))), name="static"),
    *rest.ROUTES,
    *checkout.ROUTES,
    *customer.ROUTES,
    *catalog.ROUTES,  # last: its /<path>.html route catches products and categories
]


async def not_found(request: Request, exc: Exception):
    return shop_of(request).not_found(request)


def make_app(ctx: SiteContext) -> Starlette:
    app = Starlette(routes=ROUTES, exception_handlers={404: not_found})
    app.state.shop = Shop(ctx)
    return app


SITE = SiteSpec(name="shopping", title="One Stop Market", database=STORE, make_app=make_app)
