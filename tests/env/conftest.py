"""Fixtures of the env tests."""

import pytest


@pytest.fixture(scope="module")
def shop(site_servers) -> str:
    """The base URL of a running embedded storefront."""
    return site_servers("shopping", "shopping_admin").urls(0)["shopping"]
