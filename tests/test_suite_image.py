"""The suite's own image (Dockerfile.suite, `scripts/install-docker.sh --suite`) on a real Docker engine: with no
network at all, webrl inside it starts the embedded sites and the oracle solves the smoke tasks in the image's
Chromium; the training stack in it is the host's. Skips with the reason when no engine or no image is here."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from docker_support import docker_engine_with

pytestmark = pytest.mark.slow  # builds on the suite's Docker image

ROOT = Path(__file__).resolve().parents[1]
SUITE_IMAGE = "webrl/suite:latest"


@pytest.fixture(scope="module")
def engine():
    return docker_engine_with(SUITE_IMAGE, "sudo scripts/install-docker.sh --suite")


def run_in_image(engine, script: str, **options) -> str:
    """Runs `script` with sh in a fresh, network-less container of the suite image; its output (fails on exit != 0)."""
    container = engine.containers.run(SUITE_IMAGE, ["sh", "-c", script], network_mode="none", detach=True, **options)
    try:
        status = container.wait(timeout=300)
        output = container.logs().decode(errors="replace")
        assert status["StatusCode"] == 0, output
        return output
    finally:
        container.remove(force=True)


def test_the_suite_image_evaluates_the_oracle_offline(engine, tmp_path):
    """As the README runs it: this checkout mounted as the working directory (whose webrl/ folder must not shadow
    the installed package in webrl's `python -m` children), the run written into it."""
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "webrl", checkout / "webrl", ignore=shutil.ignore_patterns("__pycache__"))
    smoke = ROOT / "sites" / "embedded" / "tasks" / "smoke.json"
    (checkout / "smoke.json").write_text(smoke.read_text())
    run_in_image(
        engine,
        "webrl up && webrl eval --tasks smoke.json --policy oracle --out runs/smoke",
        volumes={str(checkout): {"bind": "/work", "mode": "rw"}},
    )
    summary = json.loads((checkout / "runs" / "smoke" / "summary.json").read_text())
    assert summary["success_rate"]["Average"] == {
        "mean": 100.0,
        "std": 0.0,
        "episodes": len(json.loads(smoke.read_text())),
    }


def test_the_suite_image_carries_the_hosts_packages(engine):
    """The image's venv is the host's: the same versions of every package (torch, DeepSpeed, transformers...), but
    the docs tools (scripts/suite_requirements.py)."""
    host = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "suite_requirements.py")], capture_output=True, text=True, check=True
    )
    image = run_in_image(engine, "pip list --format=freeze --exclude pip 2>/dev/null")
    host_packages = set(host.stdout.split())
    assert "torch" in host.stdout and set(image.split()) == host_packages | {f"webrl=={version('webrl')}"}
