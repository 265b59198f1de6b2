"""Fixtures of the site tests: a test module names its embedded site in `SITE` and gets that site reset to
pristine (`site_backend`), its base URL (`base`), an HTTP client on it (`client`), `query` over its
database, and `seeded` to build its database afresh. A module's own fixtures of the same names take
precedence."""

from __future__ import annotations

import sqlite3

import httpx
import pytest

from webrl.sites.embedded.registry import site_spec


@pytest.fixture
def site_backend(site_servers, request):
    """The embedded server of the module's site, its database reset to the pristine snapshot."""
    backend = site_servers(request.module.SITE)
    backend.reset()
    return backend


@pytest.fixture
def base(site_backend, request) -> str:
    return site_backend.urls(0)[request.module.SITE]


@pytest.fixture
def client(base):
    with httpx.Client(base_url=base, timeout=15) as c:
        yield c


@pytest.fixture
def query(site_backend, request):
    """`query(sql, params=())`: rows of the module's site database."""
    return lambda sql, params=(): site_backend.query(request.module.SITE, sql, params)


@pytest.fixture
def seeded(request):
    """`seeded(seed)`: a new in-memory database of the module's site, from its schema and its seed."""
    spec = site_spec(request.module.SITE).database

    def build(seed: int) -> sqlite3.Connection:
        conn = sqlite3.connect(":memory:")
        conn.executescript(spec.schema.read_text())
        spec.seed(conn, seed)
        return conn

    return build
