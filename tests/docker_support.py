"""The real Docker engine for the tests that need it (tests/ is on sys.path)."""

from __future__ import annotations

import pytest


def docker_engine_with(image: str, build: str):
    """A client of the real Docker engine that holds `image`; else the test skips, naming the fix (`build`)."""
    from docker.errors import ImageNotFound

    from webrl.errors import UsageError
    from webrl.sites.docker.engine import connect

    try:
        client = connect(timeout=10)
    except UsageError as err:
        pytest.skip(str(err))  # names the fix: scripts/install-docker.sh
    try:
        client.images.get(image)
    except ImageNotFound:
        pytest.skip(f"the image {image} is not built: run `{build}`")
    return client
