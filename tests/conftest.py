"""Shared fixtures: the real embedded server on free ports, and a real Chromium via Playwright."""

from __future__ import annotations

import pytest

from webrl.config import load_config, on_free_ports
from webrl.sites.embedded.backend import EmbeddedBackend


def free_ports_config(state_dir, **sites_settings):
    """A Config on free ports, so tests never collide with a user's sites or each other."""
    flags = {"state_dir": state_dir, **{f"sites.{key}": value for key, value in sites_settings.items()}}
    return on_free_ports(load_config(flags=flags, environ={}))


@pytest.fixture(scope="session")
def store_sites(tmp_path_factory):
    """The shop and its admin, served by a real background server for the whole test session."""
    backend = EmbeddedBackend(free_ports_config(tmp_path_factory.mktemp("state")))
    backend.up()
    yield backend
    backend.down()


@pytest.fixture
def pristine_store(store_sites):
    """The store sites, reset to the pristine snapshot before the test."""
    store_sites.reset()
    return store_sites


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    from webrl.browser import launch_chromium

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def make_config():
    """`make_config(state_dir, **sites_settings)`: a Config on free ports."""
    return free_ports_config
