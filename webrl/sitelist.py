"""Every site webrl knows, in one list: what the layers below the sites' apps need of each (its port, its account
and sign-in form, its card on the homepage, its part in the embedded suite), as plain data. The registries
(webrl.config's ports, webrl.tasks' placeholders, the accounts and sign-in forms, the homepage's cards, the
embedded sites and suite) are derived from it. An embedded site's app lives in the package `webrl.sites.<name>`
(its `SITE`), imported only when the site is used; adding a site is that package and one entry here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Login:
    """A site's WebArena account and the login form that signs it in (submitted as WebArena's auto-login does)."""

    username: str
    password: str
    path: str  # the login page, under the site's URL
    fields: tuple[str, str]  # the names of the form's user and password fields


@dataclass(frozen=True)
class Card:
    """A site's card on the homepage, as on WebArena's."""

    title: str
    about: str  # what the site is
    path: str  # appended to the site's URL


@dataclass(frozen=True)
class SuitePart:
    """A site whose task templates (`webrl.sites.<name>.tasks`) make up the embedded suite."""

    position: int  # where its templates go in the suite: the task ids, and so the suite version, follow it
    test_share: float  # its share of the test split (WebArena-Lite's)


@dataclass(frozen=True)
class SiteEntry:
    """A site: tasks name it as `name` and its URL as the placeholder `__<NAME>__`."""

    name: str
    # WebArena's port of instance 0 (webrl.config: instance k's follow from it, and the port differs modulo 1000
    # from the others' so that instances keep apart); None: webrl serves no such site, tasks may still name it.
    port: int | None
    webarena: bool = True  # a WebArena site; the Docker image of the embedded sites serves those that have a port
    login: Login | None = None
    card: Card | None = None
    suite: SuitePart | None = None


# In WebArena's order (the order of the ports, the sites `webrl up` starts and the homepage's cards).
SITE_LIST: tuple[SiteEntry, ...] = (
    SiteEntry(
        "shopping",
        7770,
        login=Login(
            "emma.lopez@gmail.com",
            "Password.123",
            "/customer/account/login/",
            ("login[username]", "login[password]"),
        ),
        card=Card("OneStopShop", "An online shopping site", "/"),
        suite=SuitePart(position=0, test_share=0.27),
    ),
    SiteEntry(
        "shopping_admin",
        7780,
        login=Login("admin", "admin1234", "", ("login[username]", "login[password]")),
        card=Card("Merchant Admin Portal", "An admin portal to manage an e-commerce business", "/"),
        suite=SuitePart(position=1, test_share=0.21),
    ),
    SiteEntry(
        "reddit",
        9999,
        login=Login("MarvelsGrantMan136", "test1234", "/login", ("_username", "_password")),
        card=Card("Reddit", "A social news aggregation and discussion website", "/forums/all"),
        suite=SuitePart(position=3, test_share=0.12),
    ),
    SiteEntry(
        "gitlab",
        8023,
        login=Login("byteblaze", "hello1234", "/users/sign_in", ("user[login]", "user[password]")),
        card=Card("Gitlab", "A source code management platform", "/explore"),
        suite=SuitePart(position=2, test_share=0.18),
    ),
    SiteEntry(
        "map",
        3000,
        card=Card("OpenStreetMap", "An online map of the world", "/"),
        suite=SuitePart(position=4, test_share=0.16),
    ),
    SiteEntry("wikipedia", None),  # WebArena's Kiwix: only compose.yaml runs it
    SiteEntry("homepage", 4399),
    SiteEntry("miniwob", 7790, webarena=False),  # MiniWoB++ (webrl's second task family)
)
