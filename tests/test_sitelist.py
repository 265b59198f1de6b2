"""One registration per site: every registry of sites is what the entries of webrl.sitelist say, and every served
entry has its package."""

from __future__ import annotations

import importlib

from webrl.config import DEFAULT_PORTS, SitePorts, load_config
from webrl.env.auth import LOGINS
from webrl.sitelist import SITE_LIST
from webrl.sites.base import ACCOUNTS
from webrl.sites.embedded.registry import SITE_NAMES, WEBARENA_SITES, site_spec
from webrl.sites.embedded.suite import TEMPLATE_SITES, TEST_SHARE
from webrl.sites.homepage.app import CARDS
from webrl.tasks.model import SITES


def test_every_registry_is_derived_from_the_site_list():
    served = [site for site in SITE_LIST if site.port is not None]
    assert SITES == tuple(site.name for site in SITE_LIST)
    assert DEFAULT_PORTS == {site.name: site.port for site in served}
    assert SitePorts().model_dump() == DEFAULT_PORTS
    assert SITE_NAMES == tuple(site.name for site in served)
    assert WEBARENA_SITES == tuple(site.name for site in served if site.webarena)
    assert ACCOUNTS == {site.name: (site.login.username, site.login.password) for site in SITE_LIST if site.login}
    assert LOGINS == {site.name: (site.login.path, site.login.fields) for site in SITE_LIST if site.login}
    assert CARDS == [(site.name, site.card.title, site.card.about, site.card.path) for site in SITE_LIST if site.card]
    parts = sorted((site for site in SITE_LIST if site.suite), key=lambda site: site.suite.position)
    assert TEMPLATE_SITES == tuple(site.name for site in parts)
    assert TEST_SHARE == {site.name: site.suite.test_share for site in parts} | {"multi": 0.06}
    assert sum(TEST_SHARE.values()) == 1


def test_every_entry_is_consistent():
    names = [site.name for site in SITE_LIST]
    assert len(set(names)) == len(names)
    # instances keep apart: instance k adds k * 1000 to every port (webrl.config.instance_port)
    ports = [*DEFAULT_PORTS.values(), load_config(environ={}).sites.control_port]
    assert len({port % 1000 for port in ports}) == len(ports)
    positions = [site.suite.position for site in SITE_LIST if site.suite]
    assert sorted(positions) == list(range(len(positions)))
    for site in SITE_LIST:
        assert site.port is not None or not (site.login or site.card or site.suite), site.name  # only a served site
        if site.port is not None:
            assert site_spec(site.name).name == site.name  # its package `webrl.sites.<name>` exports its SITE
        if site.suite:
            assert importlib.import_module(f"webrl.sites.{site.name}.tasks").TEMPLATES
