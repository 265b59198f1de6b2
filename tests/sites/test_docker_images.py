"""The WebArena-Verified images are named, with their tag, in one place (webrl.sites.docker.images): compose.yaml
repeats them, `webrl images pull` pulls exactly that tag and `webrl images list` shows it, with the digest a pulled
image came with. No engine needed: the Docker client is a stand-in that records what it is asked."""

from __future__ import annotations

import importlib
import io
import re
from pathlib import Path
from types import SimpleNamespace

import yaml
from rich.console import Console

from webrl.cli.global_options import GLOBALS
from webrl.sites.docker.engine import pull
from webrl.sites.docker.images import VERIFIED_TAG, WEBARENA, verified_image

# Imported by webrl.cli.main as it registers the commands (importing it first is circular).
cli_images = importlib.import_module("webrl.cli.images")
ROOT = Path(__file__).resolve().parents[2]
DIGEST = "sha256:" + "ab12" * 16


class FakeImages:
    def __init__(self, present: dict[str, dict]):
        self.present = present

    def get(self, name: str):
        if name not in self.present:
            raise cli_images.ImageNotFound(name)
        return SimpleNamespace(attrs=self.present[name])

    def list(self, **filters):
        return []


class FakeClient:
    """What the images commands use of a Docker client; every pull is recorded and succeeds."""

    def __init__(self, present: dict[str, dict] | None = None):
        self.pulled: list[tuple[str, str]] = []
        self.images = FakeImages(present or {})
        self.api = SimpleNamespace(pull=self._pull)

    def _pull(self, name: str, tag: str, stream: bool, decode: bool):
        self.pulled.append((name, tag))
        return iter([{"status": "Status: Downloaded newer image"}])


def test_every_verified_image_carries_the_pinned_tag():
    for site, image in WEBARENA.items():
        assert image.verified == verified_image(site) == f"am1n3e/webarena-verified-{site}:{VERIFIED_TAG}"


def test_compose_names_the_images_that_images_py_pins():
    """compose.yaml's default for every WebArena-Verified service is images.py's name and tag, wikipedia (which
    only Compose runs) included; a tag changed in one and not the other fails here."""
    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    defaults = {}
    for name, service in services.items():
        found = re.fullmatch(r"\$\{WA_([A-Z_]+)_IMAGE:-([^}]+)\}", service["image"])
        if found:
            assert found.group(1) == name.upper()
            defaults[name] = found.group(2)
    assert set(defaults) == {*WEBARENA, "wikipedia"}
    assert defaults == {site: verified_image(site) for site in defaults}


def test_pull_asks_the_registry_for_the_pinned_tag():
    client = FakeClient()
    pull(client, WEBARENA["gitlab"].verified)
    pull(client, "local/untagged")
    pull(client, "registry.example:5000/team/site:1.2.3")
    assert client.pulled == [
        ("am1n3e/webarena-verified-gitlab", VERIFIED_TAG),
        ("local/untagged", "latest"),
        ("registry.example:5000/team/site", "1.2.3"),
    ]


def test_images_pull_and_list_use_the_pinned_tag(monkeypatch, tmp_path):
    shop = WEBARENA["shopping"].verified
    client = FakeClient(
        {
            shop: {"Size": 13.3e9, "RepoDigests": [f"am1n3e/webarena-verified-shopping@{DIGEST}"]},
            WEBARENA["reddit"].verified: {"Size": 8.4e9, "RepoDigests": []},
        }
    )
    out = io.StringIO()
    monkeypatch.setattr(cli_images, "connect", lambda *args: client)
    monkeypatch.setattr(cli_images, "console", Console(file=out, width=200, color_system=None))
    monkeypatch.setattr(GLOBALS, "state_dir", tmp_path)

    cli_images.pull_images(["shopping", "reddit"])
    assert client.pulled == [
        ("am1n3e/webarena-verified-shopping", VERIFIED_TAG),
        ("am1n3e/webarena-verified-reddit", VERIFIED_TAG),
    ]
    client.pulled.clear()
    cli_images.pull_images(None)  # every site `up` runs by default: the map (data volumes) only when named
    assert client.pulled == [
        (image.verified.rsplit(":", 1)[0], VERIFIED_TAG) for image in WEBARENA.values() if not image.volumes
    ]

    cli_images.list_images()
    listed = out.getvalue()
    assert f"{shop}@{DIGEST[:19]}…" in listed  # pulled: the manifest it came from
    assert re.search(rf"{re.escape(WEBARENA['reddit'].verified)}\s*$", listed, re.M)  # built or loaded: no digest
    assert re.search(rf"missing\s+{re.escape(WEBARENA['gitlab'].verified)}", listed)
